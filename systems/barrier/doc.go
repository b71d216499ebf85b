// Package barrier is Flink-style asynchronous barrier snapshots (lecture 21,
// 21.2.7, algorithm 21.3.4, 21.5): a checkpoint coordinator, barriers that
// carry the checkpoint id, aligned and unaligned barrier handling, a
// two-phase-commit sink, and region or global rollback on failure. It
// claims exactly-once with the 2PC sink and at-least-once with the plain
// sink.
//
// # Processes
//
// The plan compiles as for every DAG system (stream.BuildChained): the
// source's instance i, then every chain's instance i on worker i mod
// workers, plus the coordinator (systems/internal/checkpoint) on the
// master node. Every source and task must acknowledge a checkpoint; only
// sources get the trigger.
//
// # Operator chaining (chaining, default true; object-reuse, default false)
//
// As Flink does by default (pipeline.operator-chaining), an operator runs
// in its upstream's task when StreamingJobGraphGenerator.isChainable
// allows it: one input edge, the same parallelism and slot-sharing group,
// chaining strategies that allow it (sources HEAD, the rest ALWAYS), and a
// forward edge. In ftbench's linear plans that is every forward edge
// (stream.Chainable): wordcount runs as [source→split] and [count→sink],
// only the keyBy shuffle crossing channels; grep as one chain
// [source→filter→sink] per partition, with no channel at all; bank as
// [source], [debit] and [credit→sink]. A chain is one process (chain.go):
// records pass between its operators by a method call, with no network
// buffer, send or credit. With object reuse off (Flink's default,
// CopyingChainingOutput) each chained hop copies the record through its
// serializer, charged as a pass over its bytes at the receiving operator's
// serde-per-byte (a send's serialisation without its per-message send-cpu,
// header and wire); object-reuse=true (enableObjectReuse(), ChainingOutput)
// passes it by reference for free. Each chained operator pays its own
// per-operator costs (--cost count.state-cpu=8us reaches count wherever it
// runs).
//
// A chain aligns barriers only at its inputs, and its snapshot holds every
// chained operator's state (a source chain's: its offset too) taken at one
// instant, with a chained 2PC sink's pre-commit; a crash, a restart and a
// region failover take the whole chain (the regions are computed over
// chains), and a fault naming any of its operators (crash, slow, partition
// op=sink/0) reaches the chain's process: slow slows the whole chain, as a
// slow operator slows its task's one thread. A throttle or reorder on an
// edge inside a chain is refused (no channel; the message names
// --chaining=false). With chaining the coordinator's messages to the
// sources are mails (checkpoint.Config.MailToSources): they run before the
// source's next poll, as a Flink task runs its mailbox's mails before the
// next record; without it a chained source behind on its log polls without
// pause and a trigger would wait for it to catch up. chaining=false
// (disableOperatorChaining()) gives every operator its own task and
// reproduces the unchained job graph's figures exactly.
//
// What the model simplifies: Flink also refuses to chain across a
// different slot-sharing group, a user's disableChaining() or
// startNewChain(), and a batch exchange; ftbench's plans have none of
// them. A chained source polls a batch of records (32) per step, so a
// trigger waits for at most one batch through the chain; Flink's mailbox
// can take it between two records.
//
// # Checkpoints (checkpoint-interval, default 1s)
//
// Every interval the coordinator triggers checkpoint n unless
// max-concurrent-checkpoints (default 1, Flink's default) are in progress.
// A source records its next offset as its snapshot and injects barrier(n)
// on every output channel. Barriers are control messages: FIFO with the
// data of their channel but never blocked by credit, and delivered to a
// backpressured task when they reach the head of its input. A task's
// snapshot is written with Store.Put (asynchronously: the task keeps
// processing) and acknowledged only on KindStoreDone; the coordinator
// completes n when every task acknowledged it and its metadata is durable,
// then tells every task (KindComplete). Snapshot serialisation charges
// serde-per-byte CPU per state and channel-state byte.
//
// Variants (the per-checkpoint state machine is in align.go):
//
//   - aligned (default): a task pauses each input channel on which
//     barrier(n) arrived (ctx.Pause: the records behind the barrier stay
//     queued in the channel, using credit, so the upstream is
//     backpressured, as in Flink >= 1.11), and when barrier(n) has arrived
//     on every input it snapshots its state, forwards barrier(n), and
//     resumes. Channel state is empty. The records held back are counted
//     at the snapshot (alignment_buffered_records) through the simulator's
//     InputQueued, a read-only query outside engine.Ctx.
//   - unaligned: barriers are sent with SendOvertaking. On the first
//     barrier(n) a task snapshots at once and forwards barrier(n)
//     overtaking its own output. Its channel state is exactly the records
//     sent before the upstream's snapshot and consumed after its own: for
//     a channel whose barrier has arrived, what the barrier overtook
//     (ctx.Overtaken: sent before it, not consumed yet); for a channel
//     whose barrier has not arrived, every record consumed from it until
//     the barrier arrives plus what that barrier overtakes. State plus
//     channel state is then the same cut the aligned variant takes (the
//     unaligned trace test shows it on the lecture's input). Like Flink, it
//     needs max-concurrent-checkpoints 1: an overtaking barrier n+1 could
//     pass barrier n in a channel.
//   - aligned-timeout (Flink's aligned-checkpoint-timeout, default 100ms,
//     measured from the trigger): aligned, but every FIFO barrier is
//     followed by an overtaking announcement (Flink's EventAnnouncement)
//     whose Overtaken tells the receiver which queued records precede the
//     barrier. When the checkpoint is still aligning at the timeout (the
//     coordinator broadcasts KindAlignTimeout, a control message, because a
//     backpressured task gets no timers) or an overtaking barrier arrives,
//     the task switches to unaligned: it snapshots, resumes its paused
//     channels, converts announced barriers (the announced records not yet
//     consumed become channel state; the FIFO barrier is ignored when it
//     comes) and forwards overtaking barriers.
//   - sync: the synchronous baseline of the ABS paper (Carbone et al. 2015,
//     Naiad-style stop-the-world snapshots). At trigger n every source
//     records its offset, sends barrier(n) and stops reading until n
//     completes or is aborted (KindComplete or KindAbort). The in-flight
//     data drains behind the barriers; tasks handle barriers as aligned
//     ones (with the sources stopped nothing follows a barrier, so nothing
//     is held back) and snapshot a quiet pipeline. Processing resumes only
//     once every snapshot and the checkpoint's metadata are durable, so the
//     whole checkpoint, not only the state copy, is on the critical path:
//     that is what the asynchronous variants save. Like unaligned, it
//     needs max-concurrent-checkpoints 1.
//
// # Incremental checkpoints (--incremental, default false)
//
// As Flink's RocksDB backend with incremental checkpoints: a keyed task's
// snapshot of checkpoint n writes only the keys updated since the snapshot
// of the last checkpoint it knows complete (KindComplete; a late notice or
// an abort makes the next delta re-upload those keys, as
// RocksIncrementalSnapshotStrategy re-uploads files not yet confirmed), and
// references the older snapshots that hold the rest: its chain, a full base
// then deltas (checkpoint.IncrementalState). Serialisation and the write
// are charged for the delta's bytes only. The coordinator's shared registry
// (Flink's SharedStateRegistry) counts the retained checkpoints that
// reference each stored snapshot and deletes one only when none does. A
// restore reads every piece of the chain (a store read each: latency plus
// bytes) and applies them oldest first. The chain is consolidated — the
// next snapshot is written in full — when it holds full-checkpoint-every
// pieces (default 10) or when its deltas would reach the base's bytes
// (space amplification 2), as RocksDB compaction or the changelog
// backend's periodic materialisation bounds what a restore reads: at most
// full-checkpoint-every reads and twice the live state, however long the
// run. Non-keyed snapshots (source offsets, the sink's transactions,
// channel state) are written whole every time.
//
// # Retention (--checkpoints-retained, default 1)
//
// The coordinator keeps the last N completed checkpoints (Flink's
// state.checkpoints.num-retained, default 1) and deletes the snapshots of
// older ones (through the shared registry). The consistency check below
// covers the retained ones, so most tests keep 64; torture draws 1, 2 or
// 64, so retention's deletions are tortured too.
//
// A barrier of an older checkpoint arriving after a newer one on the same
// channel, or of a checkpoint the coordinator aborted, is ignored; a
// newer barrier on a channel an older checkpoint still waits for drops
// the older one at this task (its upstream gave it up).
//
// # Sink (--sink)
//
// 2pc (default; Flink's TwoPhaseCommitSinkFunction): effects go into the
// open transaction; the snapshot for n pre-commits it (a durable pending
// transaction in the external system, a store key) and lists every
// pending transaction; when n completes, every pending transaction up to n
// commits. A commit makes the effects visible and deletes the pending key
// in one Handle, which no crash can split, as a transactional store's
// commit marker does; a restore commits the restored snapshot's pending
// transactions whose keys remain, so none is committed twice or lost. The
// pre-commit writes a 64-byte handle: like Flink's Kafka sink, records
// stream to the external system as they arrive (the sink's per-record
// cost), so their volume is reported (sink_precommit_bytes) but not
// charged to the checkpoint store. Effects become visible about one
// interval after they are produced: that is 2PC's latency cost.
//
// Fencing and order are Kafka's (KIP-98) as Flink's Kafka sink meets them.
// Each sink subtask has one transactional id, whose producer epoch the
// broker keeps (epochKey: the highest present); a transaction records the
// epoch it was opened with, and a commit of an older epoch than the
// broker's is refused (ProducerFencedException), as is one whose record a
// newer attempt committed and deleted: a zombie's late commit does
// nothing (sink_commit_fenced, noted epoch or committed). A restored sink
// first re-commits the restored checkpoint's pending transactions with
// their stored epoch (recoverAndCommit, resumeTransaction), then bumps the
// epoch (initTransactions), fencing every older attempt; the other way
// round fences its own re-commits (ftbench_mutant_epoch_first). The first
// attempt's epoch is 0 and is not written: nothing older exists to fence.
//
// The broker aborts a transaction open (since its first effect) longer than
// the smaller of --txn-timeout (transaction.timeout.ms, 1 h in Flink's
// sink) and --broker-txn-timeout (transaction.max.timeout.ms, 15 min in
// Kafka). A commit or re-commit that finds it aborted loses its effects
// (sink_txn_timed_out, barrier_sink_txns_timed_out), as Flink's sink logs
// and carries on: an outage between a checkpoint's pre-commit and its
// commit (a tolerated store-down, a master outage just after a checkpoint
// completed) longer than the timeout breaks exactly-once, Flink's
// documented pitfall, and the run says so (exit 3). With the defaults a
// simulated outage never gets near it.
//
// plain: effects are committed on arrival. State stays exactly-once (the
// final values are right), but effects committed after the last completed
// checkpoint are committed again after a rollback: at-least-once output,
// the pitfall of lecture 21.7. The system claims at-least-once with it.
//
// # Recovery (--failover, default region)
//
// On a failure notification the coordinator aborts pending checkpoints
// (the running tasks drop their part: alignments are released, a sync
// source resumes, a sink's pre-commit for an aborted checkpoint stays
// pending and commits with the next completed one), restarts tasks
// (ctx.Restart: state, queues and channels are lost; restart costs
// task-restart), waits for failed workers to return and deploys the
// restarted tasks with the last completed checkpoint. Which tasks restart
// is Flink's failover strategy:
//
//   - region (Flink's default since 1.9, RestartPipelinedRegionFailoverStrategy):
//     the pipelined regions holding a task of the failed worker. Every
//     channel is pipelined, so a region is a connected component of the
//     task graph: on grep (forward chains) one source partition's source,
//     filter and sink; on wordcount and bank (all-to-all shuffles) the
//     whole job. The other regions keep running and keep their state; no
//     channel joins them to a restored region, so no record crosses two
//     cuts. Checkpoints wait until the restored region is deployed (all
//     tasks must acknowledge), so a 2PC sink anywhere commits nothing in
//     between.
//   - full (RestartAllFailoverStrategy): every task, a global rollback.
//
// Under both, a worker that hosts no task restarts nothing (Flink fails
// over on task failures only). Each restored task reads its snapshot
// (Store.Get charges store latency and read bandwidth), restores its keyed
// state, commits the sink's pending transactions whose keys remain (the
// completion notice may have died with it; a pre-commit of an aborted
// checkpoint is never committed: its records come again from the rewound
// sources), and processes its channel state before any new input; its
// region's sources rewind to their recorded offsets. A task gets no input
// before it is deployed: what arrives earlier is held and its channel
// paused.
//
// # Master crash (crash@T:master): job-manager high availability
//
// The coordinator dies with the master node; the tasks run on, but no
// checkpoint completes and nothing commits. After the restart delay a new
// coordinator (checkpoint.Coordinator's takeOver) reads the latest
// completed checkpoint's record from the store, as Flink's new JobMaster
// recovers its CompletedCheckpointStore from HA storage, and restarts every
// task from it. A restored 2PC sink commits the checkpoint's pending
// transactions whose keys remain, so a checkpoint whose metadata became
// durable just before the crash commits exactly once even though its
// commit notice died with the old leader (Flink's recoverAndCommit).
// Checkpoint ids are never reused (a leader triggers at most one per
// interval since time 0, and the new one starts above that bound).
//
// # Checkpoint failures (store-down, --checkpoint-timeout, --tolerable-failed-checkpoints)
//
// A write the checkpoint store fails (engine.KindStoreFailed) declines the
// checkpoint it was for: the source or task sends checkpoint.KindDecline and
// the coordinator aborts the checkpoint, as a Flink task reports a failed
// snapshot to the CheckpointCoordinator. The 2PC sink's failed transaction
// record is written again every 100 ms until the store takes it, and no
// checkpoint listing the transaction is acknowledged before its record is
// durable: a restore must find it to commit it, so it is neither lost nor
// committed twice. A failed metadata write aborts the checkpoint too, and a
// checkpoint not complete --checkpoint-timeout (Flink's default 10 min)
// after its trigger expires. Each of these counts as a failed checkpoint
// (Flink's CheckpointFailureManager; aborts by a failover or subsumption
// do not count, a completed checkpoint resets the count): when more than
// --tolerable-failed-checkpoints (default 0, Flink's) fail in a row, the
// job fails over — every task restarts from the last completed checkpoint.
// A higher count keeps the job running on the last completed checkpoint,
// so a later crash replays more.
//
// A trigger that overtakes a source's Deploy (with chaining the
// coordinator's messages overtake a source's queued input, so a trigger
// can pass a Deploy waiting on a paused worker) is declined when the
// Deploy of its attempt arrives (checkpoint.KindNotReady), as a Flink task
// not yet RUNNING declines with
// CHECKPOINT_DECLINED_TASK_NOT_READY: the coordinator aborts the checkpoint
// ("declined: task not ready") without counting it as failed, and the next
// trigger finds the source deployed.
//
// # Metrics (run.json system_metrics)
//
// From the run's events and counters: checkpoints_triggered, _completed,
// _failed (and _failed_by_reason: failure, timeout, subsumed, declined,
// declined: task not ready, metadata write failed); checkpoints_failed_store (declined after a failed
// snapshot or transaction write, or a failed metadata write),
// checkpoints_expired (timed out), tolerable_failed_checkpoints and
// failovers_on_checkpoint_failure (job failovers because more checkpoints
// failed in a row than tolerated);
// checkpoint_duration_ms (trigger to completion), checkpoint_state_bytes
// and checkpoint_channel_state_bytes per completed checkpoint;
// alignment_ms (first to last barrier at a task with several inputs, per
// task and checkpoint); alignment_buffered_records (records held in paused
// channels at the snapshot: total and per-alignment max) and
// alignment_buffered_bytes_max; unaligned_switches; sink_precommit_bytes;
// failover (the strategy); restarts (failovers that restarted tasks),
// global_restarts (those that restarted every task) and tasks_restarted;
// leader_takeovers (new coordinators after a master crash);
// checkpoint_start_delay_ms (Flink's checkpointStartDelayNanos: for every
// task, sources included, and checkpoint, the time from the coordinator's
// trigger to the checkpoint's start there — a source's trigger, a task's
// first barrier; under backpressure an aligned barrier waits behind the
// backlog, an unaligned one overtakes it); restore_ms and restore_bytes (per
// task restore: time to read its snapshot, its whole chain when incremental,
// and the bytes read); checkpoint_restore_size_bytes (per completed
// checkpoint: what restoring every task from it would read — equal to
// checkpoint_state_bytes plus channel state for full snapshots, the chains'
// bytes when incremental); incremental; snapshots_retained_max;
// records_replayed (source reads beyond the first reading of each record,
// exact for a drained run); channel_state_records_restored; and a
// per-checkpoint table "checkpoints" (trigger time, status, duration, sizes,
// alignment max, start delay p50 and max, buffered records, restore size).
// Distributions are {n, p50, p99, max, mean}.
//
// # Snapshot consistency
//
// Summarize checks every completed checkpoint still in the store
// (check.CheckSnapshotsFrom): the persisted keyed state plus channel state,
// drained through the plan, must equal the workload oracle's state at the
// recorded source offsets, and channel state must lie inside those offsets.
// The oracle starts from the harness oracle pass's milestone nearest below
// a checkpoint (RunInfo.Milestones) and is fed on in checkpoint order, so
// the check costs at most one pass over the log, and a checkpoint at the
// end of the log none. An incremental snapshot is checked as the state
// its chain gives. The check covers the retained checkpoints
// (--checkpoints-retained: 1 by default, 64 covers about a minute at the
// default interval): those the last completed-checkpoint record lists,
// which must have every snapshot, plus any discarded one whose files are
// all still in the store. Older ones are counted as snapshots_not_retained,
// including a discarded checkpoint with files left behind (a master crash
// loses the old leader's pending deletions; the new leader deletes only
// what its retained checkpoints stop referencing, so part of such a
// checkpoint can stay). Results: snapshots_checked,
// snapshots_consistent, snapshots_inconsistent, snapshot_problems and
// safety_violations (= inconsistent; > 0 makes the run exit 3).
package barrier
