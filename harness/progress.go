package harness

import (
	"sync"
	"sync/atomic"
	"time"

	"ftbench/engine"
)

// Progress is a report on a run still executing: which phase it is in and,
// while simulating, how far. It is sent every ProgressEvery of wall time to
// Config.Progress, from a goroutine of its own, so a long phase that is
// not the simulation (the oracle over a long log) is reported too.
type Progress struct {
	System, Variant, Workload string
	Seed                      uint64
	Phase                     string        // PhaseOracle, PhaseSimulating or PhaseChecking
	SimTime                   engine.Time   // simulated so far
	End                       engine.Time   // input end plus the longest drain
	Events                    uint64        // simulated events so far
	Wall                      time.Duration // since the run started
}

// Phases of a run.
const (
	PhaseOracle     = "computing the expected output"
	PhaseSimulating = "simulating"
	PhaseChecking   = "checking the results"
)

// ProgressEvery is the wall time between progress reports: under 10 s, so
// a long run shows progress at least every 10 s.
var ProgressEvery = 9 * time.Second

// simStep is the simulated time the simulation runs between publishing
// its progress when reports are on.
const simStep = 100 * engine.Millisecond

// progressState is what the run publishes for the reporting goroutine.
type progressState struct {
	phase  atomic.Value // string
	now    atomic.Int64
	events atomic.Uint64
}

// startProgress starts the reporting goroutine if the configuration asks
// for reports; the returned function stops it.
func (r *runner) startProgress(start time.Time) (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	r.progress = &progressState{}
	r.progress.phase.Store("starting")
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.cfg.Progress(Progress{
					System: r.cfg.System, Variant: r.variant, Workload: r.cfg.Workload, Seed: r.cfg.Seed,
					Phase: r.progress.phase.Load().(string), SimTime: engine.Time(r.progress.now.Load()),
					End: r.cfg.Duration + r.drainMax, Events: r.progress.events.Load(), Wall: time.Since(start),
				})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// setPhase publishes the run's phase (no-op without reports).
func (r *runner) setPhase(phase string) {
	if r.progress != nil {
		r.progress.phase.Store(phase)
	}
}

// simulate runs the simulation until until, in steps of simStep: the same
// events in the same order as one call, since Run processes events in time
// order up to its bound and resumes where it stopped. After each step it
// publishes the simulated time (with progress reports on) and checks the
// memory ceiling (checkMemory).
func (r *runner) simulate(until engine.Time) {
	// The first step reaches the first time-series sample (at one bucket,
	// and the bucket is at most the input's duration), so it processes at
	// least one event: Run starts the processes on a call that finds none
	// processed, which must happen once only.
	t := min(until, r.rt.Now()+max(simStep, r.cfg.Bucket))
	for {
		r.rt.Run(t)
		if r.progress != nil {
			r.progress.now.Store(int64(r.rt.Now()))
			r.progress.events.Store(r.rt.Events())
		}
		r.checkMemory()
		if t >= until {
			return
		}
		t = min(until, t+simStep)
	}
}
