package trident

import (
	"ftbench/engine"
	"ftbench/systems/internal/storm"
)

// Message kinds of Trident's own streams. The acker's stream (init, ack,
// fail, done, failed) and data tuples use storm's kinds; these start above
// them.
const (
	// kindBatch: coordinator -> emitter, the $batch stream: start emitting
	// the batch of tx (Body *txMsg).
	kindBatch uint16 = 16 + iota
	// kindCommit: coordinator -> committers, the $commit stream: apply the
	// batch of tx to state (Body *txMsg).
	kindCommit
	// kindSuccess: coordinator -> emitters, the $success stream: tx is
	// committed (Key: txid).
	kindSuccess
)

// txAttempt is Storm's TransactionAttempt: a batch's transaction id and
// the attempt number the coordinator gave this emission of it.
type txAttempt struct {
	txid    int64
	attempt int32
}

// txMsg is a $batch or $commit tuple: the attempt and the tuple's message
// id in the attempt's tree.
type txMsg struct {
	tx    txAttempt
	at    engine.Time // when the coordinator started the attempt
	edges []storm.Edge
}

// txBytes is what a batch id adds to every tuple on the wire: Trident puts
// the TransactionAttempt (txid, attempt id) first in each tuple.
const txBytes = 12

// Counter names (counters in run.json; Summarize derives system_metrics).
const (
	cBatchesStarted   = "batches_started"
	cBatchesReplayed  = "batches_replayed" // attempts after the first of a txid
	cBatchesCommitted = "batches_committed"
	cBatchesFailed    = "batches_failed" // attempts failed (timeout or explicit)
	cBatchTimeouts    = "batch_timeouts"
	cBatchLatency     = "batch_latency_ns_sum"  // first attempt's start to commit
	cCommitLatency    = "commit_latency_ns_sum" // commit tuple emitted to commit done
	cStoreRoundTrips  = "store_round_trips"
	cStateGets        = "state_multiget_keys"
	cStatePuts        = "state_multiput_keys"
	cSkippedTxid      = "updates_skipped_txid"
	cReappliedOpaque  = "updates_reapplied_opaque"
	cFencedWrites     = "state_writes_fenced"
	cTuplesEmitted    = "tuples_emitted"
	cEmitterRestarts  = "emitter_restarts"
	cCoordRestarts    = "coordinator_restarts"
)

// Event kinds this system records.
const (
	// evBatchCommitted: the coordinator's txid moved past a committed batch
	// (durable; ID: txid).
	evBatchCommitted = "batch_committed"
	// evBatchStarted: the coordinator emitted a batch attempt (ID: txid,
	// Value: attempt).
	evBatchStarted = "batch_started"
	// evBatchFailed: a batch attempt failed (timeout or a failed write).
	evBatchFailed = "batch_failed"
	// evStateWritten: a committer's multi-put for a batch is durable.
	evStateWritten = "state_written"
	// evTxidSkip: a committer skipped updates whose stored txid says the
	// batch was applied (Value: keys skipped).
	evTxidSkip = "txid_skip"
	// evOpaqueReapply: an opaque state applied a txid it already had
	// again, to the stored previous value (Value: keys).
	evOpaqueReapply = "opaque_reapply"
	// evFenced: a state write older than the stored txid was refused.
	evFenced = "state_write_fenced"
	// evCoordResume: a restarted coordinator read its txid from the store.
	evCoordResume = "coordinator_resume"
)
