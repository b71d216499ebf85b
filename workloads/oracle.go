package workloads

import "ftbench/engine"

// Oracle executes a plan sequentially, one record at a time and with one
// global state per keyed stage, which is the exact output any correct
// distributed execution of a prefix of the log must produce.
type Oracle struct {
	w      Workload
	plan   *Plan
	states []map[uint64]int64
	// cells[i] holds stage i's key state while its Update runs: a local
	// would escape to the heap (Update is a function value), one allocation
	// per record. One cell per stage, since Update's emit runs the stages
	// after it before it returns.
	cells []int64
	final map[uint64]int64
	// scratch for counting effects of one record
	effects int32
	emits   []func(engine.Msg)
	// OnEffect, when set, sees every sink effect with its key's previous
	// visible value (the observer derives each effect's contribution).
	OnEffect func(m engine.Msg, prev int64)
}

// NewOracle prepares an oracle for w.
func NewOracle(w Workload) *Oracle {
	o := &Oracle{w: w, plan: w.Plan(), final: map[uint64]int64{}}
	o.states = make([]map[uint64]int64, len(o.plan.Stages))
	o.cells = make([]int64, len(o.plan.Stages))
	for i := range o.states {
		o.states[i] = map[uint64]int64{}
	}
	o.emits = make([]func(engine.Msg), len(o.plan.Stages)+1)
	for i := range o.plan.Stages {
		next := i + 1
		o.emits[i] = func(m engine.Msg) { o.run(next, m) }
	}
	return o
}

// run feeds m into stage i.
func (o *Oracle) run(i int, m engine.Msg) {
	st := &o.plan.Stages[i]
	switch {
	case st.Sink:
		o.effects++
		if o.OnEffect != nil {
			o.OnEffect(m, o.final[m.Key])
		}
		o.final[m.Key] = m.Val
	case st.Update != nil:
		c := &o.cells[i]
		*c = o.states[i][m.Key]
		st.Update(c, m, o.emits[i])
		o.states[i][m.Key] = *c
	default:
		st.Fn(m, o.emits[i])
	}
}

// Feed runs the record at (part, off) through the plan and returns how many
// effects it produced at the sink.
func (o *Oracle) Feed(part int32, off int64) int32 {
	o.effects = 0
	o.run(0, o.w.Record(part, off))
	return o.effects
}

// State is keyed stage i's state after everything fed so far (empty for a
// stateless stage or the sink). It is the oracle's own map: read it, do not
// modify it. Snapshot-consistency checks compare persisted operator state
// with it.
func (o *Oracle) State(i int) map[uint64]int64 { return o.states[i] }

// Final is the sink's visible state after everything fed so far.
func (o *Oracle) Final() map[uint64]int64 { return o.final }

// Expected feeds every appended record (appended[p] records of partition p)
// in offset order, interleaving partitions, and returns the per-record effect
// counts (for the delivery checker), their total and the final state.
func Expected(w Workload, appended []int64) (effects [][]uint8, total int64, final map[uint64]int64) {
	o := NewOracle(w)
	effects = make([][]uint8, len(appended))
	for p, n := range appended {
		effects[p] = make([]uint8, n)
	}
	var maxN int64
	for _, n := range appended {
		maxN = max(maxN, n)
	}
	for off := int64(0); off < maxN; off++ {
		for p, n := range appended {
			if off < n {
				e := o.Feed(int32(p), off)
				effects[p][off] = uint8(e)
				total += int64(e)
			}
		}
	}
	return effects, total, o.Final()
}
