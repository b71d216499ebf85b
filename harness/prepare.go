package harness

import (
	"time"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/faults"
	"ftbench/keyed"
	"ftbench/metrics"
	"ftbench/systems"
	"ftbench/workloads"
)

// A run's moving parts (runner) and their assembly from a Config (prepare):
// the system and its options, the cost model, the workload and its log, the
// compiled deployment, the faults, the output store, the run's time windows
// and the runtime. Every refusal of bad input that needs more than the
// Config alone is made here, before anything runs.

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
	rt       engineRuntime
	specs    []faults.Spec
	job      systems.Job
	claim    check.Claim
	warmUp   engine.Time
	drainMax engine.Time
	// rateChosen says whether --rate was given or chosen by the harness,
	// and rateRule by which rule.
	rateChosen, rateRule string
	// cycle is the system's commit cycle (0: continuous); bursts are its
	// sink's bursts of visible output (nil for a continuous sink).
	cycle  engine.Time
	bursts *metrics.Bursts
	// settle is how long the run goes on once drained (drain.go).
	settle engine.Time
	// pending are the keys of effects never committed (pendingKeys,
	// expect.go), computed when an undrained run first asks.
	pending map[uint64]bool
	// pipe, when not nil, checks commits on a goroutine of its own
	// (commits.go).
	pipe *commitPipe
	// oracleDone delivers the oracle pass running beside the simulation
	// (startOracle, expect.go).
	oracleDone chan oracleOut
	// milestones are the oracle pass's copies of the keyed state along the
	// log, for the systems' snapshot checks (joinOracle sets them).
	milestones *workloads.Milestones
	// seal: finished time-series buckets keep only their quantiles
	// (measureCommit); the simulator's runs.
	seal bool

	// observation (expect.go)
	effectsOf func(part int32, off int64) int32
	expected  int64 // -1 until known
	final     map[uint64]int64
	obsWant   map[uint64]check.Expect
	delivery  *check.Delivery
	// stale derives output staleness from the records' done times as they
	// leave the delivery checker's window.
	stale     *metrics.StalenessTracker
	series    *metrics.Series
	latency   metrics.Histogram
	visible   *keyed.Table // the output store's settled state
	store     *outputStore
	events    []engine.Event
	counters  map[string]int64
	drained   bool
	drainedAt engine.Time
	// lastCommit is the latest commit seen (anyCommit: there was one), for
	// quiescence: no commit during the last settle window. The event loop
	// writes them on every commit while the commit pipe's goroutine works
	// on the fields around them (latency, store, delivery), so they sit
	// apart on lines of their own: sharing a cache line with the checker
	// cost the 60 s wordcount about 2.5% of its wall time (3.30 against
	// 3.22 s, five interleaved runs each).
	_          falseSharingPad
	lastCommit engine.Time
	anyCommit  bool
	_          falseSharingPad

	obs *observer // nil unless cfg.Observe
	// commitHook, if set (by tests), sees every commit and whether it was
	// the effect's first.
	commitHook  func(at engine.Time, c engine.Commit, first bool)
	observeWall time.Duration
	simWall     time.Duration  // the simulation's wall time (bounds the observer's check)
	progress    *progressState // nil unless cfg.Progress is set (progress.go)
}

// prepare builds a run of cfg, ready to run, or says why cfg cannot run.
// Each step uses what the steps before it built, and the first refusal is
// the one reported, so the order also decides which of several mistakes in
// a configuration is named.
func prepare(cfg Config) (*runner, error) {
	if cfg.Bucket == 0 {
		cfg.Bucket = DefaultBucket
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, cost: engine.DefaultCost(), counters: map[string]int64{}}
	if err := r.chooseSystem(); err != nil {
		return nil, err
	}
	if err := r.cfg.checkWorkloadOptions(); err != nil {
		return nil, err
	}
	if err := r.buildCost(); err != nil {
		return nil, err
	}
	if err := r.buildWorkload(); err != nil {
		return nil, err
	}
	if err := r.chooseRate(); err != nil {
		return nil, err
	}
	if err := r.compile(); err != nil {
		return nil, err
	}
	if err := r.parseFaults(); err != nil {
		return nil, err
	}
	r.buildOutputStore()
	r.setWindows()
	if err := r.checkTrace(); err != nil {
		return nil, err
	}
	if err := r.startRuntime(); err != nil {
		return nil, err
	}
	return r, nil
}

// chooseSystem looks up the system and its variant, and sets its options:
// each flag's default, then what the configuration gives.
func (r *runner) chooseSystem() error {
	var err error
	if r.sys, err = systems.Lookup(r.cfg.System); err != nil {
		return &InputError{err}
	}
	if r.variant, err = systems.ResolveVariant(r.sys, r.cfg.Variant); err != nil {
		return &InputError{err}
	}
	r.opts = systems.Options{}
	for _, f := range r.sys.Flags() {
		r.opts[f.Name] = f.Default
	}
	for k, v := range r.cfg.SystemOpts {
		if _, ok := r.opts[k]; !ok {
			return inputErr("--%s does not apply to system %s", k, r.cfg.System)
		}
		r.opts[k] = v
	}
	return r.checkOptions()
}

// buildCost applies --cost overrides and --cores to the default cost model.
func (r *runner) buildCost() error {
	for _, o := range r.cfg.CostOverride {
		if err := r.cost.Set(o); err != nil {
			return &InputError{err}
		}
	}
	if r.cfg.Cores > 0 {
		if set := r.cost.Cores; set != engine.DefaultCost().Cores && set != r.cfg.Cores {
			return inputErr("--cores %d and --cost cores=%d disagree: give one", r.cfg.Cores, set)
		}
		r.cost.Cores = r.cfg.Cores
	}
	return checkCost(&r.cost)
}

// buildWorkload builds the workload and checks the cost model's
// per-operator overrides against its operators.
func (r *runner) buildWorkload() error {
	var err error
	if r.w, err = r.newWorkload(); err != nil {
		return &InputError{err}
	}
	if err := r.cost.CheckOps(r.cfg.Workload, workloads.Operators(r.w)); err != nil {
		return &InputError{err}
	}
	for _, op := range workloads.Operators(r.w) {
		if err := checkCost(r.cost.For(op)); err != nil {
			return inputErr("operator %s: %v", op, err)
		}
	}
	return nil
}

// newWorkload builds the run's workload: the same one every time, so the
// oracle pass can have an instance of its own.
func (r *runner) newWorkload() (workloads.Workload, error) {
	return workloads.New(r.cfg.Workload, engine.ChildSeed(r.cfg.Seed, "workload"), r.cfg.WorkloadOpts)
}

// chooseRate settles the parallelism and the rate (a peer-to-peer
// workload's own, or half the capacity bound when --rate is not given),
// records which rule chose the rate, and lays out the log at that rate.
func (r *runner) chooseRate() error {
	// Before peerToPeer, which fills in the peer workload's own default.
	rateGiven := r.cfg.Rate > 0
	if err := peerToPeer(r.sys, r.w, &r.cfg); err != nil {
		return err
	}
	if r.cfg.Rate == 0 {
		r.cfg.Rate = workloads.DefaultRate(r.w, &r.cost, r.cfg.Parallelism, r.cfg.Workers)
	}
	r.rateChosen = RateGiven
	if !rateGiven {
		r.rateChosen, r.rateRule = RateAutomatic, RuleHalfCapacity
		if _, ok := r.w.(workloads.PeerToPeer); ok {
			r.rateRule = RulePeerToPeer
		}
	}
	r.log = &workloads.Log{Parts: r.cfg.Parallelism, Rate: r.cfg.Rate, End: r.cfg.Duration}
	return r.checkLogSize()
}

// compile hands the job to the system, which deploys it, and takes the
// guarantee the system claims for it.
func (r *runner) compile() error {
	r.job = systems.Job{
		Workload: r.w, Log: r.log, Parallelism: r.cfg.Parallelism, Workers: r.cfg.Workers,
		Variant: r.variant, Opts: r.opts, Cost: &r.cost, Seed: engine.ChildSeed(r.cfg.Seed, "system"),
	}
	r.claim = systems.ClaimFor(r.sys, r.variant, r.opts, r.w.Plan())
	var err error
	if r.dep, err = r.sys.Compile(r.job); err != nil {
		return &InputError{err}
	}
	if d, ok := r.sys.(systems.MsgDescriber); ok && r.cfg.Trace {
		r.dep.Describe = d.DescribeMsg(r.job)
	}
	return checkSlots(r.cfg.Slots, r.dep, r.cfg.Workers)
}

// parseFaults parses the --fault specs; a spec that names no operator
// aims at the plan's first stateful one (or its first stage).
func (r *runner) parseFaults() error {
	plan := r.w.Plan()
	d := faults.Defaults{Duration: r.cfg.Duration}
	if i, name := plan.FirstStateful(); i >= 0 {
		d.StatefulOp = name
		d.UpstreamOp = plan.OpNames()[i] // OpNames has the source first
	} else {
		d.StatefulOp = plan.Stages[0].Name
		d.UpstreamOp = plan.Source
	}
	for _, f := range r.cfg.Faults {
		spec, err := faults.Parse(f, d)
		if err != nil {
			return &InputError{err}
		}
		r.specs = append(r.specs, spec)
	}
	return nil
}

// buildOutputStore sets up the sink's output store and, with --observe, the
// reader that watches it.
func (r *runner) buildOutputStore() {
	r.store = newOutputStore()
	r.visible = r.store.visible
	r.store.uncommitted = testUncommittedReads[r.cfg.System]
	if r.cfg.Observe {
		// The reader is a client of the output store on a machine of its
		// own, so the system's processes, cores and ids are unchanged.
		r.obs = newObserver(r.store, engine.ChildSeed(r.cfg.Seed, "observer/reader"), r.cost.NetLatency)
		r.dep.Add(engine.ProcSpec{Name: "observer/reader", Worker: engine.ClientNode, New: func() engine.Process { return &reader{o: r.obs} }})
	}
}

// drainExtender is implemented by systems that notice lost work only after
// a timeout (stormack's ack timeout): the default drain is extended by it,
// so that work still waiting for its replay is not reported as lost.
type drainExtender interface {
	DrainExtra(opts systems.Options) engine.Time
}

// setWindows sets the run's time windows: the warm-up, the commit cycle,
// the settle window and the drain limit (drain.go).
func (r *runner) setWindows() {
	var extra engine.Time
	if d, ok := r.sys.(drainExtender); ok {
		extra = d.DrainExtra(r.opts)
	}
	r.warmUp = min(2*engine.Second, r.cfg.Duration/4)
	r.cycle = systems.CommitCycle(r.sys, r.variant, r.opts)
	r.bursts = metrics.NewBursts(r.cycle)
	r.settle = settleWindow(r.cycle, extra)
	r.drainMax = r.cfg.Drain
	if r.drainMax == 0 {
		r.drainMax = DefaultDrain + extra
	}
	// A run that is not drained is judged quiescent only after a settle
	// window without commits, so the drain must be able to hold one.
	r.drainMax = max(r.drainMax, r.settle)
}

// faultBounds is what faults.Apply knows of the run, and where every
// reader of a fault's window (events.jsonl, the observer's annotations)
// ends it. Windows run into the drain as the user wrote them: a store
// outage longer than the run lasts until the run stops.
func (r *runner) faultBounds() faults.Bounds {
	return faults.Bounds{Workers: r.cfg.Workers, InputEnd: r.cfg.Duration, HardEnd: r.cfg.Duration + r.drainMax, RestartDelay: r.cost.RestartDelay}
}

// startRuntime builds the runtime and installs the faults in it.
func (r *runner) startRuntime() error {
	var err error
	if r.rt, err = r.newRuntime(); err != nil {
		return err
	}
	if err := faults.Apply(r.specs, r.dep, r.faultBounds(), r.rt); err != nil {
		r.rt.Close()
		return &InputError{err}
	}
	if err := r.checkFaultEdges(); err != nil {
		return err
	}
	return r.checkFaultLimits()
}
