package harness

import (
	"math"
	"sort"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/systems"
	"ftbench/workloads"
)

// The end of a run: finish turns what the run left (the checkers, the time
// series, the events, the system's own summary) into run.json's Result and
// the run's Outcome. Recovery times are recovery.go's, the overload figures
// overload.go's, the exit code exit.go's.

// finish builds the Outcome, figure by figure in the order they depend on
// one another; the exit decision comes last, as it reads them all.
func (r *runner) finish() *Outcome {
	res := r.newResult()
	r.judgeDelivery(res)
	r.readerView(res)
	res.LatencyMS = r.latencyMS()
	r.series.SetStaleness(r.staleness())
	rows := r.series.Rows()
	r.throughput(res, rows)
	r.recoveries(res, rows)
	r.overload(res, rows)
	r.summarizeSystem(res)
	files := r.observeRun(res)
	res.ExitCode = r.exitCode(res)
	return &Outcome{Result: res, Rows: rows, Series: r.series, Events: r.eventsWithFaults(), Files: files}
}

// newResult is run.json's account of what ran: the configuration as run
// and the runtime's own figures.
func (r *runner) newResult() *Result {
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
	res.Tasks = tasksOf(r.dep)
	res.Processes = processes(r.dep)
	res.Config = RunConfig{
		DurationS: r.cfg.Duration.Seconds(), RateRPS: r.cfg.Rate, Parallelism: r.cfg.Parallelism,
		Workers: r.cfg.Workers, Cores: r.cost.Cores, Slots: r.cfg.Slots, DrainS: r.drainMax.Seconds(), BucketS: r.cfg.Bucket.Seconds(),
		WarmUpS: r.warmUp.Seconds(), SettleS: r.settle.Seconds(), SystemOpts: r.opts, WorkloadOpts: r.workloadOpts(), Cost: r.cost.Map(),
		CommitCycleS: r.cycle.Seconds(),
	}
	res.Replay = r.cfg.ReplayCommand()
	res.SimTimeS = r.rt.Now().Seconds()
	res.SimEvents = r.rt.Events()
	res.PeakChannelBytes = int64(r.rt.PeakQueuedBytes())
	res.ChannelCapBytes = int64(r.rt.Capacity())
	res.Drained = r.drained
	res.AppendedRecords = r.log.Total() * int64(r.cfg.Parallelism)
	return res
}

// workloadOpts are the workload's options as run: each option's default,
// then what the configuration gives.
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

// judgeDelivery takes the delivery checker's account once the oracle pass
// is in: duplicates, losses and pending effects (drain.go), wrong keys,
// and the verdict they give.
func (r *runner) judgeDelivery(res *Result) {
	r.joinOracle()
	del := r.delivery.Finish(r.appendedAll())
	r.judgeDrain(res, &del)
	res.Duplicates, res.Lost, res.Unexpected = del.Duplicates, del.Lost, del.Unexpected
	res.ExpectedEffects = del.Expected
	res.CommittedEffects = r.delivery.Distinct()
	f, examples := r.finals(res.Undrained())
	res.WrongKeys, res.StaleFinalKeys, res.AheadFinalKeys = f.Wrong, f.Stale, f.Ahead
	for _, e := range examples {
		res.WrongKeyExamples = append(res.WrongKeyExamples, KeyDiff{Key: e.Key, Got: e.Got, Want: e.Want})
	}
	res.Verdict = string(check.Verdict(res.Duplicates, res.Lost))
}

func (r *runner) latencyMS() Latency {
	return Latency{
		P50: ms(r.latency.Quantile(0.50)), P99: ms(r.latency.Quantile(0.99)),
		P999: ms(r.latency.Quantile(0.999)), Max: ms(r.latency.Max()),
	}
}

// throughput is the steady state's throughput, over whole commit periods,
// so that a bursty sink (2PC, micro-batches) that keeps up reports the
// offered rate: from one burst of visible output to a later one
// (metrics.Bursts, exact at any cadence, also an overloaded one's), or else
// whole nominal cycles of the buckets (metrics.CycleThroughput). The series
// counts effects; throughput is stated in input records/s, the unit of
// --rate, by the log's exact effects-per-record ratio.
func (r *runner) throughput(res *Result, rows []metrics.Row) {
	steadyStart, steadyEnd := r.steadyWindow()
	effectsPerSec, win, ok := r.bursts.Throughput(steadyStart, steadyEnd, r.cycle)
	if !ok {
		effectsPerSec, win, ok = metrics.CycleThroughput(rows, steadyStart, steadyEnd, r.cycle)
	}
	if !ok {
		return
	}
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

// steadyWindow is the part of the run measured as steady state: after the
// warm-up, until the input ends or the bucket holding the first fault
// begins, whichever is sooner.
func (r *runner) steadyWindow() (start, end engine.Time) {
	end = r.cfg.Duration
	firstFault := engine.Time(math.MaxInt64)
	for _, s := range r.specs {
		firstFault = min(firstFault, s.At)
	}
	// The bucket holding the first fault is not steady state.
	end = min(end, firstFault/r.cfg.Bucket*r.cfg.Bucket)
	start = r.warmUp
	if start >= end {
		// A fault inside the warm-up: measure what there is before it.
		start = end / 2
	}
	return start, end
}

// summarizeSystem takes the system's own figures (system_metrics), for
// the systems that give any.
func (r *runner) summarizeSystem(res *Result) {
	if sum, ok := r.sys.(systems.Summarizer); ok {
		res.SystemMetrics = sum.Summarize(systems.RunInfo{
			Events: r.events, Counters: r.counters, Store: r.rt.StoreValue,
			Workload: r.w, Log: r.log, Job: r.job, Milestones: r.milestones,
		})
	}
}

// observeRun checks what the observer's reader saw (observe.go) and
// returns its files; nil without --observe.
func (r *runner) observeRun(res *Result) map[string][]byte {
	if r.obs == nil {
		return nil
	}
	if res.Undrained() {
		r.obs.pending = r.pendingKeys()
	}
	return r.observe(res)
}

// eventsWithFaults is events.jsonl: the run's events with each fault's
// start and end among them, in time order.
func (r *runner) eventsWithFaults() []engine.Event {
	events := append([]engine.Event(nil), r.events...)
	for _, s := range r.specs {
		events = append(events, engine.Event{Time: s.At, Kind: "fault_start", Note: s.String()})
		if s.End > 0 {
			events = append(events, engine.Event{Time: min(s.End, r.faultBounds().HardEnd), Kind: "fault_end", Note: s.String()})
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time < events[j].Time })
	return events
}

func ms(t engine.Time) float64 { return round3(float64(t) / 1e6) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
