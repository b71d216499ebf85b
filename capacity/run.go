package capacity

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/metrics"
	"ftbench/systems"
)

// Format identifies capacity.json.
const Format = "ftbench-capacity/1"

// DefaultProbeDuration is a probe's input duration when none is asked for:
// long enough for a steady window of 45 buckets after the 1.5 s warm-up,
// short enough that a search of ten probes stays cheap. Probes of systems
// with a commit cycle are extended to MinSteadyDuration (14 s for a 1 s
// cycle).
const DefaultProbeDuration = 6 * engine.Second

// Options configures a search over harness runs.
type Options struct {
	// Base is the run configuration; Rate is the start rate (0: the
	// workload's default rate), Duration the probe duration (0:
	// DefaultProbeDuration), Drain the probe drain (0: see Plan). It must
	// have no faults.
	Base harness.Config
	// LatencyBound, if positive, also requires p99 end-to-end latency <= it.
	LatencyBound engine.Time
	Tolerance    float64 // 0: DefaultTolerance
}

// Plan is what every probe of a search shares.
type Plan struct {
	Config    harness.Config // the probe configuration, Rate = start rate
	Variant   string         // resolved
	Cycle     engine.Time    // the system's commit cycle
	Requested engine.Time    // the duration asked for (0: none)
	Notes     []string       // what was changed and why
	Bound     float64        // the cost model's record-at-a-time bound (+Inf: none)
	MinRate   float64        // the lowest rate probed (MinRate of the probe duration)
}

// NewPlan resolves the probe configuration. Errors are *harness.InputError
// for bad configuration.
func NewPlan(o Options) (*Plan, error) {
	cfg := o.Base
	if len(cfg.Faults) > 0 {
		return nil, &harness.InputError{Err: fmt.Errorf("capacity probes run without faults; drop --fault")}
	}
	if o.LatencyBound < 0 {
		return nil, &harness.InputError{Err: fmt.Errorf("--latency-bound must be positive")}
	}
	if o.LatencyBound > maxLatencyBound {
		return nil, &harness.InputError{Err: fmt.Errorf("--latency-bound %v must be at most %v: a probe's drain waits for the bound, and p99 latency beyond it is overload, not a bound",
			time.Duration(o.LatencyBound), time.Duration(maxLatencyBound))}
	}
	sys, err := systems.Lookup(cfg.System)
	if err != nil {
		return nil, &harness.InputError{Err: err}
	}
	variant, err := systems.ResolveVariant(sys, cfg.Variant)
	if err != nil {
		return nil, &harness.InputError{Err: err}
	}
	opts := systems.Options{}
	for _, f := range sys.Flags() {
		opts[f.Name] = f.Default
	}
	for k, v := range cfg.SystemOpts {
		opts[k] = v
	}
	p := &Plan{Cycle: systems.CommitCycle(sys, variant, opts), Requested: cfg.Duration, Variant: variant}
	bucket := cfg.Bucket
	if bucket == 0 {
		bucket = harness.DefaultBucket
	}
	if cfg.Duration == 0 {
		cfg.Duration = DefaultProbeDuration
	}
	if need := harness.MinSteadyDuration(p.Cycle, bucket); cfg.Duration < need {
		p.Notes = append(p.Notes, fmt.Sprintf("probe duration extended from %v to %v: the lag trend needs %d whole commit cycles of %v after the warm-up",
			time.Duration(cfg.Duration), time.Duration(need), metrics.MinTrendSamples, time.Duration(p.Cycle)))
		cfg.Duration = need
	}
	if cfg.Drain == 0 {
		// The drain only serves latency: a sustained probe drains within
		// about a cycle and its end-to-end latency; an overloaded one would
		// spend the default 10 s (plus stormack's ack timeout) working off
		// a backlog that changes no verdict.
		cfg.Drain = 2*engine.Second + 2*p.Cycle + o.LatencyBound
		p.Notes = append(p.Notes, fmt.Sprintf("probe drain %v (2s + 2 commit cycles + the latency bound): p99 counts the effects committed by then",
			time.Duration(cfg.Drain)))
	}
	p.MinRate = MinRate(cfg.Duration)
	if cfg.Rate == 0 {
		rate, err := harness.DefaultRate(cfg)
		if err != nil {
			return nil, err
		}
		cfg.Rate = rate
	}
	if cfg.Rate < p.MinRate {
		p.Notes = append(p.Notes, fmt.Sprintf("start rate raised from %.4g to %.4g records/s: a probe of fewer than %d records (%v of input) judges noise",
			cfg.Rate, p.MinRate, MinProbeRecords, time.Duration(cfg.Duration)))
		cfg.Rate = p.MinRate
	}
	p.Config = cfg
	if n := coresNote(cfg); n != "" && p.live() {
		p.Notes = append(p.Notes, n)
	}
	if err := checkLatencyBound(p, o.LatencyBound); err != nil {
		return nil, err
	}
	if p.Bound, err = harness.CapacityBound(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// live reports whether the plan's probes run on the live runtime.
func (p *Plan) live() bool { return p.Config.Runtime == harness.RuntimeLive }

// confirmed runs a probe; on the live runtime a failed probe is run once
// more and believed only if it fails again (cpu.go: once can be the
// machine's other load), the second attempt's figures and verdict standing
// with the first attempt kept beside them. The simulator's probes are
// deterministic: run once.
func confirmed(live bool, run func() (Probe, *harness.Result, error)) (Probe, *harness.Result, error) {
	p, r, err := run()
	if err != nil || p.Sustained || !live {
		return p, r, err
	}
	failed := p
	p, r, err = run()
	p.FirstAttempt = &failed
	return p, r, err
}

// maxLatencyBound is the largest --latency-bound: a probe drains for the
// bound beyond its input, so a larger one would only make probes longer
// (and be refused by the budgets under another flag's name).
const maxLatencyBound = 10 * 60 * engine.Second

// maxProbeRetries bounds how often a probe is lengthened (doubled) when
// its steady window held too few whole commit cycles.
const maxProbeRetries = 3

// Probe runs one probe of the plan at rate.
func (p *Plan) Probe(rate float64, bound engine.Time) (Probe, *harness.Result, error) {
	cfg := p.Config
	cfg.Rate = rate
	var r *harness.Result
	// A bursty sink's lag trend starts at its first output, which a loaded
	// micro-batch system may give only after several cycles; then the
	// probe is run again twice as long, a few times at most.
	var cpu *CPUUse
	for try := 0; ; try++ {
		var out *harness.Outcome
		var err error
		if p.live() {
			out, cpu, err = measuredRun(cfg)
		} else {
			out, err = harness.Execute(cfg)
		}
		if err != nil {
			return Probe{}, nil, err
		}
		r = out.Result
		if r.Overloaded != nil || try == maxProbeRetries {
			break
		}
		cfg.Duration *= 2
	}
	pr := Probe{RateRPS: rate, ThroughputRPS: r.ThroughputRPS, P99MS: r.LatencyMS.P99, Drained: r.Drained, Replay: r.Replay, CPU: cpu}
	if r.Overloaded == nil {
		return pr, r, fmt.Errorf("no lag trend even at %v of input: %s", time.Duration(cfg.Duration), r.LagTrend.Reason)
	}
	pr.LagSlopeRPS = *r.LagSlopeRPS
	pr.Sustained = true
	switch {
	case *r.Overloaded:
		pr.Sustained = false
		pr.Reason = fmt.Sprintf("lag grows %.0f records/s >= %g%% of the rate", pr.LagSlopeRPS, metrics.OverloadSlope*100)
	case bound > 0 && !r.Drained:
		// What is still uncommitted at the end of the drain is older than
		// the drain, which is longer than the bound.
		pr.Sustained = false
		pr.Reason = "not drained within the probe's drain, so p99 exceeds the latency bound"
	case bound > 0 && r.LatencyMS.P99 > float64(bound)/float64(engine.Millisecond):
		pr.Sustained = false
		pr.Reason = fmt.Sprintf("p99 %.3g ms > bound %v", r.LatencyMS.P99, time.Duration(bound))
	}
	return pr, r, nil
}

// Criterion is how probes are judged.
type Criterion struct {
	LagSlopeFraction float64  `json:"lag_slope_fraction"`
	LatencyBoundMS   *float64 `json:"latency_bound_ms"`
	Tolerance        float64  `json:"tolerance"`
	MinCycles        int      `json:"min_cycles"`
}

// Result is capacity.json.
type Result struct {
	Format   string `json:"format"`
	Command  string `json:"command,omitempty"`
	System   string `json:"system"`
	Variant  string `json:"variant"`
	Workload string `json:"workload"`
	// CapacityRPS is the highest rate found sustained (offered records/s);
	// null when even the lowest probe was overloaded.
	CapacityRPS *float64 `json:"capacity_rps"`
	// OverloadedAtRPS is the lowest rate found overloaded: the capacity
	// lies in [capacity_rps, overloaded_at_rps).
	OverloadedAtRPS float64   `json:"overloaded_at_rps"`
	Criterion       Criterion `json:"criterion"`
	ProbeDurationS  float64   `json:"probe_duration_s"`
	ProbeDrainS     float64   `json:"probe_drain_s"`
	CommitCycleS    float64   `json:"commit_cycle_s"`
	// CostModelBoundRPS is what the cost model allows operator instances
	// on this hardware (workloads.CapacityBound: each instance on at most
	// one core, a worker's instances sharing its cores), beside the
	// measured capacity; protocol processes, control traffic and key skew
	// only lower the real figure. Null when the workload has no costs.
	CostModelBoundRPS *float64 `json:"cost_model_bound_rps"`
	Notes             []string `json:"notes"`
	// Runtime is "live" for a search on the live runtime; absent for the
	// simulator's, whose capacity.json is as it always was.
	Runtime string `json:"runtime,omitempty"`
	// Live searches only. CoresAssumed is --workers x --cores (CPUUse)
	// and CoresAvailable the cores this process may use (GOMAXPROCS).
	CoresAssumed   int `json:"cores_assumed,omitempty"`
	CoresAvailable int `json:"cores_available,omitempty"`
	// CapacityPerCoreS is capacity_rps over the cores the probe at the
	// capacity received (its CPU seconds per wall second, over the lag
	// trend's window): records/s per core-second actually received, which
	// a busy machine lowers far less than the capacity itself. Null when
	// there is no capacity or its probe has no CPU figure.
	CapacityPerCoreS *float64 `json:"capacity_per_core_s,omitempty"`
	// Sim is the simulator's search of the same configuration, set beside
	// this one (bench capacity --sim-capacity).
	Sim *SimComparison `json:"sim,omitempty"`
	// Config is run.json's config of the probe at the capacity (of the
	// first probe when there is none).
	Config harness.RunConfig `json:"config"`
	Probes []Probe           `json:"probes"`
}

// NoneFound says, for a search that found no sustained rate, between which
// rates it looked and why the lowest failed; "" when it found a capacity.
func (r *Result) NoneFound() string {
	if r.CapacityRPS != nil || len(r.Probes) == 0 {
		return ""
	}
	low, high := r.Probes[0], r.Probes[0]
	for _, p := range r.Probes {
		if p.RateRPS < low.RateRPS {
			low = p
		}
		high.RateRPS = max(high.RateRPS, p.RateRPS)
	}
	return fmt.Sprintf("no sustained rate found between %.0f and %.0f records/s: at %.0f records/s %s (a longer --duration lets probes go lower)",
		low.RateRPS, high.RateRPS, low.RateRPS, low.Reason)
}

func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) || x <= 0 {
		return nil
	}
	return &x
}

// Find runs the search planned by NewPlan(o). progress, if not nil, sees
// every probe with the bracket after it and the probe's wall time.
func Find(o Options, progress func(p Probe, lo, hi float64, wall time.Duration)) (*Result, error) {
	plan, err := NewPlan(o)
	if err != nil {
		return nil, err
	}
	return plan.Find(o, progress)
}

// Find runs the search of this plan (o as given to NewPlan).
func (plan *Plan) Find(o Options, progress func(p Probe, lo, hi float64, wall time.Duration)) (*Result, error) {
	tol := o.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	res := &Result{
		Format: Format, System: plan.Config.System, Variant: plan.Variant, Workload: plan.Config.Workload,
		ProbeDurationS: plan.Config.Duration.Seconds(), ProbeDrainS: plan.Config.Drain.Seconds(),
		CommitCycleS: plan.Cycle.Seconds(), Notes: append([]string{}, plan.Notes...),
		CostModelBoundRPS: finite(plan.Bound),
		Criterion:         Criterion{LagSlopeFraction: metrics.OverloadSlope, Tolerance: tol, MinCycles: metrics.MinTrendSamples},
	}
	if o.LatencyBound > 0 {
		b := float64(o.LatencyBound) / float64(engine.Millisecond)
		res.Criterion.LatencyBoundMS = &b
	}
	configs := map[float64]harness.RunConfig{}
	var first *harness.RunConfig
	var lastWall time.Duration
	probe := func(rate float64) (Probe, error) {
		start := time.Now()
		p, r, err := confirmed(plan.live(), func() (Probe, *harness.Result, error) { return plan.Probe(rate, o.LatencyBound) })
		if r != nil {
			configs[rate] = r.Config
			if first == nil {
				c := r.Config
				first = &c
			}
		}
		lastWall = time.Since(start)
		return p, err
	}
	b, err := Search(plan.Config.Rate, plan.MinRate, tol, probe, func(p Probe, lo, hi float64) {
		if progress != nil {
			progress(p, lo, hi, lastWall)
		}
	})
	res.Probes = b.Probes
	if err != nil {
		return res, err
	}
	res.OverloadedAtRPS = b.Overloaded
	if plan.live() {
		res.Runtime, res.CoresAssumed, res.CoresAvailable = harness.RuntimeLive, assumedCores(plan.Config), runtime.GOMAXPROCS(0)
		res.CapacityPerCoreS = perCore(b)
	}
	if b.Sustained > 0 {
		c := b.Sustained
		res.CapacityRPS = &c
		res.Config = configs[c]
	} else if first != nil {
		res.Config = *first
	}
	return res, nil
}
