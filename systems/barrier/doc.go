// Package barrier is Flink-style asynchronous barrier snapshots (seed 004,
// 21.2.7, algorithm 21.3.4, 21.5): a checkpoint coordinator, barriers that
// carry the checkpoint id, aligned and unaligned barrier handling, a
// two-phase-commit sink, and global rollback on failure. It claims
// exactly-once with the 2PC sink and at-least-once with the plain sink.
//
// # Processes
//
// The plan compiles as for every DAG system (stream.Build): source/i,
// then every stage's instance i on worker i mod workers, plus the
// coordinator (systems/internal/checkpoint) on the master node. Every
// source and task must acknowledge a checkpoint; only sources get the
// trigger.
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
//     unaligned trace test shows it on the seed's input). Like Flink, it
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
// covers the retained ones, so tests and torture campaigns keep 64.
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
// plain: effects are committed on arrival. State stays exactly-once (the
// final values are right), but effects committed after the last completed
// checkpoint are committed again after a rollback: at-least-once output,
// the pitfall of seed 21.7. The system claims at-least-once with it.
//
// # Recovery
//
// The coordinator's global rollback: on a failure notification it aborts
// pending checkpoints, restarts every task (ctx.Restart: state, queues and
// channels are lost; restart costs task-restart), waits for failed workers
// to return and deploys every task with the last completed checkpoint.
// Each task reads its snapshot (Store.Get charges store latency and read
// bandwidth), restores its keyed state, commits the sink's pending
// transactions, and processes its channel state before any new input;
// sources resume at their recorded offsets. A task gets no input before it
// is deployed: what arrives earlier is held and its channel paused.
//
// # Metrics (run.json system_metrics)
//
// From the run's events and counters: checkpoints_triggered, _completed,
// _failed (and _failed_by_reason: failure, timeout, subsumed);
// checkpoint_duration_ms (trigger to completion), checkpoint_state_bytes
// and checkpoint_channel_state_bytes per completed checkpoint;
// alignment_ms (first to last barrier at a task with several inputs, per
// task and checkpoint); alignment_buffered_records (records held in paused
// channels at the snapshot: total and per-alignment max) and
// alignment_buffered_bytes_max; unaligned_switches; sink_precommit_bytes;
// global_restarts; restore_ms and restore_bytes (per task restore: time to
// read its snapshot, its whole chain when incremental, and the bytes read);
// checkpoint_restore_size_bytes (per completed checkpoint: what restoring
// every task from it would read — equal to checkpoint_state_bytes plus
// channel state for full snapshots, the chains' bytes when incremental);
// incremental; snapshots_retained_max; records_replayed
// (source reads beyond the first reading of each record, exact for a
// drained run); channel_state_records_restored; and a per-checkpoint table
// "checkpoints" (trigger time, status, duration, sizes, alignment max,
// buffered records, restore size). Distributions are {n, p50, p99, max, mean}.
//
// # Snapshot consistency
//
// Summarize checks every completed checkpoint still in the store
// (check.CheckSnapshots): the persisted keyed state plus channel state,
// drained through the plan, must equal the workload oracle's state at the
// recorded source offsets, and channel state must lie inside those offsets.
// The oracle is fed incrementally in checkpoint order, so the check costs
// one pass over the log. An incremental snapshot is checked as the state
// its chain gives. The check covers the retained checkpoints
// (--checkpoints-retained: 1 by default, 64 covers about a minute at the
// default interval); older ones are counted as snapshots_not_retained. Results: snapshots_checked,
// snapshots_consistent, snapshots_inconsistent, snapshot_problems and
// safety_violations (= inconsistent; > 0 makes the run exit 3).
package barrier
