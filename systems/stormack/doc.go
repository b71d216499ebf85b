// Package stormack is Apache Storm's reliability mechanism (lecture 21,
// sections 21.2.3-21.2.4 and algorithm 21.3.1): XOR acking with anchoring,
// acker tasks and timeout replay, which gives at-least-once delivery.
//
// Topology. The plan compiles to spout tasks (one per source partition,
// reading the replayable log), bolts (the plan's stages) and a sink, plus
// acker tasks. A keyed stage that directly feeds the sink is fused into it:
// the sink applies the stage's Update to an external store and commits the
// result (a Storm word count writing to Redis). Plain Storm has no managed
// state, so that store is the only state that outlives a crash, and a
// replayed tuple is applied again: replays show as duplicates and
// overcounts. The store lives off the workers (like the source log), so a
// sink crash does not reset it. Other keyed stages would run as bolts whose
// in-memory state a crash loses.
//
// The tuple message ids, the anchoring collector, the ack stream and the
// acker task are systems/internal/storm, which trident shares.
//
// Protocol (Storm's, not a simplification):
//   - Every tuple has a 64-bit random id per tree it belongs to (its
//     MessageId), drawn from the process RNG; the id map travels with the
//     tuple and costs 4+16n bytes on the wire.
//   - A spout emits one spout tuple per record with a fresh root id, keeps
//     it pending by root id, and sends the acker an init carrying the XOR of
//     the ids it emitted.
//   - A bolt anchors every output on its input: a fresh edge id is XORed
//     into the output's id (for every root of the input, so multi-anchoring
//     puts the output in several trees) and into the input's ackVal. The
//     workloads' stages are record-at-a-time, so their outputs have one
//     anchor each; the collector takes several (a join), see acker_test.go. After
//     its stage function returns it acks the input once: one message per
//     root with id XOR ackVal, so a child's "create" rides on its parent's
//     ack (Storm's BoltOutputCollectorImpl) instead of a message of its own.
//     The lecture's algorithm sends create and ack separately; the acker
//     treats both as "XOR into the checksum", so the lecture's worked example
//     replays unchanged on it (xor_test.go). Acking or failing a tuple
//     twice panics: it is a bug that leaves the checksum non-zero.
//   - The sink acks after applying and committing. fail sends a fail to the
//     acker, which fails the tree at the spout at once.
//   - The acker (root id mod ackers) keeps one entry per tree — checksum,
//     owning spout, failed flag: 24 bytes — in a rotating map of three
//     buckets rotated every ack-timeout (Storm's Acker; its bucket count is
//     2 or 3 depending on the version). A tree completes when its checksum
//     is 0 after the init arrived; the spout is told with a message.
//   - The spout times a tree out after ack-timeout (exact deadlines; Storm's
//     rotating buckets give between one and two timeouts), fails it, and
//     replays the record re-read from the log with new ids. Replays go
//     before new records, and a spout never has more than max-spout-pending
//     trees pending: that is Storm's only flow control for the ack stream.
//
// Costs. Ack-stream messages (init, ack, fail, and the acker's replies) are
// control messages: Storm's system streams bypass backpressure, so they use
// no channel credit, but the runtime charges each its send CPU, bytes and
// network buffer. Each ack-stream message a task handles (at the acker:
// init, ack, fail; at the spout: a reply) is one keyed read-modify-write of
// a map keyed by root id, charged as StateCPU, the cost model's price of a
// keyed state update per record. The spout's pending-map insert is part of
// emitting the record and is covered by SourceRecord. No other overhead is
// added: the acking cost in throughput is those messages and updates.
// Between executors of one worker, tuples and acks go through an in-process
// queue unserialized (engine.Deployment.LocalTransfer: Storm's
// ExecutorTransfer serializes only what leaves the worker), so such a send
// costs SendCPU alone and no network; every ftbench worker is one Storm
// worker process.
//
// Crashes. A crash loses the tasks' memory: bolts' in-flight tuples,
// ackers' checksums, spouts' pending trees. Those trees cannot complete, so
// they time out at their spouts and are replayed: every record is in only
// about ack-timeout after a crash. The system therefore asks the harness
// (DrainExtra) to drain ack-timeout longer than its default, or a run would
// report as lost what is merely not yet replayed. A restarted spout resumes
// from the lowest offset it had not seen acked, which it persists in
// ctx.Store() every offset-commit-interval, counting it only once the write
// is durable (the Kafka spout commits only acked offsets): a crash re-emits
// what came after it (duplicates) and skips nothing.
//
// Flags:
//   - ack-timeout (30s, Storm's topology.message.timeout.secs).
//   - max-spout-pending (5000 per spout task). Storm leaves it unset, but
//     then the ack stream, which bypasses backpressure, has no flow control
//     at all: an acker-bound topology queues acks without limit until trees
//     time out. The window must cover rate x complete latency (at the
//     default wordcount rate a spout runs ~36k trees/s at ~25 ms, ~900
//     pending) plus the trees a crash leaves stuck until their timeout:
//     with 1000, the default crash run loses a quarter of its throughput to
//     stuck slots for the whole 30 s; 5000 leaves that headroom.
//   - ackers ("workers": one per worker, Storm's default when
//     topology.acker.executors is unset; acker i runs on worker i mod
//     workers; a tree's acker is its root id mod ackers). 0 turns acking
//     off, see below.
//   - offset-commit-interval (1s; the Kafka spout's default is 30 s, which
//     would make a spout crash re-read up to 30 s of input).
//   - max-poll-records (500, Kafka's max.poll.records): with acking off,
//     the most records a spout polls, commits and emits at once.
//
// Acking off (--ackers 0, topology.acker.executors=0). Storm then tracks no
// tuple trees: a spout's ack() is called as soon as it emits, tuples carry
// an empty message id (4 bytes), bolts send nothing to an acker, and
// nothing is ever failed, timed out or replayed; ack-timeout and
// max-spout-pending have no effect (Storm applies max.spout.pending only to
// tracked tuples). The spouts read with storm-kafka-client's AT_MOST_ONCE
// processing guarantee (KafkaSpoutConfig.ProcessingGuarantee): each polled
// batch's offset is committed synchronously, right after the poll and
// before any of its records is emitted, and the commit interval is ignored.
// Here: a spout takes what the log has appended, up to max-poll-records,
// writes the offset after it to ctx.Store(), and emits the batch (32
// records per poll timer, so backpressure can stop it) only once the write
// is durable; it polls again when the batch is out. A restarted spout
// resumes at its last durable commit, so no record is emitted twice, and a
// crash loses what was in flight and what the committed batch had not yet
// sent: the claim is at most once (still monotonic where the keyed state is
// the external store). A periodic commit (offset-commit-interval) would
// break it, re-emitting after a restart what was sent since the last
// commit (TestAcksOffPeriodicCommitDuplicates). The cost is one store
// write, store-latency long, per batch, during which the spout emits
// nothing — commitSync blocks the spout's thread — so with small batches
// the commits, not the CPU, bound a spout's rate (docs/reproductions.md).
// The harness drains no longer than its default (DrainExtra is 0), and
// system_metrics add acking "off" and offset_commits.
//
// Metrics (counters and system_metrics): trees completed, failed by
// timeout, failed explicitly; tuples replayed; complete latency (mean and
// max, Storm's emit-to-completion time); ack messages and bytes (every
// init, ack, fail and acker reply); acker state: 24 bytes per tree and the
// peak number of trees per acker (recorded within 1/16); spout pending
// peak. Spurious replays count completions that reach a spout for a root it
// had already timed out: every tuple of that tree was processed, only too
// late. It is a lower bound: the acker forgets a tree two to three timeouts
// after its last update (as Storm's does), and a completion after that is
// invisible. In a run without crashes every timeout is spurious.
package stormack
