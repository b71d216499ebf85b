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
			st.State = append(st.State, checkpoint.StateKVs(s.KV))
			for _, ch := range s.Chans {
				st.InFlight = append(st.InFlight, ch...)
			}
			if ledger != nil {
				money += taskMoney(ledger, s)
			}
		}
	}
	return cut, money, true
}

// taskMoney is the money in a task's recorded state and channel state.
func taskMoney(ledger workloads.Ledger, s *taskState) int64 {
	var money int64
	for _, kv := range s.KV {
		money += ledger.StateMoney(s.Stage, kv.Key, kv.Val)
	}
	for _, ch := range s.Chans {
		for _, m := range ch {
			money += ledger.InFlightMoney(s.Stage, m)
		}
	}
	return money
}

// summarizeDAG audits every completed checkpoint of a dataflow run and
// reports what the checkpoints and rollbacks cost.
func summarizeDAG(r systems.RunInfo) map[string]any {
	ledger, _ := r.Workload.(workloads.Ledger)
	a := auditDAG(r, ledger)
	m := map[string]any{
		"snapshots_taken":        a.taken,
		"snapshots_consistent":   int64(a.res.Consistent),
		"snapshots_inconsistent": int64(a.res.Inconsistent),
		"snapshots_missing":      a.missing, // completed but not found in the store
		"consistency_claim":      claimFIFO,
		"audit":                  "restored state + drained channel state vs the oracle at the recorded source offsets",
	}
	if ledger != nil {
		m["conservation"] = map[string]any{"violated": a.imbalanced}
	}
	if len(a.problems) > 0 {
		m["inconsistent_examples"] = a.problems[:min(len(a.problems), maxExamples)]
	}
	// A money imbalance implies a failed drain; max() counts a checkpoint
	// failing both once, and still counts an imbalance the drain missed.
	m["safety_violations"] = max(int64(a.res.Inconsistent), a.imbalanced) + a.missing
	dagCheckpoints(m, r.Events)
	dagRollbacks(m, r)
	overhead(m, r.Counters, a.taken)
	return m
}

// dagAudit is the outcome of checking every completed checkpoint.
type dagAudit struct {
	taken, missing, imbalanced int64
	res                        check.SnapshotResult
	problems                   []string // the checker's, then the ledger's
}

// auditDAG checks every completed checkpoint against the oracle and, for a
// ledger, its money.
func auditDAG(r systems.RunInfo, ledger workloads.Ledger) dagAudit {
	var (
		a        dagAudit
		cuts     []check.CheckpointCut
		problems []string
	)
	for _, n := range eventIDs(r.Events, "checkpoint_completed") {
		a.taken++
		cut, money, ok := loadCheckpoint(r, n, ledger)
		if !ok {
			a.missing++
			continue
		}
		cuts = append(cuts, cut)
		if money != 0 {
			a.imbalanced++
			if len(problems) < maxExamples {
				problems = append(problems, fmt.Sprintf("checkpoint %d: recorded state and channel state hold %+d of money, want 0", n, money))
			}
		}
	}
	a.res = check.CheckSnapshotsFrom(r.Workload, cuts, r.Milestones)
	a.problems = append(a.res.Problems, problems...)
	return a
}

// dagCheckpoints reports the completed checkpoints' durations and sizes
// and the aborted ones, from the coordinator's events. Barrier reads the
// same events but rounds each duration before its own distribution (see
// package summary), so the sampling stays apart.
func dagCheckpoints(m map[string]any, events []engine.Event) {
	var durations, stateBytes, chanBytes []float64
	for _, e := range events {
		switch e.Kind {
		case "checkpoint_completed":
			durations = append(durations, float64(e.Value)/1e6)
			stateBytes = append(stateBytes, float64(e.Bytes))
		case "checkpoint_channel_state":
			chanBytes = append(chanBytes, float64(e.Bytes))
		}
	}
	m["duration_ms"] = stat(durations)
	m["state_bytes"] = stat(stateBytes)
	m["channel_state_bytes"] = stat(chanBytes)
	m["checkpoints_aborted"] = int64(len(eventIDs(events, "checkpoint_aborted")))
}

// dagRollbacks reports the rollbacks and the records they injected again.
func dagRollbacks(m map[string]any, r systems.RunInfo) {
	// Counted, not by id: a new leader after a master crash numbers its
	// attempts afresh.
	m["rollbacks"] = max(0, eventCount(r.Events, "deploy")-1)
	m["leader_takeovers"] = eventCount(r.Events, "leader_takeover")
	m["reinjected_records"] = r.Counters[cntReinjected]
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
