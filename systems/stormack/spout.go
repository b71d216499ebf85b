package stormack

import (
	"strconv"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// tree is a spout tuple the spout is waiting on: the log offset to replay
// and when it was emitted (for Storm's "complete latency").
type tree struct {
	off     int64
	emitted engine.Time
}

// deadlineEntry is one emitted root in emission order. Deadlines are the
// emission time plus a constant, so the queue is sorted and the spout finds
// expired trees at its head; completed roots are skipped lazily.
type deadlineEntry struct {
	root uint64
	at   engine.Time
}

// spout reads one partition of the replayable source log (a Kafka spout).
// Every record becomes one spout tuple with a fresh random root id; the
// spout keeps the tree pending until the acker reports it complete or
// failed, or until ack-timeout passes, and replays the record (re-read from
// the log, new ids) on fail or timeout.
type spout struct {
	t      *topo
	part   int32
	self   int
	reader stream.SourceReader
	router *stream.Router

	pending map[uint64]tree
	queue   []deadlineEntry // pending roots by deadline
	qHead   int
	timerAt engine.Time // deadline the timeout timer is set for; 0 = none

	// Roots that timed out, kept until the acker would have forgotten them,
	// so a late completion can be recognised as a spurious replay.
	timedOut map[uint64]struct{}
	toQueue  []deadlineEntry
	toHead   int

	replays []int64 // offsets waiting to be re-emitted, oldest first
	polling bool    // a poll timer is set
	// timeoutSeen: this incarnation recorded a timeout replay, the last at
	// timeoutRecorded (one event per ack timeout at most, for torture's
	// coverage and milestones, not one per tree).
	timeoutSeen     bool
	timeoutRecorded engine.Time
	peak            int
	slowest         engine.Time // longest complete latency recorded as an event

	// Offsets: acked[i] says whether offset base+i is done. The lowest
	// offset not yet acked is what a restarted spout resumes from.
	base      int64
	acked     []bool
	committed int64 // the durable resume offset
	writing   bool
	// replayLow is the lowest offset queued for replay since the last
	// commit that moved past one (-1: none); pastReplay says whether the
	// commit being written moves past it (a milestone: the spout's
	// progress passes tuples that failed).
	replayLow  int64
	pastReplay bool
	storeKey   string
	scratch    []engine.ProcID
}

const (
	tickPoll = iota + 1
	tickTimeout
	tickCommit
)

func newSpout(t *topo, i int) *spout {
	return &spout{
		t: t, part: int32(i), self: i,
		reader:    stream.SourceReader{W: t.job.Workload, Log: t.job.Log, Part: int32(i)},
		router:    t.g.Router(-1, i),
		pending:   map[uint64]tree{},
		timedOut:  map[uint64]struct{}{},
		storeKey:  "stormack/spout-offset/" + strconv.Itoa(i),
		replayLow: -1,
	}
}

func (s *spout) Init(ctx engine.Ctx) {
	// Resume from the lowest offset not known to be acked: records after it
	// may be emitted again (duplicates), none before it is skipped (no loss).
	if v, ok := ctx.Store().Get(s.storeKey); ok {
		s.committed = v.(int64)
		ctx.Record(engine.Event{Kind: evSpoutResume, Value: s.committed})
		ctx.Count(cSpoutRestarts, 1)
	}
	s.reader.Next, s.base = s.committed, s.committed
	s.kick(ctx)
	ctx.After(s.t.commitEvery, tickCommit)
}

func (s *spout) kick(ctx engine.Ctx) {
	if !s.polling {
		s.polling = true
		ctx.After(0, tickPoll)
	}
}

func (s *spout) Timer(ctx engine.Ctx, id int64) {
	switch id {
	case tickPoll:
		s.polling = false
		s.poll(ctx)
	case tickTimeout:
		s.timerAt = 0
		s.expire(ctx)
		s.armTimeout(ctx)
	case tickCommit:
		s.commit(ctx)
		ctx.After(s.t.commitEvery, tickCommit)
	}
}

// poll emits waiting replays first (as Storm's KafkaSpout retries before
// new records), then new records, never exceeding max-spout-pending.
//
// While the partition is down (source-down) the spout fetches nothing, not
// even its replays (Storm's KafkaSpout re-fetches a failed tuple by seeking
// back), and polls again when it is back.
func (s *spout) poll(ctx engine.Ctx) {
	if down, until := workloads.SourceDown(ctx, s.t.job.Log, s.part); down {
		s.polling = true
		ctx.After(until-ctx.Now(), tickPoll)
		return
	}
	for len(s.replays) > 0 && s.room() > 0 {
		off := s.replays[0]
		s.replays = s.replays[1:]
		m := s.t.job.Workload.Record(s.part, off)
		m.Born = s.t.job.Log.BornAt(off)
		ctx.Work(ctx.Cost().SourceRecord)
		ctx.Count(cReplayed, 1)
		s.emit(ctx, m)
	}
	if room := s.room(); room > 0 && s.reader.Next < s.t.job.Log.Total() {
		s.reader.Batch = min(32, room)
		again, done := s.reader.Poll(ctx, func(m engine.Msg) { s.emit(ctx, m) })
		if !done && s.room() > 0 {
			s.polling = true
			ctx.After(again, tickPoll)
			return
		}
	}
	if len(s.replays) > 0 && s.room() > 0 {
		s.kick(ctx)
	}
	// Otherwise the spout is full (a completion or failure kicks it) or the
	// log is exhausted (a replay kicks it).
}

func (s *spout) room() int { return s.t.maxPending - len(s.pending) }

// emit sends one spout tuple per receiving task, each with its own id in
// the new tree, and tells the tree's acker the XOR of those ids.
func (s *spout) emit(ctx engine.Ctx, m engine.Msg) {
	root := storm.NonZero(ctx)
	var init uint64
	for _, to := range s.t.targets(-1, s.router, &m, &s.scratch) {
		id := storm.NonZero(ctx)
		init ^= id
		ctx.Send(to, storm.WithID(m, []storm.Edge{{Root: root, ID: id}}))
		ctx.Count(cTuplesEmitted, 1)
	}
	storm.SendAckStream(ctx, s.t.ackerOf(root), engine.Msg{Kind: storm.KindInit, Key: root, Val: int64(init), Size: storm.InitBytes})
	s.pending[root] = tree{off: m.ID.Off, emitted: ctx.Now()}
	s.queue = append(s.queue, deadlineEntry{root: root, at: ctx.Now() + s.t.timeout})
	for s.base+int64(len(s.acked)) <= m.ID.Off {
		s.acked = append(s.acked, false)
	}
	if len(s.pending) > s.peak+max(32, s.peak/16) {
		s.peak = len(s.pending)
		ctx.Record(engine.Event{Kind: evSpoutPeak, Value: int64(s.peak)})
	}
	s.armTimeout(ctx)
}

// armTimeout keeps one timer set for the oldest pending deadline.
func (s *spout) armTimeout(ctx engine.Ctx) {
	if s.timerAt == 0 && s.qHead < len(s.queue) {
		s.timerAt = s.queue[s.qHead].at
		ctx.After(s.timerAt-ctx.Now(), tickTimeout)
	}
}

// expire fails every pending tree whose deadline has passed (Storm's
// spout-side message timeout) and queues its record for replay. It runs
// from the timer and also whenever a reply arrives: a backpressured spout
// gets no timers, but Storm's spout executor still processes its ticks and
// acks while nextTuple is held back, so timeouts must not wait for the
// backpressure to end (replays themselves are emitted by poll, which does).
func (s *spout) expire(ctx engine.Ctx) {
	now := ctx.Now()
	for s.qHead < len(s.queue) && s.queue[s.qHead].at <= now {
		root := s.queue[s.qHead].root
		s.qHead++
		tr, ok := s.pending[root]
		if !ok {
			continue // completed or failed already
		}
		delete(s.pending, root)
		ctx.Count(cFailedTimeout, 1)
		if !s.timeoutSeen || now >= s.timeoutRecorded+s.t.timeout {
			// One event per ack timeout at most (a timeout storm fails
			// thousands of trees): coverage and a milestone, not a log.
			s.timeoutSeen, s.timeoutRecorded = true, now
			ctx.Record(engine.Event{Kind: evTimeoutReplay, ID: int64(s.part), Value: tr.off})
		}
		s.timedOut[root] = struct{}{}
		s.toQueue = append(s.toQueue, deadlineEntry{root: root, at: now + storm.AckerBuckets*s.t.timeout})
		s.queueReplay(tr.off)
		if mutantTimeoutCommits && tr.off >= s.base {
			s.acked[tr.off-s.base] = true // the mutant: handled once queued
		}
	}
	if mutantTimeoutCommits {
		s.advance()
		s.commit(ctx)
	}
	s.compact()
	// Forget timed-out roots the acker has certainly dropped by now.
	for s.toHead < len(s.toQueue) && s.toQueue[s.toHead].at <= now {
		delete(s.timedOut, s.toQueue[s.toHead].root)
		s.toHead++
	}
	if len(s.replays) > 0 {
		s.kick(ctx)
	}
}

// compact drops consumed queue prefixes once they dominate, so memory
// follows the number of pending trees rather than the run length.
func (s *spout) compact() {
	if s.qHead > 1024 && s.qHead*2 > len(s.queue) {
		s.queue = append(s.queue[:0], s.queue[s.qHead:]...)
		s.qHead = 0
	}
	if s.toHead > 1024 && s.toHead*2 > len(s.toQueue) {
		s.toQueue = append(s.toQueue[:0], s.toQueue[s.toHead:]...)
		s.toHead = 0
	}
}

func (s *spout) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case engine.KindStoreDone:
		s.writing = false
		s.committed = max(s.committed, m.Val)
		kind := evOffsetCommitted
		if s.pastReplay {
			kind = evCommittedPastReplay
		}
		ctx.Record(engine.Event{Kind: kind, ID: int64(s.part), Value: s.committed})
		return
	case engine.KindStoreFailed:
		// The offset stays where it was durable; the next commit
		// interval writes it again (Kafka's commitAsync failing: the
		// consumer commits again later).
		s.writing = false
		return
	case storm.KindDone, storm.KindFailed:
	default:
		return
	}
	// Removing the tree from the pending map and updating the offset
	// bookkeeping is one keyed read-modify-write per reply, like the
	// acker's update.
	ctx.Work(ctx.Cost().StateCPU)
	if s.qHead < len(s.queue) && s.queue[s.qHead].at <= ctx.Now() {
		s.expire(ctx)
	}
	tr, ok := s.pending[m.Key]
	if !ok {
		if _, late := s.timedOut[m.Key]; late && m.Kind == storm.KindDone {
			// Every tuple of a tree that had timed out was processed after
			// all: the replay was only caused by slowness.
			delete(s.timedOut, m.Key)
			ctx.Count(cSpurious, 1)
			return
		}
		ctx.Count(cUnknownReplies, 1)
		return
	}
	delete(s.pending, m.Key)
	if m.Kind == storm.KindFailed {
		ctx.Count(cFailedExplicit, 1)
		s.queueReplay(tr.off)
		s.kick(ctx)
		return
	}
	ctx.Count(cTreesCompleted, 1)
	lat := ctx.Now() - tr.emitted
	ctx.Count(cCompleteLatency, int64(lat))
	if lat > s.slowest+max(engine.Millisecond, s.slowest/16) {
		s.slowest = lat
		ctx.Record(engine.Event{Kind: evSlowestTree, Value: int64(lat)})
	}
	if tr.off >= s.base { // below only in the timeout-commits mutant
		s.acked[tr.off-s.base] = true
	}
	s.advance()
	s.kick(ctx)
}

// advance moves base past the acked prefix.
func (s *spout) advance() {
	n := 0
	for n < len(s.acked) && s.acked[n] {
		n++
	}
	if n > 0 {
		s.base += int64(n)
		s.acked = s.acked[n:]
	}
}

// commit persists the lowest un-acked offset. It only ever moves past
// records whose trees completed, so a restarted spout loses nothing; the
// write is asynchronous and counts only once durable (KindStoreDone).
func (s *spout) commit(ctx engine.Ctx) {
	if s.writing || s.base <= s.committed {
		return
	}
	s.writing = true
	s.pastReplay = s.replayLow >= 0 && s.base > s.replayLow
	if s.pastReplay {
		s.replayLow = -1
	}
	ctx.Store().Put(s.storeKey, s.base, 8, s.base)
}

// queueReplay queues the record at off for re-emission.
func (s *spout) queueReplay(off int64) {
	s.replays = append(s.replays, off)
	if s.replayLow < 0 || off < s.replayLow {
		s.replayLow = off
	}
}

// topo is what every process of a compiled job shares (immutable once
// Compile returns).
type topo struct {
	job         systems.Job
	g           *stream.Graph
	plan        *workloads.Plan // the compiled plan (keyed stage fused into the sink)
	sink        *workloads.Stage
	sinkCost    *engine.CostModel // the sink operator's costs (the process pays fused's)
	fused       *workloads.Stage  // keyed stage applied by the sink; nil if none
	ackers      []engine.ProcID
	timeout     engine.Time
	maxPending  int
	commitEvery engine.Time
	maxPoll     int // records an unacked spout polls and commits at once
	failEvery   int // test hook: the sink fails every failEvery-th write
	// test hook: an unacked spout emits every batch at once and commits
	// its position every commitEvery instead
	periodicCommit bool
}

func (t *topo) ackerOf(root uint64) engine.ProcID {
	return t.ackers[root%uint64(len(t.ackers))]
}

// targets lists the receivers of m from an instance of stage (-1: the
// spout): every next instance for a broadcast (each copy is its own tuple
// with its own id, as in Storm), otherwise the router's choice.
func (t *topo) targets(stage int, r *stream.Router, m *engine.Msg, buf *[]engine.ProcID) []engine.ProcID {
	if t.plan.Stages[stage+1].Input == workloads.Broadcast {
		return t.g.Instances(stage + 1)
	}
	*buf = append((*buf)[:0], r.Target(m))
	return *buf
}
