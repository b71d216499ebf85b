package live

import (
	"sync"
	"sync/atomic"
	"time"

	"ftbench/engine"
)

// burner pays Work with real computation: a loop whose iterations per
// nanosecond were measured on this machine when the first live run
// started. Paying in iterations rather than spinning on the clock means a
// goroutine that is preempted does not get its work done for free, and the
// cost model's costs compete for the machine's real cores as the
// simulator's Work competes for a worker's modelled ones.
type burner struct {
	perNs float64 // loop iterations per nanosecond of CPU
}

var (
	calibrateOnce sync.Once
	calibration   *burner
	sink          atomic.Uint64 // keeps the loop from being optimised away
)

// calibrated returns the machine's burner, measuring it once per OS
// process: the fastest of several timed rounds, so that a round slowed by
// other load on the machine does not make every Work too short.
func calibrated() *burner {
	calibrateOnce.Do(func() {
		const n = 1 << 21
		best := time.Duration(1<<63 - 1)
		for range 7 {
			t0 := time.Now()
			spin(n)
			best = min(best, time.Since(t0))
		}
		calibration = &burner{perNs: float64(n) / float64(max(best, 1))}
	})
	return calibration
}

// IterationsPerSecond is the calibration of this machine (for run.json).
func IterationsPerSecond() float64 { return calibrated().perNs * 1e9 }

func spin(n int64) {
	x := uint64(n) | 1
	for i := int64(0); i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink.Add(x)
}

// pay burns d of CPU for p (scaled by a slow fault in force).
func (rt *Runtime) pay(p *proc, d engine.Time) {
	if rt.burn == nil || d <= 0 {
		return
	}
	if len(p.slow) > 0 {
		now := rt.Now()
		for _, r := range p.slow {
			if now >= r.from && now < r.to {
				d = engine.Time(float64(d) * r.factor)
				break
			}
		}
	}
	spin(int64(float64(d) * rt.burn.perNs))
}
