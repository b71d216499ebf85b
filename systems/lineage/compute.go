package lineage

import (
	"ftbench/engine"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// pipeline runs one Spark stage's plan stages over one partition of one
// batch, record at a time within the task (narrow dependencies are
// pipelined, never materialised), and tallies the CPU the cost model
// charges for it. The state maps are the task's private copies (an RDD is
// immutable: state[j] is a new RDD derived from state[j-1]).
type pipeline struct {
	e       *env
	st      *sstage
	nOut    int // partitions of the next stage
	states  []map[uint64]int64
	emit    bool
	emits   []func(engine.Msg)
	buckets [][]rec
	effects []rec
	cpu     engine.Time
	rr      int
}

func newPipeline(e *env, s int, states []map[uint64]int64, emit bool) *pipeline {
	p := &pipeline{e: e, st: &e.stages[s], states: states, emit: emit}
	if s < e.last() {
		p.nOut = e.parts[s+1]
	}
	p.emits = make([]func(engine.Msg), len(p.st.ops))
	for i := range p.st.ops {
		next := i + 1
		p.emits[i] = func(m engine.Msg) { p.run(next, m) }
	}
	return p
}

// newStates returns empty state maps for a stage (nil for stateless ops).
func newStates(e *env, s int) []map[uint64]int64 {
	st := &e.stages[s]
	if !st.keyed {
		return nil
	}
	maps := make([]map[uint64]int64, len(st.ops))
	for i, op := range st.ops {
		if e.plan.Stages[op].Keyed() {
			maps[i] = map[uint64]int64{}
		}
	}
	return maps
}

// copyStates copies state maps so the task never mutates a published RDD.
func copyStates(in []map[uint64]int64) []map[uint64]int64 {
	if in == nil {
		return nil
	}
	out := make([]map[uint64]int64, len(in))
	for i, m := range in {
		if m == nil {
			continue
		}
		c := make(map[uint64]int64, len(m))
		for k, v := range m {
			c[k] = v
		}
		out[i] = c
	}
	return out
}

func stateKeys(st []map[uint64]int64) int {
	n := 0
	for _, m := range st {
		n += len(m)
	}
	return n
}

// batch resets the per-batch outputs.
func (p *pipeline) batch() {
	p.buckets, p.effects, p.cpu, p.rr = nil, nil, 0, 0
	if p.nOut > 0 {
		p.buckets = make([][]rec, p.nOut)
	}
}

// source feeds records [lo, hi) of source partition part.
func (p *pipeline) source(part int, lo, hi int64) int64 {
	c := p.e.srcCost
	for off := lo; off < hi; off++ {
		m := p.e.w.Record(int32(part), off)
		m.Born = p.e.log.BornAt(off)
		p.cpu += c.SourceRecord
		p.run(0, m)
	}
	return hi - lo
}

// shuffled feeds the records of the input blocks, in map-partition order so
// every recomputation sees the same order.
func (p *pipeline) shuffled(blocks [][]rec) int64 {
	var n int64
	for _, b := range blocks {
		for i := range b {
			p.run(0, b[i].msg(p.e.log))
		}
		n += int64(len(b))
	}
	return n
}

// run feeds m to the i-th plan stage of the Spark stage.
func (p *pipeline) run(i int, m engine.Msg) {
	if i == len(p.st.ops) {
		p.shuffleWrite(m)
		return
	}
	op := p.st.ops[i]
	ps := &p.e.plan.Stages[op]
	switch {
	case ps.Sink:
		// A recomputation that only rebuilds state does not run the
		// output operation again: its batch is committed already.
		if p.emit {
			p.cpu += ps.Cost(p.e.opCost[op], m)
			p.effects = append(p.effects, toRec(m))
		}
		return
	}
	p.cpu += ps.Cost(p.e.opCost[op], m)
	switch {
	case ps.Update != nil:
		st := p.states[i]
		v := st[m.Key]
		ps.Update(&v, m, p.emits[i])
		st[m.Key] = v
	default:
		ps.Fn(m, p.emits[i])
	}
}

// shuffleWrite puts an output record into the bucket of its next-stage
// partition (the shuffle's partitioner).
func (p *pipeline) shuffleWrite(m engine.Msg) {
	r := toRec(m)
	switch p.st.out {
	case workloads.Hash:
		k := stream.KeyPartition(m.Key, p.nOut)
		p.buckets[k] = append(p.buckets[k], r)
	case workloads.Broadcast:
		for k := range p.buckets {
			p.buckets[k] = append(p.buckets[k], r)
		}
	default: // Rebalance: round-robin, deterministic per task
		p.buckets[p.rr%p.nOut] = append(p.buckets[p.rr%p.nOut], r)
		p.rr++
	}
}
