package stormack

import (
	"strconv"

	"ftbench/engine"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// unackedSpout is the Kafka spout of a topology with acking off (Storm's
// topology.acker.executors=0) reading with storm-kafka-client's
// AT_MOST_ONCE processing guarantee. With no ackers Storm tracks no tuple
// trees: the spout's ack() is called as soon as a tuple is emitted, so
// nothing is ever failed or replayed. AT_MOST_ONCE then commits the offset
// of every polled batch synchronously, right after the poll and before any
// of its records is emitted; the commit interval is ignored.
//
// Invariant: every offset this spout has emitted lies below the durable
// committed offset (reader.Next <= emitTo == the last durable commit). A
// restarted spout resumes at that offset, so it never emits a record a
// second time: a crash loses the committed batch's unsent records and every
// tuple in flight, and duplicates nothing. Committing periodically instead
// (the acking spout's offset-commit-interval) would break this: a restart
// would re-emit what was sent after the last commit.
type unackedSpout struct {
	t        *topo
	part     int32
	reader   stream.SourceReader
	router   *stream.Router
	storeKey string
	scratch  []engine.ProcID

	emitTo     int64 // end of the committed batch being emitted
	committing bool  // a batch's offset commit is not yet durable
	polling    bool  // a poll timer is set
}

// emitChunk is how many records one poll timer emits, so backpressure can
// stop the spout inside a batch (as the acking spout's polls of 32).
const emitChunk = 32

// commitRetryDelay is how long an unacked spout waits before committing
// again after the store failed its offset commit.
const commitRetryDelay = 100 * engine.Millisecond

func newUnackedSpout(t *topo, i int) *unackedSpout {
	return &unackedSpout{
		t: t, part: int32(i),
		reader:   stream.SourceReader{W: t.job.Workload, Log: t.job.Log, Part: int32(i)},
		router:   t.g.Router(-1, i),
		storeKey: "stormack/spout-offset/" + strconv.Itoa(i),
	}
}

func (s *unackedSpout) Init(ctx engine.Ctx) {
	if v, ok := ctx.Store().Get(s.storeKey); ok {
		s.emitTo = v.(int64)
		ctx.Record(engine.Event{Kind: evSpoutResume, Value: s.emitTo, Note: "acking=off"})
		ctx.Count(cSpoutRestarts, 1)
	}
	s.reader.Next = s.emitTo
	s.kick(ctx, 0)
	if s.t.periodicCommit {
		ctx.After(s.t.commitEvery, tickCommit)
	}
}

func (s *unackedSpout) kick(ctx engine.Ctx, after engine.Time) {
	if !s.polling {
		s.polling = true
		ctx.After(after, tickPoll)
	}
}

// Timer is the spout's nextTuple: emit the rest of the committed batch, or,
// once it is all sent, poll the next one and commit it.
func (s *unackedSpout) Timer(ctx engine.Ctx, id int64) {
	if id == tickCommit { // test hook only: commit what was emitted so far
		ctx.Store().Put(s.storeKey, s.reader.Next, 8, s.reader.Next)
		ctx.After(s.t.commitEvery, tickCommit)
		return
	}
	s.polling = false
	if down, until := workloads.SourceDown(ctx, s.t.job.Log, s.reader.Part); down {
		// source-down: nothing can be fetched, neither the committed
		// batch's records nor a new batch, until the partition is back.
		s.kick(ctx, until-ctx.Now())
		return
	}
	if s.reader.Next < s.emitTo {
		s.reader.Batch = int(min(emitChunk, s.emitTo-s.reader.Next))
		s.reader.Poll(ctx, func(m engine.Msg) { s.emit(ctx, m) })
		s.kick(ctx, 0)
		return
	}
	if s.committing {
		return // the store's completion kicks the spout
	}
	s.pollBatch(ctx)
}

// pollBatch takes what the log has appended, up to max-poll-records, and
// commits the offset after it (commitSync): nothing of it is emitted until
// that write is durable.
func (s *unackedSpout) pollBatch(ctx engine.Ctx) {
	next, log := s.reader.Next, s.t.job.Log
	if next >= log.Total() {
		return // the log is exhausted
	}
	n := min(int64(s.t.maxPoll), log.Appended(ctx.Now())-next)
	if n <= 0 {
		s.kick(ctx, max(ctx.Cost().PollInterval, log.BornAt(next)-ctx.Now()))
		return
	}
	if s.t.periodicCommit {
		// Test hook: emit at once; commits come from tickCommit.
		s.emitTo = next + n
		s.kick(ctx, 0)
		return
	}
	s.committing = true
	ctx.Store().Put(s.storeKey, next+n, 8, next+n)
	ctx.Count(cOffsetCommits, 1)
}

func (s *unackedSpout) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	if m.Kind == engine.KindStoreFailed && s.committing {
		// commitSync failed (the store is down): nothing of the batch
		// went out; poll and commit again after a back-off, as Kafka's
		// consumer retries a failed synchronous commit.
		s.committing = false
		s.kick(ctx, commitRetryDelay)
		return
	}
	if m.Kind != engine.KindStoreDone {
		return
	}
	// The commit is durable: the batch may go out now.
	s.committing = false
	s.emitTo = max(s.emitTo, m.Val)
	s.kick(ctx, 0)
}

// emit sends one untracked tuple per receiving task: its message id is
// empty (no anchors), so no bolt downstream sends anything to an acker.
func (s *unackedSpout) emit(ctx engine.Ctx, m engine.Msg) {
	for _, to := range s.t.targets(-1, s.router, &m, &s.scratch) {
		ctx.Send(to, storm.WithID(m, nil))
		ctx.Count(cTuplesEmitted, 1)
	}
}
