package harness

import (
	"ftbench/engine"
	"ftbench/engine/live"
	"ftbench/engine/sim"
	"ftbench/faults"
)

// Runtimes a run can use (--runtime).
const (
	RuntimeSim  = "sim"
	RuntimeLive = "live"
)

// engineRuntime is what the harness needs of a runtime: the simulator
// (engine/sim) or the live one (engine/live). Both run the same systems
// through engine.Ctx and report to the runner as its engine.Observer.
type engineRuntime interface {
	faults.Target
	// Run runs until time until (virtual or wall-clock) or Stop.
	Run(until engine.Time)
	Stop()
	Now() engine.Time
	Events() uint64
	PeakQueuedBytes() int
	Capacity() int
	StoreValue(key string) (any, bool)
	Activity(deadline engine.Time) engine.Activity
	// Close ends the run's goroutines (live); Err is a failure inside
	// them (a process's panic), which makes the run an internal error.
	Close()
	Err() error
}

// simRuntime adapts *sim.Sim, which has nothing to close.
type simRuntime struct{ *sim.Sim }

func (simRuntime) Close()     {}
func (simRuntime) Err() error { return nil }

func (c *Config) runtime() string {
	if c.Runtime == "" {
		return RuntimeSim
	}
	return c.Runtime
}

func (c *Config) workMode() live.WorkMode {
	w, _ := live.ParseWorkMode(c.Work)
	return w
}

// newRuntime builds the configured runtime for the compiled deployment.
func (r *runner) newRuntime() (engineRuntime, error) {
	seed := engine.ChildSeed(r.cfg.Seed, "runtime")
	if r.cfg.runtime() == RuntimeSim {
		s, err := sim.New(r.dep, sim.Config{
			Seed: seed, Cost: r.cost, Workers: r.cfg.Workers, Slots: r.cfg.Slots,
			SampleEvery: r.cfg.Bucket, Observer: r, InputEnd: r.cfg.Duration,
			Trace: r.traceConfig(),
		})
		if err != nil {
			return nil, &InputError{err}
		}
		return simRuntime{s}, nil
	}
	for _, s := range r.specs {
		why := live.Supported(string(s.Kind), r.cfg.workMode())
		if s.Master {
			why = "a master crash is not implemented by the live runtime yet"
		}
		if why != "" {
			return nil, inputErr("fault %q is not supported with --runtime live: %s", s.String(), why)
		}
	}
	rt, err := live.New(r.dep, live.Config{
		Seed: seed, Cost: r.cost, Workers: r.cfg.Workers, SampleEvery: r.cfg.Bucket,
		Observer: r, Work: r.cfg.workMode(), StoreDir: r.cfg.StoreDir,
	})
	if err != nil {
		return nil, &InputError{err}
	}
	return rt, nil
}
