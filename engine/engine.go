// Package engine defines the contract between fault-tolerance protocols and
// the runtimes that execute them: a protocol node is a Process, an
// event-driven state machine that sees the world only through its Ctx.
//
// Keeping every side effect behind Ctx is what makes a run replayable from
// its seed: the simulator (engine/sim) owns time, randomness, the network,
// durable storage and crashes, so the same config and seed give the same run.
package engine

import (
	"fmt"
	"math/rand/v2"
)

// Time is virtual time in nanoseconds since the start of the run.
type Time int64

// Units of Time.
const (
	Nanosecond  Time = 1
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

func (t Time) String() string { return fmt.Sprintf("%.6gs", t.Seconds()) }

// ProcID identifies a process instance of a deployment (its index in
// Deployment.Procs).
type ProcID int32

// Runtime is the sender of messages the runtime itself delivers: failure
// notifications and storage completions.
const Runtime ProcID = -1

// EffectID names one effect of one input record at the sink: the record at
// (Part, Off) of the source log, and its Sub-th output. The delivery checker
// counts duplicates and losses per EffectID.
type EffectID struct {
	Part int32
	Sub  int32
	Off  int64
}

// Msg is everything that travels over a channel. Data records use the typed
// fields so the hot path allocates nothing; protocol messages put their
// payload in Body.
type Msg struct {
	Kind uint16 // system-defined; values >= KindReserved belong to the runtime
	// Ctrl marks a control message (barrier, ack, marker, RPC). Control
	// messages stay in FIFO order with data on their channel, but they use no
	// channel credit and a process blocked by backpressure still receives
	// them when they reach the head of a channel, as Flink's mailbox still
	// runs checkpoint actions while output is unavailable.
	Ctrl bool
	// Lazy lets a control message wait in the network buffer like data
	// (flushed when full or after the buffer timeout) instead of flushing
	// it at once. Storm's acks travel batched with tuples; Flink's barriers
	// and Chandy-Lamport markers flush immediately.
	Lazy bool
	// Size sits with the flags so that they share one word: a Msg is 64
	// bytes, and channel rings hold one per queued record.
	Size int32 // bytes on the wire (payload; the runtime adds a header)
	Key  uint64
	Val  int64
	ID   EffectID
	Born Time // append time of the source record this message derives from
	Body any
}

// Kinds delivered by the runtime (From == Runtime).
const (
	KindReserved uint16 = 0xFF00 + iota
	// KindFailure tells the coordinator that a worker failed; Val is the
	// worker, Body is a Failure.
	KindFailure
	// KindWorkerUp tells the coordinator that a worker restarted; Val is the worker.
	KindWorkerUp
	// KindStoreDone tells a process that its Store.Put completed; Val is the
	// token passed to Put and Body the key.
	KindStoreDone
	// KindStoreFailed tells a process that its Store.Put failed (the store
	// was down): nothing was written. Val is the token, Body the key.
	KindStoreFailed
)

// Failure is the body of a KindFailure notification.
type Failure struct {
	Worker   int
	Procs    []ProcID // processes that were on the worker
	FailedAt Time
	// Back is true when the worker has already restarted by the time the
	// failure is detected (restart delay shorter than detection delay).
	Back bool
	// Moved lists the processes the runtime re-placed, when it detected
	// the failure, on live workers with free slots (a scheduler
	// redeploying a lost TaskManager's tasks in free slots elsewhere; see
	// ProcSpec.Pinned). Each comes up there after the cost model's
	// TaskRestart, and is the process's new home for later failures.
	Moved []Move
	// Vacated is true when no process is placed on the worker any more:
	// everything it ran was moved, so nothing waits for it to come back.
	Vacated bool
}

// Move is one process re-placed on another worker.
type Move struct {
	Proc   ProcID
	Worker int
}

// Process is one protocol node.
type Process interface {
	// Init starts or restarts the process. After a crash the new instance has
	// nothing but what ctx.Store() holds.
	Init(ctx Ctx)
	// Handle processes one message from the channel from->self.
	Handle(ctx Ctx, from ProcID, m Msg)
	// Timer fires a timer set with ctx.After.
	Timer(ctx Ctx, id int64)
}

// Ctx is a process's only window on the world.
type Ctx interface {
	Self() ProcID
	// Now is the process's clock: the start of the current step plus the
	// Work charged in it.
	Now() Time
	// Send appends m to the channel self->to (FIFO unless a fault says otherwise).
	Send(to ProcID, m Msg)
	// SendOvertaking sends a control message that jumps every message queued
	// on the channel self->to; the receiver's Overtaken() returns a copy of the
	// data it overtook and that the receiver has not consumed yet.
	SendOvertaking(to ProcID, m Msg)
	// Overtaken is valid inside Handle of an overtaking message.
	Overtaken() []Msg
	// After sets a timer that fires Timer(ctx, id) after d.
	After(d Time, id int64)
	// Work charges CPU time to this process.
	Work(d Time)
	// Rand is this process incarnation's RNG, derived from the run seed.
	Rand() *rand.Rand
	// Store is durable storage that survives crashes.
	Store() Store
	// Record logs a protocol event (events.jsonl, the timeline, metrics).
	Record(e Event)
	// Count adds delta to a named run counter (cheaper than Record for
	// per-message accounting such as ack traffic).
	Count(name string, delta int64)
	// Commit makes one effect visible to readers of the sink.
	Commit(c Commit)
	// Pause stops delivery of data from the channel from->self; its data
	// stays queued in the channel and keeps using credit (aligned barriers).
	Pause(from ProcID)
	// Resume undoes Pause.
	Resume(from ProcID)
	// Restart kills the current incarnation of p (state, queued input,
	// timers and its channels' contents are lost) and re-deploys it after
	// the cost model's TaskRestart delay, as a job manager's failover does.
	// A process that is down already is left to come back with its worker.
	Restart(p ProcID)
	// Cost is the cost model this process pays, for charging Work: the
	// run's model with its operator's overrides (ProcSpec.CostOp) applied.
	Cost() *CostModel
}

// Store is durable storage shared by all processes (a DFS or object store).
// Values must not be mutated after Put: store a copy.
type Store interface {
	// Put writes val (size bytes) asynchronously. When the write is durable
	// the writer receives Msg{Kind: KindStoreDone, Val: token} from Runtime;
	// when it fails (the store is down) Msg{Kind: KindStoreFailed, Val:
	// token} instead, and nothing is written. A write in progress when its
	// writer crashes is lost.
	Put(key string, val any, size int64, token int64)
	// Get reads a value, charging the read cost to the caller as Work.
	Get(key string) (any, bool)
	// Delete removes a key (free: garbage collection of old checkpoints).
	Delete(key string)
}

// KeyChecker is a Store that tells whether a key exists, free of charge: a
// transactional sink's commit request carries the check (Kafka's EndTxn
// finds the transaction still open, or fences the producer), and the cost
// model leaves that request's round trip out. A 2PC sink commits a
// transaction only while its record exists, so an old attempt cut off by a
// partition (a zombie) cannot commit what a newer attempt restored and
// committed already. Runtimes without partitions need not implement it.
type KeyChecker interface {
	Has(key string) bool
}

// Event is a protocol event for events.jsonl and system metrics.
type Event struct {
	Time  Time   `json:"t_ns"`
	Proc  string `json:"proc,omitempty"`
	Kind  string `json:"kind"`
	ID    int64  `json:"id,omitempty"`    // checkpoint, batch, snapshot or tree id
	Value int64  `json:"value,omitempty"` // a duration in ns, a count or a size, per Kind
	Bytes int64  `json:"bytes,omitempty"`
	Note  string `json:"note,omitempty"`
}

// Commit is one effect becoming visible at the sink: readers now see Value
// for Key. Born is the append time of the input record.
type Commit struct {
	ID    EffectID
	Key   uint64
	Value int64
	Born  Time
}

// ProcSpec describes one process of a deployment.
type ProcSpec struct {
	Name string // "count/1", "coordinator"
	Op   string // operator name ("count"); empty for control processes
	// CostOp is the operator whose per-operator costs (CostModel.For) the
	// process pays: its Ctx.Cost() is that operator's model. Usually Op; empty
	// for protocol processes (ackers, coordinators), and for a process that
	// runs several operators' work (lineage's executors), which charges each
	// operator's work with CostModel.For itself.
	CostOp string
	Index  int // instance index within Op
	Worker int // worker it runs on; MasterNode for the master node; ClientNode for a client
	// MasterBound processes die with the master node although they run on
	// a worker, and fresh ones start a task-restart delay after the master
	// is back: Spark's executors exit when their driver disconnects, and
	// the new driver gets new ones.
	MasterBound bool
	// Pinned keeps the process on its worker: after a failure it waits
	// for that worker, even where another has a free slot (a Spark
	// executor belongs to its worker; Spark reschedules its tasks on other
	// executors instead). Unpinned processes on a worker may be re-placed
	// (Failure.Moved).
	Pinned bool
	// Chain lists the operators a chained process runs in one thread, in
	// order (Flink's operator chain: Op is its head); empty for a process
	// of one operator. Faults that name an operator (op=NAME/I) reach the
	// process that runs it.
	Chain []string
	New   func() Process
}

// Ops are the operators the process runs: its chain, or Op alone.
func (p *ProcSpec) Ops() []string {
	if len(p.Chain) > 0 {
		return p.Chain
	}
	if p.Op == "" {
		return nil
	}
	return []string{p.Op}
}

// Runs reports whether the process runs operator op.
func (p *ProcSpec) Runs(op string) bool {
	if p.Op == op {
		return true
	}
	for _, o := range p.Chain {
		if o == op {
			return true
		}
	}
	return false
}

// MasterNode places a process on the master node: the checkpoint
// coordinator (Flink's JobManager), Spark's driver. A master crash
// (crash@T:master) kills every process there and starts fresh incarnations
// after the restart delay, with only what the durable store holds; no
// worker fault ever touches it.
const MasterNode = -1

// ClientNode places a process on a client machine outside the cluster (the
// harness's readers of the sink): it never crashes and gives each of its
// processes a CPU of its own, so that what runs there shares no core, no
// event order and no random stream with the system under test. Systems
// never place processes there.
const ClientNode = -2

// Deployment is what a system compiles a workload into.
type Deployment struct {
	Procs []ProcSpec
	// Coordinator receives failure notifications; -1 for none.
	Coordinator ProcID
	// LocalTransfer: a message between two processes on the same worker
	// goes through an in-process queue, neither serialized nor sent over
	// the network: the sender pays CostModel.SendCPU only (no
	// SerdePerByte), and a flushed buffer arrives at once (no wire time,
	// no NetLatency). Storm's ExecutorTransfer hands a tuple for an
	// executor of the same worker to that executor's receive queue as an
	// object and serializes only what goes to another worker. Flink
	// serializes every record that crosses a task boundary, also within a
	// TaskManager, so only Storm's systems (stormack, trident) set it. The simulator honours it; the
	// live runtime sends every message through its channels as before.
	LocalTransfer bool
	// Tasks names the job's tasks, each by the operators it runs, when
	// they are not one per process: Kafka Streams runs its tasks
	// (sub-topology, partition) inside stream threads. nil: every process
	// with an operator is a task (ProcSpec.Ops).
	Tasks [][]string
	// Describe names a message of the system for a run's trace (bench run
	// --trace): its kind as the system calls it and the id it carries. nil:
	// every message is named by its number. The runtime calls it only
	// while tracing, never to run the protocol.
	Describe func(m Msg) MsgInfo
}

// MsgInfo is what a trace says about one message (Deployment.Describe).
type MsgInfo struct {
	// Kind is the system's name for the message: "barrier", "marker",
	// "ack", "commit", "record" ...; "" leaves it to the runtime (its
	// number).
	Kind string
	// ID is the checkpoint, batch, snapshot, transaction or tree id the
	// message carries, 0 if none. Keep it within 53 bits (a browser reads
	// the trace).
	ID int64
	// Sampled marks per-record traffic that a trace samples and counts
	// like data instead of recording every message, whether or not it is
	// a control message (Storm's ack stream: an init, acks and a done per
	// tuple tree). A protocol message that is not a control message (a
	// Trident batch or commit tuple) sets Always instead. Both must depend
	// on the message's Kind and Ctrl alone: the trace classifies a
	// channel's messages by their kind once.
	Sampled, Always bool
}

// RuntimeKindName names the kinds the runtime delivers (>= KindReserved),
// "" for a system's kind.
func RuntimeKindName(kind uint16) string {
	switch kind {
	case KindFailure:
		return "failure_notice"
	case KindWorkerUp:
		return "worker_up_notice"
	case KindStoreDone:
		return "store_done"
	case KindStoreFailed:
		return "store_failed"
	}
	if kind >= KindReserved {
		return "runtime"
	}
	return ""
}

// Lookup returns the id of the process named name.
func (d *Deployment) Lookup(name string) (ProcID, bool) {
	for i, p := range d.Procs {
		if p.Name == name {
			return ProcID(i), true
		}
	}
	return -1, false
}

// Instances returns the ids of operator op's instances in index order.
func (d *Deployment) Instances(op string) []ProcID {
	var ids []ProcID
	for i, p := range d.Procs {
		if p.Op == op {
			ids = append(ids, ProcID(i))
		}
	}
	return ids
}

// Add appends a process and returns its id.
func (d *Deployment) Add(p ProcSpec) ProcID {
	d.Procs = append(d.Procs, p)
	return ProcID(len(d.Procs) - 1)
}

// BatchCommitter is a Ctx that takes many commits in one call (the
// simulator): a 2PC sink makes a checkpoint's effects visible at once, and
// handing them over one call each is most of its cost.
type BatchCommitter interface {
	CommitAll(cs []Commit)
	// CommitOwned is CommitAll, and the runtime keeps cs: the caller must
	// not touch it again.
	CommitOwned(cs []Commit)
	// CommitBuffer is an empty slice with room for n commits, to fill and
	// hand to CommitOwned (the runtime reuses the slices it was given).
	CommitBuffer(n int) []Commit
}

// CommitAll commits cs in order, as that many Commit calls would.
func CommitAll(ctx Ctx, cs []Commit) {
	if b, ok := ctx.(BatchCommitter); ok {
		b.CommitAll(cs)
		return
	}
	for _, c := range cs {
		ctx.Commit(c)
	}
}

// CommitOwned is CommitAll, handing cs over: the caller must not read or
// write it again (a runtime that takes batches reuses it).
func CommitOwned(ctx Ctx, cs []Commit) {
	if b, ok := ctx.(BatchCommitter); ok {
		b.CommitOwned(cs)
		return
	}
	CommitAll(ctx, cs)
}

// CommitBuffer is an empty slice with room for n commits, the runtime's
// (reused) where it takes batches.
func CommitBuffer(ctx Ctx, n int) []Commit {
	if b, ok := ctx.(BatchCommitter); ok {
		return b.CommitBuffer(n)
	}
	return make([]Commit, 0, n)
}
