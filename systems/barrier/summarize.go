package barrier

import (
	"fmt"
	"slices"
	"sort"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/systems"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/systems/internal/summary"
)

// checkpointRow is one triggered checkpoint in run.json's "checkpoints".
type checkpointRow struct {
	ID                int64   `json:"id"`
	TriggeredS        float64 `json:"triggered_s"`
	Status            string  `json:"status"` // completed, aborted: <why>, incomplete
	DurationMS        float64 `json:"duration_ms,omitempty"`
	StateBytes        int64   `json:"state_bytes,omitempty"`
	ChannelStateBytes int64   `json:"channel_state_bytes,omitempty"`
	RestoreSizeBytes  int64   `json:"restore_size_bytes,omitempty"`
	AlignmentMaxMS    float64 `json:"alignment_max_ms"`
	// StartDelay*MS: trigger to the first barrier at a task, over the
	// tasks that started this checkpoint.
	StartDelayP50MS float64 `json:"start_delay_p50_ms"`
	StartDelayMaxMS float64 `json:"start_delay_max_ms"`
	BufferedRecords int64   `json:"alignment_buffered_records"`
}

// Summarize derives the checkpointing metrics from the run's events and
// counters and runs the snapshot-consistency check on every retained
// completed checkpoint. Key names are stable; the package doc defines them.
// Each step fills its own keys of the result.
func (system) Summarize(r systems.RunInfo) map[string]any {
	opt, err := parseOptions(r.Job.Variant, r.Job.Opts)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	cps := newCheckpointStats()
	align := alignmentStats{table: cps.table}
	rec := recoveryStats{nTasks: taskCount(r.Job)}
	var restoresFailed int64
	for _, e := range r.Events {
		cps.add(e)
		align.add(e)
		rec.add(e)
		if e.Kind == evRestoreFailed {
			restoresFailed++
		}
	}
	m := settings(r.Job, opt)
	cps.report(m)
	align.report(m)
	rec.report(m, r)
	consistency(m, r, cps.completed)
	// A task that found the latest completed checkpoint's snapshot gone
	// cannot restore the state that checkpoint promised.
	m["restores_failed"] = restoresFailed
	m["safety_violations"] = m["safety_violations"].(int64) + restoresFailed
	return m
}

// settings reports the options the run's figures depend on.
func settings(job systems.Job, opt options) map[string]any {
	return map[string]any{
		"variant":                      job.Variant,
		"sink":                         job.Opts["sink"],
		"checkpoint_interval_ms":       ms(int64(opt.interval)),
		"max_concurrent_checkpoints":   opt.maxConcurrent,
		"tolerable_failed_checkpoints": int64(opt.tolerable),
		"failover":                     job.Opts["failover"],
		"incremental":                  opt.incremental,
		"snapshots_retained_max":       int64(opt.retained),
	}
}

// taskCount is how many tasks the job runs, sources included: a failover
// that restarts that many is a global restart. -1 if the job does not
// compile, so that no failover counts as global.
func taskCount(job systems.Job) int64 {
	_, g, err := compile(job)
	if err != nil {
		return -1
	}
	return int64(len(g.Tasks()))
}

// checkpointTable is run.json's "checkpoints": a row for every checkpoint
// an event names, incomplete until an event says otherwise.
type checkpointTable struct {
	rows map[int64]*checkpointRow
	ids  []int64 // in order of first mention
}

func (t *checkpointTable) row(id int64) *checkpointRow {
	if t.rows[id] == nil {
		t.rows[id] = &checkpointRow{ID: id, Status: "incomplete"}
		t.ids = append(t.ids, id)
	}
	return t.rows[id]
}

// sorted lists the rows by checkpoint id.
func (t *checkpointTable) sorted() []checkpointRow {
	sort.Slice(t.ids, func(i, j int) bool { return t.ids[i] < t.ids[j] })
	out := make([]checkpointRow, 0, len(t.ids))
	for _, id := range t.ids {
		out = append(out, *t.rows[id])
	}
	return out
}

// checkpointStats is the life of every checkpoint as the coordinator and
// the tasks record it: triggered, started at each task, completed or
// aborted, and what it wrote.
type checkpointStats struct {
	table     *checkpointTable
	completed []int64               // in completion order
	failed    map[string]int64      // aborted checkpoints by reason
	triggered map[int64]engine.Time // checkpoint -> trigger time (ns)
	starts    []engine.Event        // checkpoint_start, joined with triggered by report
	// Per completed checkpoint.
	durations, stateBytes, channelBytes, restoreSizes []float64
	precommitBytes                                    int64
}

func newCheckpointStats() *checkpointStats {
	return &checkpointStats{
		table:     &checkpointTable{rows: map[int64]*checkpointRow{}},
		failed:    map[string]int64{},
		triggered: map[int64]engine.Time{},
	}
}

func (s *checkpointStats) add(e engine.Event) {
	switch e.Kind {
	case "checkpoint_triggered":
		s.table.row(e.ID).TriggeredS = summary.Round3(engine.Time(e.Time).Seconds())
		s.triggered[e.ID] = e.Time
	case "checkpoint_start":
		s.starts = append(s.starts, e)
	case "checkpoint_completed":
		c := s.table.row(e.ID)
		c.Status, c.DurationMS, c.StateBytes = "completed", ms(e.Value), e.Bytes
		s.durations = append(s.durations, ms(e.Value))
		s.stateBytes = append(s.stateBytes, float64(e.Bytes))
		s.completed = append(s.completed, e.ID)
	case "checkpoint_restore_size":
		s.table.row(e.ID).RestoreSizeBytes = e.Bytes
		s.restoreSizes = append(s.restoreSizes, float64(e.Bytes))
	case "checkpoint_channel_state":
		s.table.row(e.ID).ChannelStateBytes = e.Bytes
		s.channelBytes = append(s.channelBytes, float64(e.Bytes))
	case "checkpoint_aborted":
		s.table.row(e.ID).Status = "aborted: " + e.Note
		s.failed[e.Note]++
	case "sink_precommit":
		s.precommitBytes += e.Bytes
	}
}

func (s *checkpointStats) report(m map[string]any) {
	all, perCheckpoint := startDelays(s.triggered, s.starts)
	for id, ds := range perCheckpoint {
		d := metrics.Summary(ds)
		c := s.table.row(id)
		c.StartDelayP50MS, c.StartDelayMaxMS = summary.Round3(d.P50), summary.Round3(d.Max)
	}
	var nFailed int64
	for _, n := range s.failed {
		nFailed += n
	}
	m["checkpoints_triggered"] = int64(len(s.table.ids))
	m["checkpoints_completed"] = int64(len(s.completed))
	m["checkpoints_failed"] = nFailed
	m["checkpoints_failed_by_reason"] = s.failed
	m["checkpoints_failed_store"] = s.failed["declined: snapshot write failed"] + s.failed["metadata write failed"]
	m["checkpoints_expired"] = s.failed["timeout"]
	m["checkpoint_duration_ms"] = stat(s.durations)
	m["checkpoint_state_bytes"] = stat(s.stateBytes)
	m["checkpoint_channel_state_bytes"] = stat(s.channelBytes)
	m["checkpoint_restore_size_bytes"] = stat(s.restoreSizes)
	m["checkpoint_start_delay_ms"] = stat(all)
	m["sink_precommit_bytes"] = s.precommitBytes
	m["checkpoints"] = s.table.sorted()
}

// alignmentStats is what aligning barriers cost the tasks: the time from
// first to last barrier, the records held back meanwhile, and the
// aligned-timeout variant's switches to unaligned.
type alignmentStats struct {
	table                                             *checkpointTable
	alignments                                        []float64
	buffered, bufferedMax, bufferedBytesMax, switches int64
}

func (s *alignmentStats) add(e engine.Event) {
	switch e.Kind {
	case "alignment":
		s.alignments = append(s.alignments, ms(e.Value))
		c := s.table.row(e.ID)
		c.AlignmentMaxMS = max(c.AlignmentMaxMS, ms(e.Value))
	case "alignment_buffered":
		s.table.row(e.ID).BufferedRecords += e.Value
		s.buffered += e.Value
		s.bufferedMax = max(s.bufferedMax, e.Value)
		s.bufferedBytesMax = max(s.bufferedBytesMax, e.Bytes)
	case "unaligned_switch":
		s.switches++
	}
}

func (s *alignmentStats) report(m map[string]any) {
	m["alignment_ms"] = stat(s.alignments)
	m["alignment_buffered_records"] = map[string]int64{"total": s.buffered, "max": s.bufferedMax}
	m["alignment_buffered_bytes_max"] = s.bufferedBytesMax
	m["unaligned_switches"] = s.switches
}

// recoveryStats is what failures cost: the failovers and the tasks they
// restarted, the tasks' restores, and the records read again.
type recoveryStats struct {
	nTasks                                                             int64 // a failover restarting this many is global
	restarts, globalRestarts, tasksRestarted, ckptFailovers, takeovers int64
	restores, restoreBytes                                             []float64
}

func (s *recoveryStats) add(e engine.Event) {
	switch e.Kind {
	case "restore":
		s.restores = append(s.restores, ms(e.Value))
		s.restoreBytes = append(s.restoreBytes, float64(e.Bytes))
	case "failover_on_checkpoint_failure":
		s.ckptFailovers++
	case "leader_takeover":
		s.takeovers++
	case "failover":
		if e.Value > 0 {
			s.restarts++
			s.tasksRestarted += e.Value
		}
		if e.Value == s.nTasks {
			s.globalRestarts++
		}
	}
}

func (s *recoveryStats) report(m map[string]any, r systems.RunInfo) {
	m["failovers_on_checkpoint_failure"] = s.ckptFailovers
	m["restarts"] = s.restarts
	m["global_restarts"] = s.globalRestarts
	m["leader_takeovers"] = s.takeovers
	m["tasks_restarted"] = s.tasksRestarted
	m["restore_ms"] = stat(s.restores)
	m["restore_bytes"] = stat(s.restoreBytes)
	m["records_replayed"] = recordsReplayed(r)
	m["channel_state_records_restored"] = r.Counters["barrier_channel_state_records_restored"]
}

// recordsReplayed is every source read beyond the first reading of each
// record: exact for a drained run (every record read at least once).
func recordsReplayed(r systems.RunInfo) int64 {
	read := r.Counters["barrier_source_records_read"]
	var appended int64
	if r.Log != nil {
		appended = r.Log.Total() * int64(r.Job.Parallelism)
	}
	return max(0, read-appended)
}

// consistency checks every retained completed checkpoint's cut and
// reports the outcome; a checkpoint with a task snapshot missing counts as
// inconsistent.
func consistency(m map[string]any, r systems.RunInfo, completed []int64) {
	res, missing, unretained := checkRun(r, completed)
	problems := res.Problems
	if problems == nil {
		problems = []string{} // [] rather than null in run.json
	}
	m["snapshots_checked"] = int64(res.Checked + missing)
	m["snapshots_consistent"] = int64(res.Consistent)
	m["snapshots_inconsistent"] = int64(res.Inconsistent + missing)
	m["snapshots_not_retained"] = unretained
	m["snapshot_problems"] = problems
	m["safety_violations"] = int64(res.Inconsistent + missing)
}

// startDelays is Flink's checkpoint start delay: for every task (sources
// included) and checkpoint, the time from the coordinator's trigger to the
// checkpoint's start there (checkpoint_start: a source's trigger, a task's
// first barrier), in ms, over all and per checkpoint.
func startDelays(triggered map[int64]engine.Time, starts []engine.Event) ([]float64, map[int64][]float64) {
	var all []float64
	per := map[int64][]float64{}
	for _, e := range starts {
		at, ok := triggered[e.ID]
		if !ok {
			continue
		}
		d := ms(int64(e.Time - at))
		all = append(all, d)
		per[e.ID] = append(per[e.ID], d)
	}
	return all, per
}

// checkRun builds the cut of every completed checkpoint still in the store
// and checks it. missing counts retained checkpoints with a task snapshot
// missing (itself an inconsistency); unretained those garbage-collected
// beyond the retention.
func checkRun(r systems.RunInfo, completed []int64) (res check.SnapshotResult, missing int, unretained int64) {
	if r.Store == nil || r.Workload == nil {
		return res, 0, int64(len(completed))
	}
	_, g, err := compile(r.Job)
	if err != nil {
		return res, 0, int64(len(completed))
	}
	load := func(n int64, id engine.ProcID) *snapshot {
		v, ok := r.Store(checkpoint.Key(n, id))
		if !ok {
			return nil
		}
		s, _ := v.(*snapshot)
		return s
	}
	// The retained checkpoints are those the last completed-checkpoint
	// record lists (Flink's CompletedCheckpointStore in HA storage): what a
	// restore may use. A checkpoint the coordinator discarded can leave
	// files behind: a master crash loses the old leader's list of released
	// files not yet deleted (they waited for a pending checkpoint), and the
	// new leader deletes only what its retained checkpoints stop
	// referencing, so an incremental chain's shared piece goes while a
	// source's offset stays (torture barrier seed 7, run 170). Such
	// leftovers are garbage, not a cut with a snapshot missing; a discarded
	// checkpoint whose files are all still there is checked all the same.
	var retained []int64
	if v, ok := r.Store(checkpoint.MetaKey); ok {
		if m, ok := v.(checkpoint.Meta); ok {
			retained = m.Retained
		}
	}
	var cuts []check.CheckpointCut
	for _, n := range completed {
		kept := slices.Contains(retained, n)
		if !kept && load(n, g.Source[0]) == nil {
			unretained++
			continue
		}
		cut, msg := buildCut(g, n, load)
		if msg != "" && !kept {
			unretained++
			continue
		}
		if msg != "" {
			missing++
			if len(res.Problems) < check.MaxExamples {
				res.Problems = append(res.Problems, fmt.Sprintf("checkpoint %d: %s", n, msg))
			}
			continue
		}
		cuts = append(cuts, cut)
	}
	got := check.CheckSnapshotsFrom(r.Workload, cuts, r.Milestones)
	got.Problems = append(res.Problems, got.Problems...)
	return got, missing, unretained
}

func buildCut(g *stream.Graph, n int64, load func(int64, engine.ProcID) *snapshot) (check.CheckpointCut, string) {
	cut := check.CheckpointCut{ID: n, Offsets: make([]int64, len(g.Source)), Stages: make([]check.StageCut, len(g.Stages))}
	for p, id := range g.Source {
		s := load(n, id)
		if s == nil {
			return cut, fmt.Sprintf("source %d has no snapshot", p)
		}
		cut.Offsets[p] = s.Offset
	}
	for st, inst := range g.Stages {
		// A chained stage's part is in its chain's snapshot: the k-th
		// operator's, and channel state only at the chain's head.
		head := g.Head(st)
		k := st - max(head, 0)
		for i, id := range inst {
			s := load(n, id)
			if s == nil {
				return cut, fmt.Sprintf("%s/%d has no snapshot", g.Plan.Stages[st].Name, i)
			}
			if k >= len(s.Ops) {
				return cut, fmt.Sprintf("%s/%d has no part in its task's snapshot", g.Plan.Stages[st].Name, i)
			}
			state, ok := chainState(s, k, func(m int64) *snapshot { return load(m, id) })
			if !ok {
				return cut, fmt.Sprintf("%s/%d misses a piece of its incremental chain", g.Plan.Stages[st].Name, i)
			}
			cut.Stages[st].State = append(cut.Stages[st].State, checkpoint.StateKVs(state))
			if head != st {
				continue
			}
			for _, f := range s.Channel {
				cut.Stages[st].InFlight = append(cut.Stages[st].InFlight, f.Records...)
			}
		}
	}
	return cut, ""
}

// stat is a distribution as barrier reports it, {n, p50, p99, max, mean}
// (snapshot's differs; see package summary).
func stat(xs []float64) map[string]float64 {
	s := metrics.Summary(xs)
	return map[string]float64{"n": float64(s.N), "p50": summary.Round3(s.P50), "p99": summary.Round3(s.P99), "max": summary.Round3(s.Max), "mean": summary.Round3(s.Mean)}
}

func ms(ns int64) float64 { return summary.Round3(float64(ns) / 1e6) }
