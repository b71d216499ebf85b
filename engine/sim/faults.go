package sim

import (
	"fmt"

	"ftbench/engine"
)

type slowRule struct {
	from, to engine.Time
	factor   float64
}

type reorderRule struct {
	from, to engine.Time
	p        float64
	match    func(from, to engine.ProcID) bool
}

type throttleRule struct {
	from, to engine.Time
	rate     float64 // records per second per channel
	match    func(from, to engine.ProcID) bool
}

// Slow multiplies the CPU cost of process id by factor during [from, to).
func (s *Sim) Slow(id engine.ProcID, from, to engine.Time, factor float64) error {
	if factor <= 0 {
		return fmt.Errorf("slow: factor must be positive, got %g", factor)
	}
	p := s.mustProc(id)
	p.slow = append(p.slow, slowRule{from: from, to: to, factor: factor})
	return nil
}

// Reorder makes channels selected by match non-FIFO during [from, to): each
// buffer flushed then is held back by a random delay with probability p, and
// its messages shuffled with probability p.
func (s *Sim) Reorder(from, to engine.Time, p float64, match func(from, to engine.ProcID) bool) {
	s.reorders = append(s.reorders, reorderRule{from: from, to: to, p: p, match: match})
}

// Throttle limits every channel selected by match to rate data records per
// second during [from, to) (link backpressure).
func (s *Sim) Throttle(from, to engine.Time, rate float64, match func(from, to engine.ProcID) bool) {
	s.throttles = append(s.throttles, throttleRule{from: from, to: to, rate: rate, match: match})
}

func (s *Sim) reorderProb(ch *channel, at engine.Time) float64 {
	for _, r := range s.reorders {
		if at >= r.from && at < r.to && r.match(ch.from.id, ch.to.id) {
			return r.p
		}
	}
	return 0
}

// throttleRate is the rate limit on ch at time at (0: none) and when its window ends.
func (s *Sim) throttleRate(ch *channel, at engine.Time) (rate float64, until engine.Time) {
	for _, r := range s.throttles {
		if at >= r.from && at < r.to && r.match(ch.from.id, ch.to.id) {
			return r.rate, r.to
		}
	}
	return 0, 0
}
