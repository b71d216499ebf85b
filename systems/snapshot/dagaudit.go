package snapshot

import (
	"fmt"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/checkpoint"
	"ftbench/workloads"
)

// Auditing a dataflow checkpoint: check.CheckSnapshotsFrom restores it, drains
// its channel state through the plan and compares the keyed state with the
// oracle at the checkpoint's source offsets (exact since keyed state ignores
// the order of records, the contract on workloads.Stage.Update), started
// from the harness oracle pass's milestones rather than a replay. For a workload with a conservation law
// (workloads.Ledger: bank) the money in the recorded state and channel
// state is summed as well: zero for a consistent checkpoint.

// loadCheckpoint reads completed checkpoint n back from the store as the
// checker's cut, and sums its money when the workload is a ledger.
func loadCheckpoint(r systems.RunInfo, n int64, ledger workloads.Ledger) (check.CheckpointCut, int64, bool) {
	par := r.Job.Parallelism
	plan := r.Workload.Plan()
	cut := check.CheckpointCut{ID: n, Offsets: make([]int64, par), Stages: make([]check.StageCut, len(plan.Stages))}
	var money int64
	// stream.Build numbers the sources 0..par-1, then each stage's instances.
	for id := 0; id < par*(1+len(plan.Stages)); id++ {
		v, ok := r.Store(checkpoint.Key(n, engine.ProcID(id)))
		if !ok {
			return cut, 0, false
		}
		switch s := v.(type) {
		case *sourceState:
			cut.Offsets[id] = s.Next
		case *taskState:
			st := &cut.Stages[s.Stage]
			kvs := make([]check.StateKV, len(s.KV))
			for i, kv := range s.KV {
				kvs[i] = check.StateKV{Key: kv.Key, Val: kv.Val}
				if ledger != nil {
					money += ledger.StateMoney(s.Stage, kv.Key, kv.Val)
				}
			}
			st.State = append(st.State, kvs)
			for _, ch := range s.Chans {
				for _, m := range ch {
					if ledger != nil {
						money += ledger.InFlightMoney(s.Stage, m)
					}
				}
				st.InFlight = append(st.InFlight, ch...)
			}
		}
	}
	return cut, money, true
}

func summarizeDAG(r systems.RunInfo) map[string]any {
	ledger, _ := r.Workload.(workloads.Ledger)
	var (
		taken, missing, imbalanced       int64
		durations, stateBytes, chanBytes []float64
		cuts                             []check.CheckpointCut
		problems                         []string
	)
	for _, e := range r.Events {
		switch e.Kind {
		case "checkpoint_completed":
			durations = append(durations, float64(e.Value)/1e6)
			stateBytes = append(stateBytes, float64(e.Bytes))
		case "checkpoint_channel_state":
			chanBytes = append(chanBytes, float64(e.Bytes))
		}
	}
	for _, n := range eventIDs(r.Events, "checkpoint_completed") {
		taken++
		cut, money, ok := loadCheckpoint(r, n, ledger)
		if !ok {
			missing++
			continue
		}
		cuts = append(cuts, cut)
		if money != 0 {
			imbalanced++
			if len(problems) < maxExamples {
				problems = append(problems, fmt.Sprintf("checkpoint %d: recorded state and channel state hold %+d of money, want 0", n, money))
			}
		}
	}
	res := check.CheckSnapshotsFrom(r.Workload, cuts, r.Milestones)
	problems = append(res.Problems, problems...)
	m := map[string]any{
		"snapshots_taken":        taken,
		"snapshots_consistent":   int64(res.Consistent),
		"snapshots_inconsistent": int64(res.Inconsistent),
		"snapshots_missing":      missing, // completed but not found in the store
		"consistency_claim":      claimFIFO,
		"audit":                  "restored state + drained channel state vs the oracle at the recorded source offsets",
		"duration_ms":            stat(durations),
		"state_bytes":            stat(stateBytes),
		"channel_state_bytes":    stat(chanBytes),
		// Counted, not by id: a new leader after a master crash numbers
		// its attempts afresh.
		"rollbacks":           max(0, eventCount(r.Events, "deploy")-1),
		"leader_takeovers":    eventCount(r.Events, "leader_takeover"),
		"reinjected_records":  r.Counters[cntReinjected],
		"checkpoints_aborted": int64(len(eventIDs(r.Events, "checkpoint_aborted"))),
	}
	if ledger != nil {
		m["conservation"] = map[string]any{"violated": imbalanced}
	}
	overhead(m, r.Counters, taken)
	if len(problems) > 0 {
		m["inconsistent_examples"] = problems[:min(len(problems), maxExamples)]
	}
	// A money imbalance implies a failed drain; max() counts a checkpoint
	// failing both once, and still counts an imbalance the drain missed.
	m["safety_violations"] = max(int64(res.Inconsistent), imbalanced) + missing
	return m
}

// eventCount counts the events of one kind.
func eventCount(events []engine.Event, kind string) int64 {
	var n int64
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
