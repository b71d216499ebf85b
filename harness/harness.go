package harness

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"time"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/engine/sim"
	"ftbench/faults"
	"ftbench/metrics"
	"ftbench/systems"
	"ftbench/workloads"
)

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

// Exit codes (DESIGN.md section 6).
const (
	ExitOK       = 0
	ExitInternal = 1
	ExitUsage    = 2
	ExitSafety   = 3
	ExitLiveness = 4
)

// Execute runs cfg to completion. Bad configuration gives an *InputError; a
// panic inside a protocol is turned into an internal error, never a crash.
func Execute(cfg Config) (out *Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			out = nil
			err = fmt.Errorf("internal error: %v\n%s", r, debug.Stack())
		}
	}()
	start := time.Now()
	r, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	out = r.run()
	out.Result.Host = Host{WallTimeS: time.Since(start).Seconds(), GoVersion: runtime.Version(), ObserverWallS: r.observeWall.Seconds()}
	return out, nil
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

// drainExtender is implemented by systems that notice lost work only after
// a timeout (stormack's ack timeout): the default drain is extended by it,
// so that work still waiting for its replay is not reported as lost.
type drainExtender interface {
	DrainExtra(opts systems.Options) engine.Time
}

// runner holds one run's moving parts.
type runner struct {
	cfg      Config
	sys      systems.System
	variant  string
	opts     systems.Options
	cost     engine.CostModel
	w        workloads.Workload
	log      *workloads.Log
	dep      *engine.Deployment
	sim      *sim.Sim
	specs    []faults.Spec
	job      systems.Job
	claim    string
	warmUp   engine.Time
	drainMax engine.Time

	// observation
	effects   [][]uint8
	expected  int64
	final     map[uint64]int64
	delivery  *check.Delivery
	series    *metrics.Series
	latency   metrics.Histogram
	visible   map[uint64]int64
	events    []engine.Event
	counters  map[string]int64
	drained   bool
	drainedAt engine.Time

	obs         *observer // nil unless cfg.Observe
	observeWall time.Duration
}

func prepare(cfg Config) (*runner, error) {
	if cfg.Bucket == 0 {
		cfg.Bucket = DefaultBucket
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, cost: engine.DefaultCost(), counters: map[string]int64{}, visible: map[uint64]int64{}}
	var err error
	if r.sys, err = systems.Lookup(cfg.System); err != nil {
		return nil, &InputError{err}
	}
	if r.variant, err = systems.ResolveVariant(r.sys, cfg.Variant); err != nil {
		return nil, &InputError{err}
	}
	r.opts = systems.Options{}
	for _, f := range r.sys.Flags() {
		r.opts[f.Name] = f.Default
	}
	for k, v := range cfg.SystemOpts {
		if _, ok := r.opts[k]; !ok {
			return nil, inputErr("--%s does not apply to system %s", k, cfg.System)
		}
		r.opts[k] = v
	}
	for _, o := range cfg.CostOverride {
		if err := r.cost.Set(o); err != nil {
			return nil, &InputError{err}
		}
	}
	if cfg.Cores > 0 {
		if set := r.cost.Cores; set != engine.DefaultCost().Cores && set != cfg.Cores {
			return nil, inputErr("--cores %d and --cost cores=%d disagree: give one", cfg.Cores, set)
		}
		r.cost.Cores = cfg.Cores
	}
	if r.w, err = workloads.New(cfg.Workload, engine.ChildSeed(cfg.Seed, "workload"), cfg.WorkloadOpts); err != nil {
		return nil, &InputError{err}
	}
	if err := peerToPeer(r.sys, r.w, &cfg); err != nil {
		return nil, err
	}
	r.cfg.Parallelism = cfg.Parallelism
	rate := cfg.Rate
	if rate == 0 {
		rate = workloads.DefaultRate(r.w, &r.cost, cfg.Parallelism, cfg.Workers)
	}
	r.cfg.Rate = rate
	r.log = &workloads.Log{Parts: cfg.Parallelism, Rate: rate, End: cfg.Duration}
	r.job = systems.Job{
		Workload: r.w, Log: r.log, Parallelism: cfg.Parallelism, Workers: cfg.Workers,
		Variant: r.variant, Opts: r.opts, Cost: &r.cost, Seed: engine.ChildSeed(cfg.Seed, "system"),
	}
	r.claim = r.sys.Claim(r.variant, r.opts)
	if r.dep, err = r.sys.Compile(r.job); err != nil {
		return nil, &InputError{err}
	}
	plan := r.w.Plan()
	d := faults.Defaults{Duration: cfg.Duration}
	if i, name := plan.FirstStateful(); i >= 0 {
		d.StatefulOp = name
		d.UpstreamOp = plan.OpNames()[i] // OpNames has the source first
	} else {
		d.StatefulOp = plan.Stages[0].Name
		d.UpstreamOp = plan.Source
	}
	for _, f := range cfg.Faults {
		spec, err := faults.Parse(f, d)
		if err != nil {
			return nil, &InputError{err}
		}
		r.specs = append(r.specs, spec)
	}
	if cfg.Observe {
		r.obs = &observer{}
	}
	r.drainMax = cfg.Drain
	if r.drainMax == 0 {
		r.drainMax = DefaultDrain
		if d, ok := r.sys.(drainExtender); ok {
			r.drainMax += d.DrainExtra(r.opts)
		}
	}
	r.warmUp = min(2*engine.Second, cfg.Duration/4)
	r.sim, err = sim.New(r.dep, sim.Config{
		Seed: engine.ChildSeed(cfg.Seed, "runtime"), Cost: r.cost, Workers: cfg.Workers,
		SampleEvery: cfg.Bucket, Observer: r,
	})
	if err != nil {
		return nil, &InputError{err}
	}
	if err := faults.Apply(r.specs, r.dep, cfg.Workers, cfg.Duration, r.sim); err != nil {
		return nil, &InputError{err}
	}
	return r, nil
}

func (r *runner) appendedAll() []int64 {
	a := make([]int64, r.cfg.Parallelism)
	for p := range a {
		a[p] = r.log.Total()
	}
	return a
}

func (r *runner) run() *Outcome {
	// The log is fully determined up front, so the oracle runs first: the
	// delivery checker then knows every record's expected effects.
	r.effects, r.expected, r.final = workloads.Expected(r.w, r.appendedAll())
	r.delivery = check.NewDelivery(func(p int32, off int64) int32 {
		if int(p) >= len(r.effects) || off < 0 || off >= int64(len(r.effects[p])) {
			return 0
		}
		return int32(r.effects[p][off])
	}, r.cfg.Parallelism)
	r.series = metrics.NewSeries(r.cfg.Bucket)
	r.sim.Run(r.cfg.Duration + r.drainMax)
	return r.finish()
}

// --- sim.Observer ---

func (r *runner) Commit(at engine.Time, c engine.Commit) {
	if r.cfg.OnCommit != nil { // a recording hook (Config.OnCommit)
		r.cfg.OnCommit(at, c)
	}
	r.delivery.Commit(c.ID)
	lat := at - c.Born
	r.series.Commit(at, lat)
	r.latency.Add(lat)
	r.visible[c.Key] = c.Value
	if r.obs != nil {
		r.obs.commit(at, c)
	}
}

func (r *runner) Event(e engine.Event) {
	r.events = append(r.events, e)
	if e.Kind == "checkpoint_completed" {
		// Recorded by systems/internal/checkpoint with the trigger-to-
		// complete duration as Value.
		r.series.Checkpoint(e.Time, engine.Time(e.Value))
	}
}

func (r *runner) Count(name string, delta int64) { r.counters[name] += delta }

func (r *runner) Sample(at engine.Time) {
	r.series.Lag(at, r.lag(at))
	if r.drained {
		if at >= r.drainedAt+metrics.DefaultRecoveryOptions().Hold {
			r.sim.Stop()
		}
		return
	}
	if at >= r.cfg.Duration && r.delivery.Complete(r.expected) {
		// Keep running for one hold window, so a recovery that ends with
		// the drain is still seen to hold.
		r.drained, r.drainedAt = true, at
	}
}

// lag is the source lag: records appended but not yet covered by the
// highest committed offset of their partition (Kafka's consumer lag against
// what the sink has made visible).
func (r *runner) lag(at engine.Time) int64 {
	appended := r.log.Appended(at)
	var lag int64
	for p := 0; p < r.cfg.Parallelism; p++ {
		lag += max(0, appended-(r.delivery.MaxCommitted(int32(p))+1))
	}
	return lag
}

func (r *runner) finish() *Outcome {
	res := &Result{
		System: r.cfg.System, Variant: r.variant, Workload: r.cfg.Workload, Seed: r.cfg.Seed,
		Faults: []string{}, ClaimedGuarantee: r.claim, Counters: r.counters,
		SystemMetrics: map[string]any{}, Problems: []string{}, Recoveries: []Recovery{},
	}
	for _, s := range r.specs {
		res.Faults = append(res.Faults, s.String())
	}
	res.Config = RunConfig{
		DurationS: r.cfg.Duration.Seconds(), RateRPS: r.cfg.Rate, Parallelism: r.cfg.Parallelism,
		Workers: r.cfg.Workers, Cores: r.cost.Cores, DrainS: r.drainMax.Seconds(), BucketS: r.cfg.Bucket.Seconds(),
		WarmUpS: r.warmUp.Seconds(), SystemOpts: r.opts, WorkloadOpts: r.workloadOpts(), Cost: r.cost.Map(),
	}
	res.Replay = r.cfg.ReplayCommand()
	res.SimTimeS = r.sim.Now().Seconds()
	res.SimEvents = r.sim.Events()
	res.PeakChannelBytes = int64(r.sim.PeakQueuedBytes())
	res.ChannelCapBytes = int64(r.sim.Capacity())
	res.Drained = r.drained
	res.AppendedRecords = r.log.Total() * int64(r.cfg.Parallelism)

	del := r.delivery.Finish(r.appendedAll())
	res.Duplicates, res.Lost, res.Unexpected = del.Duplicates, del.Lost, del.Unexpected
	res.ExpectedEffects = del.Expected
	res.CommittedEffects = r.delivery.Distinct()
	wrong, examples := check.WrongKeys(r.visible, r.final)
	res.WrongKeys = wrong
	for _, e := range examples {
		res.WrongKeyExamples = append(res.WrongKeyExamples, KeyDiff{Key: e.Key, Got: e.Got, Want: e.Want})
	}
	res.Verdict = string(check.Verdict(res.Duplicates, res.Lost))
	res.ClaimHeld = check.ClaimHeld(check.Guarantee(r.claim), res.Duplicates, res.Lost, res.WrongKeys)

	res.LatencyMS = Latency{
		P50: ms(r.latency.Quantile(0.50)), P99: ms(r.latency.Quantile(0.99)),
		P999: ms(r.latency.Quantile(0.999)), Max: ms(r.latency.Max()),
	}
	rows := r.series.Rows()
	steadyEnd := r.cfg.Duration
	firstFault := engine.Time(math.MaxInt64)
	for _, s := range r.specs {
		firstFault = min(firstFault, s.At)
	}
	// The bucket holding the first fault is not steady state.
	steadyEnd = min(steadyEnd, firstFault/r.cfg.Bucket*r.cfg.Bucket)
	steadyStart := r.warmUp
	if steadyStart >= steadyEnd {
		// A fault inside the warm-up: measure what there is before it.
		steadyStart = steadyEnd / 2
	}
	// The series counts effects; throughput is stated in input records/s,
	// the unit of --rate, by the log's exact effects-per-record ratio.
	effectsPerSec := metrics.SteadyThroughput(rows, steadyStart, steadyEnd)
	res.ThroughputEffects = round3(effectsPerSec)
	if r.expected > 0 {
		res.ThroughputRPS = round3(effectsPerSec * float64(res.AppendedRecords) / float64(r.expected))
	}
	r.recoveries(res, rows)

	if sum, ok := r.sys.(systems.Summarizer); ok {
		res.SystemMetrics = sum.Summarize(systems.RunInfo{
			Events: r.events, Counters: r.counters, Store: r.sim.StoreValue,
			Workload: r.w, Log: r.log, Job: r.job,
		})
	}
	var files map[string][]byte
	if r.obs != nil {
		files = r.observe(res)
	}
	res.ExitCode = r.exitCode(res)
	events := append([]engine.Event(nil), r.events...)
	for _, s := range r.specs {
		events = append(events, engine.Event{Time: s.At, Kind: "fault_start", Note: s.String()})
		if s.End > 0 {
			events = append(events, engine.Event{Time: min(s.End, r.cfg.Duration), Kind: "fault_end", Note: s.String()})
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time < events[j].Time })
	return &Outcome{Result: res, Rows: rows, Series: r.series, Events: events, Files: files}
}

func (r *runner) workloadOpts() map[string]string {
	f, _ := workloads.Lookup(r.cfg.Workload)
	m := map[string]string{}
	for _, o := range f.Options {
		m[o.Name] = o.Default
	}
	for k, v := range r.cfg.WorkloadOpts {
		m[k] = v
	}
	return m
}

func (r *runner) recoveries(res *Result, rows []metrics.Row) {
	opt := metrics.DefaultRecoveryOptions()
	opt.WarmUp = r.warmUp
	opt.Slack = int64(math.Ceil(r.cfg.Rate * r.cfg.Bucket.Seconds()))
	// Recovery may complete during the drain: the backlog a fault left
	// must still be worked off, though without new input it goes faster
	// than under load (README: recovery time).
	opt.End = r.sim.Now()
	hasCrash := false
	for _, s := range r.specs {
		rec := Recovery{Fault: s.String(), AtS: s.At.Seconds()}
		if t, ok := metrics.RecoveryTime(rows, s.At, opt); ok {
			v := round3(t.Seconds())
			rec.RecoveryTimeS = &v
		}
		res.Recoveries = append(res.Recoveries, rec)
		if s.Kind == "crash" {
			hasCrash = true
		}
	}
	if len(res.Recoveries) > 0 {
		// The headline recovery time is the slowest fault's; null if any
		// fault was never recovered from.
		var worst float64
		ok := true
		for _, rec := range res.Recoveries {
			if rec.RecoveryTimeS == nil {
				ok = false
				break
			}
			worst = max(worst, *rec.RecoveryTimeS)
		}
		if ok {
			res.RecoveryTimeS = &worst
		}
	}
	if hasCrash && r.dep.Coordinator >= 0 {
		d := r.cost.DetectDelay.Seconds()
		res.DetectionDelayS = &d
	}
}

func (r *runner) exitCode(res *Result) int {
	if !res.ClaimHeld {
		res.Problems = append(res.Problems, fmt.Sprintf("claimed %s but observed %s (duplicates=%d lost=%d wrong_keys=%d)",
			res.ClaimedGuarantee, res.Verdict, res.Duplicates, res.Lost, res.WrongKeys))
	}
	if res.Unexpected > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d effects committed that the oracle never produces", res.Unexpected))
	}
	if v, ok := res.SystemMetrics["safety_violations"]; ok {
		if n, ok := v.(int64); ok && n > 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("%d safety violations reported by the system's checks", n))
		}
	}
	if p := observerProblem(res); p != "" {
		res.Problems = append(res.Problems, p)
	}
	if len(res.Problems) > 0 {
		return ExitSafety
	}
	for _, rec := range res.Recoveries {
		if rec.RecoveryTimeS == nil {
			res.Problems = append(res.Problems, "not recovered within the run from "+rec.Fault)
			return ExitLiveness
		}
	}
	return ExitOK
}

func ms(t engine.Time) float64 { return round3(float64(t) / 1e6) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
