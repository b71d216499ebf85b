package harness

import (
	"fmt"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/workloads"
)

// The expected effects of a run come from one pass of the workload's
// sequential oracle over the appended log, beside the simulation: it gives
// the final state (wrong keys), each key's expected effects (the observer)
// and the total, checks every record's effect count against the one the
// delivery checker uses during the run, and leaves milestones along the log
// (workloads.Milestones) from which the snapshot checks of a system's
// Summarize get the oracle at a checkpoint's offsets without a replay. An
// undrained run takes a second pass for the keys of effects still pending.
// A workload that counts its effects without the oracle
// (workloads.EffectCounter) needs nothing per record of the log during the
// run; any other gets a table of counts up front, one byte per record, as
// before.

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

// oracleOut is what the oracle pass computes for the checks after the run.
type oracleOut struct {
	sum   int64                   // effects of the whole log
	final map[uint64]int64        // the sink's expected final state
	want  map[uint64]check.Expect // the observer's expectations, nil without it
	miles *workloads.Milestones   // the keyed state along the log, for snapshot checks
	fault any                     // a panic of the pass, re-raised by the run
}

// startOracle prepares the oracle pass: it feeds every appended record
// through the oracle, in offset order with partitions interleaved (the
// order that defines the expected output). The log is fixed before the run
// (the source appends on a schedule, whatever the system does), so the pass
// needs nothing from the simulation and runs beside it, on the machine's
// other core, with a workload instance of its own: the checks wait for it
// only if it is still going when the simulation ends. Its results do not
// depend on the timing, so a run stays reproducible. The caller runs it: in
// steps on the commit pipe's goroutine (commits.go), or on a goroutine of
// its own (run).
func (r *runner) startOracle() *oraclePass {
	done := make(chan oracleOut, 1)
	w, err := r.newWorkload()
	if err != nil {
		panic(err) // the same workload was built before the run
	}
	ps := &oraclePass{w: w, o: workloads.NewOracle(w), total: r.log.Total(), parts: int32(r.cfg.Parallelism), done: done}
	ps.effectsOf = r.effectsOf
	if c, ok := w.(workloads.EffectCounter); ok {
		ps.effectsOf = c.Effects // the run's own counter belongs to the simulation's goroutine
	}
	if r.obs != nil && hasSink(w) {
		ps.out.want = map[uint64]check.Expect{}
		ps.o.OnEffect = expectations(ps.out.want)
	}
	ps.miles = workloads.NewMilestones(int(ps.parts), ps.total)
	ps.rounds = max(1, oracleStepRecords/int64(ps.parts))
	r.oracleDone = done
	return ps
}

// oraclePass is the oracle's walk over the log, resumable, so that it can
// run in steps between the commit pipe's batches. Invariant: rounds [0,
// off) of the log (one record of every partition each) have been fed, and
// once off reaches total the result has been sent on done exactly once
// (also when a step panics: the fault goes with it).
type oraclePass struct {
	w         workloads.Workload
	o         *workloads.Oracle
	miles     *workloads.Milestones
	effectsOf func(p int32, off int64) int32
	total     int64
	parts     int32
	off       int64
	rounds    int64 // rounds per step
	out       oracleOut
	done      chan<- oracleOut
}

// oracleStepRecords is about how many records one step feeds: little
// enough that a batch of commits waits a fraction of a millisecond for it.
const oracleStepRecords = 2048

// step feeds the next rounds and reports whether any are left.
func (ps *oraclePass) step() (more bool) {
	defer func() {
		if f := recover(); f != nil {
			ps.out.fault, ps.off = f, ps.total
			ps.done <- ps.out
			more = false
		}
	}()
	for end := min(ps.total, ps.off+ps.rounds); ps.off < end; ps.off++ {
		ps.miles.Take(ps.off, ps.o)
		for p := range ps.parts {
			n := ps.o.Feed(p, ps.off)
			if c := ps.effectsOf(p, ps.off); n != c {
				panic(fmt.Sprintf("workload %s: record %d/%d has %d effects, but its effect counter said %d", ps.w.Name(), p, ps.off, n, c))
			}
			ps.out.sum += int64(n)
		}
	}
	if ps.off < ps.total {
		return true
	}
	ps.out.final = ps.o.Final()
	ps.miles.End(ps.o)
	ps.out.miles = ps.miles
	ps.done <- ps.out
	return false
}

// run feeds the whole pass (on a goroutine of its own).
func (ps *oraclePass) run() {
	for ps.step() {
	}
}

// joinOracle waits for the oracle pass and takes its results.
func (r *runner) joinOracle() {
	out := <-r.oracleDone
	if out.fault != nil {
		panic(out.fault) // Execute turns it into an internal error
	}
	r.expected, r.final, r.obsWant, r.milestones = out.sum, out.final, out.want, out.miles
}

// pendingKeys are the sink keys some pending effect writes: their visible
// value legitimately lags the oracle's final one in an undrained run. Only
// an undrained run asks, after the simulation: it takes one more oracle
// pass, since each sink effect carries its id and the delivery checker
// knows which ids were committed.
func (r *runner) pendingKeys() map[uint64]bool {
	if r.pending != nil {
		return r.pending
	}
	r.pending = map[uint64]bool{}
	o := workloads.NewOracle(r.w)
	o.OnEffect = func(m engine.Msg, _ int64) {
		if !r.delivery.Committed(m.ID) {
			r.pending[m.Key] = true
		}
	}
	for off := int64(0); off < r.log.Total(); off++ {
		for p := int32(0); p < int32(r.cfg.Parallelism); p++ {
			o.Feed(p, off)
		}
	}
	return r.pending
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
