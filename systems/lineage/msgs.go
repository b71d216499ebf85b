package lineage

import "ftbench/engine"

// Message kinds. Every message is a control message (Msg.Ctrl): Spark's
// RPCs and block transfers are not subject to the record channels' credit,
// and a control message to a dead process is dropped, which is what a
// connection to a lost executor does.
const (
	kLaunch uint16 = iota + 1 // driver -> executor: run a task (Body *taskSpec)
	kResult                   // executor -> driver: a task ended (Body *taskResult)
	kFetch                    // executor -> executor: send me these blocks (Body *fetchReq)
	kBlocks                   // executor -> executor: the blocks (Body *fetchResp)
	kPush                     // executor -> executor: a map task's output for your partitions (Body *pushMsg)
	kCancel                   // driver -> executor: abandon attempt Val
	kLost                     // driver -> executor: executor Val is lost
	kGC                       // driver -> executor: drop blocks no longer needed (Body gcMsg)
	kCkpt                     // executor -> driver: a checkpoint write is durable (Body ckptAck)
)

// Sizes of the small messages on the wire.
const (
	specBytes   = 64
	resultBytes = 48
	refBytes    = 24
)

// stateFrom says where a task finds its state partition at batch from-1.
type stateFrom uint8

const (
	stateNone  stateFrom = iota // the stage has no state
	stateEmpty                  // first batch: empty state
	stateMem                    // cached in an executor's memory (possibly this one)
	stateCkpt                   // the checkpoint in durable storage
)

// taskSpec is one task attempt: Spark stage s, partition part, batches
// from..to. A job task covers one batch; a recovery chain covers every batch
// from the checkpoint to the lost version, pipelined in one task as Spark
// pipelines the narrow dependency of state[j] on state[j-1].
type taskSpec struct {
	attempt  int64
	s, part  int
	from, to int64
	// src is the source offset range [lo, hi) of partition part per batch
	// (stage 0).
	src [][2]int64
	// in[j-from][q] is the executor holding map output (s-1, j, q); pushed
	// marks outputs pushed to this executor (wait for them in the inbox).
	in     [][]int32
	pushed [][]bool
	state  stateFrom
	stExec int32 // stateMem: the holder
	stVer  int64 // stateMem, stateCkpt: the version (batch) to start from
	// dests[r] is the executor to push bucket r of the output to (-1: none);
	// nil for tasks that do not push (recovery, result stages).
	dests      []int32
	emit       bool // result stage: return the sink's effects
	checkpoint bool // write the final state to durable storage
	recompute  bool // a recomputation task (a trace names it so)
}

// taskResult reports an attempt's end.
type taskResult struct {
	attempt int64
	exec    int
	status  uint8
	failed  blockRef // statusFetchFailed: the input that could not be read
	cpu     []engine.Time
	records int64   // input records processed
	effects [][]rec // per batch, when emit
	keys    int     // state keys after the last batch
	ckpt    int64   // checkpoint bytes written
}

const (
	statusOK uint8 = iota
	statusFetchFailed
	statusCancelled
)

// blockRef names a map output bucket (s, j, part) -> r, or, when state is
// set, state partition (s, part) at version j.
type blockRef struct {
	s, part int32
	r       int32
	j       int64
	exec    int32
	state   bool
}

type fetchReq struct {
	attempt int64
	refs    []blockRef
}

type fetchResp struct {
	attempt int64
	refs    []blockRef
	found   []bool
	blocks  [][]rec
	state   []map[uint64]int64 // for a state ref
}

// pushMsg carries buckets rs of map output (s, j, q).
type pushMsg struct {
	s, q   int32
	j      int64
	rs     []int32
	blocks [][]rec
}

// ckptAck says state partition (s, part) of batch ver is durable.
type ckptAck struct {
	s, part int
	ver     int64
	bytes   int64
}

type gcMsg struct {
	committed int64 // drop pushed blocks of batches up to here
	ckpt      int64 // drop map outputs up to here and state versions before it
}

// ctrl builds a control message.
func ctrl(kind uint16, size int64, body any) engine.Msg {
	return engine.Msg{Kind: kind, Ctrl: true, Size: clampSize(size), Body: body}
}
