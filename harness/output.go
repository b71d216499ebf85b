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
//     settled state. A 2PC piece (all its commits at one instant) is held
//     whole, as one entry standing for its commits (reportPiece), and
//     given back to the commit pipe once it settles.
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

	// pieces holds the 2PC pieces reported whole (reportPiece), indexed
	// by their header entry's key, until they settle; freePieces are the
	// indices free for reuse. release gives a settled piece back to the
	// commit pipe's sinks.
	pieces     [][]engine.Commit
	freePieces []uint64
	release    func([]engine.Commit)

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

// pieceHeader is the status of a run entry that stands for a whole piece
// (reportPiece): its key indexes pieces, its value is the piece's length
// and its seq the first of the piece's len(piece) consecutive seqs. Nothing
// reported apart from the piece can fall between two of its commits in
// (at, seq) order, so the merge moves the piece as one entry.
const pieceHeader check.CommitStatus = 255

// commits is how many commits an entry stands for.
func (p *pending) commits() int {
	if p.status == pieceHeader {
		return int(p.value)
	}
	return 1
}

func newOutputStore() *outputStore { return &outputStore{visible: keyed.New(0)} }

// run is a sorted run of pending commits; buf[head:] are unsettled.
type run struct {
	buf  []pending
	head int
	// commits counts the unsettled commits of buf[head:], a piece's
	// header counting its whole piece.
	commits int
}

func before(a, b *pending) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// report takes a commit reported at simulated time now (at >= now).
func (s *outputStore) report(now, at engine.Time, c engine.Commit, status check.CommitStatus) {
	s.seq++
	s.add(now, pending{at: at, born: c.Born, seq: s.seq, key: c.Key, value: c.Value, id: c.ID, status: status})
}

// holdsPieces reports whether reportPiece may be used: the observer's
// onSettle wants each commit's delivery status, which a held piece does
// not keep.
func (s *outputStore) holdsPieces() bool { return s.onSettle == nil && s.release != nil }

// reportPiece takes the commits of a 2PC piece, all made at instant at and
// reported at now, as report would one by one, keeping the piece itself
// until they settle: a burst's commits are not copied again (a checkpoint's
// effects, a few hundred thousand a second in the main job). The store
// owns cs until it gives it to release.
func (s *outputStore) reportPiece(now, at engine.Time, cs []engine.Commit) {
	var i uint64
	if n := len(s.freePieces); n > 0 {
		i, s.freePieces = s.freePieces[n-1], s.freePieces[:n-1]
		s.pieces[i] = cs
	} else {
		i = uint64(len(s.pieces))
		s.pieces = append(s.pieces, cs)
	}
	first := s.seq + 1
	s.seq += uint64(len(cs))
	s.add(now, pending{at: at, seq: first, key: i, value: int64(len(cs)), status: pieceHeader})
}

// add puts a reported entry on the run it extends.
func (s *outputStore) add(now engine.Time, p pending) {
	at := p.at
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
	best.commits += p.commits()
	if best.commits >= 1<<14 {
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
			first.commits -= h.commits()
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
	if p.status == pieceHeader {
		s.applyPiece(p)
		return
	}
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

// applyPiece applies the commits of the piece a header entry stands for,
// in their seq order, and gives the piece back.
func (s *outputStore) applyPiece(h *pending) {
	cs := s.pieces[h.key]
	p := pending{at: h.at}
	for i := range cs {
		c := &cs[i]
		p.seq, p.key, p.value, p.born, p.id = h.seq+uint64(i), c.Key, c.Value, c.Born, c.ID
		s.apply(&p)
	}
	s.pieces[h.key] = nil
	s.freePieces = append(s.freePieces, h.key)
	s.release(cs)
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
