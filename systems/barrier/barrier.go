package barrier

import (
	"fmt"
	"slices"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

func init() { systems.Register(system{}) }

type system struct{}

// Variants, the first is the default.
const (
	Aligned        = "aligned"
	Unaligned      = "unaligned"
	AlignedTimeout = "aligned-timeout"
	Sync           = "sync"
)

// Failover strategies (--failover), Flink's jobmanager.execution.failover-strategy.
const (
	FailoverRegion = "region"
	FailoverFull   = "full"
)

// Sink modes.
const (
	Sink2PC   = "2pc"
	SinkPlain = "plain"
)

// Flag defaults. The interval is Flink's usual production setting scaled to
// the short simulated runs: 1 s gives a 20 s run about 19 checkpoints.
const (
	DefaultInterval      = "1s"
	DefaultMaxConcurrent = "1" // Flink's default; unaligned supports only 1
	DefaultAlignTimeout  = "100ms"
)

// DefaultRetained is how many completed checkpoints keep their snapshots in
// the store by default: 1, Flink's state.checkpoints.num-retained. Summarize
// checks the retained ones; --checkpoints-retained 64 checks a minute of
// checkpoints at the default interval, at the memory of 64 snapshots.
const DefaultRetained = "1"

// DefaultTxnTimeout is the transaction timeout Flink's Kafka sink gives its
// producers (transaction.timeout.ms); DefaultBrokerTxnTimeout is Kafka's
// transaction.max.timeout.ms. The broker times a transaction out after the
// smaller: with the defaults, 15 minutes.
const (
	DefaultTxnTimeout       = "1h"
	DefaultBrokerTxnTimeout = "15m"
)

// DefaultCheckpointTimeout is Flink's execution.checkpointing.timeout.
const DefaultCheckpointTimeout = "10m"

func (system) Name() string { return "barrier" }
func (system) Describe() string {
	return "Flink-style asynchronous barrier snapshots (aligned, unaligned, aligned-timeout; sync: the ABS paper's stop-the-world baseline) with a two-phase-commit sink"
}
func (system) Variants() []string { return []string{Aligned, Unaligned, AlignedTimeout, Sync} }

func (system) Flags() []systems.Flag {
	return append([]systems.Flag{
		{Name: "checkpoint-interval", Default: DefaultInterval, Usage: "time between checkpoint triggers"},
		{Name: "sink", Default: Sink2PC, Usage: "barrier sink: 2pc (effects visible when their checkpoint completes) or plain (visible on arrival: at-least-once output)"},
		{Name: "max-concurrent-checkpoints", Default: DefaultMaxConcurrent, Usage: "checkpoints in progress at once (aligned only; unaligned needs 1)"},
		{Name: "aligned-checkpoint-timeout", Default: DefaultAlignTimeout, Usage: "aligned-timeout variant: a checkpoint still aligning this long after its trigger switches to unaligned"},
		{Name: "checkpoints-retained", Default: DefaultRetained, Usage: "completed checkpoints kept in the store (Flink's state.checkpoints.num-retained); the post-run consistency check covers these"},
		{Name: "incremental", Default: "false", Usage: "true: keyed state snapshots write only the keys changed since the last completed checkpoint (RocksDB incremental checkpoints)"},
		{Name: "full-checkpoint-every", Default: "10", Usage: "incremental: a chain of this many snapshots is consolidated by writing the next one in full"},
		{Name: "checkpoint-timeout", Default: DefaultCheckpointTimeout, Usage: "a checkpoint not complete this long after its trigger expires (Flink's execution.checkpointing.timeout)"},
		{Name: "tolerable-failed-checkpoints", Default: "0", Usage: "checkpoints that may fail in a row (declined after a failed store write, expired) before the job fails over from the last completed one (Flink's execution.checkpointing.tolerable-failed-checkpoints)"},
		{Name: "txn-timeout", Default: DefaultTxnTimeout, Usage: "2pc sink: the producer's transaction timeout (Kafka's transaction.timeout.ms; Flink's Kafka sink sets 1h)"},
		{Name: "broker-txn-timeout", Default: DefaultBrokerTxnTimeout, Usage: "2pc sink: the broker's cap on transaction timeouts (Kafka's transaction.max.timeout.ms, 15m); a transaction open longer than the smaller of the two is aborted by the broker, and a commit that reaches it after loses its effects (Flink's documented pitfall)"},
		{Name: "failover", Default: FailoverRegion, Usage: "barrier: on a failure restart the pipelined region of the failed tasks (region, Flink's default) or every task (full)"},
	}, stream.ChainingFlags()...)
}

func (system) Claim(_ string, opts systems.Options) systems.Claim {
	if opts["sink"] == SinkPlain {
		// State is exactly-once, but effects made visible after the last
		// completed checkpoint are made visible again after a rollback, and
		// until they are, a reader sees the restored (smaller) values:
		// at-least-once delivery, non-monotonic reads. And, as with Flink's
		// non-transactional sinks, a zombie sink (declared failed,
		// partitioned away, running on until it heals) can write an older
		// count over the replacement's last one: final values may end
		// stale (run.json's stale_final_keys), which the claim allows.
		return systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: false, MayEndStale: true}
	}
	// The 2PC sink makes a checkpoint's effects visible only once it
	// completed, and a rollback never goes behind a completed checkpoint.
	return systems.ExactlyOnceMonotonic
}

// mode is the barrier-handling variant.
type mode uint8

const (
	modeAligned mode = iota
	modeUnaligned
	modeAlignedTimeout
	// modeSync is the ABS paper's synchronous baseline: sources stop at the
	// trigger and stay stopped until the checkpoint completes, so the
	// in-flight data drains and every task snapshots a quiet pipeline.
	modeSync
)

// params is what every process of one deployment shares; it is filled in
// by Compile and read-only during the run.
type params struct {
	mode         mode
	twoPC        bool
	alignTimeout engine.Time
	coord        engine.ProcID
	nprocs       int
	incremental  bool
	fullEvery    int
	txnTimeout   engine.Time // the broker aborts a transaction open longer
	objectReuse  bool        // chained hops pass records by reference
}

type options struct {
	mode          mode
	twoPC         bool
	interval      engine.Time
	maxConcurrent int
	alignTimeout  engine.Time
	retained      int
	incremental   bool
	fullEvery     int
	region        bool // restart only the failed pipelined regions
	timeout       engine.Time
	tolerable     int
	txnTimeout    engine.Time // min(--txn-timeout, --broker-txn-timeout)
	chaining      bool        // Flink's pipeline.operator-chaining
	objectReuse   bool        // Flink's pipeline.object-reuse
}

func parseOptions(variant string, o systems.Options) (options, error) {
	var opt options
	switch variant {
	case Aligned, "":
		opt.mode = modeAligned
	case Unaligned:
		opt.mode = modeUnaligned
	case AlignedTimeout:
		opt.mode = modeAlignedTimeout
	case Sync:
		opt.mode = modeSync
	default:
		return opt, fmt.Errorf("barrier: unknown variant %q", variant)
	}
	var err error
	if opt.twoPC, err = o.Either("sink", Sink2PC, SinkPlain); err != nil {
		return opt, err
	}
	if opt.interval, err = o.Duration("checkpoint-interval"); err != nil {
		return opt, err
	}
	if opt.maxConcurrent, err = o.Int("max-concurrent-checkpoints", 1, 16); err != nil {
		return opt, err
	}
	if opt.maxConcurrent > 1 && opt.mode != modeAligned {
		// As in Flink: an overtaking barrier of checkpoint n+1 could pass a
		// barrier of n in the same channel, so the channel state of n
		// would be ambiguous. A sync checkpoint stops the sources until it
		// completes, so a second one can never start.
		return opt, fmt.Errorf("--max-concurrent-checkpoints=%d: the %s variant supports only 1 (unaligned barriers overtake each other; sync stops the world for one checkpoint)", opt.maxConcurrent, variant)
	}
	if opt.alignTimeout, err = o.Duration("aligned-checkpoint-timeout"); err != nil {
		return opt, err
	}
	if opt.retained, err = o.Int("checkpoints-retained", 1, 1024); err != nil {
		return opt, err
	}
	if opt.incremental, err = o.Bool("incremental"); err != nil {
		return opt, err
	}
	if opt.fullEvery, err = o.Int("full-checkpoint-every", 1, 1<<20); err != nil {
		return opt, err
	}
	if opt.timeout, err = o.Duration("checkpoint-timeout"); err != nil {
		return opt, err
	}
	if opt.tolerable, err = o.Int("tolerable-failed-checkpoints", 0, 1<<20); err != nil {
		return opt, err
	}
	if opt.region, err = o.Either("failover", FailoverRegion, FailoverFull); err != nil {
		return opt, err
	}
	producer, err := o.Duration("txn-timeout")
	if err != nil {
		return opt, err
	}
	broker, err := o.Duration("broker-txn-timeout")
	if err != nil {
		return opt, err
	}
	opt.txnTimeout = min(producer, broker)
	if opt.chaining, err = o.Bool("chaining"); err != nil {
		return opt, err
	}
	if opt.objectReuse, err = o.Bool("object-reuse"); err != nil {
		return opt, err
	}
	return opt, nil
}

func (system) Compile(job systems.Job) (*engine.Deployment, error) {
	dep, _, err := compile(job)
	return dep, err
}

// compile builds the deployment; Summarize calls it again to find the
// processes whose snapshots it checks.
func compile(job systems.Job) (*engine.Deployment, *stream.Graph, error) {
	opt, err := parseOptions(job.Variant, job.Opts)
	if err != nil {
		return nil, nil, err
	}
	par := &params{mode: opt.mode, twoPC: opt.twoPC, alignTimeout: opt.alignTimeout,
		incremental: opt.incremental, fullEvery: opt.fullEvery, txnTimeout: opt.txnTimeout,
		objectReuse: opt.objectReuse}
	dep := &engine.Deployment{}
	g := stream.BuildChained(dep, job.Workload.Plan(), job.Parallelism, job.Workers, opt.chaining,
		func(g *stream.Graph, i int) engine.Process {
			return newSource(par, g, job.Workload, job.Log, i)
		},
		func(g *stream.Graph, s, i int) engine.Process {
			return newTask(par, g, s, i)
		})
	tasks := g.Tasks()
	cfg := checkpoint.Config{
		Interval:      opt.interval,
		MaxConcurrent: opt.maxConcurrent,
		Tasks:         tasks,
		Sources:       g.Source,
		Retain:        opt.retained,
		Timeout:       opt.timeout,
		Tolerable:     opt.tolerable,
		MailToSources: opt.chaining,
	}
	if opt.mode == modeAlignedTimeout {
		cfg.AlignmentTimeout = opt.alignTimeout
	}
	if opt.region {
		cfg.Regions = pipelinedRegions(g)
	}
	cfg.Placement = map[engine.ProcID]int{}
	for _, t := range tasks {
		cfg.Placement[t] = dep.Procs[t].Worker
	}
	par.coord = dep.Add(engine.ProcSpec{Name: "coordinator", Worker: -1,
		New: func() engine.Process { return checkpoint.NewCoordinator(cfg) }})
	dep.Coordinator = par.coord
	par.nprocs = len(dep.Procs)
	return dep, g, nil
}

// pipelinedRegions are the job's failover regions, over its chained tasks, under Flink's
// RestartPipelinedRegionFailoverStrategy: every channel is pipelined (no
// blocking exchange), so a region is a connected component of the task
// graph. Grep's forward chains give one region per source partition; an
// all-to-all shuffle (wordcount's KeyBy) makes the whole job one region.
// Each region lists its tasks in id order; regions are ordered by their
// first task.
func pipelinedRegions(g *stream.Graph) [][]engine.ProcID {
	parent := map[engine.ProcID]engine.ProcID{}
	var find func(engine.ProcID) engine.ProcID
	find = func(p engine.ProcID) engine.ProcID {
		if q, ok := parent[p]; ok && q != p {
			r := find(q)
			parent[p] = r
			return r
		}
		parent[p] = p
		return p
	}
	union := func(a, b engine.ProcID) {
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb) // the smaller id is the root
		}
	}
	var tasks []engine.ProcID
	for _, h := range g.Heads() {
		for i, id := range g.Instances(h) {
			tasks = append(tasks, id)
			find(id)
			for _, o := range g.Outputs(g.ChainEnd(h), i) {
				union(id, o)
			}
		}
	}
	slices.Sort(tasks)
	index := map[engine.ProcID]int{}
	var regions [][]engine.ProcID
	for _, t := range tasks {
		r := find(t)
		k, ok := index[r]
		if !ok {
			k = len(regions)
			index[r] = k
			regions = append(regions, nil)
		}
		regions[k] = append(regions[k], t)
	}
	return regions
}

// Message kinds of barrier traffic (clear of the checkpoint package's
// 0xF000 range and the runtime's). Data records keep their workload kind.
const (
	// kindBarrier is barrier(Val) in FIFO order with the data (aligned).
	// Key is the attempt, Born the checkpoint's trigger time.
	kindBarrier uint16 = 0xE000 + iota
	// kindPriority is barrier(Val) sent with SendOvertaking: it jumps the
	// channel's queued data, which the receiver persists as channel state.
	kindPriority
	// kindAnnounce (aligned-timeout) follows every FIFO barrier with
	// SendOvertaking, as Flink's EventAnnouncement: the receiver learns at
	// once which records precede the barrier (its Overtaken), so a timed-out
	// alignment can convert the queued barrier without waiting for it.
	kindAnnounce
)

// barrierBytes is a barrier's payload on the wire (id, attempt, timestamp).
const barrierBytes = 24

// snapshot is one task's part of a checkpoint, as stored. It is immutable
// once written.
type snapshot struct {
	Offset  int64        // source: the next offset to read
	Ops     []opSnapshot // each chained operator's part, in chain order
	Channel []inFlight   // records in flight into this task at the cut
}

// opSnapshot is one operator's part of its task's snapshot.
type opSnapshot struct {
	State   []stream.KV // keyed operator: its state in key order
	Pending []int64     // 2PC sink: pre-committed transactions not yet committed
	// Chain (incremental keyed state) lists the snapshots whose State for
	// this operator, applied in order, give its state; the last is this
	// one. Empty: State is the whole state.
	Chain checkpoint.Chain
}

// inFlight is the channel state of one input channel.
type inFlight struct {
	From    engine.ProcID
	Records []engine.Msg
}

// token encodes what a Store.Put was for: a snapshot or a sink transaction.
func snapToken(n int64) int64 { return n << 1 }
func txnToken(n int64) int64  { return n<<1 | 1 }

// txnKey is where a 2PC sink keeps a pre-committed transaction: the
// external system's pending transaction, removed when it commits.
func txnKey(sink engine.ProcID, n int64) string { return fmt.Sprintf("barrier/txn/%d/%d", sink, n) }

// epochKey is the broker's producer epoch e of a 2PC sink's transactional
// id: present once an attempt of the sink called initTransactions with it.
// The highest present is the broker's current epoch.
func epochKey(sink engine.ProcID, e int64) string {
	return fmt.Sprintf("barrier/epoch/%d/%d", sink, e)
}

// epochToken is the token of an epoch write: it belongs to no checkpoint
// (token>>1 is -1), and a failed one is not written again (the attempt
// keeps its epoch; the record check still fences what it committed).
const epochToken int64 = -2

// workloadStage is a convenience for constructors.
func workloadStage(g *stream.Graph, s int) *workloads.Stage { return &g.Plan.Stages[s] }

// Milestones: a checkpoint's last acknowledgement (its metadata write
// begins: until it is durable the previous checkpoint must stay
// restorable), the metadata durable (the commit notices go out to the 2PC
// sinks), and a sink's commit of its pre-committed transaction.
func (system) Milestones(string) []string {
	return []string{checkpoint.EventAcknowledged, checkpoint.EventCompleted, checkpoint.EventSinkCommit}
}

// CommitCycle: the 2PC sink makes a checkpoint interval's effects visible
// when that checkpoint completes; the plain sink commits on arrival.
func (system) CommitCycle(_ string, opts systems.Options) engine.Time {
	if opts["sink"] != Sink2PC {
		return 0
	}
	d, _ := opts.Duration("checkpoint-interval")
	return d
}

// DescribeMsg names barrier's messages for a run's trace: barriers with
// their checkpoint, the coordinator's traffic, and data records.
func (system) DescribeMsg(systems.Job) func(engine.Msg) engine.MsgInfo {
	return func(m engine.Msg) engine.MsgInfo {
		switch m.Kind {
		case kindBarrier:
			return engine.MsgInfo{Kind: "barrier", ID: m.Val}
		case kindPriority:
			return engine.MsgInfo{Kind: "unaligned_barrier", ID: m.Val}
		case kindAnnounce:
			return engine.MsgInfo{Kind: "barrier_announcement", ID: m.Val}
		}
		if info, ok := checkpoint.DescribeMsg(m); ok {
			return info
		}
		if !m.Ctrl {
			return systems.Record
		}
		return engine.MsgInfo{}
	}
}
