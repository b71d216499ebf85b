package kstreams

import (
	"fmt"
	"strconv"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/workloads"
)

func init() { systems.Register(system{}) }

type system struct{}

// Guarantees (--guarantee), Kafka Streams' processing.guarantee.
const (
	ExactlyOnceV2 = "exactly-once-v2"
	AtLeastOnce   = "at-least-once"
)

// Rebalance protocols (--rebalance).
const (
	Cooperative = "cooperative"
	Eager       = "eager"
)

// Defaults, as StreamsConfig and the clients set them (docs/kstreams.md
// cites each).
const (
	commitIntervalEOS  = 100 * engine.Millisecond // commit.interval.ms under exactly_once_v2
	commitIntervalALOS = 30 * engine.Second       // commit.interval.ms otherwise
	txnTimeout         = 10 * engine.Second       // transaction.timeout.ms Streams sets under EOS
	maxPollRecords     = 1000                     // max.poll.records as Streams overrides it
	linger             = 100 * engine.Millisecond // linger.ms as Streams overrides it
	batchBytes         = 16384                    // batch.size
	cacheEntryOverhead = 48                       // bytes a cached entry costs beyond its 16-byte key and value
	cleanerBackoff     = 15 * engine.Second       // log.cleaner.backoff.ms
	defaultCacheBytes  = "10485760"               // statestore.cache.max.bytes
	defaultRecoveryLag = "10000"                  // acceptable.recovery.lag
	defaultWarmups     = "2"                      // max.warmup.replicas
	defaultProbing     = "10m"                    // probing.rebalance.interval.ms, 600000
	minProbing         = 60 * engine.Second       // probing.rebalance.interval.ms's lower bound (atLeast(60000))
	standbyPoll        = 100 * engine.Millisecond // how often a caught-up standby polls its changelog
	retryBackoff       = 100 * engine.Millisecond // retry.backoff.ms
)

func (system) Name() string { return "kstreams" }
func (system) Describe() string {
	return "Kafka Streams: sub-topologies joined by repartition topics, state in local stores with compacted changelogs, exactly-once v2 transactions (or at-least-once), group rebalances, standby replicas"
}
func (system) Variants() []string { return []string{"default"} }

func (system) Flags() []systems.Flag {
	return []systems.Flag{
		{Name: "guarantee", Default: ExactlyOnceV2, Usage: "kstreams: processing.guarantee, exactly-once-v2 (ftbench's default; Kafka's is at-least-once) or at-least-once"},
		{Name: "commit-interval", Default: "auto", Usage: "kstreams: commit.interval.ms; auto is Kafka's default, 100ms under exactly-once-v2 and 30s at-least-once"},
		{Name: "instances", Default: "workers", Usage: "kstreams: KafkaStreams instances (one per worker by default), placed round-robin on the workers"},
		{Name: "threads", Default: "auto", Usage: "kstreams: num.stream.threads per instance; auto (ftbench's default; Kafka's is 1) is one per task of the instance's share, at most --cores"},
		{Name: "session-timeout", Default: "detect-delay", Usage: "kstreams: session.timeout.ms, after which the group coordinator removes a silent member (Kafka's default is 45s; detect-delay keeps runs comparable with the other systems)"},
		{Name: "rebalance", Default: Cooperative, Usage: "kstreams: rebalance protocol, cooperative (KIP-429, the default since 2.4) or eager (every member revokes every task)"},
		{Name: "static-membership", Default: "false", Usage: "kstreams: true gives every thread a group.instance.id (KIP-345): back within the session timeout, it keeps its tasks with no rebalance"},
		{Name: "standby-replicas", Default: "0", Usage: "kstreams: num.standby.replicas, warm copies of each stateful task on other instances"},
		{Name: "acceptable-recovery-lag", Default: defaultRecoveryLag, Usage: "kstreams: acceptable.recovery.lag (KIP-441): a standby this close to the changelog end counts as caught up"},
		{Name: "max-warmup-replicas", Default: defaultWarmups, Usage: "kstreams: max.warmup.replicas (KIP-441): warm-up replicas, across the group, restoring a task on the instance the balanced assignment wants it on while a caught-up instance keeps it"},
		{Name: "probing-rebalance-interval", Default: defaultProbing, Usage: "kstreams: probing.rebalance.interval.ms (KIP-441, at least 60s as in Kafka): after an assignment with warm-ups, the group rebalances again this much later and hands each caught-up warm-up its task"},
		{Name: "transactional-stores", Default: "false", Usage: "kstreams: true models KIP-892 transactional state stores: an aborted or crashed task restores from its committed changelog offset instead of wiping its store"},
		{Name: "cache-max-bytes", Default: defaultCacheBytes, Usage: "kstreams: statestore.cache.max.bytes per instance: the record cache that folds state updates per key between commits"},
	}
}

// Claim: exactly-once v2 puts the output, the changelog writes and the
// consumed offsets into one transaction, and readers read committed:
// exactly-once, monotonic. At-least-once commits offsets after the writes
// they cover, so a restart re-processes (duplicates) and a restored store
// may already hold the re-processed updates (counts ahead); the output is
// written on arrival, so a reader may see a count go back when a task
// restarts from a changelog older than what it wrote.
func (system) Claim(_ string, opts systems.Options) systems.Claim {
	if opts["guarantee"] == AtLeastOnce {
		// A zombie (paused or cut off past its session timeout) writes
		// its output when it wakes, after the new owner's: a key's last
		// value may be an older count (MayEndStale), as with any
		// non-transactional producer.
		return systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: false, MayEndStale: true}
	}
	return systems.ExactlyOnceMonotonic
}

// params is what every process of one deployment shares: the options and
// the compiled topology. Read-only during the run.
type params struct {
	eos            bool
	commitInterval engine.Time
	instances      int
	threads        int // per instance
	sessionTimeout engine.Time
	eager          bool
	static         bool
	standbys       int
	recoveryLag    int64
	warmups        int         // max.warmup.replicas
	probing        engine.Time // probing.rebalance.interval.ms
	txnStores      bool
	cacheEntries   int // per thread

	w       workloads.Workload
	log     *workloads.Log
	plan    *workloads.Plan
	subs    []subTopology
	parts   int // partitions of every topic = tasks per sub-topology
	workers int
	cost    *engine.CostModel
	broker  engine.ProcID
	thread  []engine.ProcID // global thread index -> process
}

func (p *params) nThreads() int { return p.instances * p.threads }

// instanceOf is the instance a thread belongs to.
func (p *params) instanceOf(th int) int { return th / p.threads }

func parseOptions(job systems.Job) (*params, error) {
	o := job.Opts
	p := &params{}
	switch o["guarantee"] {
	case ExactlyOnceV2:
		p.eos = true
	case AtLeastOnce:
	default:
		return nil, fmt.Errorf("--guarantee=%q: want %s or %s", o["guarantee"], ExactlyOnceV2, AtLeastOnce)
	}
	var err error
	switch o["commit-interval"] {
	case "auto":
		p.commitInterval = commitIntervalALOS
		if p.eos {
			p.commitInterval = commitIntervalEOS
		}
	default:
		if p.commitInterval, err = o.Duration("commit-interval"); err != nil {
			return nil, fmt.Errorf("%w, or auto", err)
		}
	}
	p.instances = job.Workers
	if o["instances"] != "workers" {
		if p.instances, err = o.Int("instances", 1, 1024); err != nil {
			return nil, fmt.Errorf("%w, or workers", err)
		}
	}
	if o["threads"] == "auto" {
		tasks, err := splitTopology(job.Workload.Plan())
		if err != nil {
			return nil, err
		}
		share := (len(tasks)*job.Parallelism + p.instances - 1) / p.instances
		p.threads = max(1, min(share, job.Cost.Cores))
	} else if p.threads, err = o.Int("threads", 1, 64); err != nil {
		return nil, fmt.Errorf("%w, or auto", err)
	}
	p.sessionTimeout = job.Cost.DetectDelay
	if o["session-timeout"] != "detect-delay" {
		if p.sessionTimeout, err = o.Duration("session-timeout"); err != nil {
			return nil, fmt.Errorf("%w, or detect-delay", err)
		}
	}
	if p.eager, err = o.Either("rebalance", Eager, Cooperative); err != nil {
		return nil, err
	}
	if p.static, err = o.Bool("static-membership"); err != nil {
		return nil, err
	}
	if p.standbys, err = o.Int("standby-replicas", 0, 16); err != nil {
		return nil, err
	}
	lag, err := o.Int("acceptable-recovery-lag", 0, 1<<30)
	if err != nil {
		return nil, err
	}
	p.recoveryLag = int64(lag)
	if p.warmups, err = o.Int("max-warmup-replicas", 1, 1<<20); err != nil {
		return nil, err
	}
	if p.probing, err = o.Duration("probing-rebalance-interval"); err != nil {
		return nil, err
	}
	if p.probing < minProbing {
		return nil, fmt.Errorf("--probing-rebalance-interval=%q: want at least %v (Kafka's minimum for probing.rebalance.interval.ms)", o["probing-rebalance-interval"], minProbing)
	}
	if p.txnStores, err = o.Bool("transactional-stores"); err != nil {
		return nil, err
	}
	cache, err := o.Int("cache-max-bytes", 0, 1<<40)
	if err != nil {
		return nil, err
	}
	p.cacheEntries = cache / (16 + cacheEntryOverhead) / p.threads
	return p, nil
}

// CommitCycle: under exactly-once the output becomes visible in bursts,
// one per transaction.
func (system) CommitCycle(_ string, opts systems.Options) engine.Time {
	if opts["guarantee"] == AtLeastOnce {
		return 0
	}
	if opts["commit-interval"] == "auto" {
		return commitIntervalEOS
	}
	d, err := opts.Duration("commit-interval")
	if err != nil {
		return 0
	}
	return d
}

// Milestones: a transaction's offsets accepted by the group coordinator
// (the zombie window require_stable guards), a transaction committed, a
// rebalance's assignment, a restore finished.
func (system) Milestones(string) []string {
	return []string{evTxnOffsets, evTxnCommitted, evAssigned, evRestored}
}

func (system) Compile(job systems.Job) (*engine.Deployment, error) {
	p, err := parseOptions(job)
	if err != nil {
		return nil, err
	}
	p.w, p.log, p.plan, p.parts, p.cost, p.workers = job.Workload, job.Log, job.Workload.Plan(), job.Parallelism, job.Cost, job.Workers
	if p.subs, err = splitTopology(p.plan); err != nil {
		return nil, err
	}
	anchor := p.plan.Stages[0].Name
	if _, name := p.plan.FirstStateful(); name != "" {
		anchor = name
	}
	dep := &engine.Deployment{}
	// The tasks, (sub-topology, partition), run inside the stream threads.
	for i, sub := range p.subs {
		var ops []string
		if i == 0 {
			ops = append(ops, p.plan.Source) // sub-topology 0 reads the source topic
		}
		for _, st := range sub.stages {
			ops = append(ops, p.plan.Stages[st].Name)
		}
		for range p.parts {
			dep.Tasks = append(dep.Tasks, ops)
		}
	}
	// The brokers' replicated logs and the coordinators' state: durable,
	// so a new broker process after a master crash finds them (see
	// cluster). Created here, not in the process, as stormack's external
	// store: it is not the process's memory.
	cl := newCluster(p)
	p.broker = dep.Add(engine.ProcSpec{Name: "broker", Worker: engine.MasterNode,
		New: func() engine.Process { return newBroker(p, cl) }})
	dep.Coordinator = p.broker
	for th := 0; th < p.nThreads(); th++ {
		th := th
		inst := p.instanceOf(th)
		p.thread = append(p.thread, dep.Add(engine.ProcSpec{
			Name: "thread/" + strconv.Itoa(inst) + "." + strconv.Itoa(th%p.threads), Op: anchor, Index: th,
			Worker: inst % job.Workers, Pinned: true,
			New: func() engine.Process { return newThread(p, th) },
		}))
	}
	return dep, nil
}

// DescribeMsg names Kafka Streams' requests and responses for a run's
// trace (every one a control message: the threads and the broker talk
// through Kafka's protocol, not dataflow channels): transaction commits
// (commit_txn, or abort_txn) and their offsets, produce and fetch batches
// with their sequence number, group membership and rebalances with their
// generation, changelog restores, heartbeats.
func (system) DescribeMsg(systems.Job) func(engine.Msg) engine.MsgInfo {
	names := map[uint16]string{
		kInitPid: "init_pid", kJoin: "join_group", kJoined: "joined", kProduce: "produce",
		kTxnOffsets: "txn_offsets", kEndTxn: "commit_txn", kOffsetCommit: "offset_commit",
		kOffsetFetch: "offset_fetch", kFetch: "fetch", kRestore: "restore_fetch", kHeartbeat: "heartbeat",
		kPid: "pid", kRebalance: "rebalance", kAssign: "assign", kProduceAck: "produce_ack",
		kTxnOffsetsAck: "txn_offsets_ack", kEndTxnAck: "end_txn_ack", kOffsetCommitAck: "offset_commit_ack",
		kOffset: "offset", kRecords: "records", kRestoreChunk: "restore_chunk", kBrokerUp: "broker_up", kRejoin: "rejoin",
	}
	return func(m engine.Msg) engine.MsgInfo {
		info := engine.MsgInfo{Kind: names[m.Kind]}
		switch b := m.Body.(type) {
		case endTxn:
			if !b.commit {
				info.Kind = "abort_txn"
			}
		case *produce:
			info.ID = b.seq
		case produceAck:
			info.ID = b.seq
		case *fetch:
			info.ID = b.seq
		case records:
			info.ID = b.seq
		case txnOffsets:
			info.ID = b.gen
		case *offsetCommit:
			info.ID = b.gen
		case join:
			info.ID = b.gen
		case assignment:
			info.ID = b.gen
		case int64:
			if m.Kind == kRebalance {
				info.ID = b
			}
		}
		if info.Kind == "" && !m.Ctrl {
			return systems.Record
		}
		return info
	}
}
