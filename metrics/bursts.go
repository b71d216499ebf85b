package metrics

import "ftbench/engine"

// Bursts records when a bursty sink's output becomes visible. A sink that
// commits once per commit cycle (a 2PC sink at each completed checkpoint, a
// micro-batch system at each batch) makes its output visible in bursts
// separated by quiet gaps; a burst starts with the first commit after a gap
// of more than half a cycle. While the system keeps up the bursts come once
// per cycle, but an overloaded micro-batch system commits whenever a batch
// finishes — every 2.4 cycles, say — so a window of whole nominal cycles
// would alias with them. Counting from one burst's start to a later one's
// measures over whole real commit periods, at any cadence, from exact
// commit times.
//
// Invariant: starts are in time order, and Before is the number of commits
// observed before that burst's first commit.
type Bursts struct {
	gap    engine.Time
	last   engine.Time
	n      int64
	starts []BurstStart
}

// BurstStart is the first commit of a burst.
type BurstStart struct {
	At     engine.Time
	Before int64
}

// NewBursts tracks bursts of a sink with the given commit cycle; nil for a
// continuous sink (cycle 0), whose throughput needs no bursts.
func NewBursts(cycle engine.Time) *Bursts {
	if cycle <= 0 {
		return nil
	}
	return &Bursts{gap: cycle / 2}
}

// Commit observes one commit at time at. Commits from different processes
// reach the observer up to a CPU slice out of time order, which is far
// below the gap, so the latest time seen stands for "the previous commit".
// A nil Bursts (a continuous sink) ignores commits.
func (b *Bursts) Commit(at engine.Time) {
	if b == nil {
		return
	}
	if b.n == 0 || at-b.last > b.gap {
		b.starts = append(b.starts, BurstStart{At: at, Before: b.n})
	}
	b.last = max(b.last, at)
	b.n++
}

// CommitN records n commits at one instant, as n Commit calls would.
func (b *Bursts) CommitN(at engine.Time, n int) {
	if b == nil || n <= 0 {
		return
	}
	b.Commit(at)
	b.n += int64(n - 1)
}

// First is when the first burst started: the sink's first visible output.
// ok is false before any commit (and for a nil Bursts).
func (b *Bursts) First() (at engine.Time, ok bool) {
	if b == nil || len(b.starts) == 0 {
		return 0, false
	}
	return b.starts[0].At, true
}

// Throughput is committed effects per second from the first burst that
// starts in [from, to) to the last one that does: whole real commit
// periods. ok is false when fewer than two bursts start there, or they span
// less than minSpan (a window too short to be steady state).
func (b *Bursts) Throughput(from, to, minSpan engine.Time) (perSec float64, w Window, ok bool) {
	if b == nil {
		return 0, Window{}, false
	}
	first, last := -1, -1
	for i, s := range b.starts {
		if s.At < from {
			continue
		}
		if s.At >= to {
			break
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 || last == first {
		return 0, Window{}, false
	}
	s0, s1 := b.starts[first], b.starts[last]
	span := s1.At - s0.At
	if span <= 0 || span < minSpan {
		return 0, Window{}, false
	}
	perSec = float64(s1.Before-s0.Before) * float64(engine.Second) / float64(span)
	return perSec, Window{From: s0.At, To: s1.At, Cycles: last - first}, true
}
