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
	"ftbench/faults"
	"ftbench/keyed"
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

// Exit codes (README, "Exit codes" after the run.json keys).
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

// CapacityBound is the cost model's capacity bound (records/s) for a
// record-at-a-time deployment of cfg's workload on cfg's hardware
// (workloads.CapacityBound); +Inf when the workload gives no costs.
func CapacityBound(cfg Config) (float64, error) {
	r, err := prepare(cfg)
	if err != nil {
		return 0, err
	}
	return workloads.CapacityBound(r.w, &r.cost, r.cfg.Parallelism, r.cfg.Workers), nil
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

func prepare(cfg Config) (*runner, error) {
	if cfg.Bucket == 0 {
		cfg.Bucket = DefaultBucket
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// Before peerToPeer, which fills in the peer workload's own default.
	rateGiven := cfg.Rate > 0
	r := &runner{cfg: cfg, cost: engine.DefaultCost(), counters: map[string]int64{}}
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
	if err := r.checkOptions(); err != nil {
		return nil, err
	}
	if err := cfg.checkWorkloadOptions(); err != nil {
		return nil, err
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
	if err := checkCost(&r.cost); err != nil {
		return nil, err
	}
	if r.w, err = r.newWorkload(); err != nil {
		return nil, &InputError{err}
	}
	if err := r.cost.CheckOps(cfg.Workload, workloads.Operators(r.w)); err != nil {
		return nil, &InputError{err}
	}
	for _, op := range workloads.Operators(r.w) {
		if err := checkCost(r.cost.For(op)); err != nil {
			return nil, inputErr("operator %s: %v", op, err)
		}
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
	r.rateChosen = RateGiven
	if !rateGiven {
		r.rateChosen, r.rateRule = RateAutomatic, RuleHalfCapacity
		if _, ok := r.w.(workloads.PeerToPeer); ok {
			r.rateRule = RulePeerToPeer
		}
	}
	r.log = &workloads.Log{Parts: cfg.Parallelism, Rate: rate, End: cfg.Duration}
	if err := r.checkLogSize(); err != nil {
		return nil, err
	}
	r.job = systems.Job{
		Workload: r.w, Log: r.log, Parallelism: cfg.Parallelism, Workers: cfg.Workers,
		Variant: r.variant, Opts: r.opts, Cost: &r.cost, Seed: engine.ChildSeed(cfg.Seed, "system"),
	}
	r.claim = systems.ClaimFor(r.sys, r.variant, r.opts, r.w.Plan())
	if r.dep, err = r.sys.Compile(r.job); err != nil {
		return nil, &InputError{err}
	}
	if err := checkSlots(cfg.Slots, r.dep, cfg.Workers); err != nil {
		return nil, err
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
	r.store = newOutputStore()
	r.visible = r.store.visible
	r.store.uncommitted = testUncommittedReads[cfg.System]
	if cfg.Observe {
		// The reader is a client of the output store on a machine of its
		// own, so the system's processes, cores and ids are unchanged.
		r.obs = newObserver(r.store, engine.ChildSeed(cfg.Seed, "observer/reader"), r.cost.NetLatency)
		r.dep.Add(engine.ProcSpec{Name: "observer/reader", Worker: engine.ClientNode, New: func() engine.Process { return &reader{o: r.obs} }})
	}
	var extra engine.Time
	if d, ok := r.sys.(drainExtender); ok {
		extra = d.DrainExtra(r.opts)
	}
	r.warmUp = min(2*engine.Second, cfg.Duration/4)
	r.cycle = systems.CommitCycle(r.sys, r.variant, r.opts)
	r.bursts = metrics.NewBursts(r.cycle)
	r.settle = settleWindow(r.cycle, extra)
	r.drainMax = cfg.Drain
	if r.drainMax == 0 {
		r.drainMax = DefaultDrain + extra
	}
	// A run that is not drained is judged quiescent only after a settle
	// window without commits, so the drain must be able to hold one.
	r.drainMax = max(r.drainMax, r.settle)
	if r.rt, err = r.newRuntime(); err != nil {
		return nil, err
	}
	// Windows run into the drain as the user wrote them: a store outage
	// longer than the run lasts until the run stops.
	bounds := faults.Bounds{Workers: cfg.Workers, InputEnd: cfg.Duration, HardEnd: cfg.Duration + r.drainMax, RestartDelay: r.cost.RestartDelay}
	if err := faults.Apply(r.specs, r.dep, bounds, r.rt); err != nil {
		r.rt.Close()
		return nil, &InputError{err}
	}
	if err := r.checkFaultEdges(); err != nil {
		return nil, err
	}
	if err := r.checkFaultLimits(); err != nil {
		return nil, err
	}
	return r, nil
}

// newWorkload builds the run's workload: the same one every time, so the
// oracle pass can have an instance of its own.
func (r *runner) newWorkload() (workloads.Workload, error) {
	return workloads.New(r.cfg.Workload, engine.ChildSeed(r.cfg.Seed, "workload"), r.cfg.WorkloadOpts)
}

func (r *runner) appendedAll() []int64 {
	a := make([]int64, r.cfg.Parallelism)
	for p := range a {
		a[p] = r.log.Total()
	}
	return a
}

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
	return r.finish()
}

// --- engine.Observer ---

func (r *runner) Commit(at engine.Time, c engine.Commit) {
	if r.cfg.OnCommit != nil { // a recording hook (Config.OnCommit)
		r.cfg.OnCommit(at, c)
	}
	// A first commit raises its record's done time (duplicates must not
	// make a record look late); commits reach the harness out of time
	// order by up to a CPU slice, so the checker keeps the latest.
	r.lastCommit, r.anyCommit = max(r.lastCommit, at), true
	r.bursts.Commit(at)
	now := r.rt.Now()
	if r.pipe != nil {
		r.pipe.add(now, at, &c)
		return
	}
	r.measureCommit(now, at, c)
	r.checkCommit(now, at, c)
}

// CommitAll is Commit for each of cs, at one instant.
func (r *runner) CommitAll(at engine.Time, cs []engine.Commit) {
	if !r.batchCommit(at, cs) {
		return
	}
	now := r.rt.Now()
	for i := range cs {
		r.pipe.add(now, at, &cs[i])
	}
}

// CommitOwned is CommitAll, keeping cs (engine.BatchObserver): the commit
// pipe checks it where it is and hands it out again from CommitBuffer.
func (r *runner) CommitOwned(at engine.Time, cs []engine.Commit) {
	if r.batchCommit(at, cs) {
		r.pipe.addPiece(r.rt.Now(), at, cs)
	}
}

// batchCommit does for a batch of commits at one instant what Commit does
// for each before it queues it, and reports whether the batch is left for
// the commit pipe; without the pipe, or with a hook that must see every
// commit, it commits them one by one itself.
func (r *runner) batchCommit(at engine.Time, cs []engine.Commit) bool {
	if r.cfg.OnCommit != nil || r.pipe == nil {
		for _, c := range cs {
			r.Commit(at, c)
		}
		return false
	}
	if len(cs) == 0 {
		return false
	}
	r.lastCommit, r.anyCommit = max(r.lastCommit, at), true
	r.bursts.CommitN(at, len(cs))
	return true
}

// CommitBuffer is an empty slice for n commits, reused from the pieces the
// commit pipe has checked when it can be.
func (r *runner) CommitBuffer(n int) []engine.Commit {
	if r.pipe != nil {
		return r.pipe.buffer(n)
	}
	return make([]engine.Commit, 0, n)
}

// measureCommit adds a commit reported at instant now to the latency
// histogram and the time series (inline, or on the commit pipe's
// goroutine, which then owns both until the next sync). In the simulator a
// commit is reported at or before its own time (at >= now), so the buckets
// that ended a bucket before now are complete and keep only their
// quantiles (Series.Seal): the series of a long run stays small. A live
// run's clocks give no such bound to the harness, and it is short.
func (r *runner) measureCommit(now, at engine.Time, c engine.Commit) {
	lat := at - c.Born
	if r.seal {
		r.series.Seal(now - r.cfg.Bucket)
	}
	r.series.Commit(at, lat)
	r.latency.Add(lat)
}

// takeQueued is the commit pipe's checker: what the event loop queued, in
// the order it queued it.
func (r *runner) takeQueued(q *queuedCommit) {
	switch q.kind {
	case queuedSample:
		r.series.Lag(q.at, r.lag(q.at))
	case queuedCheckpoint:
		r.series.Checkpoint(q.at, engine.Time(q.c.Value))
	case queuedCommitKind:
		r.measureCommit(q.now, q.at, q.c)
		r.checkCommit(q.now, q.at, q.c)
	}
}

// checkCommit gives a commit to the delivery checker and the output store
// (inline, or on the commit pipe's goroutine).
func (r *runner) checkCommit(now, at engine.Time, c engine.Commit) {
	status := r.delivery.RecordAt(c.ID, int64(at))
	if r.commitHook != nil {
		r.commitHook(at, c, status == check.CommitFirst)
	}
	r.store.report(now, at, c, status)
}

// syncCommits makes the checkers, the latency histogram and the time series
// current before the event loop reads them or writes the series itself.
func (r *runner) syncCommits() {
	if r.pipe != nil {
		r.pipe.sync()
	}
}

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
		r.pipe.mark(queuedSample, at, 0)
		return
	}
	r.syncCommits()
	r.series.Lag(at, r.lag(at))
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
		Faults: []string{}, ClaimedGuarantee: string(r.claim.Guarantee), Counters: r.counters,
		SystemMetrics: map[string]any{}, Problems: []string{}, Recoveries: []Recovery{},
		OfferedRPS: r.cfg.Rate, RateChosen: r.rateChosen, RateRule: r.rateRule,
		Runtime: r.cfg.runtime(),
	}
	if res.Runtime == RuntimeLive {
		res.Work = string(r.cfg.workMode())
	}
	for _, s := range r.specs {
		res.Faults = append(res.Faults, s.String())
	}
	res.Config = RunConfig{
		DurationS: r.cfg.Duration.Seconds(), RateRPS: r.cfg.Rate, Parallelism: r.cfg.Parallelism,
		Workers: r.cfg.Workers, Cores: r.cost.Cores, Slots: r.cfg.Slots, DrainS: r.drainMax.Seconds(), BucketS: r.cfg.Bucket.Seconds(),
		WarmUpS: r.warmUp.Seconds(), SettleS: r.settle.Seconds(), SystemOpts: r.opts, WorkloadOpts: r.workloadOpts(), Cost: r.cost.Map(),
	}
	res.Replay = r.cfg.ReplayCommand()
	res.SimTimeS = r.rt.Now().Seconds()
	res.SimEvents = r.rt.Events()
	res.PeakChannelBytes = int64(r.rt.PeakQueuedBytes())
	res.ChannelCapBytes = int64(r.rt.Capacity())
	res.Drained = r.drained
	res.AppendedRecords = r.log.Total() * int64(r.cfg.Parallelism)

	r.joinOracle()
	del := r.delivery.Finish(r.appendedAll())
	r.judgeDrain(res, &del)
	res.Duplicates, res.Lost, res.Unexpected = del.Duplicates, del.Lost, del.Unexpected
	res.ExpectedEffects = del.Expected
	res.CommittedEffects = r.delivery.Distinct()
	wrong, examples := r.wrongKeys(res.Undrained())
	res.WrongKeys = wrong
	for _, e := range examples {
		res.WrongKeyExamples = append(res.WrongKeyExamples, KeyDiff{Key: e.Key, Got: e.Got, Want: e.Want})
	}
	res.Verdict = string(check.Verdict(res.Duplicates, res.Lost))
	r.readerView(res)

	res.LatencyMS = Latency{
		P50: ms(r.latency.Quantile(0.50)), P99: ms(r.latency.Quantile(0.99)),
		P999: ms(r.latency.Quantile(0.999)), Max: ms(r.latency.Max()),
	}
	r.series.SetStaleness(r.staleness())
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
	// Whole commit periods, so that a bursty sink (2PC, micro-batches)
	// that keeps up reports the offered rate: from one burst of visible
	// output to a later one (metrics.Bursts, exact at any cadence, also an
	// overloaded one's), or else whole nominal cycles of the buckets
	// (metrics.CycleThroughput). The series counts effects; throughput is
	// stated in input records/s, the unit of --rate, by the log's exact
	// effects-per-record ratio.
	res.Config.CommitCycleS = r.cycle.Seconds()
	effectsPerSec, win, ok := r.bursts.Throughput(steadyStart, steadyEnd, r.cycle)
	if !ok {
		effectsPerSec, win, ok = metrics.CycleThroughput(rows, steadyStart, steadyEnd, r.cycle)
	}
	if ok {
		e := round3(effectsPerSec)
		res.ThroughputEffects = &e
		if r.expected > 0 {
			rps := round3(effectsPerSec * float64(res.AppendedRecords) / float64(r.expected))
			res.ThroughputRPS = &rps
		} else {
			zero := 0.0
			res.ThroughputRPS = &zero
		}
		res.ThroughputWindowS = []float64{round3(win.From.Seconds()), round3(win.To.Seconds())}
	}
	r.recoveries(res, rows)
	r.overload(res, rows)

	if sum, ok := r.sys.(systems.Summarizer); ok {
		res.SystemMetrics = sum.Summarize(systems.RunInfo{
			Events: r.events, Counters: r.counters, Store: r.rt.StoreValue,
			Workload: r.w, Log: r.log, Job: r.job, Milestones: r.milestones,
		})
	}
	var files map[string][]byte
	if r.obs != nil {
		if res.Undrained() {
			r.obs.pending = r.pendingKeys()
		}
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

func (r *runner) recoveries(res *Result, rows []metrics.Row) {
	base := metrics.DefaultRecoveryOptions()
	base.WarmUp = r.warmUp
	// Recovery may complete during the drain: the backlog a fault left
	// must still be worked off, though without new input it goes faster
	// than under load (README: recovery time).
	base.End = r.rt.Now()
	// Output staleness (README): back within 1.1x its pre-fault level plus
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
		if t, ok := metrics.RecoveryTimeOf(rows, staleness, s.At, stale); ok {
			v := round3(t.Seconds())
			rec.RecoveryTimeS = &v
		}
		if t, ok := metrics.RecoveryTime(rows, s.At, lag); ok {
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
	worker := s.Worker
	if s.Op != "" {
		id, ok := r.dep.Lookup(fmt.Sprintf("%s/%d", s.Op, s.Index))
		if !ok {
			return nil
		}
		worker = r.dep.Procs[id].Worker
	}
	for _, e := range r.events {
		if e.Kind != "worker_crash" || e.Time != s.At || int(e.ID) != worker {
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
// events the runtime and the system recorded (README: recovery phases), in
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
	worker := int64(-1)
	// The first worker crash at or after the fault's time: the simulator
	// records it at s.At exactly, the live runtime a moment later.
	for _, e := range r.events {
		if (e.Kind == "worker_crash" || e.Kind == "worker_pause" || e.Kind == "partition_start") && e.Time >= s.At && e.Time < until {
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

func (r *runner) exitCode(res *Result) int {
	if !check.ClaimHeld(r.claim.Guarantee, res.Duplicates, res.Lost, res.WrongKeys) {
		res.Problems = append(res.Problems, fmt.Sprintf("claimed %s but observed %s (duplicates=%d lost=%d wrong_keys=%d)",
			res.ClaimedGuarantee, res.Verdict, res.Duplicates, res.Lost, res.WrongKeys))
	}
	if p := readerProblem(res); p != "" {
		res.Problems = append(res.Problems, p)
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
	// Effects still pending in a busy run are not lost (drain.go).
	if p := undrainedProblem(res); p != "" {
		res.Problems = append(res.Problems, p)
		return ExitLiveness
	}
	if p := observerUnknown(res); p != "" {
		// Not a pass: the claim is unknown, and the run says so.
		res.Problems = append(res.Problems, p)
		return ExitInternal
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
