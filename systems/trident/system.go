package trident

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
	"ftbench/systems/internal/summary"
	"ftbench/workloads"
)

func init() { systems.Register(system{}) }

type system struct{}

// Spout and state kinds (--spout, --state).
const (
	spoutTransactional    = "transactional"
	spoutOpaque           = "opaque"
	spoutNonTransactional = "non-transactional"
	stateTransactional    = spoutTransactional
	stateOpaque           = spoutOpaque
	stateNonTransactional = spoutNonTransactional
	stateLikeSpout        = "spout"
)

// Defaults of the system's flags.
const (
	defaultInterval   = "500ms" // topology.trident.batch.emit.interval.millis
	defaultMaxPending = "1"     // Trident's when topology.max.spout.pending is unset
	defaultTimeout    = "30s"   // topology.message.timeout.secs (stormack's ack-timeout)
	defaultAckers     = "workers"
	defaultCommit     = "1s"
)

func (system) Name() string { return "trident" }
func (system) Describe() string {
	return "Storm Trident: transactional batches with increasing txids, tracked by acker trees, state committed in txid order with the txid check (exactly-once for transactional spout + transactional/opaque state and opaque spout + opaque state)"
}
func (system) Variants() []string { return []string{"default"} }
func (system) Flags() []systems.Flag {
	return []systems.Flag{
		{Name: "spout", Default: spoutTransactional, Usage: "trident: transactional (a txid's batch is fixed and stored before it is emitted), opaque (a replay may differ) or non-transactional (replays what it can)"},
		{Name: "state", Default: stateLikeSpout, Usage: "trident: persistentAggregate's state: transactional (value, txid), opaque (value, prev, txid), non-transactional (value), or 'spout' for the spout's kind"},
		{Name: "batch-emit-interval", Default: defaultInterval, Usage: "trident: the coordinator starts at most one batch per interval (topology.trident.batch.emit.interval.millis)"},
		{Name: "max-batches-pending", Default: defaultMaxPending, Usage: "trident: most batches in flight (topology.max.spout.pending; Trident's default when unset is 1)"},
		{Name: "max-batch-records", Default: "0", Usage: "trident: most records a partition puts in one batch; 0 takes all it has appended"},
		{Name: "ack-timeout", Default: defaultTimeout, Usage: "trident: a batch or commit tree not complete after this long fails and the batch is replayed"},
		{Name: "ackers", Default: defaultAckers, Usage: "trident: acker tasks (at least 1), or 'workers' for one per worker"},
		{Name: "offset-commit-interval", Default: defaultCommit, Usage: "trident --spout non-transactional: how often the spout persists its lowest un-acked offset"},
	}
}

// pairing is the spout and state kinds of opts (state resolved).
func pairing(opts systems.Options) (spout, state string, err error) {
	spout, state = opts["spout"], opts["state"]
	switch spout {
	case spoutTransactional, spoutOpaque, spoutNonTransactional:
	default:
		return "", "", fmt.Errorf("--spout=%q: want transactional, opaque or non-transactional", spout)
	}
	switch state {
	case stateLikeSpout, "":
		state = spout
	case stateTransactional, stateOpaque, stateNonTransactional:
	default:
		return "", "", fmt.Errorf("--state=%q: want transactional, opaque, non-transactional or spout", state)
	}
	return spout, state, nil
}

// Claim follows Trident's spout × state matrix ("Trident state"):
// exactly-once for a transactional spout with transactional or opaque
// state and for an opaque spout with opaque state. Transactional state
// with a spout whose replays may differ skips the updates of a txid it
// already has, losing the replay's other tuples: no claim. A
// non-transactional spout "makes no guarantees for the contents of each
// batch", processing "may be at-most-once or at least once" (Trident
// spouts): no claim with any state (what it does here, failing a replayed
// batch's tuples back and resuming from a periodic offset commit, is at
// least once, and the observed verdict says so). Non-transactional state
// with a transactional or opaque spout applies every replay again: at
// least once. Readers see a value change within a txid when an opaque
// state reapplies a batch that differs, so opaque spout + opaque state is
// not monotonic, nor is non-transactional state (a committer waking from a
// pause applies its late increments beside the new incarnation's).
func (system) Claim(_ string, opts systems.Options) systems.Claim {
	spout, state, err := pairing(opts)
	if err != nil {
		return systems.Claim{Guarantee: systems.NoClaim}
	}
	switch {
	case spout == spoutTransactional && state != stateNonTransactional:
		return systems.ExactlyOnceMonotonic
	case spout == spoutOpaque && state == stateOpaque:
		return systems.Claim{Guarantee: systems.ExactlyOnce}
	case state == stateTransactional, spout == spoutNonTransactional:
		return systems.Claim{Guarantee: systems.NoClaim}
	}
	return systems.Claim{Guarantee: systems.AtLeastOnce}
}

// ClaimFor: a keyed stage that does not feed the sink runs as a bolt with
// its state in memory (bank's debit), not as a second persistentAggregate
// (not modelled): a crash loses that state and a replayed batch is applied
// to it again, so its outputs can be behind or ahead of the oracle's. Such
// plans claim nothing.
func (s system) ClaimFor(variant string, opts systems.Options, plan *workloads.Plan) systems.Claim {
	c := s.Claim(variant, opts)
	_, _, fused := storm.FusePlan(plan)
	for i := range plan.Stages {
		if st := &plan.Stages[i]; st.Keyed() && st != fused {
			return systems.Claim{Guarantee: systems.NoClaim}
		}
	}
	return c
}

// CommitCycle: state (and so output) changes once per committed batch.
func (system) CommitCycle(_ string, opts systems.Options) engine.Time {
	d, err := opts.Duration("batch-emit-interval")
	if err != nil {
		return 0
	}
	return d
}

// Milestones: a committer's multi-put durable (the commit phase of a batch
// half done) and the coordinator's txid moving past a committed batch.
func (system) Milestones(string) []string {
	return []string{evStateWritten, evBatchCommitted}
}

// DrainExtra: a batch lost in a crash is replayed only after its tree
// times out, so the harness drains ack-timeout longer.
func (system) DrainExtra(opts systems.Options) engine.Time {
	d, err := opts.Duration("ack-timeout")
	if err != nil {
		return 0
	}
	return d
}

// topo is what every process of a compiled job shares (immutable once
// Compile returns).
type topo struct {
	job         systems.Job
	g           *stream.Graph
	plan        *workloads.Plan // compiled: the keyed stage that feeds the sink is fused into it
	sink        *workloads.Stage
	sinkCost    *engine.CostModel
	fused       *workloads.Stage
	ackers      []engine.ProcID
	emitters    []engine.ProcID
	committers  []engine.ProcID // persist partitions, and opaque emitters
	spout       string
	state       string
	timeout     engine.Time
	interval    engine.Time
	maxPending  int
	maxBatch    int
	commitEvery engine.Time
}

func (system) Compile(job systems.Job) (*engine.Deployment, error) {
	t := &topo{job: job}
	var err error
	if t.spout, t.state, err = pairing(job.Opts); err != nil {
		return nil, err
	}
	if t.timeout, err = job.Opts.Duration("ack-timeout"); err != nil {
		return nil, err
	}
	if t.interval, err = job.Opts.Duration("batch-emit-interval"); err != nil {
		return nil, err
	}
	if t.maxPending, err = job.Opts.Int("max-batches-pending", 1, 1024); err != nil {
		return nil, err
	}
	if t.maxBatch, err = job.Opts.Int("max-batch-records", 0, 1<<30); err != nil {
		return nil, err
	}
	if t.commitEvery, err = job.Opts.Duration("offset-commit-interval"); err != nil {
		return nil, err
	}
	nAckers := job.Workers
	if job.Opts["ackers"] != defaultAckers {
		if nAckers, err = job.Opts.Int("ackers", 1, 1024); err != nil {
			return nil, fmt.Errorf("%w, or %q (Trident tracks its batches through the ackers)", err, defaultAckers)
		}
	}
	plan := job.Workload.Plan()
	if len(plan.Stages) == 0 || !plan.Stages[len(plan.Stages)-1].Sink {
		return nil, fmt.Errorf("trident: workload %s has no sink stage", job.Workload.Name())
	}
	t.plan, t.sink, t.fused = storm.FusePlan(plan)
	t.sinkCost = job.Cost.For(t.sink.Name)
	last := len(t.plan.Stages) - 1
	dep := &engine.Deployment{Coordinator: -1, LocalTransfer: true}
	tabs := make([]table, job.Parallelism)
	for i := range tabs {
		tabs[i] = table{}
	}
	t.g = stream.Build(dep, t.plan, job.Parallelism, job.Workers,
		func(_ *stream.Graph, i int) engine.Process { return newEmitter(t, i) },
		func(_ *stream.Graph, st, i int) engine.Process {
			if st == last {
				return newPersist(t, st, i, tabs[i])
			}
			return newBolt(t, st, i)
		})
	t.emitters = t.g.Source
	t.committers = append([]engine.ProcID(nil), t.g.Instances(last)...)
	if t.spout == spoutOpaque {
		t.committers = append(t.committers, t.emitters...)
	}
	for i := 0; i < nAckers; i++ {
		t.ackers = append(t.ackers, dep.Add(engine.ProcSpec{
			Name: fmt.Sprintf("acker/%d", i), Op: "acker", Index: i, Worker: i % job.Workers,
			New: func() engine.Process { return storm.NewAcker(t.timeout) },
		}))
	}
	// The master batch coordinator is a spout: it runs in a worker (the
	// first) and dies with it.
	dep.Add(engine.ProcSpec{Name: "mbc/0", Op: "mbc", Worker: 0, New: func() engine.Process { return newCoordinator(t) }})
	for i := range dep.Procs {
		dep.Procs[i].Pinned = true
	}
	return dep, nil
}

func (t *topo) ackerOf(root uint64) engine.ProcID {
	return t.ackers[root%uint64(len(t.ackers))]
}

// targets lists the receivers of m from an instance of stage (-1: the
// emitter): every next instance for a broadcast, otherwise the router's
// choice.
func (t *topo) targets(stage int, r *stream.Router, m *engine.Msg, buf *[]engine.ProcID) []engine.ProcID {
	if t.plan.Stages[stage+1].Input == workloads.Broadcast {
		return t.g.Instances(stage + 1)
	}
	*buf = append((*buf)[:0], r.Target(m))
	return *buf
}

// upstream is how many tasks report their counts to a task of stage: the
// previous stage's (the emitters for the first).
func (t *topo) upstream(stage int) int {
	if stage == 0 {
		return len(t.emitters)
	}
	return len(t.g.Instances(stage - 1))
}

// downstream lists the tasks of the stage after stage (-1: the emitters)
// and each one's position.
func (t *topo) downstream(stage int) ([]engine.ProcID, map[engine.ProcID]int) {
	next := t.g.Instances(stage + 1)
	index := make(map[engine.ProcID]int, len(next))
	for i, p := range next {
		index[p] = i
	}
	return next, index
}

// Summarize derives system_metrics from the counters.
func (system) Summarize(r systems.RunInfo) map[string]any {
	c := r.Counters
	m := map[string]any{}
	for _, k := range []string{cBatchesStarted, cBatchesReplayed, cBatchesCommitted, cBatchesFailed, cBatchTimeouts,
		cStoreRoundTrips, cStateGets, cStatePuts, cSkippedTxid, cReappliedOpaque, cFencedWrites,
		cTuplesEmitted, cEmitterRestarts, cCoordRestarts, storm.CAckMessages, storm.CAckerUpdates} {
		m[k] = c[k]
	}
	if n := c[cBatchesCommitted]; n > 0 {
		m["batch_latency_mean_ms"] = summary.Round3(float64(c[cBatchLatency]) / float64(n) / 1e6)
		m["commit_latency_mean_ms"] = summary.Round3(float64(c[cCommitLatency]) / float64(n) / 1e6)
		m["tuples_per_batch"] = summary.Round3(float64(c[cTuplesEmitted]) / float64(c[cBatchesStarted]))
	}
	spout, state, _ := pairing(r.Job.Opts)
	m["spout"], m["state"] = spout, state
	return m
}

// DescribeMsg names Trident's messages for a run's trace, each with its
// batch (txid): the coordinator's batch and commit tuples (the $batch and
// $commit streams) and its success notices, the tasks' count tuples (a
// task's part of a batch is done), the batches' ack stream, and data
// tuples. Batch, commit and count tuples are tuples, not control
// messages, but the trace records every one.
func (system) DescribeMsg(systems.Job) func(engine.Msg) engine.MsgInfo {
	return func(m engine.Msg) engine.MsgInfo {
		switch m.Kind {
		case kindBatch, kindCommit:
			name := "batch"
			if m.Kind == kindCommit {
				name = "commit"
			}
			info := engine.MsgInfo{Kind: name, Always: true}
			if t, ok := m.Body.(*txMsg); ok {
				info.ID = t.tx.txid
			}
			return info
		case kindSuccess:
			return engine.MsgInfo{Kind: "success", ID: int64(m.Key)}
		case kindCount:
			info := engine.MsgInfo{Kind: "batch_count", Always: true}
			if c, ok := m.Body.(*countMsg); ok {
				info.ID = c.tx.txid
			}
			return info
		case storm.KindTuple:
			info := engine.MsgInfo{Kind: "tuple"}
			if tx, ok := m.Body.(txAttempt); ok {
				info.ID = tx.txid
			}
			return info
		}
		if info, ok := storm.DescribeMsg(m, false); ok {
			return info
		}
		if !m.Ctrl {
			return systems.Record
		}
		return engine.MsgInfo{}
	}
}
