package workloads

import (
	"ftbench/engine"
	"ftbench/keyed"
)

// Oracle executes a plan sequentially, one record at a time and with one
// global state per keyed stage, which is the exact output any correct
// distributed execution of a prefix of the log must produce.
type Oracle struct {
	w      Workload
	plan   *Plan
	states []*keyed.Table
	final  *keyed.Table
	// scratch for counting effects of one record
	effects int32
	emits   []func(engine.Msg)
	// OnEffect, when set, sees every sink effect with its key's previous
	// visible value (the observer derives each effect's contribution).
	OnEffect func(m engine.Msg, prev int64)
}

// NewOracle prepares an oracle for w.
func NewOracle(w Workload) *Oracle {
	o := &Oracle{w: w, plan: w.Plan(), final: keyed.New(0)}
	o.states = make([]*keyed.Table, len(o.plan.Stages))
	for i := range o.states {
		o.states[i] = keyed.New(0)
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
		v, _ := o.final.Ptr(m.Key)
		if o.OnEffect != nil {
			o.OnEffect(m, *v)
		}
		*v = m.Val
	case st.Update != nil:
		// Update works on the key's slot in place: its emit runs only later
		// stages (a plan is acyclic), which never insert into this table,
		// so the pointer stays valid.
		v, _ := o.states[i].Ptr(m.Key)
		st.Update(v, m, o.emits[i])
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

// State is a copy of keyed stage i's state after everything fed so far
// (empty for a stateless stage or the sink). Snapshot-consistency checks
// compare persisted operator state with it.
func (o *Oracle) State(i int) map[uint64]int64 { return o.states[i].Map() }

// Final is a copy of the sink's visible state after everything fed so far.
func (o *Oracle) Final() map[uint64]int64 { return o.final.Map() }

// keys is the number of keys over the keyed stages' states.
func (o *Oracle) keys() int {
	n := 0
	for _, t := range o.states {
		n += t.Len()
	}
	return n
}

// cloneStates copies the keyed stages' states (not the sink's).
func (o *Oracle) cloneStates() []*keyed.Table {
	c := make([]*keyed.Table, len(o.states))
	for i, t := range o.states {
		c[i] = t.Clone()
	}
	return c
}

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
