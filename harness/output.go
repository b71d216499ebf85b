package harness

import (
	"fmt"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/keyed"
)

// outputStore models the sink's external store as its clients see it: the
// key -> value map the commits update, read-committed. It keeps two
// invariants:
//
//   - Commits take effect in commit-time order. The runtime reports a
//     commit during the slice that makes it, at the slice's start time or
//     later, so across sink processes reports arrive out of time order by up
//     to a CPU slice. The store holds reported commits in sorted runs and settles
//     them, in (instant, report order), once the simulation has passed
//     their instant: nothing reported later can be earlier. visible is the
//     settled state.
//   - A read served at instant t returns the value of the key's last commit
//     strictly before t (every such commit has been reported and settled),
//     so it never sees part of the commits of one instant.
//
// On settling, the store checks the reader view (check.Claim): a commit
// that shows a smaller value than the key showed before takes back a
// visible effect (a regression); and it hands the commit to the observer,
// which folds it into the history porcupine checks. Both see the same
// commits in the same order, so they judge monotonicity identically.
type outputStore struct {
	// runs hold the reported, unsettled commits as sorted runs by (at,
	// seq): each process reports its own commits in time order, so a new
	// commit almost always extends a run (patience sorting: it goes to the
	// run with the greatest tail not after it), there are about as many
	// runs as sink processes reporting at once, and settling merges their
	// heads. A heap spent a third of the main job's CPU.
	runs    []*run
	free    []*run
	seq     uint64
	visible *keyed.Table

	regressions int64
	first       *Regression

	// onSettle, if set, gets every commit as it settles (the observer).
	onSettle func(p *pending)
	// uncommitted, if set, models a broken store that serves reads a
	// value its sink has written but not committed (tests only; see
	// testUncommittedReads).
	uncommitted func(key uint64) (int64, bool)
}

// pending is a reported commit with the delivery checker's verdict on it.
type pending struct {
	at, born engine.Time
	seq      uint64
	key      uint64
	value    int64
	id       engine.EffectID
	status   check.CommitStatus
}

// Regression is the first commit that took back a visible effect:
// run.json's first_reader_regression.
type Regression struct {
	Key  uint64  `json:"key"`
	AtS  float64 `json:"at_s"`
	From int64   `json:"from"` // the value the key showed
	To   int64   `json:"to"`   // the smaller value the commit showed
}

func newOutputStore() *outputStore { return &outputStore{visible: keyed.New(0)} }

// run is a sorted run of pending commits; buf[head:] are unsettled.
type run struct {
	buf  []pending
	head int
}

func before(a, b *pending) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// report takes a commit reported at simulated time now (at >= now).
func (s *outputStore) report(now, at engine.Time, c engine.Commit, status check.CommitStatus) {
	s.seq++
	p := pending{at: at, born: c.Born, seq: s.seq, key: c.Key, value: c.Value, id: c.ID, status: status}
	var best *run
	for _, r := range s.runs {
		if tail := &r.buf[len(r.buf)-1]; tail.at <= at && (best == nil || tail.at > best.buf[len(best.buf)-1].at) {
			best = r
		}
	}
	if best == nil {
		if n := len(s.free); n > 0 {
			best, s.free = s.free[n-1], s.free[:n-1]
		} else {
			best = &run{}
		}
		s.runs = append(s.runs, best)
	}
	if len(best.buf) == cap(best.buf) {
		// Double, where append grows a large slice by a quarter: a 2PC
		// sink's burst (a checkpoint interval's effects at one instant)
		// makes a run of a few hundred thousand commits, and growing to it
		// a quarter at a time touched five times its size in fresh pages
		// (page faults were most of report's time).
		grown := make([]pending, len(best.buf), max(1024, 2*cap(best.buf)))
		copy(grown, best.buf)
		best.buf = grown
	}
	best.buf = append(best.buf, p)
	if len(best.buf)-best.head >= 1<<14 {
		// Keep runs short-lived: everything before now can settle.
		s.settle(now)
	}
}

// settle applies every pending commit made strictly before instant t, in
// (at, seq) order.
func (s *outputStore) settle(t engine.Time) {
	for {
		var first *run
		for _, r := range s.runs {
			if first == nil || before(&r.buf[r.head], &first.buf[first.head]) {
				first = r
			}
		}
		if first == nil || first.buf[first.head].at >= t {
			return
		}
		// Apply the first run's head and what follows it while it stays
		// ahead of every other run's head.
		var next *pending
		for _, r := range s.runs {
			if r != first && (next == nil || before(&r.buf[r.head], next)) {
				next = &r.buf[r.head]
			}
		}
		for first.head < len(first.buf) {
			h := &first.buf[first.head]
			if h.at >= t || (next != nil && before(next, h)) {
				break
			}
			s.apply(h)
			first.head++
		}
		if first.head >= 1024 && 2*first.head >= len(first.buf) {
			// A run its process keeps extending never empties: drop the
			// settled part so it does not grow for the whole run.
			first.buf = first.buf[:copy(first.buf, first.buf[first.head:])]
			first.head = 0
		}
		if first.head == len(first.buf) {
			first.buf, first.head = first.buf[:0], 0
			for i, r := range s.runs {
				if r == first {
					s.runs = append(s.runs[:i], s.runs[i+1:]...)
					break
				}
			}
			s.free = append(s.free, first)
		}
	}
}

func (s *outputStore) apply(p *pending) {
	v, ok := s.visible.Ptr(p.key)
	if prev := *v; ok && p.value < prev {
		s.regressions++
		if s.first == nil {
			s.first = &Regression{Key: p.key, AtS: p.at.Seconds(), From: prev, To: p.value}
		}
	}
	*v = p.value
	if s.onSettle != nil {
		s.onSettle(p)
	}
}

// read serves a read of key at instant t.
func (s *outputStore) read(key uint64, t engine.Time) int64 {
	s.settle(t)
	if s.uncommitted != nil {
		if v, ok := s.uncommitted(key); ok {
			return v
		}
	}
	return s.visible.Get(key)
}

// testUncommittedReads maps a (test) system's name to the pre-committed
// values a broken, read-uncommitted store of that system would serve; nil
// in every normal build. It lets a test show that the observer alone
// catches a reader shown a value no commit made visible, which the
// delivery checker (it sees commits only) cannot.
var testUncommittedReads = map[string]func(key uint64) (int64, bool){}

// readerView fills in the reader half of the claim (claimed and observed
// reader view, regressions) and claim_held for both halves, from the
// settled commits.
func (r *runner) readerView(res *Result) {
	res.ClaimedReader = r.claim.Reader()
	res.ObservedReader = check.ReaderView(r.store.regressions == 0)
	res.ReaderRegressions = r.store.regressions
	res.FirstRegression = r.store.first
	res.ClaimHeld = r.claim.Held(res.Duplicates, res.Lost, res.finals(), r.store.regressions == 0)
}

// readerProblem is the safety problem of a monotonic claim whose sink took
// a visible effect back, or "".
func readerProblem(res *Result) string {
	if res.ClaimedReader != check.ReaderMonotonic || res.ReaderRegressions == 0 {
		return ""
	}
	f := res.FirstRegression
	return fmt.Sprintf("claimed a monotonic reader view but %d commits took visible effects back (first: key %d at %.6fs, %d -> %d)",
		res.ReaderRegressions, f.Key, f.AtS, f.From, f.To)
}

// observerUnknown is the problem of an observer check that did not finish,
// or "".
func observerUnknown(res *Result) string {
	if res.Observer == nil || res.Observer.Result != check.LinUnknown {
		return ""
	}
	return "porcupine could not finish checking what readers observed (result unknown): the claim is neither held nor broken"
}
