package harness

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/workloads"
)

// The harness's entry points: Execute, which runs a configuration to its
// Outcome, and the questions answered by preparing a run without running it
// (DefaultRate, CapacityBound, Deployment). A run goes through prepare
// (prepare.go), run and its engine.Observer (run.go, intake.go), and finish
// (finish.go, recovery.go, exit.go).

// Outcome is a finished run: its run.json, its time series and its events.
type Outcome struct {
	Result *Result
	Rows   []metrics.Row
	Series *metrics.Series
	Events []engine.Event
	// Files are extra files written next to run.json (the observer's
	// porcupine visualizations), by name.
	Files map[string][]byte
}

// Execute runs cfg to completion. Bad configuration gives an *InputError; a
// panic inside a protocol is turned into an internal error, never a crash.
func Execute(cfg Config) (out *Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			out = nil
			if m, ok := r.(memoryStop); ok {
				err = m.err
				return
			}
			err = fmt.Errorf("internal error: %v\n%s", r, debug.Stack())
		}
	}()
	start := time.Now()
	r, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	if err := r.checkBudget(); err != nil {
		return nil, err
	}
	defer r.startProgress(start)()
	out = r.run()
	out.Result.Host = Host{WallTimeS: time.Since(start).Seconds(), GoVersion: runtime.Version(), ObserverWallS: r.observeWall.Seconds()}
	return out, nil
}

// DefaultRate is the rate a run of cfg gets when it gives none (half the
// cost model's capacity bound on cfg's hardware; the workload's own for
// peer-to-peer workloads).
func DefaultRate(cfg Config) (float64, error) {
	cfg.Rate = 0
	r, err := prepare(cfg)
	if err != nil {
		return 0, err
	}
	return r.cfg.Rate, nil
}

// CapacityBound is the cost model's capacity bound (records/s) for cfg's
// record-at-a-time deployment of its workload on its hardware, with the
// operator chains the system deploys (workloads.ChainedCapacityBound:
// barrier and none chain as Flink does unless --chaining=false); +Inf when
// the workload gives no costs. The default rate is half the unchained
// bound (workloads.DefaultRate), the same for every system.
func CapacityBound(cfg Config) (float64, error) {
	r, err := prepare(cfg)
	if err != nil {
		return 0, err
	}
	var chains [][]string
	for _, t := range tasksOf(r.dep) {
		if len(t.Operators) > 1 {
			chains = append(chains, t.Operators)
		}
	}
	return workloads.ChainedCapacityBound(r.w, &r.cost, r.cfg.Parallelism, r.cfg.Workers, chains, r.opts["object-reuse"] == "true"), nil
}

// Deployment compiles cfg without running it, so that callers can name its
// operators and workers (torture draws fault targets from it).
func Deployment(cfg Config) (*engine.Deployment, error) {
	r, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	return r.dep, nil
}
