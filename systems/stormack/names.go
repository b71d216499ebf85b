package stormack

// Counter names (counters in run.json; Summarize derives system_metrics).
// The ack stream's and the ackers' counters are storm.CAckMessages and its
// neighbours (systems/internal/storm).
const (
	cTreesCompleted  = "trees_completed"
	cFailedTimeout   = "trees_failed_timeout"
	cFailedExplicit  = "trees_failed_explicit"
	cReplayed        = "tuples_replayed"
	cSpurious        = "spurious_replays"
	cUnknownReplies  = "replies_for_unknown_roots"
	cTuplesEmitted   = "tuples_emitted"
	cSpoutRestarts   = "spout_restarts"
	cCompleteLatency = "tree_complete_latency_ns_sum"
	cOffsetCommits   = "offset_commits" // acking off: one synchronous commit per polled batch
)

// Event kinds this system records (the ackers' peak is storm.EvAckerPeak).
const (
	evSpoutResume = "spout_resume"
	evSpoutPeak   = "spout_pending_peak"
	evSlowestTree = "tree_latency_peak"
	// evTimeoutReplay: a spout's first tree timed out and is replayed.
	evTimeoutReplay = "timeout_replay"
	// evOffsetCommitted: a spout's offset commit is durable (Value: the
	// offset a restart resumes from).
	evOffsetCommitted = "offset_committed"
	// evCommittedPastReplay: an offset commit that moves past a tuple
	// queued for replay since the previous such commit is durable.
	evCommittedPastReplay = "offset_committed_past_replay"
)
