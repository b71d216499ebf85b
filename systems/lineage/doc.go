// Package lineage is Spark Streaming's discretized streams (D-Streams, seed
// 004 sections 21.2.5-21.2.6, algorithms 21.3.2-21.3.3): the stream is cut
// into micro-batches, each batch is a deterministic batch job over RDDs,
// state is an RDD per batch, and fault tolerance is recomputation from
// lineage instead of replication.
//
// # Processes
//
// A driver on the master node (worker -1) and one single-core executor per
// core of every worker (executor x on worker x mod workers, as Spark
// standalone places spark.executor.cores=1 executors): the executors share
// their worker's cores and a worker's crash takes all of them. A master
// crash (crash@T:master) kills the driver, and with it every executor: a
// new driver recovers the job from the store (see Driver recovery). Faults
// name lineage executors as <op>/<executor>, where op is the workload's first
// stateful operator (count for wordcount), so the bare crash and slow
// faults hit executor 0, the home of that operator's partition 0. The
// upstream variant adds an idle standby executor on a spare machine that
// no worker fault crashes (placed on the master node, worker -1, it goes
// and comes back with the driver).
//
// # Batches and lineage
//
// Every --batch-interval (default 1s) the driver cuts a batch: the offset
// range of every source partition appended since the previous cut. The
// ranges are written to durable storage before the batch may run, so any
// batch can be replayed from the log. A batch's lineage comes from the
// workload's plan: narrow dependencies (Forward) are pipelined in one task,
// a wide dependency (the KeyBy's Hash, or Rebalance/Broadcast) ends a Spark
// stage and is a shuffle. For wordcount: stage 0 = source -> split (one map
// task per source partition), stage 1 = count -> sink (one reduce task per
// shuffle partition). Stages after a shuffle have --shuffle-partitions
// partitions (default 8 per worker: more partitions than executors is what
// lets a lost executor's state be recomputed by all of them, and it evens
// out key skew).
//
// Map tasks keep their output (the shuffle files) and push each bucket to
// the executor that will reduce it; a reduce task that runs elsewhere
// (stolen, speculative, recovery) fetches the buckets from the map side.
// A keyed stage keeps a state RDD per batch: state[b] = update(state[b-1],
// batch b), partitioned like the shuffle and cached on the executor that
// computed it. Every --checkpoint-every k batches (default 10, the
// D-Streams paper's WordCount setting of a 10 s checkpoint at 1 s batches)
// the state RDD is written to durable storage asynchronously (the writes
// cost bytes/bandwidth on each executor's storage link); once every
// partition of it is durable and the batch is committed, the driver
// forgets the lineage before it: map outputs are dropped and older
// checkpoints deleted. lineage_length is the number of batches since the
// last complete checkpoint.
//
// # Cost model
//
// Task CPU is the plan's per-record stage costs (the same cost model as
// every system) plus --task-overhead (default 2ms) of executor CPU per task
// for deserialising and launching it: Spark's per-task scheduling and
// launch overhead is a few milliseconds, and it is why the batch interval
// cannot shrink without limit (tasks per batch x overhead). The driver
// spends 50us of CPU per task it schedules. Shuffle data, task results and
// state transfers are messages with their byte sizes. Executors burn a
// task's CPU in 1 ms slices and serve block fetches in between, as Spark's
// network threads serve them while task threads compute.
//
// # Scheduling
//
// Batches run in order, at most two at a time (D-Streams' timestep
// pipelining: the next batch's map tasks read only the replayable input, so
// they run ahead of the current batch's last reduce tasks). The driver's
// scheduler is Spark's FIFO with locality wait 0: recomputations first, then
// map tasks, then the oldest batch's reduce tasks, preferring the executor
// that caches the task's state partition but stealing any ready task when
// an executor is idle. With --speculation, a copy of any task running
// longer than 1.4x its stage's median (after 75% of the stage, and at least
// 100 ms) starts on an idle executor; the first result wins.
//
// # Exactly-once
//
// The sink's effects of a batch are returned to the driver with the result
// tasks, and the batch commits by writing one durable commit record keyed
// by its batch id; its effects become visible together when that record is
// durable, in batch order, and never again, however often the batch's
// partitions are recomputed. Replayable input, deterministic recomputation
// and this atomic, idempotent commit give exactly-once (lecture 21.3.3). End-
// to-end latency is at least the time to the batch's cut plus its
// processing: a record waits for its batch to end.
//
// # Recovery
//
// The driver learns of an executor loss from the runtime's failure
// notification (after the detection delay) or, if the worker restarts
// first, from its fresh executor registering. Everything the executor held
// is gone: its running task is requeued, tasks elsewhere still waiting for
// its blocks fail (Spark's FetchFailed) and are requeued, and every block
// it held since the last checkpoint is recomputed from lineage. A lost map
// output of a stateless stage is one task for its batch reading only its
// own parent partition (for stage 0, only its own source partition's
// offsets). A lost state partition is one chain task from the checkpoint to
// the lost version, pipelining the batches as Spark pipelines the narrow
// dependency state[j] -> state[j-1]; it does not re-run the output, whose
// batches are committed.
//
// Variant parallel (default): recomputation tasks go to every live
// executor, including the restarted one, so the lost work is shared by N
// nodes. Variant upstream: the standby takes over the failed executor's
// partitions, replays all the lost work serially, then carries on with
// their new batches (the upstream-backup baseline); tasks are pinned to
// their owners. The D-Streams model predicts recovery times of
// t_up = λ/(1-λ) and t_par ≈ λ/(N(1-λ)) in units of the time the lost work
// took; docs/lineage.md measures both.
//
// # Driver recovery (crash@T:master)
//
// Spark Streaming's driver recovery (StreamingContext.getOrCreate from the
// checkpoint directory, JobGenerator.restart): the driver's loss takes its
// executors with it, and a new driver recovers from its metadata checkpoint
// (lineage/meta: the last complete state checkpoint) and its write-ahead
// log of batch offsets; new executors start a task-restart delay after it
// (the old ones died with the driver: engine.ProcSpec.MasterBound). A batch whose log record is still there is
// re-run and committed: the record is deleted in the step that makes the
// batch's output visible, so it marks exactly the batches whose output is
// not visible. A batch with only its commit record is committed; its
// state is recomputed from the checkpoint through lineage, by the same
// recovery tasks as after an executor loss (recovery_start and
// recovery_recomputed with id -1). Cuts missed while the driver was down
// come at once, as Spark generates the batches of the down time on
// restart. Old checkpoint files and commit records are deleted only once
// a newer metadata record is durable (takeover.go).
//
// # Checkpoint-storage faults
//
// Every durable write (the driver's batch log and commit records, the
// executors' state checkpoints) is kept until the store acknowledges it and
// written again every 100 ms while the store fails it (retry.go): batches
// wait for their log and commit records, so an outage delays output but
// loses nothing. Spark would fail the job after spark.task.maxFailures
// failed attempts; that limit is not modelled.
//
// # Metrics
//
// Summarize reports batches, processing time and scheduling delay against
// the interval, lineage length, checkpoint bytes, partitions and records
// recomputed, speculative tasks, the steady executor load λ and, for each
// crash, the lost work, the time to recompute it and the time until the
// batch backlog is gone (see recoveryMetrics).
package lineage
