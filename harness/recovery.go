package harness

import (
	"math"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/metrics"
)

// Recovery accounting (docs/metrics.md: "Recovery time", "Recovery phases"): for each
// fault, how long output staleness and source lag took to come back, what a
// crash took down, and the steps of its recovery as the events recorded
// them; and the run's headline recovery figures, the slowest fault's.

// stalenessOptions widens the pre-fault and hold windows of the staleness
// recovery rule to two commit cycles each: a bursty sink's staleness is a
// sawtooth with the cycle's period, so a shorter window could miss its peak
// before the fault (a threshold too low) or end between two peaks after it
// (a recovery declared too early); the figure would then depend on phase.
func stalenessOptions(o metrics.RecoveryOptions, cycle engine.Time) metrics.RecoveryOptions {
	o.PreWindow = max(o.PreWindow, 2*cycle)
	o.Hold = max(o.Hold, 2*cycle)
	return o
}

// recoveries fills in each fault's Recovery and the headline figures.
func (r *runner) recoveries(res *Result, rows []metrics.Row) {
	base := metrics.DefaultRecoveryOptions()
	base.WarmUp = r.warmUp
	// Recovery may complete during the drain: the backlog a fault left
	// must still be worked off, though without new input it goes faster
	// than under load (docs/metrics.md, "Recovery time").
	base.End = r.rt.Now()
	// Output staleness (docs/metrics.md): back within 1.1x its pre-fault level plus
	// one bucket, the sampling resolution of the sawtooth's peak.
	stale := stalenessOptions(base, r.cycle)
	stale.Slack = int64(r.cfg.Bucket)
	if r.drained {
		// Nothing is pending after the drain, so staleness stays 0: a hold
		// window of two long commit cycles need not fit in the simulation.
		stale.Settled = r.drainedAt
	}
	staleness := func(row metrics.Row) int64 { return int64(row.Staleness) }
	// The source lag rule as before, under its own name.
	lag := base
	lag.Slack = int64(math.Ceil(r.cfg.Rate * r.cfg.Bucket.Seconds()))
	hasCrash := false
	for i, s := range r.specs {
		rec := Recovery{Fault: s.String(), AtS: s.At.Seconds()}
		// A run that stopped with effects pending and committed nothing
		// after the fault never recovered from it, whatever the staleness
		// series says (with no commit at all it has no level to return
		// to, and would read as recovered at once).
		committedAfter := r.drained || (r.anyCommit && r.lastCommit >= s.At)
		if t, ok := metrics.RecoveryTimeOf(rows, staleness, s.At, stale); ok && committedAfter {
			v := round3(t.Seconds())
			rec.RecoveryTimeS = &v
		}
		if t, ok := metrics.RecoveryTime(rows, s.At, lag); ok && committedAfter {
			v := round3(t.Seconds())
			rec.LagRecoveryTimeS = &v
		}
		if s.Kind == faults.Crash || s.Kind == faults.Pause || s.Kind == faults.Partition {
			// A master crash is detected by nobody: the coordinator is
			// what died, and a new one takes over when it is back.
			hasCrash = hasCrash || !s.Master
			rec.Phases = r.phases(i, rec.RecoveryTimeS)
			rec.Crashed = r.crashed(s)
		}
		res.Recoveries = append(res.Recoveries, rec)
	}
	// The headline recovery times are the slowest fault's; null if any
	// fault was never recovered from (or there is none).
	res.RecoveryTimeS = worst(res.Recoveries, func(rec Recovery) *float64 { return rec.RecoveryTimeS })
	res.LagRecoveryTimeS = worst(res.Recoveries, func(rec Recovery) *float64 { return rec.LagRecoveryTimeS })
	if hasCrash && r.dep.Coordinator >= 0 {
		d := r.cost.DetectDelay.Seconds()
		res.DetectionDelayS = &d
	}
}

// worst is the largest of a figure over recs; nil if any is nil.
func worst(recs []Recovery, get func(Recovery) *float64) *float64 {
	if len(recs) == 0 {
		return nil
	}
	var w float64
	for _, rec := range recs {
		v := get(rec)
		if v == nil {
			return nil
		}
		w = max(w, *v)
	}
	return &w
}

// crashed is what crash s took down: its worker and every process placed
// there (a crash aimed at an operator instance kills the whole worker
// hosting it, as a machine failure does). Nil when the crash found its
// worker already down and took nothing.
func (r *runner) crashed(s faults.Spec) *Crashed {
	worker, ok := faults.WorkerOf(s, r.dep)
	if !ok {
		return nil
	}
	for _, e := range r.events {
		// The first crash of that worker at or after the fault's time: the
		// simulator records it at the instant, the live runtime a little
		// later; overlapping crashes of one worker are refused
		// (faults/overlap.go), so it is this fault's.
		if e.Kind != "worker_crash" || e.Time < s.At || int(e.ID) != worker {
			continue
		}
		c := &Crashed{Worker: worker, Processes: []string{}}
		for _, p := range r.dep.Procs {
			// A master crash also takes the processes bound to the master
			// (Spark's executors).
			if p.Worker == c.Worker || (worker == engine.MasterNode && p.MasterBound) {
				c.Processes = append(c.Processes, p.Name)
			}
		}
		return c
	}
	return nil
}

// phases is the breakdown of crash or pause fault i's recovery from the
// events the runtime and the system recorded (docs/metrics.md, "Recovery phases"), in
// seconds after the crash or the pause's start; a step the run did not
// record is left out (a pause shorter than detection has no detection,
// restart or restore). Events count from the fault until the next crash or
// pause, so that one fault's steps are not credited to another.
func (r *runner) phases(i int, rec *float64) *Phases {
	s := r.specs[i]
	until := engine.Time(math.MaxInt64)
	for _, o := range r.specs {
		if (o.Kind == faults.Crash || o.Kind == faults.Pause || o.Kind == faults.Partition) && o.At > s.At {
			until = min(until, o.At)
		}
	}
	// The fault's own worker, where the spec names one (two faults at the
	// same instant must not share one's steps).
	want, known := faults.WorkerOf(s, r.dep)
	known = known && s.Sides == ""
	worker := int64(-1)
	// The first crash, pause or cut of that worker at or after the fault's
	// time: the simulator records it at s.At exactly, the live runtime a
	// moment later.
	for _, e := range r.events {
		if (e.Kind == "worker_crash" || e.Kind == "worker_pause" || e.Kind == "partition_start") && e.Time >= s.At && e.Time < until &&
			(!known || e.ID == int64(want)) {
			worker = e.ID
			break
		}
	}
	ph := &Phases{}
	var last float64
	set := func(dst **float64, t engine.Time, latest bool) {
		v := round3((t - s.At).Seconds())
		if *dst == nil || (latest && v > **dst) {
			*dst = &v
		}
		last = max(last, v)
	}
	for _, e := range r.events {
		if e.Time < s.At || e.Time >= until {
			continue
		}
		switch e.Kind {
		case "failure_detected", "recovery_start": // checkpoint coordinator; lineage driver
			if e.ID == worker {
				set(&ph.DetectedS, e.Time, false)
			}
		case "worker_up":
			if e.ID == worker {
				set(&ph.WorkerUpS, e.Time, false)
			}
		case "deploy": // the checkpoint coordinator re-deploys every task
			if e.ID > 0 {
				set(&ph.RedeployedS, e.Time, false)
			}
		case "restore": // every task restored: the last one counts
			set(&ph.RestoredS, e.Time, true)
		case "recovery_recomputed":
			if e.ID == worker {
				set(&ph.RecomputedS, e.Time, false)
			}
		case "spout_resume": // stormack: a restarted spout resumes from its committed offset
			set(&ph.SpoutResumedS, e.Time, false)
		}
	}
	if rec != nil && *rec >= last {
		v := round3(*rec - last)
		ph.CatchUpS = &v
	}
	return ph
}
