package kstreams

import (
	"ftbench/engine"
	"ftbench/systems/internal/stream"
)

// Message kinds between the stream threads and the broker (the Kafka
// cluster: partition leaders, group coordinator, transaction coordinator).
// Every one is a control message: a Kafka client's requests and responses
// use no dataflow channel credit, so nothing backpressures across a
// repartition topic.
const (
	// thread -> broker
	kInitPid      uint16 = 0xD000 + iota // InitProducerId: bump the epoch, abort the open transaction
	kJoin                                // JoinGroup (a new or restarted member)
	kJoined                              // a member's answer to kRebalance (eager: after revoking)
	kProduce                             // ProduceRequest (+AddPartitionsToTxn): a batch of records
	kTxnOffsets                          // TxnOffsetCommit (EOS) with the group generation
	kEndTxn                              // EndTxn: commit or abort
	kOffsetCommit                        // OffsetCommit (at-least-once)
	kOffsetFetch                         // OffsetFetch (require_stable under EOS)
	kFetch                               // Fetch of repartition records
	kRestore                             // Fetch of changelog records for a restore or a standby
	kHeartbeat                           // Heartbeat (Val: thread), every session.timeout.ms / 3
	// broker -> thread
	kPid
	kRebalance
	kAssign
	kProduceAck
	kTxnOffsetsAck
	kEndTxnAck
	kOffsetCommitAck
	kOffset
	kRecords
	kRestoreChunk
	kBrokerUp // a new broker after a master crash: re-send what is outstanding
	kRejoin   // UNKNOWN_MEMBER_ID: the member was removed; join again
)

// requestBytes is the size of a request or response without records.
const requestBytes = 64

// produce is a ProduceRequest: one batch per partition, as the
// producer's record accumulator builds them, and the output-topic records.
type produce struct {
	thread  int
	epoch   int64
	seq     int64
	batches []prodBatch
	out     [][]engine.Commit // in the runtime's pieces, handed back when visible
	bytes   int64
}

// prodBatch is the records of one produce for one repartition or
// changelog partition. The broker's log keeps recs as it is: nobody
// writes it after the producer sends it.
type prodBatch struct {
	changelog bool
	sub, part int         // repartition: the input topic of sub-topology sub; changelog: task (sub, part)
	recs      []entry     // repartition
	kvs       []stream.KV // changelog
}

type produceAck struct {
	seq    int64
	fenced bool
	// spare: arrays of batches the logs dropped (purged or compacted),
	// handed to the producer for its next batches (memory, not data: no
	// one else holds them, since a fetch response copies its records).
	spare   [][]entry
	spareKV [][]stream.KV
}

type offset struct {
	task taskID
	off  int64
}

type txnOffsets struct {
	thread  int
	epoch   int64
	gen     int64
	offsets []offset
}

type endTxn struct {
	thread int
	epoch  int64
	commit bool
}

type txnReply struct {
	fenced bool
	reason string
	// ends: after a commit, the changelog offset each of the thread's
	// stateful tasks' stores is consistent with (its .checkpoint file).
	ends []offset
}

type offsetCommit struct {
	thread  int
	gen     int64
	offsets []offset
}

type offsetFetch struct {
	thread int
	task   taskID
}

type fetchReq struct {
	task taskID
	from int64
}

type fetch struct {
	thread int
	seq    int64 // a new fetch replaces the thread's parked one
	reqs   []fetchReq
	// buf is the consumer's fetch buffer, empty, with room for
	// max.poll.records: the response's records are copied into it and
	// it comes back with them.
	buf []entry
}

// records answers fetch seq.
type records struct {
	seq  int64
	recs []fetched
	buf  []entry // the fetch's buffer, which recs are parts of
}

// fetched is one partition's part of a fetch response, the aborted
// records left out.
type fetched struct {
	task       taskID
	recs       []entry
	from, next int64
}

type restoreReq struct {
	thread int
	task   taskID
	from   int64
	// standby: a standby's follow-up (answered empty when caught up).
	standby bool
}

type restoreChunk struct {
	task    taskID
	kvs     []stream.KV
	next    int64
	done    bool // caught up with the last stable offset
	standby bool
}

type assignment struct {
	gen     int64
	active  []taskID
	standby []taskID
	// handover: active tasks moved off a live owner (KIP-441's planned
	// moves): their start is a handover, not a recovery.
	handover []taskID
	// rejoined: a static member back within the session timeout keeps
	// its tasks with no rebalance.
	rejoined bool
}

type join struct {
	thread int
	gen    int64
	// ran: the revoked tasks the member ran and committed before this
	// rejoin (their moves are handovers; a task dropped before it ran is
	// still being recovered).
	ran []taskID
	// owned: cooperative: the active tasks the member holds, as its
	// subscription's owned partitions say (KIP-429).
	owned []taskID
}
