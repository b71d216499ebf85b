// Package capacity finds the highest offered rate a system sustains: a
// deterministic search over fault-free runs (probes), each judged by the
// overload criterion of run.json (the source lag must not grow by 1% of the
// rate per second or more) and, optionally, a bound on p99 end-to-end
// latency — the criterion of the D-Streams paper's throughput figure
// ("maximum throughput while keeping latency below a bound").
package capacity

import (
	"fmt"
	"math"
)

// DefaultTolerance is how close the search brackets the capacity: it stops
// when the lowest overloaded rate is within 2% of the highest sustained one.
const DefaultTolerance = 0.02

// maxSteps bounds the doubling (or halving) phase: 2^30 times the start
// rate either way is beyond any workload the simulator can run.
const maxSteps = 30

// Probe is one run of the search and its verdict.
type Probe struct {
	RateRPS float64 `json:"rate_rps"`
	// LagSlopeRPS is run.json's lag_slope_rps: the source lag's growth over
	// the steady window, records/s.
	LagSlopeRPS float64 `json:"lag_slope_rps"`
	// ThroughputRPS and P99MS are run.json's throughput_rps and
	// latency_ms.p99 (p99 over every effect committed by the end of the
	// probe's drain).
	ThroughputRPS *float64 `json:"throughput_rps"`
	P99MS         float64  `json:"p99_ms"`
	Drained       bool     `json:"drained"`
	Sustained     bool     `json:"sustained"`
	// Reason says why a probe is not sustained.
	Reason string `json:"reason,omitempty"`
	// Replay is the bench run line of this probe.
	Replay string `json:"replay,omitempty"`
	// CPU is what a live probe's process received (cpu.go); nil in the
	// simulator, which gives every probe its modelled cores.
	CPU *CPUUse `json:"cpu,omitempty"`
	// FirstAttempt is, for a live probe that failed and was run again, the
	// failed first attempt; the probe's own figures and verdict are the
	// second attempt's, so a live probe is failed only if both attempts
	// failed. Nil otherwise (and always in the simulator, whose probes are
	// deterministic).
	FirstAttempt *Probe `json:"first_attempt,omitempty"`
}

// ProbeFunc runs one probe at rate records/s.
type ProbeFunc func(rate float64) (Probe, error)

// Bracket is the outcome of a search: the capacity lies in [Sustained,
// Overloaded).
type Bracket struct {
	// Sustained is the highest rate found sustained (the capacity); 0 when
	// even the lowest probed rate was overloaded.
	Sustained float64
	// Overloaded is the lowest rate found overloaded.
	Overloaded float64
	Probes     []Probe
}

// Search finds the capacity by probing start, then doubling while probes
// are sustained (or halving while they are not, down to floor: the rate
// below which a probe judges noise, 0 for none) until a sustained and an
// overloaded rate bracket it, then bisecting until the overloaded bound is
// within tol (a fraction, e.g. 0.02) of the sustained one. When floor
// itself is overloaded the capacity is 0: Sustained is 0 and Overloaded
// floor. It assumes that a rate above an overloaded one is overloaded too.
// The sequence of probes depends only on the verdicts, so a deterministic
// probe gives a deterministic search. progress, if not nil, is called
// after every probe with the current bracket (0 for a side not found yet).
func Search(start, floor, tol float64, probe ProbeFunc, progress func(p Probe, lo, hi float64)) (Bracket, error) {
	if !(start > 0) || math.IsInf(start, 0) {
		return Bracket{}, fmt.Errorf("capacity search: start rate must be positive, got %g", start)
	}
	if !(tol > 0) {
		return Bracket{}, fmt.Errorf("capacity search: tolerance must be positive, got %g", tol)
	}
	var b Bracket
	var lo, hi float64 // highest sustained, lowest overloaded; 0 = not yet
	try := func(rate float64) (bool, error) {
		p, err := probe(rate)
		if err != nil {
			return false, fmt.Errorf("probe at %.6g records/s: %w", rate, err)
		}
		p.RateRPS = rate
		b.Probes = append(b.Probes, p)
		if p.Sustained {
			lo = rate
		} else {
			hi = rate
		}
		if progress != nil {
			progress(p, lo, hi)
		}
		return p.Sustained, nil
	}
	ok, err := try(start)
	if err != nil {
		return b, err
	}
	for step := 0; hi == 0 || lo == 0; step++ {
		if step == maxSteps {
			if hi == 0 {
				return b, fmt.Errorf("capacity search: still sustained at %.6g records/s (%d doublings)", lo, maxSteps)
			}
			// Overloaded even at start/2^30: the capacity is nil.
			b.Overloaded = hi
			return b, nil
		}
		rate := lo * 2
		if !ok {
			rate = hi / 2
		}
		if !ok && rate < floor {
			if hi <= floor {
				b.Overloaded = hi // overloaded at the lowest rate a probe judges
				return b, nil
			}
			rate = floor
		}
		if ok, err = try(rate); err != nil {
			return b, err
		}
	}
	for hi > lo*(1+tol) {
		if _, err := try((lo + hi) / 2); err != nil {
			return b, err
		}
	}
	b.Sustained, b.Overloaded = lo, hi
	return b, nil
}
