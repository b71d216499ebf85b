package workloads

import (
	"iter"
	"maps"
	"math"
	"slices"

	"ftbench/engine"
)

// KeyPartition is the instance of n that owns key under hash partitioning
// (the KeyBy): every system routes keyed records with it, so the capacity
// bound can compute exactly which instance gets which key.
func KeyPartition(key uint64, n int) int { return int(engine.Mix64(key) % uint64(n)) }

// KeySkewed is implemented by workloads whose hash-partitioned (Input Hash)
// stages receive their keys with a known distribution. The distribution is
// the workload's exact sampling distribution, not a sample, so the bound
// that uses it is deterministic. A hash stage of a workload that does not
// implement it is assumed to spread its work evenly.
type KeySkewed interface {
	// KeyLoads yields every key stage receives with its load — the share
	// of the stage's CPU per source record that records of that key take,
	// on any non-negative scale — in a fixed order, for a hash-partitioned
	// stage and for a forward stage fed by one (keyed by the key its
	// upstream instance was sent the record under). nil if stage's keys are
	// unknown or do not decide its instance. Streamed, not listed, so a
	// large key space costs no memory.
	KeyLoads(c *engine.CostModel, stage string) iter.Seq2[uint64, float64]
}

// InstanceShares gives, for the source and every stage of w's plan (by
// name), the share of that operator's work each of its par instances does
// (index i is instance i; the shares sum to 1):
//
//   - the source's partitions are appended at equal rates: 1/par each;
//   - a hash-partitioned stage: the summed load of the keys KeyPartition
//     gives the instance (KeySkewed), else 1/par each;
//   - a forward stage: its upstream instance's share (instance i feeds i),
//     or, fed by a hash-partitioned stage, the summed load of its own keys
//     where the workload gives them (its records may cost differently);
//   - rebalance and broadcast: 1/par each.
func InstanceShares(w Workload, c *engine.CostModel, par int) map[string][]float64 {
	even := make([]float64, par)
	for i := range even {
		even[i] = 1 / float64(par)
	}
	loads := func(stage string) iter.Seq2[uint64, float64] {
		if ks, ok := w.(KeySkewed); ok {
			return ks.KeyLoads(c.For(stage), stage)
		}
		return nil
	}
	p := w.Plan()
	out := map[string][]float64{p.Source: even}
	prev, hashed := even, false // hashed: records still sit where a hash put them
	for i := range p.Stages {
		st := &p.Stages[i]
		sh := even
		switch st.Input {
		case Forward:
			sh = prev
			if l := loads(st.Name); hashed && l != nil {
				sh = hashShares(l, par)
			}
		case Hash:
			hashed = true
			if l := loads(st.Name); l != nil {
				sh = hashShares(l, par)
			}
		default:
			hashed = false
		}
		out[st.Name] = sh
		prev = sh
	}
	return out
}

// hashShares sums each instance's keys' loads and normalises them. The sums
// run in the caller's key order, so the result does not depend on map order.
func hashShares(loads iter.Seq2[uint64, float64], par int) []float64 {
	sh := make([]float64, par)
	total := 0.0
	for key, w := range loads {
		sh[KeyPartition(key, par)] += w
		total += w
	}
	if total <= 0 {
		for i := range sh {
			sh[i] = 1 / float64(par)
		}
		return sh
	}
	for i := range sh {
		sh[i] /= total
	}
	return sh
}

// BusiestShare is the largest share of stage's work that one of its par
// instances does (1/par when the work is spread evenly).
func BusiestShare(w Workload, c *engine.CostModel, stage string, par int) float64 {
	return slices.Max(InstanceShares(w, c, par)[stage])
}

// CapacityBound is the highest input rate (records/s) the cost model allows
// a record-at-a-time deployment of w with parallelism par on workers
// machines (instance i of every operator on worker i mod workers, as
// stream.Build places them), with each instance doing its share of its
// operator's work (InstanceShares: for a keyed stage, the keys the hash
// partitioning gives it, so the busiest instance, not the mean, limits).
// Two limits apply:
//
//   - an instance runs on one core at a time: rate·share_i·cost(op) ≤ 1
//     core-second per second for every instance i of every operator op;
//   - the instances on worker k share its c.Cores cores:
//     rate·Σ_{op, i on k} share_i·cost(op) ≤ c.Cores.
//
// The bound is the smaller; it leaves out protocol processes (ackers,
// coordinators) and control traffic, which only lower the real capacity.
// c.Cores == 0 means a CPU per process (no worker limit). Each operator's
// cost is taken under its own model (c.For), so per-operator overrides
// (--cost count.state-cpu=8us) move the bound as they move the runs.
func CapacityBound(w Workload, c *engine.CostModel, par, workers int) float64 {
	return ChainedCapacityBound(w, c, par, workers, nil, false)
}

// ChainedCapacityBound is CapacityBound for a deployment that chains
// operators as Flink does (barrier and none with --chaining): chains lists
// the operators each task runs, in order (an operator in no chain runs
// alone). A chain's instance i does the work of instance i of each of its
// operators in one thread, so the limits apply to the chain's sum; an
// operator whose output goes to the next operator of its chain pays no
// send for it but the serializer's copy (bytes × serde-per-byte: its send
// cost with send-cpu and header zero), or nothing with object reuse.
func ChainedCapacityBound(w Workload, c *engine.CostModel, par, workers int, chains [][]string, reuse bool) float64 {
	chained := map[string]bool{} // the operator's output is a chained hop
	for _, ch := range chains {
		for _, op := range ch[:max(len(ch)-1, 0)] {
			chained[op] = true
		}
	}
	costs := map[string]engine.Time{}
	for op := range w.CostPerRecord(c) {
		m := c.For(op)
		if chained[op] {
			hop := *m
			hop.SendCPU, hop.MsgHeader = 0, 0
			if reuse {
				hop.SerdePerByte = 0
			}
			m = &hop
		}
		costs[op] = w.CostPerRecord(m)[op]
	}
	ops := make([]string, 0, len(costs))
	for op, t := range costs {
		if t > 0 {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 || par < 1 || workers < 1 {
		return math.Inf(1)
	}
	slices.Sort(ops) // float sums in a fixed order
	// task names the chain each operator runs in (itself when alone).
	task := map[string]string{}
	for _, ch := range chains {
		for _, op := range ch {
			task[op] = ch[0]
		}
	}
	shares := InstanceShares(w, c, par)
	per := map[string][]float64{}    // ns of CPU per input record, per task instance
	load := make([]float64, workers) // ns of CPU per input record, per worker
	for _, op := range ops {
		cost := float64(costs[op])
		sh, ok := shares[op]
		if !ok {
			sh = shares[w.Plan().Source] // an operator outside the plan: even
		}
		t, ok := task[op]
		if !ok {
			t = op
		}
		if per[t] == nil {
			per[t] = make([]float64, len(sh))
		}
		for i, s := range sh {
			if s <= 0 {
				continue
			}
			per[t][i] += s * cost
			load[i%workers] += s * cost
		}
	}
	bound := math.Inf(1)
	for _, t := range slices.Sorted(maps.Keys(per)) {
		for _, l := range per[t] {
			if l > 0 {
				bound = min(bound, 1e9/l)
			}
		}
	}
	if c.Cores > 0 {
		bound = min(bound, float64(c.Cores)*1e9/slices.Max(load))
	}
	return bound
}
