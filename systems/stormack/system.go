package stormack

import (
	"fmt"
	"sort"
	"strconv"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

func init() { systems.Register(system{name: "stormack"}) }

// system is the registered protocol. failEvery and periodicCommit are test
// hooks (further registrations in the tests): failEvery makes every
// failEvery-th sink write fail, to drive the explicit-fail path end to end;
// periodicCommit makes an unacked spout emit at once and commit its
// position every offset-commit-interval, to show that at-most-once needs
// each batch committed before it is emitted. The CLI never sets them.
type system struct {
	name           string
	failEvery      int
	periodicCommit bool
}

// Defaults of the system's flags.
const (
	defaultTimeout    = "30s"  // Storm's topology.message.timeout.secs
	defaultMaxPending = "5000" // topology.max.spout.pending, per spout task
	defaultAckers     = "workers"
	defaultCommit     = "1s"
	defaultMaxPoll    = "500" // Kafka's max.poll.records
)

func (s system) Name() string { return s.name }
func (system) Describe() string {
	return "Storm: XOR acking with anchoring, acker tasks and timeout replay; state lives in the sink (at-least-once; --ackers 0: acking off, spouts commit before emitting, at-most-once)"
}
func (system) Variants() []string { return []string{"default"} }
func (system) Flags() []systems.Flag {
	return []systems.Flag{
		{Name: "ack-timeout", Default: defaultTimeout, Usage: "stormack: a spout tuple whose tree is not complete after this long is failed and replayed (Storm's topology.message.timeout.secs)"},
		{Name: "max-spout-pending", Default: defaultMaxPending, Usage: "stormack: most spout tuples a spout task has pending (Storm's topology.max.spout.pending)"},
		{Name: "ackers", Default: defaultAckers, Usage: "stormack: acker tasks, or 'workers' for one per worker (Storm's default); 0 turns acking off (at-most-once: spouts commit each polled batch before emitting it)"},
		{Name: "offset-commit-interval", Default: defaultCommit, Usage: "stormack: how often a spout persists its lowest un-acked offset"},
		{Name: "max-poll-records", Default: defaultMaxPoll, Usage: "stormack with --ackers 0: most records a spout polls, commits and then emits at once (Kafka's max.poll.records)"},
	}
}

// Milestones: a spout's offset commit becoming durable (a restart resumes
// there), the rarer commit that moves past tuples that failed and were
// queued for replay (the spout's progress passing its replays: where Storm's
// Kafka spout has had its offset bugs), and an ack timeout (trees failed
// and queued for replay). Trees complete continuously, a few every
// millisecond, so a fault at any time already lands just after some tree's
// completion.
func (system) Milestones(string) []string {
	return []string{evOffsetCommitted, evCommittedPastReplay, evTimeoutReplay}
}

// Claim: replays after an ack timeout apply effects again (at least once),
// and the external aggregate survives crashes and only grows (monotonic).
// With acking off (--ackers 0) nothing is replayed and every spout commits
// a batch's offsets before emitting it, so a restart never re-emits a
// record: at most once, and still monotonic. That is the claim for plans
// whose only keyed stage feeds the sink (see ClaimFor), as every workload's
// default compile but bank's.
func (system) Claim(_ string, opts systems.Options) systems.Claim {
	if ackingOff(opts) {
		return systems.Claim{Guarantee: systems.AtMostOnce, Monotonic: true}
	}
	return systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: true}
}

// ackingOff reports whether opts turn acking off (--ackers 0).
func ackingOff(opts systems.Options) bool {
	n, err := strconv.Atoi(opts["ackers"])
	return err == nil && n == 0
}

// ClaimFor: a keyed stage that does not directly feed the sink runs as a
// bolt whose in-memory state a crash loses (bank's debit stage keeps each
// payer's cumulative outflow), so after a crash the sink is sent smaller
// values than readers already saw: at least once, but not monotonic.
func (s system) ClaimFor(variant string, opts systems.Options, plan *workloads.Plan) systems.Claim {
	c := s.Claim(variant, opts)
	_, _, fused := storm.FusePlan(plan)
	for i := range plan.Stages {
		if st := &plan.Stages[i]; st.Keyed() && st != fused {
			c.Monotonic = false
		}
	}
	return c
}

func (s system) Compile(job systems.Job) (*engine.Deployment, error) {
	t := &topo{job: job, failEvery: s.failEvery, periodicCommit: s.periodicCommit}
	var err error
	if t.timeout, err = job.Opts.Duration("ack-timeout"); err != nil {
		return nil, err
	}
	if t.maxPending, err = job.Opts.Int("max-spout-pending", 1, 1<<24); err != nil {
		return nil, err
	}
	if t.commitEvery, err = job.Opts.Duration("offset-commit-interval"); err != nil {
		return nil, err
	}
	if t.maxPoll, err = job.Opts.Int("max-poll-records", 1, 1<<20); err != nil {
		return nil, err
	}
	nAckers := job.Workers
	if v := job.Opts["ackers"]; v != defaultAckers {
		if nAckers, err = job.Opts.Int("ackers", 0, 1024); err != nil {
			return nil, fmt.Errorf("%w, or %q", err, defaultAckers)
		}
	}
	plan := job.Workload.Plan()
	if len(plan.Stages) == 0 || !plan.Stages[len(plan.Stages)-1].Sink {
		return nil, fmt.Errorf("stormack: workload %s has no sink stage", job.Workload.Name())
	}
	t.plan, t.sink, t.fused = storm.FusePlan(plan)
	t.sinkCost = job.Cost.For(t.sink.Name)
	last := len(t.plan.Stages) - 1
	// Tuples between executors of one worker skip serialization and the
	// network (Storm's ExecutorTransfer: a local receive queue).
	dep := &engine.Deployment{Coordinator: -1, LocalTransfer: true}
	// The external store the sink writes to: one partition per sink
	// instance, created here and not in the task, because it is not the
	// task's memory and survives the task's crash.
	ext := make([]map[uint64]int64, job.Parallelism)
	for i := range ext {
		ext[i] = map[uint64]int64{}
	}
	t.g = stream.Build(dep, t.plan, job.Parallelism, job.Workers,
		func(_ *stream.Graph, i int) engine.Process {
			if nAckers == 0 {
				return newUnackedSpout(t, i)
			}
			return newSpout(t, i)
		},
		func(_ *stream.Graph, st, i int) engine.Process {
			if st == last {
				return newSink(t, ext[i])
			}
			return newBolt(t, st, i)
		})
	// Ackers are tasks like any other, spread over the workers, so a worker
	// crash takes its acker (and every checksum it held) down too.
	for i := 0; i < nAckers; i++ {
		t.ackers = append(t.ackers, dep.Add(engine.ProcSpec{
			Name: fmt.Sprintf("acker/%d", i), Op: "acker", Index: i, Worker: i % job.Workers,
			New: func() engine.Process { return storm.NewAcker(t.timeout) },
		}))
	}
	// Nimbus, which would reassign a lost supervisor's executors, is not
	// modelled: they come back with their own worker (with spare slots
	// too). A reassigned spout running beside one cut off by a partition
	// would read its partition twice, and with acking off nothing fences it.
	for i := range dep.Procs {
		dep.Procs[i].Pinned = true
	}
	return dep, nil
}

// DrainExtra tells the harness to drain for ack-timeout longer than its
// default: a tree lost in a crash near the end of the input is only noticed
// (and replayed) when its timeout expires, and until then its records are
// late, not lost. With acking off nothing is ever replayed.
func (system) DrainExtra(opts systems.Options) engine.Time {
	if ackingOff(opts) {
		return 0
	}
	d, err := opts.Duration("ack-timeout")
	if err != nil {
		return 0 // Compile reports the bad flag
	}
	return d
}

// Summarize derives system_metrics from the counters and the peak events.
func (system) Summarize(r systems.RunInfo) map[string]any {
	c := r.Counters
	m := map[string]any{}
	for _, k := range []string{cTreesCompleted, cFailedTimeout, cFailedExplicit, cReplayed, cSpurious,
		storm.CAckMessages, storm.CAckBytes, storm.CAckerUpdates, storm.CAckerExpired, cUnknownReplies, cTuplesEmitted, cSpoutRestarts} {
		m[k] = c[k]
	}
	if n := c[cTreesCompleted] + c[cFailedTimeout] + c[cFailedExplicit]; n > 0 {
		m["ack_messages_per_tree"] = round3(float64(c[storm.CAckMessages]) / float64(n))
	}
	if n := c[cTreesCompleted]; n > 0 {
		// Storm's "complete latency": spout emit to tree completion.
		m["complete_latency_mean_ms"] = round3(float64(c[cCompleteLatency]) / float64(n) / 1e6)
	}
	m["complete_latency_max_ms"] = round3(float64(peaks(r.Events, evSlowestTree).max) / 1e6)
	ackerPeak := peaks(r.Events, storm.EvAckerPeak)
	spoutPeak := peaks(r.Events, evSpoutPeak)
	m["acker_state_bytes_per_tree"] = int64(storm.EntryBytes)
	m["acker_pending_trees_peak"] = ackerPeak.max
	m["acker_state_bytes_peak"] = ackerPeak.max * storm.EntryBytes
	m["acker_pending_trees_peak_sum"] = ackerPeak.sum
	m["spout_pending_peak"] = spoutPeak.max
	if ackingOff(r.Job.Opts) {
		m["acking"] = "off"
		m[cOffsetCommits] = c[cOffsetCommits]
	}
	return m
}

type peak struct{ max, sum int64 }

// peaks takes each process's highest recorded value of kind, then the
// highest and the sum over processes (incarnations of one task share its
// name, so a restarted task does not count twice).
func peaks(events []engine.Event, kind string) peak {
	per := map[string]int64{}
	for _, e := range events {
		if e.Kind == kind {
			per[e.Proc] = max(per[e.Proc], e.Value)
		}
	}
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	var p peak
	for _, n := range names {
		p.max = max(p.max, per[n])
		p.sum += per[n]
	}
	return p
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

// DescribeMsg names stormack's messages for a run's trace: data tuples and
// the ack stream (init, ack, tree_done, fail, tree_failed) with its tree,
// which the trace samples like data (a tree per source record).
func (system) DescribeMsg(systems.Job) func(engine.Msg) engine.MsgInfo {
	return func(m engine.Msg) engine.MsgInfo {
		if info, ok := storm.DescribeMsg(m, true); ok {
			return info
		}
		if !m.Ctrl {
			return systems.Record
		}
		return engine.MsgInfo{}
	}
}
