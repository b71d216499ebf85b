package sim

import (
	"math"

	"ftbench/engine"
)

// Backpressure, as Flink's backPressuredTimeMsPerSecond counts it: the time
// a process could not hand records on because an output channel was out of
// credit (docs/metrics.md, "Backpressure"). The clock runs while p.full > 0;
// it is started and stopped where full leaves and reaches 0 (send,
// channelDrained, kill), so the per-record path pays nothing for it.

// unblocked ends p's backpressure at time at: the span since bpSince
// counts as far as it lies within the input. The sender's and the
// receiver's clocks may differ by up to a slice, so a span can come out
// negative; it counts as none.
func (p *proc) unblocked(at engine.Time) {
	p.bpTime += inputSpan(p.bpSince, at, p.sim.inputEnd)
}

// backpressured is p's backpressure within the input up to time at,
// counting a span still open as ending then.
func (p *proc) backpressured(at engine.Time) engine.Time {
	if p.full > 0 {
		return p.bpTime + inputSpan(p.bpSince, at, p.sim.inputEnd)
	}
	return p.bpTime
}

// inputSpan is how much of [from, to) lies before end (0 when end is 0:
// nothing is measured).
func inputSpan(from, to, end engine.Time) engine.Time {
	return max(0, min(to, end)-from)
}

// reportBackpressure counts every operator's backpressure over the input
// into the observer, once, at the first sample at or after the input's end
// (no span can change what lies before it any more: every later step runs
// at or after that sample). Operators are counted in deployment order.
func (s *Sim) reportBackpressure() {
	s.bpReported = true
	type stat struct {
		sum, max engine.Time
		n        int
	}
	var ops []string
	stats := map[string]*stat{}
	for _, p := range s.procs {
		if p.spec.Op == "" {
			continue
		}
		st := stats[p.spec.Op]
		if st == nil {
			st = &stat{}
			stats[p.spec.Op] = st
			ops = append(ops, p.spec.Op)
		}
		t := p.backpressured(s.inputEnd)
		st.sum += t
		st.max = max(st.max, t)
		st.n++
	}
	perSecond := func(t float64) int64 { return int64(math.Round(t * 1000 / float64(s.inputEnd))) }
	for _, op := range ops {
		st := stats[op]
		s.obs.Count(engine.BackpressuredCounter+op, perSecond(float64(st.sum)/float64(st.n)))
		s.obs.Count(engine.BackpressuredMaxCounter+op, perSecond(float64(st.max)))
	}
}
