package lineage

import (
	"fmt"
	"math"
	"sort"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/summary"
)

// batchRow is one batch as the driver's events describe it.
type batchRow struct {
	cut, start, done, commit engine.Time
	sched, proc, total, cpu  engine.Time
	seen                     uint8
}

const (
	seenCut = 1 << iota
	seenStart
	seenDone
	seenCommit
)

// Summarize derives the D-Streams metrics from the driver's events
// (system_metrics in run.json). Times are seconds.
func (system) Summarize(r systems.RunInfo) map[string]any {
	cfg, err := parseConfig(r.Job)
	if err != nil {
		return map[string]any{}
	}
	var rows []batchRow
	row := func(id int64) *batchRow {
		for int64(len(rows)) <= id {
			rows = append(rows, batchRow{})
		}
		return &rows[id]
	}
	var crashes []engine.Event
	var starts, recomputed []engine.Event
	var lineageMax int64
	for _, ev := range r.Events {
		switch ev.Kind {
		case "batch_cut":
			b := row(ev.ID)
			b.cut, b.seen = ev.Time, b.seen|seenCut
		case "job_start":
			b := row(ev.ID)
			b.start, b.sched, b.seen = ev.Time, engine.Time(ev.Value), b.seen|seenStart
		case "job_done":
			b := row(ev.ID)
			b.done, b.proc, b.seen = ev.Time, engine.Time(ev.Value), b.seen|seenDone
		case "batch_cpu":
			row(ev.ID).cpu = engine.Time(ev.Value)
		case "batch_committed":
			b := row(ev.ID)
			b.commit, b.total, b.seen = ev.Time, engine.Time(ev.Value), b.seen|seenCommit
		case "lineage_length":
			lineageMax = max(lineageMax, ev.Value)
		case "worker_crash":
			crashes = append(crashes, ev)
		case "recovery_start":
			starts = append(starts, ev)
		case "recovery_recomputed":
			recomputed = append(recomputed, ev)
		}
	}
	firstCrash := engine.Time(math.MaxInt64)
	for _, c := range crashes {
		firstCrash = min(firstCrash, c.Time)
	}
	var proc, sched, total []float64
	var cpu engine.Time
	var steady int
	committed := 0
	for _, b := range rows {
		if b.seen&seenCommit == 0 {
			continue
		}
		committed++
		proc = append(proc, b.proc.Seconds())
		sched = append(sched, b.sched.Seconds())
		total = append(total, b.total.Seconds())
		// The steady load: batches committed before any crash whose input
		// interval lies within the input (the last, partial one would
		// dilute it).
		if b.commit < firstCrash && b.cut <= r.Log.End {
			cpu += b.cpu
			steady++
		}
	}
	// The executors: one per core of every worker (Compile).
	workers := r.Job.Workers * max(r.Job.Cost.Cores, 1)
	m := map[string]any{
		"batch_interval_s":      cfg.interval.Seconds(),
		"checkpoint_every":      cfg.ckptEvery,
		"shuffle_partitions":    cfg.shuffle,
		"batches":               committed,
		"processing_time_s":     dist(proc),
		"scheduling_delay_s":    dist(sched),
		"total_delay_s":         dist(total),
		"lineage_length_max":    lineageMax,
		"checkpoints":           r.Counters["lineage.checkpoints"],
		"checkpoint_bytes":      r.Counters["lineage.checkpoint_bytes"],
		"partitions_recomputed": r.Counters["lineage.partitions_recomputed"],
		"records_recomputed":    r.Counters["lineage.records_recomputed"],
		"recompute_cpu_s":       summary.Round3(engine.Time(r.Counters["lineage.recompute_cpu_ns"]).Seconds()),
		"speculative_tasks":     r.Counters["lineage.speculative_tasks"],
		"tasks":                 r.Counters["lineage.tasks"],
		"fetch_failures":        r.Counters["lineage.fetch_failures"],
		"shuffle_bytes":         r.Counters["lineage.shuffle_bytes"],
	}
	if len(proc) > 0 {
		m["processing_over_interval_p50"] = summary.Round3(quantile(proc, 0.5) / cfg.interval.Seconds())
		m["processing_over_interval_p99"] = summary.Round3(quantile(proc, 0.99) / cfg.interval.Seconds())
	}
	load := 0.0
	if steady > 0 {
		load = cpu.Seconds() / (float64(workers) * float64(steady) * cfg.interval.Seconds())
		m["executor_load"] = summary.Round3(load)
	}
	recs := []map[string]any{}
	for _, c := range crashes {
		recs = append(recs, recoveryMetrics(c, starts, recomputed, rows, cfg.interval, load, workers, r.Job.Workers))
	}
	m["recoveries"] = recs
	return m
}

// recoveryMetrics measures one crash.
//
// recovery_s is the time from the crash until the batch backlog it caused
// is gone. While the backlog drains, each batch's total delay (cut to
// commit) is (1-λ)·interval shorter than the one before, so the delays fall
// on a line; recovery ends when the last late batch's excess delay has
// drained at that line's slope (a least-squares fit from the peak), which
// interpolates between batch cuts (caught_up_s is the cut of the first
// batch whose delay is back to normal, a batch-granular upper bound).
//
// lost_span_s is the input time whose processing was lost (lost batches ×
// interval): the lost work took that long to do originally, so
// recovery_units = recovery_s / lost_span_s is the recovery time in units of
// the work lost since the checkpoint, the unit of the D-Streams model
// t_up = λ/(1-λ) and t_par ≈ λ/(N(1-λ)). recovery_units_work divides by
// lost_work_cpu_s/λ instead: the time the lost CPU took at load λ, which is
// the same if the failed executor held exactly its 1/N share.
//
// A worker's crash loses all its executors (executor x runs on worker
// x % nodes); the driver records a recovery_start per executor at the same
// instant, which are summed here (lost work, tasks) or maxed (lost batches,
// the last recomputation).
func recoveryMetrics(c engine.Event, starts, recomputed []engine.Event, rows []batchRow, interval engine.Time, load float64, workers, nodes int) map[string]any {
	out := map[string]any{"worker": c.ID, "failed_at_s": summary.Round3(c.Time.Seconds())}
	onWorker := func(x int64) bool { return nodes > 0 && x%int64(nodes) == c.ID }
	var st *engine.Event
	var lostWork engine.Time
	var lostBatches, tasks int64
	for i := range starts {
		if !onWorker(starts[i].ID) || starts[i].Time < c.Time || (st != nil && starts[i].Time != st.Time) {
			continue
		}
		if st == nil {
			st = &starts[i]
		}
		var failedAt, lb, ckpt, n int64
		fmt.Sscanf(starts[i].Note, "failed_at=%d lost_batches=%d checkpoint=%d tasks=%d", &failedAt, &lb, &ckpt, &n)
		lostBatches, tasks = max(lostBatches, lb), tasks+n
		lostWork += engine.Time(starts[i].Value)
	}
	if st == nil {
		return out
	}
	span := engine.Time(lostBatches) * interval
	out["detected_at_s"] = summary.Round3(st.Time.Seconds())
	out["lost_work_cpu_s"] = summary.Round3(lostWork.Seconds())
	out["lost_batches"] = lostBatches
	out["lost_span_s"] = summary.Round3(span.Seconds())
	out["recovery_tasks"] = tasks
	var last engine.Time // the lost partitions' recomputation done (0: not recorded)
	for _, ev := range recomputed {
		if onWorker(ev.ID) && ev.Time >= st.Time {
			last = max(last, ev.Time)
		}
	}
	if last > 0 {
		out["recomputed_s"] = summary.Round3((last - c.Time).Seconds())
	}
	var base []float64
	for _, b := range rows {
		if b.seen&seenCommit != 0 && b.commit < c.Time {
			base = append(base, b.total.Seconds())
		}
	}
	t0 := quantile(base, 0.5)
	tol := interval.Seconds() / 20
	var late []batchRow
	extra := 0.0
	for _, b := range rows {
		if b.seen&seenCommit == 0 || b.commit <= c.Time {
			continue
		}
		extra = max(extra, b.total.Seconds()-t0)
		if b.total.Seconds() > t0+tol {
			late = append(late, b)
			continue
		}
		if len(late) == 0 && b.cut < st.Time {
			continue // finished its lost executor's tasks before the crash
		}
		// b is the first batch after the disruption whose delay is back to
		// normal.
		rec := 0.0
		if len(late) > 0 {
			rec = drainEnd(late, t0, b.cut.Seconds()) - c.Time.Seconds()
			out["caught_up_s"] = summary.Round3(b.cut.Seconds() - c.Time.Seconds())
		}
		// The backlog cannot be gone before the lost partitions are
		// recomputed: they are part of it. When only a batch or two are
		// late the fitted line can reach the normal delay earlier than
		// that (at 16 executors a crash's drain line ended 0.2 s before
		// the recomputation did), so the recomputation bounds it below.
		if last > 0 {
			rec = max(rec, (last - c.Time).Seconds())
		}
		rec = max(rec, 0)
		out["recovery_s"] = summary.Round3(rec)
		if span > 0 {
			out["recovery_units"] = summary.Round3(rec / span.Seconds())
		}
		if lost := lostWork.Seconds(); lost > 0 && load > 0 {
			out["recovery_units_work"] = summary.Round3(rec * load / lost)
		}
		break
	}
	out["extra_delay_max_s"] = summary.Round3(extra)
	if load > 0 && load < 1 {
		out["model_upstream_units"] = summary.Round3(load / (1 - load))
		out["model_parallel_units"] = summary.Round3(load / (float64(workers) * (1 - load)))
	}
	return out
}

// drainEnd estimates when the backlog was gone: the last late batch still
// had delay-t0 of backlog at its cut, which drains at the rate the delays
// fell from the peak on (a least-squares slope of delay against cut time).
// The result lies within [last late cut, limit]; limit, the first on-time
// batch's cut, when there is no drain to fit.
func drainEnd(late []batchRow, t0, limit float64) float64 {
	peak := 0
	for i, b := range late {
		if b.total > late[peak].total {
			peak = i
		}
	}
	pts := late[peak:]
	if len(pts) < 2 {
		return limit
	}
	var mx, my float64
	for _, b := range pts {
		mx += b.cut.Seconds()
		my += b.total.Seconds()
	}
	n := float64(len(pts))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for _, b := range pts {
		dx := b.cut.Seconds() - mx
		sxy += dx * (b.total.Seconds() - my)
		sxx += dx * dx
	}
	if sxx == 0 || sxy >= 0 {
		return limit
	}
	l := pts[len(pts)-1]
	end := l.cut.Seconds() + (l.total.Seconds()-t0)/(-sxy/sxx)
	return min(max(end, l.cut.Seconds()), limit)
}

type distStat struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func dist(xs []float64) distStat {
	if len(xs) == 0 {
		return distStat{}
	}
	return distStat{P50: summary.Round3(quantile(xs, 0.5)), P99: summary.Round3(quantile(xs, 0.99)), Max: summary.Round3(quantile(xs, 1))}
}

// quantile interpolates between closest ranks (numpy's default).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
