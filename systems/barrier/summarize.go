package barrier

import (
	"fmt"
	"math"
	"sort"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/systems"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
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
func (system) Summarize(r systems.RunInfo) map[string]any {
	opt, err := parseOptions(r.Job.Variant, r.Job.Opts)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	rows := map[int64]*checkpointRow{}
	var ids []int64
	row := func(id int64) *checkpointRow {
		if rows[id] == nil {
			rows[id] = &checkpointRow{ID: id, Status: "incomplete"}
			ids = append(ids, id)
		}
		return rows[id]
	}
	var durations, stateBytes, channelBytes, alignments, restores, restoreSizes, restoreBytes []float64
	var completed []int64
	triggered := map[int64]engine.Time{} // checkpoint -> trigger time (ns)
	var starts []engine.Event            // checkpoint_start, joined with triggered below
	failed := map[string]int64{}
	var buffered, bufferedMax, bufferedBytesMax, switches, precommitBytes int64
	var restarts, globalRestarts, tasksRestarted, ckptFailovers, takeovers int64
	nTasks := int64(-1)
	if _, g, err := compile(r.Job); err == nil {
		nTasks = int64(len(g.Source))
		for _, st := range g.Stages {
			nTasks += int64(len(st))
		}
	}
	for _, e := range r.Events {
		switch e.Kind {
		case "checkpoint_triggered":
			row(e.ID).TriggeredS = round3(engine.Time(e.Time).Seconds())
			triggered[e.ID] = e.Time
		case "checkpoint_start":
			starts = append(starts, e)
		case "checkpoint_completed":
			c := row(e.ID)
			c.Status, c.DurationMS, c.StateBytes = "completed", ms(e.Value), e.Bytes
			durations = append(durations, ms(e.Value))
			stateBytes = append(stateBytes, float64(e.Bytes))
			completed = append(completed, e.ID)
		case "checkpoint_restore_size":
			row(e.ID).RestoreSizeBytes = e.Bytes
			restoreSizes = append(restoreSizes, float64(e.Bytes))
		case "checkpoint_channel_state":
			row(e.ID).ChannelStateBytes = e.Bytes
			channelBytes = append(channelBytes, float64(e.Bytes))
		case "checkpoint_aborted":
			row(e.ID).Status = "aborted: " + e.Note
			failed[e.Note]++
		case "alignment":
			alignments = append(alignments, ms(e.Value))
			c := row(e.ID)
			c.AlignmentMaxMS = max(c.AlignmentMaxMS, ms(e.Value))
		case "alignment_buffered":
			row(e.ID).BufferedRecords += e.Value
			buffered += e.Value
			bufferedMax = max(bufferedMax, e.Value)
			bufferedBytesMax = max(bufferedBytesMax, e.Bytes)
		case "unaligned_switch":
			switches++
		case "sink_precommit":
			precommitBytes += e.Bytes
		case "restore":
			restores = append(restores, ms(e.Value))
			restoreBytes = append(restoreBytes, float64(e.Bytes))
		case "failover_on_checkpoint_failure":
			ckptFailovers++
		case "leader_takeover":
			takeovers++
		case "failover":
			if e.Value > 0 {
				restarts++
				tasksRestarted += e.Value
			}
			if e.Value == nTasks {
				globalRestarts++
			}
		}
	}
	startDelays, perCheckpoint := startDelays(triggered, starts)
	for id, ds := range perCheckpoint {
		s := metrics.Summary(ds)
		c := row(id)
		c.StartDelayP50MS, c.StartDelayMaxMS = round3(s.P50), round3(s.Max)
	}
	var nFailed int64
	for _, n := range failed {
		nFailed += n
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	table := make([]checkpointRow, 0, len(ids))
	for _, id := range ids {
		table = append(table, *rows[id])
	}

	read := r.Counters["barrier_source_records_read"]
	var appended int64
	if r.Log != nil {
		appended = r.Log.Total() * int64(r.Job.Parallelism)
	}
	res, missing, unretained := checkRun(r, completed)
	problems := res.Problems
	if problems == nil {
		problems = []string{}
	}
	return map[string]any{
		"variant":                         r.Job.Variant,
		"sink":                            r.Job.Opts["sink"],
		"checkpoint_interval_ms":          ms(int64(opt.interval)),
		"max_concurrent_checkpoints":      opt.maxConcurrent,
		"checkpoints_triggered":           int64(len(ids)),
		"checkpoints_completed":           int64(len(completed)),
		"checkpoints_failed":              nFailed,
		"checkpoints_failed_by_reason":    failed,
		"checkpoints_failed_store":        failed["declined: snapshot write failed"] + failed["metadata write failed"],
		"checkpoints_expired":             failed["timeout"],
		"tolerable_failed_checkpoints":    int64(opt.tolerable),
		"failovers_on_checkpoint_failure": ckptFailovers,
		"checkpoint_duration_ms":          stat(durations),
		"checkpoint_state_bytes":          stat(stateBytes),
		"checkpoint_channel_state_bytes":  stat(channelBytes),
		"alignment_ms":                    stat(alignments),
		"checkpoint_start_delay_ms":       stat(startDelays),
		"alignment_buffered_records":      map[string]int64{"total": buffered, "max": bufferedMax},
		"alignment_buffered_bytes_max":    bufferedBytesMax,
		"unaligned_switches":              switches,
		"sink_precommit_bytes":            precommitBytes,
		"failover":                        r.Job.Opts["failover"],
		"restarts":                        restarts,
		"global_restarts":                 globalRestarts,
		"leader_takeovers":                takeovers,
		"tasks_restarted":                 tasksRestarted,
		"restore_ms":                      stat(restores),
		"restore_bytes":                   stat(restoreBytes),
		"checkpoint_restore_size_bytes":   stat(restoreSizes),
		"incremental":                     opt.incremental,
		// Every source read beyond the first reading of each record: exact
		// for a drained run (every record read at least once).
		"records_replayed":               max(0, read-appended),
		"channel_state_records_restored": r.Counters["barrier_channel_state_records_restored"],
		"snapshots_checked":              int64(res.Checked + missing),
		"snapshots_consistent":           int64(res.Consistent),
		"snapshots_inconsistent":         int64(res.Inconsistent + missing),
		"snapshots_not_retained":         unretained,
		"snapshot_problems":              problems,
		"safety_violations":              int64(res.Inconsistent + missing),
		"checkpoints":                    table,
		"snapshots_retained_max":         int64(opt.retained),
	}
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
	var cuts []check.CheckpointCut
	for _, n := range completed {
		if load(n, g.Source[0]) == nil {
			unretained++
			continue
		}
		cut, msg := buildCut(g, n, load)
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
		for i, id := range inst {
			s := load(n, id)
			if s == nil {
				return cut, fmt.Sprintf("%s/%d has no snapshot", g.Plan.Stages[st].Name, i)
			}
			state, ok := chainState(s, func(m int64) *snapshot { return load(m, id) })
			if !ok {
				return cut, fmt.Sprintf("%s/%d misses a piece of its incremental chain", g.Plan.Stages[st].Name, i)
			}
			kvs := make([]check.StateKV, len(state))
			for k, kv := range state {
				kvs[k] = check.StateKV{Key: kv.Key, Val: kv.Val}
			}
			cut.Stages[st].State = append(cut.Stages[st].State, kvs)
			for _, f := range s.Channel {
				cut.Stages[st].InFlight = append(cut.Stages[st].InFlight, f.Records...)
			}
		}
	}
	return cut, ""
}

func stat(xs []float64) map[string]float64 {
	s := metrics.Summary(xs)
	return map[string]float64{"n": float64(s.N), "p50": round3(s.P50), "p99": round3(s.P99), "max": round3(s.Max), "mean": round3(s.Mean)}
}

func ms(ns int64) float64 { return round3(float64(ns) / 1e6) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
