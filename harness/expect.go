package harness

import (
	"fmt"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/workloads"
)

// The expected effects of a run come from one pass of the workload's
// sequential oracle over the appended log, after the simulation: it gives
// the final state (wrong keys), each key's expected effects (the observer),
// the keys of effects still pending (an undrained run) and the total, and
// checks every record's effect count against the one the delivery checker
// used during the run. A workload that counts its effects without the
// oracle (workloads.EffectCounter) needs nothing per record of the log
// during the run; any other gets a table of counts up front, one byte per
// record, as before.

// prepareExpected sets up the delivery checker's expected counts.
func (r *runner) prepareExpected() {
	total := r.log.Total()
	r.expected = -1
	if c, ok := r.w.(workloads.EffectCounter); ok {
		r.effectsOf = func(p int32, off int64) int32 {
			if off < 0 || off >= total {
				return 0
			}
			return c.Effects(p, off)
		}
	} else {
		table, sum, _ := workloads.Expected(r.w, r.appendedAll())
		r.expected = sum
		r.effectsOf = func(p int32, off int64) int32 {
			if int(p) >= len(table) || off < 0 || off >= int64(len(table[p])) {
				return 0
			}
			return int32(table[p][off])
		}
	}
	r.delivery = check.NewDelivery(r.effectsOf, r.cfg.Parallelism)
	r.stale = metrics.NewStalenessTracker(r.cfg.Bucket)
	r.delivery.OnSettle(func(row int64, done []int64) {
		born := r.log.BornAt(row)
		for _, d := range done {
			r.stale.Record(born, engine.Time(d))
		}
	})
}

// expectedTotal is the number of effects the whole log must produce
// (computed once, when the drain first asks).
func (r *runner) expectedTotal() int64 {
	if r.expected < 0 {
		var sum int64
		for off := int64(0); off < r.log.Total(); off++ {
			for p := 0; p < r.cfg.Parallelism; p++ {
				sum += int64(r.effectsOf(int32(p), off))
			}
		}
		r.expected = sum
	}
	return r.expected
}

// oraclePass feeds every appended record through the oracle, in offset
// order with partitions interleaved (the order that defines the expected
// output), once the run is over.
func (r *runner) oraclePass() {
	o := workloads.NewOracle(r.w)
	pending := map[uint64]bool{}
	var want map[uint64]check.Expect
	var collect func(engine.Msg, int64)
	if r.obs != nil && hasSink(r.w) {
		want = map[uint64]check.Expect{}
		collect = expectations(want)
	}
	o.OnEffect = func(m engine.Msg, prev int64) {
		if collect != nil {
			collect(m, prev)
		}
		if !r.delivery.Committed(m.ID) {
			pending[m.Key] = true
		}
	}
	var sum int64
	for off := int64(0); off < r.log.Total(); off++ {
		for p := int32(0); p < int32(r.cfg.Parallelism); p++ {
			n := o.Feed(p, off)
			if c := r.effectsOf(p, off); n != c {
				panic(fmt.Sprintf("workload %s: record %d/%d has %d effects, but its effect counter said %d", r.w.Name(), p, off, n, c))
			}
			sum += int64(n)
		}
	}
	r.expected, r.final, r.pending, r.obsWant = sum, o.Final(), pending, want
}

// staleness is the output staleness series of the run (metrics.Staleness):
// every record still in the delivery checker's window and every record that
// left it incomplete is added now.
func (r *runner) staleness() []engine.Time {
	r.delivery.SettleAll()
	r.delivery.Exceptions(func(_ int32, off, done int64) {
		r.stale.Late(r.log.BornAt(off), engine.Time(done))
	})
	return r.stale.Result(r.series.Len())
}
