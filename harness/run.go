package harness

import (
	"math"
	"time"

	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/systems"
)

// The run loop: the oracle pass and the commit pipe started beside the
// simulation, the simulation itself up to the drain limit and through the
// settle window, and the runner's engine.Observer callbacks other than
// commits (intake.go): events, counters, and the periodic Sample that takes
// the source lag and decides when the run is drained.

func (r *runner) run() *Outcome {
	// The delivery checker learns each record's expected effects from the
	// workload (computed per record, or from one oracle pass up front).
	r.setPhase(PhaseOracle)
	r.prepareExpected()
	// The oracle pass runs beside a simulation, on the core the event loop
	// leaves free; in a live run the processes own every core (the
	// harness's own work comes after, as the live runtime's accounting
	// says), so there it starts when the run is over.
	live := r.cfg.runtime() == RuntimeLive
	r.seal = !live
	if !live {
		pass := r.startOracle()
		if r.obs == nil && r.commitHook == nil {
			// One goroutine checks the commits and, between batches,
			// feeds the oracle pass, so that the harness's own work
			// never takes turns with the event loop for a core.
			r.pipe = newCommitPipe(r.takeQueued, pass.step, pipeQueueBytes(r.recordsPerSecond()))
			r.pipe.checkPiece, r.store.release = r.takePiece, r.pipe.release
			defer r.pipe.stop()
		} else {
			go pass.run()
		}
	}
	r.series = metrics.NewSeries(r.cfg.Bucket)
	simStart := time.Now()
	r.setPhase(PhaseSimulating)
	r.simulate(r.cfg.Duration + r.drainMax)
	if r.drained {
		// A drained run stops itself after its settle window (Sample); a
		// run drained late goes on past the drain limit for it, so late
		// duplicates are looked for in every drained run alike. (No-op
		// when Sample stopped the run already.)
		r.simulate(r.drainedAt + r.settle)
	}
	r.rt.Close()
	if err := r.rt.Err(); err != nil {
		panic(err) // Execute turns it into an internal error
	}
	r.simWall = time.Since(simStart)
	r.setPhase(PhaseChecking)
	if live {
		go r.startOracle().run()
	}
	r.syncCommits()
	r.store.settle(engine.Time(math.MaxInt64)) // every commit reported
	out := r.finish()
	if r.cfg.Trace {
		b, err := r.traceFile()
		if err != nil {
			panic(err) // Execute turns it into an internal error
		}
		if out.Files == nil {
			out.Files = map[string][]byte{}
		}
		out.Files["trace.jsonl"] = b
	}
	return out
}

// --- engine.Observer, less the commits (intake.go) ---

func (r *runner) Event(e engine.Event) {
	r.events = append(r.events, e)
	if e.Kind == "checkpoint_completed" {
		// Recorded by systems/internal/checkpoint with the trigger-to-
		// complete duration as Value.
		if r.pipe != nil {
			r.pipe.mark(queuedCheckpoint, e.Time, e.Value)
		} else {
			r.series.Checkpoint(e.Time, engine.Time(e.Value))
		}
	}
}

func (r *runner) Count(name string, delta int64) { r.counters[name] += delta }

func (r *runner) Sample(at engine.Time) {
	if r.pipe != nil && !r.drained && at < r.cfg.Duration {
		// Nothing to decide before the input ends: the lag can wait for
		// the checker (commitPipe.mark), so the event loop does not.
		r.pipe.mark(queuedSample, at, r.counters[systems.InternalLag])
		return
	}
	r.syncCommits()
	r.series.Lag(at, r.lag(at)+r.counters[systems.InternalLag])
	if r.drained {
		if at >= r.drainedAt+r.settle {
			r.rt.Stop()
		}
		return
	}
	if at >= r.cfg.Duration && r.delivery.Complete(r.expectedTotal()) {
		// Keep running for the settle window (drain.go): a recovery that
		// ends with the drain is still seen to hold, and a late duplicate
		// is still counted.
		r.drained, r.drainedAt = true, at
	}
}

// lag is the source lag: records appended but not yet covered by the
// highest committed offset of their partition (Kafka's consumer lag against
// what the sink has made visible). Sample adds the records the system's
// internal queues hold unread (systems.InternalLag), which only systems with
// durable internal topics count.
func (r *runner) lag(at engine.Time) int64 {
	appended := r.log.Appended(at)
	var lag int64
	for p := 0; p < r.cfg.Parallelism; p++ {
		lag += max(0, appended-(r.delivery.MaxCommitted(int32(p))+1))
	}
	return lag
}

// appendedAll is how many records each partition's log holds at its end.
func (r *runner) appendedAll() []int64 {
	a := make([]int64, r.cfg.Parallelism)
	for p := range a {
		a[p] = r.log.Total()
	}
	return a
}
