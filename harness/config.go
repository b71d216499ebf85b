// Package harness runs one configured benchmark: it builds the workload,
// compiles it with the chosen system, installs the faults, runs the
// simulator, measures and checks the outcome and writes the results. The CLI
// is a thin layer over it, and sweeps, comparisons and torture campaigns are
// loops over Execute.
package harness

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"ftbench/engine"
	"ftbench/engine/live"
)

// Config is one run's full configuration. Together with the seed it
// determines the run's results exactly.
type Config struct {
	System       string
	Variant      string // "" = the system's default
	Workload     string
	WorkloadOpts map[string]string // only explicitly set options
	SystemOpts   map[string]string // only explicitly set options
	Faults       []string
	Duration     engine.Time // input is appended during [0, Duration)
	Rate         float64     // records/s over all partitions; 0 = the workload's default
	Parallelism  int
	Workers      int
	// Cores per worker (and on the master node), shared by every process
	// placed there; 0 = the cost model's default (engine.DefaultCost).
	Cores int
	// Slots is every worker's slot count, the processes it can host
	// (engine/sim's slots.go); 0 = exactly what the placement uses, so a
	// failed worker's tasks have nowhere else to go. Spare slots let the
	// runtime re-place them on live workers.
	Slots        int `json:",omitempty"`
	Seed         uint64
	CostOverride []string    // "name=value"
	Drain        engine.Time // longest drain after the input ends; 0 = default
	Bucket       engine.Time // time-series bucket; 0 = 100ms
	// Observe records what a reader of the sink sees and checks it with
	// porcupine (harness/observe.go); off by default because it holds every
	// commit in memory.
	Observe bool
	// OnCommit, if set, sees every commit as the delivery checker does. It
	// is for tools that record histories (the checker mutants' corpus,
	// check/testdata/corpus); never part of a configuration's identity.
	OnCommit func(at engine.Time, c engine.Commit) `json:"-"`
	// Runtime is "sim" (the default: deterministic, virtual time) or
	// "live" (engine/live: goroutines, wall-clock time, real disk; not
	// reproducible byte for byte).
	// (omitted from a config's JSON when empty, so sweep manifests and
	// run keys of simulator runs are unchanged.)
	Runtime string `json:",omitempty"`
	// Work is the live runtime's Work mode: "model" (default: calibrated
	// computation) or "none" (the bare implementation).
	Work string `json:",omitempty"`
	// StoreDir is where a live run's durable store writes its files (""
	// a temporary folder removed after the run).
	StoreDir string `json:"-"`
	// NoBudget runs the configuration even if its estimated size exceeds
	// the size budget (budget.go, --no-budget); not part of its identity.
	NoBudget bool `json:"-"`
	// Progress, if set, receives a report about every ProgressEvery of wall
	// time while the run executes (progress.go); not part of its identity.
	Progress func(Progress) `json:"-"`
	// Trace records the run's trace, trace.jsonl (trace.go), in the
	// window [TraceFrom, TraceTo) of simulated time; both 0: the default
	// window around the first fault. It changes no figure of the run, so
	// it is not part of its identity.
	Trace              bool        `json:"-"`
	TraceFrom, TraceTo engine.Time `json:"-"`
	// TraceMaxRecords bounds the trace below MaxTraceRecords (0: that
	// bound); for tests.
	TraceMaxRecords int `json:"-"`
}

// Defaults used when a Config leaves a field zero.
const (
	DefaultDuration    = 20 * engine.Second
	DefaultParallelism = 4
	DefaultWorkers     = 4
	DefaultBucket      = 100 * engine.Millisecond
	DefaultDrain       = 10 * engine.Second
)

// DefaultConfig is `bench run` with no flags.
func DefaultConfig() Config {
	return Config{
		System: "none", Workload: "wordcount", Duration: DefaultDuration,
		Parallelism: DefaultParallelism, Workers: DefaultWorkers, Seed: 1,
	}
}

// InputError is a problem with the configuration (exit code 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// IsInputError reports whether err is bad input rather than an internal failure.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

func (c *Config) validate() error {
	switch {
	case c.Duration <= 0:
		return inputErr("--duration must be positive, got %v", time.Duration(c.Duration))
	case c.Rate < 0:
		return inputErr("--rate must be positive, got %g", c.Rate)
	case c.Parallelism < 1 || c.Parallelism > 256:
		return inputErr("--parallelism must be from 1 to 256, got %d", c.Parallelism)
	case c.Workers < 1 || c.Workers > 256:
		return inputErr("--workers must be from 1 to 256, got %d", c.Workers)
	case c.Cores < 0 || c.Cores > 1024:
		return inputErr("--cores must be from 1 to 1024, got %d", c.Cores)
	case c.Slots < 0 || c.Slots > 65536:
		return inputErr("--slots must be from 1 to 65536, got %d", c.Slots)
	case c.Slots > 0 && c.runtime() == RuntimeLive:
		return inputErr("--slots applies to --runtime sim only (the live runtime does not re-place processes)")
	case c.Drain < 0:
		return inputErr("--drain must not be negative")
	case c.Bucket < 0:
		return inputErr("--bucket must be positive")
	case c.Runtime != "" && c.Runtime != RuntimeSim && c.Runtime != RuntimeLive:
		return inputErr("--runtime %q: want sim or live", c.Runtime)
	case c.Work != "" && c.runtime() != RuntimeLive:
		return inputErr("--work applies to --runtime live only")
	case c.Trace && c.runtime() == RuntimeLive:
		return inputErr("--trace applies to --runtime sim only (the recorder is the simulator's, and a live run is not reproducible)")
	case !c.Trace && (c.TraceFrom != 0 || c.TraceTo != 0):
		return inputErr("--trace-window applies with --trace only")
	case c.Trace && (c.TraceFrom < 0 || c.TraceTo < c.TraceFrom || (c.TraceTo == c.TraceFrom && c.TraceTo != 0)):
		return inputErr("--trace-window must end after it starts, got %s-%s", fmtDur(c.TraceFrom), fmtDur(c.TraceTo))
	case c.Observe && c.runtime() == RuntimeLive:
		// The reader's model (observe.go) serves each read at its call
		// plus a drawn latency and returns it by a drawn time; live, its
		// timers fire late under load and the checked history is not the
		// one the model describes.
		return inputErr("--observe is not supported with --runtime live yet (the reader's modelled read latencies assume timers that fire on time)")
	}
	if _, err := live.ParseWorkMode(c.Work); err != nil {
		return &InputError{err}
	}
	return c.checkLimits()
}

// ReplayCommand is the exact `bench run` line that repeats this run.
func (c *Config) ReplayCommand() string {
	args := []string{"bench", "run",
		"--system", c.System,
	}
	if c.Variant != "" {
		args = append(args, "--variant", c.Variant)
	}
	args = append(args,
		"--workload", c.Workload,
		"--seed", strconv.FormatUint(c.Seed, 10),
		"--duration", time.Duration(c.Duration).String(),
		"--parallelism", strconv.Itoa(c.Parallelism),
		"--workers", strconv.Itoa(c.Workers),
	)
	if c.Cores > 0 {
		args = append(args, "--cores", strconv.Itoa(c.Cores))
	}
	if c.Slots > 0 {
		args = append(args, "--slots", strconv.Itoa(c.Slots))
	}
	if c.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(c.Rate, 'f', -1, 64))
	}
	for _, f := range c.Faults {
		args = append(args, "--fault", shellQuote(f))
	}
	for _, kv := range sortedKV(c.SystemOpts) {
		args = append(args, "--"+kv[0], shellQuote(kv[1]))
	}
	for _, kv := range sortedKV(c.WorkloadOpts) {
		args = append(args, "--"+kv[0], shellQuote(kv[1]))
	}
	for _, o := range c.CostOverride {
		args = append(args, "--cost", shellQuote(o))
	}
	if c.Drain > 0 {
		args = append(args, "--drain", time.Duration(c.Drain).String())
	}
	if c.Bucket > 0 && c.Bucket != DefaultBucket {
		args = append(args, "--bucket", time.Duration(c.Bucket).String())
	}
	if c.Observe {
		args = append(args, "--observe")
	}
	if c.runtime() == RuntimeLive {
		args = append(args, "--runtime", RuntimeLive)
		if c.Work != "" {
			args = append(args, "--work", c.Work)
		}
	}
	if c.NoBudget {
		args = append(args, "--no-budget")
	}
	return strings.Join(args, " ")
}

func sortedKV(m map[string]string) [][2]string {
	kvs := make([][2]string, 0, len(m))
	for k, v := range m {
		kvs = append(kvs, [2]string{k, v})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i][0] < kvs[j][0] })
	return kvs
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '@' || r == ',' || r == '=' || r == '%' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
