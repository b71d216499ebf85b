// Package kstreams is Kafka Streams: the fourth column of the lecture's
// comparison (§21.2.7). It recovers unlike the others — there is no global
// rollback: each task rebuilds its local state from a compacted changelog
// topic, the shuffle goes through a durable repartition topic, and
// exactly-once comes from Kafka transactions that put the output, the
// changelog writes and the consumed offsets into one atomic commit. The
// rules follow Kafka 3.x (docs/kstreams.md says which KIP and version each
// part follows, and what is simplified).
//
// # Topology
//
// The plan is cut into sub-topologies at every key change (a stage whose
// input is not Forward reads a repartition topic the previous
// sub-topology writes): wordcount is [source, split] | [count, sink], grep
// one sub-topology, bank [source] | [debit] | [credit, sink]. Every topic
// has --parallelism partitions; a task is (sub-topology, partition), Kafka
// Streams' TaskId "1_3". A task with a keyed stage owns a state store and
// its changelog partition.
//
// # Processes
//
//   - broker (master node): the Kafka cluster. Partition leaders for the
//     repartition and changelog topics (an append is a durable store write,
//     acks=all, before it is acknowledged or readable), the group
//     coordinator (members, generations, the StreamsPartitionAssignor) and
//     the transaction coordinator (producer epochs, commit and abort
//     markers). The logs, offsets and coordinator state are replicated
//     (cluster), so a master crash is their failover: the new broker
//     process finds them, the clients re-send what was in flight
//     (kBrokerUp).
//   - thread/I.T (on instance I's worker): StreamThread T of KafkaStreams
//     instance I. One consumer group member, one producer, the tasks
//     assigned to it. Threads never talk to each other: records between
//     sub-topologies are produced to the broker and fetched from it, so
//     no credit-based backpressure crosses a repartition topic — lag
//     accumulates in the broker, bounded on the consumer side by
//     max.poll.records (1000).
//
// # A thread's loop (StreamThread.runOnce)
//
// It polls the source partitions of its running source tasks (the
// workload log is the source topic) and long-poll fetches its running
// tasks' repartition partitions (read_committed under EOS: up to the last
// stable offset, skipping aborted records; read_uncommitted otherwise),
// runs each record through its task's processors, and produces what
// leaves the task: repartition records, output records, and state updates,
// which go through the record cache (statestore.cache.max.bytes, folded
// per key; flushed to the changelog at a commit or when full). A batch is
// sent when it holds batch.size bytes or linger.ms (100, Streams' override)
// after its first record, one batch in flight.
//
// # Commit (every commit.interval.ms: 100 ms under EOS, 30 s otherwise)
//
// exactly-once-v2 (KIP-447: one transactional producer per thread, its
// transactional id stable across restarts): flush every cache into the
// producer; TxnOffsetCommit with the consumed offsets and the group
// generation (fenced unless the thread is a member at the current
// generation owning those tasks); flush the producer; EndTxn(commit):
// the coordinator writes PREPARE_COMMIT (durable: the commit is decided),
// then the COMMIT markers on the transaction's partitions (a second
// write), and then its records become readable to read_committed
// consumers, its offsets committed and its output visible, in one step.
// The thread processes nothing from the start of the commit to its end
// (commitTransaction blocks). A thread's first commit comes at a random
// point of its first interval (threads start at different moments). at-least-once: flush, wait for every ack,
// then OffsetCommit: the changelog and the output may run ahead of the
// committed offsets.
//
// # Failures and rebalances
//
// Every thread heartbeats every third of --session-timeout (default: the
// cost model's detect-delay; Kafka's is 45 s, KIP-735); the group
// coordinator removes a member silent that long and the group
// rebalances. The runtime's failure notice marks a crashed worker's
// threads gone too. A thread paused past its session timeout wakes a
// zombie; a removed member's JoinGroup is answered UNKNOWN_MEMBER_ID. Cooperative (KIP-429, default): the
// members rejoin without stopping; a task moving off a live member is
// left out of its assignment, committed by it, closed clean, and given to
// its new owner at the follow-up rebalance the member's rejoin starts
// (handover.go). An orphaned task goes to a thread holding a caught-up
// copy (within acceptable.recovery.lag) or to its balanced target, the
// least-loaded thread of instance partition mod instances. Eager: every
// member commits and revokes every task first, and resumes after the
// assignment. With
// --static-membership (KIP-345) a thread back within the session timeout
// gets its assignment back with no rebalance.
//
// A newly assigned task fetches its committed offset (under EOS with
// require_stable: the answer waits while a transaction that will commit an
// offset for it is undecided), restores its store from the changelog up
// to the last stable offset (from the start when the store was wiped; from
// a standby's or its own consistent position otherwise), then runs. A
// restarted thread calls InitProducerId: its epoch goes up and its
// previous incarnation's open transaction is aborted; a transaction open
// longer than transaction.timeout.ms (10 s under EOS) is aborted and its
// producer fenced. A zombie (a thread cut off or paused past its session
// timeout) is fenced by the generation on its next TxnOffsetCommit: it
// aborts, closes its tasks dirty (a non-transactional store is wiped
// under EOS; a KIP-892 store, --transactional-stores, rolls back its
// uncommitted writes and keeps its committed state), and rejoins.
//
// # Standby replicas (--standby-replicas, num.standby.replicas 0)
//
// A standby task on another instance follows the changelog
// (read_committed), so a failover to it restores only its lag.
//
// # Warm-up replicas and probing rebalances (KIP-441, Kafka 3.x)
//
// The assignor (assign.go) moves a task to its balanced target only when
// the target is caught up: stateless, or holding a copy within
// acceptable.recovery.lag, or the changelog no longer than that.
// Otherwise the caught-up owner keeps it and the target gets a warm-up
// replica (a standby; --max-warmup-replicas, 2, across the group), and
// the coordinator arms a probing rebalance --probing-rebalance-interval
// (10 min, at least 60 s) after the assignment; that rebalance, or any
// earlier one, hands each caught-up warm-up its task. A task moved off a
// live owner records ks_handover when it runs, not restore, so the
// recovery phases keep their meaning.
//
// # Mutants
//
// ftbench_mutant_offsets_outside_txn, _changelog_after_commit,
// _no_fencing, _no_require_stable (mutant_*_off.go say what each breaks).
//
// # Metrics (run.json system_metrics)
//
// transactions_committed, transactions_aborted (and by reason),
// commit_latency_ms (EndTxn's prepare write to the decision),
// fenced_requests, rebalances, rebalance_ms, rebalance_tasks_moved,
// rebalance_tasks_paused (moved tasks plus, under eager, every revoked
// task), rebalance_revoked_pause_ms, static_rejoins, restores, restore_ms,
// changelog_records_restored (and per task), require_stable_waits,
// changelog_records_compacted, broker_failovers, repartition_bytes,
// changelog_bytes, standby_records_applied, warmup_replicas_assigned,
// warmup_tasks_promoted, probing_rebalances, rebalance_tasks_revoked,
// handover_ms. Distributions are
// {n, p50, p99, max, mean} in ms. Recovery phases come from the events
// failure_detected, deploy (an assignment) and restore (a task restored;
// a handover is ks_handover).
package kstreams
