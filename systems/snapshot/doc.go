// Package snapshot is Chandy-Lamport distributed snapshots (lecture 12 of
// the notes, docs/architecture.md "Sources"), with the lecture's naive
// counter-example and the Lai-Yang colouring and Mattern vector-clock
// algorithms, in two settings.
//
// # bank-p2p: the textbook algorithm
//
// On a peer-to-peer workload (workloads.PeerToPeer: bank-p2p) the system
// deploys N processes joined by the workload's one-way channels (its
// Topology: full, ring, star or random, always strongly connected).
// Transfers, markers and done messages travel only on those channels;
// reports and Mattern's coordination messages go straight to their
// process. Process p owns account p and sends
// the transfers of source partition p as they are appended: it debits the
// amount and commits the debit effect, then sends the transfer; the payee
// credits it on receipt and commits the credit effect. Snapshot j starts at
// a scheduled time (--snapshots S spreads S of them evenly over the input;
// otherwise one every --snapshot-interval) at process (j-1) mod N, so any
// process initiates and the id j encodes the lecture's (initiator, sequence)
// pair. Ids also tell concurrent snapshots apart: every process keeps one
// cut per snapshot in progress.
//
//   - cl (default), algorithm 12.3.1 as written: the initiator records its
//     state, opens every input channel and sends a marker on every output
//     channel (one marker per channel per snapshot, on any topology); on its first marker a process records its state atomically
//     (inside one Handle: nothing interleaves), marks that channel empty,
//     records every other input, and sends markers on every output before
//     any other message; a later marker closes its channel. A process whose
//     channels are all closed reports its state and channel states to the
//     initiator (12.3.3, mechanism A), which assembles the global snapshot
//     and persists it (12.3.2) under "snapshot/<id>".
//   - naive (12.2.3): each process records its state at its own random time
//     in [t_j, t_j + spacing) drawn from ctx.Rand, sends no markers and
//     records no channel state. It claims nothing.
//   - lai-yang (12.2.7): see laiyang.go. A colour piggybacked on every
//     transfer replaces the markers' position in the channel; done
//     messages carrying white-message counts end each channel's recording.
//   - mattern (12.2.7): see mattern.go. Every transfer carries its
//     sender's vector clock; the initiator announces a cut vector (frozen
//     until all acknowledge), then forces every clock past it; a process
//     records at the event where its clock first reaches the cut vector,
//     and transfers whose clock has not reached it, received after the
//     receiver recorded, are channel state. Done messages as in lai-yang.
//
// Channels are FIFO unless a reorder fault makes them otherwise. To audit a
// snapshot against the truth rather than the algorithm's opinion, every
// transfer carries its number on its channel, every process records with
// its state how many it had sent on each channel and which numbers it had
// received, and markers and done messages carry how many transfers
// preceded them. The algorithms never read these numbers (Lai-Yang's counts
// excepted, which are its own). Receivers count messages that arrive out of
// sending order: the run's observed FIFO violations. For cl, when a marker
// arrives its receiver also notes, in its report, which transfers crossed
// that snapshot's marker on that channel (Crossing): sent after it but
// received before it, or sent before it but received after it.
//
// Every persisted snapshot is audited after the run (check.AuditSnapshot):
// conservation (recorded balances + money in recorded channels = N *
// InitialBalance), orphans (received inside the receiver's cut, sent
// outside the sender's), late channel-state messages (recorded but sent
// outside the sender's cut), missing in-flight messages (sent inside,
// received outside, not recorded) and double counting.
//
// # Claims
//
// The delivery claim (Claim) is exactly-once for cl, lai-yang and mattern — true on
// bank-p2p, which has no failures (the harness refuses crash faults there:
// the algorithm's system model has none) — and none for naive.
//
// The consistency claim is checked by Summarize: lai-yang and mattern claim
// consistent snapshots on any channels; cl claims them on FIFO channels; naive claims
// nothing. An inconsistent snapshot where the variant claims consistency
// counts in safety_violations (exit 3), as does a scheduled snapshot that
// never completed (termination needs no FIFO). Under a reorder fault cl's
// assumption can be false, and then an inconsistent snapshot is not a bug
// but the expected break that the lecture's counter-example predicts. The
// excuse is judged per snapshot, from the receivers' ground truth: an
// inconsistent cl snapshot is excused only when a transfer crossed one of
// its own markers, the one way non-FIFO delivery can break it (with no
// crossing, every channel behaved as FIFO for that snapshot and the
// lecture's proof applies). Excused snapshots are counted in
// expected_breaks, listed with their crossings in excused_snapshots and
// explained in expected_break; any other inconsistent cl snapshot counts in
// unexcused_breaks and safety_violations, however much else the run
// reordered. So a reorder fault that crossed no marker, or crossed the
// markers of other snapshots only, leaves the claim in force.
//
// The ftbench_mutant_cl_drop_channel_state build tag makes a deliberately
// broken cl (every fifth snapshot drops its channel state) that these
// checks must catch; see mutant_cl_drop_channel_state_off.go.
//
// # Dataflows: a checkpointing scheme
//
// On a dataflow workload (wordcount, grep, bank) only cl applies (naive,
// lai-yang and mattern are refused: the first is the lecture's
// counter-example and the others its fixes for non-FIFO channels, not
// recovery schemes). It is a
// fourth coordinated-checkpoint scheme beside aligned and unaligned
// barriers, triggered every --checkpoint-interval (barrier's flag, same
// meaning and default, so sweeps cover both), built on systems/internal/checkpoint (coordinator, global
// rollback, participants): see dag.go and sink.go. Unlike an aligned
// barrier it never blocks an input; unlike an unaligned one its channel
// state is what arrives after the cut, not what the marker overtook.
// Restore re-injects that channel state. The sink commits a transaction of
// effects per checkpoint when the checkpoint completes, idempotently, so
// the run is exactly-once under crash faults. One checkpoint is in flight
// at a time. Every completed checkpoint is kept in the store and audited
// after the run: restoring it and draining its channel state through the
// plan must give the oracle's keyed state at its recorded source offsets,
// and for workloads.Ledger workloads (bank) the money must add up to zero.
//
// # Checkpoint-storage faults (dataflows)
//
// A task whose snapshot write the store fails (engine.KindStoreFailed)
// declines the checkpoint (checkpoint.Participant.Decline) and the
// coordinator aborts it: the job keeps running on the last completed one,
// as Flink's does with tolerable failed checkpoints. A sink whose
// transaction record the store fails writes it again after 100 ms, and its
// acknowledgement of any checkpoint that lists the transaction waits until
// the record is durable: a restore takes a listed transaction whose record
// is missing for already committed, so that record must exist before the
// checkpoint can complete.
//
// On bank-p2p the collector of a snapshot whose write the store fails
// writes it again every 100 ms until it is durable (snapshot_write_failed
// events), so an outage delays snapshots but loses none.
//
// # system_metrics
//
// Both modes: snapshots_taken, snapshots_consistent, snapshots_inconsistent,
// consistency_claim, duration_ms, state_bytes, channel_state_bytes (n, mean,
// p50, max per snapshot), markers, marker_bytes, markers_per_snapshot
// (control messages on the channels: markers, done messages), reports,
// report_bytes, safety_violations, inconsistent_examples.
// bank-p2p adds snapshots_requested, snapshots_incomplete,
// snapshots_not_durable, fifo_violations_observed, conservation {violated,
// surplus, deficit, max_surplus, max_deficit}, orphan_messages,
// snapshots_with_orphans, late_channel_messages, missing_in_flight,
// double_counted, channel_state_messages, data_messages,
// coordination_messages and coordination_bytes (mattern's announcements,
// acks and forces), coordination_messages_per_snapshot, piggyback_bytes
// (colours, vector clocks on transfers), extra_bytes_per_snapshot (wire
// bytes of markers, done and coordination messages per snapshot),
// extra_bytes_per_message (piggyback bytes per transfer), and for cl
// snapshots_with_marker_crossings (snapshots, consistent or not, whose own
// markers a transfer crossed), expected_breaks (inconsistent snapshots
// excused by a marker crossing on their own channels), unexcused_breaks
// (the other inconsistent ones; safety violations), and when non-zero
// excused_snapshots (id, crossings {from, to, overtook_marker,
// overtaken_by_marker}, why; at most 100 listed), expected_break and
// unexcused_snapshots (ids, at most 100). Each of inconsistent_examples
// says its excuse (or "none"). Dataflows add snapshots_missing, audit,
// wrong_keys_in_snapshots, rollbacks, leader_takeovers (new coordinators
// after a master crash, each restoring the job), reinjected_records,
// checkpoints_aborted, and conservation {violated} for bank. Dataflows
// have no excuse: their markers carry no transfer counts, torture never
// reorders them (cl relies on FIFO), and every inconsistent checkpoint
// counts in safety_violations.
package snapshot
