// Package checkpoint is the coordinated-checkpoint machinery that barrier
// and snapshot (on DAG workloads) share: a checkpoint coordinator (Flink's
// JobManager role) that triggers checkpoint n at the sources, marks it
// complete only when every task has acknowledged a durable snapshot, and on a
// failure rolls the failed regions (or the whole job) back to the last
// completed checkpoint; and the task-side Participant that stores snapshots, acks
// them after the write is durable, and restores them on deployment.
//
// Recovery follows Flink's failover strategies: on a failure notification the
// coordinator aborts pending checkpoints, starts a new attempt, restarts the
// tasks of every failover region that holds a task of the failed worker
// (ctx.Restart), waits until every failed worker is back (a region needs all
// its slots) unless the runtime re-placed all of a worker's tasks in free
// slots elsewhere (engine.Failure.Vacated), then deploys those tasks with
// the latest completed checkpoint.
// With Config.Regions nil the job is one region: every task restarts
// (Flink's RestartAllFailoverStrategy, a global rollback). With the job's
// pipelined regions (RestartPipelinedRegionFailoverStrategy) the other
// regions keep running; since no channel joins two regions, a restored
// region and a running one never exchange a record, and every region's
// state stays a prefix of its own sources' input. A worker that hosts no
// task restarts nothing, as in Flink, where only task failures trigger a
// failover. Tasks that come up by themselves (a restarted worker) stay idle
// until deployed, so no task ever runs with state from a different cut than
// the rest of its region.
//
// A master crash kills the coordinator. Its next incarnation is a new leader
// (job-manager HA, takeOver): it restores the job from the completed
// checkpoint record the old leader left in the store (Meta) and restarts
// every task from it.
package checkpoint

import (
	"fmt"
	"slices"

	"ftbench/engine"
)

// Message kinds of coordinator traffic. Systems using this package must keep
// their own kinds clear of this range.
const (
	KindTrigger  uint16 = 0xF000 + iota // coordinator -> source: take checkpoint Val
	KindAck                             // task -> coordinator: snapshot Val is durable; Body Ack
	KindComplete                        // coordinator -> task: checkpoint Val is complete
	KindAbort                           // coordinator -> task: checkpoint Val is aborted
	KindDeploy                          // coordinator -> task: start; Body Deploy
	// KindAlignTimeout tells every task that checkpoint Val has been in
	// progress for Config.AlignmentTimeout. It is a control message, so a
	// backpressured task still gets it (a task's own timers wait for its
	// output to drain), as Flink's mailbox runs the timeout while the task
	// waits for output buffers.
	KindAlignTimeout
	// KindDecline tells the coordinator that a task could not take its
	// snapshot of checkpoint Val (its write failed: the store is down).
	// The coordinator aborts the checkpoint, as Flink's does when a task
	// declines one; the job keeps running on the last completed checkpoint.
	KindDecline
	// KindNotReady tells the coordinator that a source got the trigger of
	// checkpoint Val ahead of the Deploy of the same attempt (Key), as
	// a Flink task not yet RUNNING declines a trigger with
	// CHECKPOINT_DECLINED_TASK_NOT_READY. The coordinator aborts the
	// checkpoint at once and does not count it as failed (Flink's
	// CheckpointFailureManager ignores that reason): the next trigger finds
	// the source deployed. Without it the checkpoint would wait for an
	// acknowledgement that never comes, until --checkpoint-timeout.
	KindNotReady
)

// Ack is what a task reports about its snapshot.
type Ack struct {
	Task         engine.ProcID
	StateBytes   int64
	ChannelBytes int64 // in-flight records persisted (unaligned barriers, CL channel state)
	// Refs are the store keys the snapshot references (incremental
	// checkpoints: the chain's pieces); nil means just Key(n, Task).
	Refs []string
	// RestoreBytes is what restoring this task's snapshot reads: its
	// state chain plus channel state (0: StateBytes + ChannelBytes).
	RestoreBytes int64
}

// Deploy starts a task in an attempt, from a checkpoint (-1: from scratch).
type Deploy struct {
	Attempt int64
	Restore int64
}

// Config configures a coordinator.
type Config struct {
	Interval      engine.Time
	MaxConcurrent int
	Timeout       engine.Time     // abort a checkpoint not complete by then
	Tasks         []engine.ProcID // every task that must ack, sources included
	Sources       []engine.ProcID // the tasks that get the trigger
	// MailToSources sends the coordinator's checkpoint messages (trigger,
	// completion, abort) to the sources ahead of their queued input
	// (SendOvertaking), as a Flink task runs its mailbox's mails before the
	// next record. barrier sets it with operator chaining: a source whose
	// chain works through a poll batch at a time would otherwise take a
	// trigger only once its poll timer stops firing, which a lagging
	// source never does. Without chaining a source's poll step is short
	// and the messages queue as before.
	MailToSources bool
	// Retain is how many completed checkpoints keep their task snapshots in
	// the store (Flink's state.checkpoints.num-retained); older ones are
	// deleted when a newer one completes. 0 means 1: only the latest, which
	// is all recovery needs. Keeping more lets a post-run check read them.
	Retain int
	// AlignmentTimeout > 0 sends KindAlignTimeout to every task when a
	// checkpoint is still pending that long after its trigger (barrier's
	// aligned-checkpoint-timeout). 0 sends nothing.
	AlignmentTimeout engine.Time
	// Regions partitions Tasks into failover regions: a failure restarts
	// only the regions that hold a task of the failed worker. nil: one
	// region of every task (a full restart). Regions must be closed under
	// the job's channels (pipelined regions: connected components of the
	// task graph), or a restored task would receive records from a cut it
	// was not restored to.
	Regions [][]engine.ProcID
	// Placement is the worker each task runs on. With it a failure restarts
	// the regions holding a task placed on the failed worker, and none if
	// it hosts no task; without it every failure restarts every region.
	// (The failure's own list of processes is not enough: it omits the
	// tasks a failover had already restarted when the worker failed.)
	Placement map[engine.ProcID]int
	// Tolerable is Flink's execution.checkpointing.tolerable-failed-checkpoints:
	// when more than Tolerable checkpoints in a row fail (declined, a
	// failed metadata write, expired), the job fails over: every region
	// restarts from the last completed checkpoint, as Flink's
	// CheckpointFailureManager fails the job. Aborts caused by a failover
	// or by subsumption do not count, and a completed checkpoint resets the
	// count. Negative: any number is tolerated.
	Tolerable int
}

// Timer ids of the coordinator.
const (
	timerTrigger     = 1
	timerTimeoutBase = 1 << 20 // + checkpoint id
	timerAlignBase   = 1 << 30 // + checkpoint id
	timerDeployBase  = 1 << 40 // + attempt: a deploy of a superseded attempt is ignored
)

type pending struct {
	started      engine.Time
	acked        map[engine.ProcID]bool
	stateBytes   int64
	channelBytes int64
	restoreBytes int64
	refs         []string // store keys the tasks' snapshots reference
	writing      bool     // metadata write in progress
}

// Coordinator is the checkpoint coordinator process (Flink's
// CheckpointCoordinator with the scheduler's failover strategy). It keeps
// two invariants: a checkpoint completes only when every task of the job
// acknowledged a durable snapshot in its region's current attempt, and a
// restarted region is deployed, all its tasks from one completed
// checkpoint, only once every worker it needs is up.
type Coordinator struct {
	cfg       Config
	attempt   int64   // latest attempt of any region
	next      int64   // next checkpoint id
	completed int64   // last completed checkpoint, -1 if none
	retained  []int64 // completed checkpoints whose snapshots are kept, oldest first
	shared    sharedRegistry
	pending   map[int64]*pending
	down      map[int]bool
	restoring bool // between failure and deployment: no triggers
	// regionOf maps a task to its region; regionAttempt is each region's
	// attempt: messages to a task carry it, and acks and barriers of an
	// older attempt of the region are stale.
	regionOf      map[engine.ProcID]int
	regionAttempt []int64
	// restarting are the regions restarted and not yet redeployed.
	restarting map[int]bool
	// failedInRow counts the checkpoints failed since the last completed
	// one (Flink's continuous failure counter).
	failedInRow int
	// placement is where each task runs now: Config.Placement, updated by
	// the re-placements failure notices report (engine.Failure.Moved).
	placement map[engine.ProcID]int
}

// NewCoordinator returns a coordinator process.
func NewCoordinator(cfg Config) *Coordinator {
	if cfg.MaxConcurrent < 1 {
		cfg.MaxConcurrent = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * engine.Second
	}
	if cfg.Regions == nil {
		cfg.Regions = [][]engine.ProcID{cfg.Tasks}
	}
	c := &Coordinator{cfg: cfg, next: 1, completed: -1, pending: map[int64]*pending{}, down: map[int]bool{},
		regionOf: map[engine.ProcID]int{}, regionAttempt: make([]int64, len(cfg.Regions)), restarting: map[int]bool{},
		shared: sharedRegistry{count: map[string]int{}, refs: map[int64][]string{}}}
	if cfg.Placement != nil {
		c.placement = make(map[engine.ProcID]int, len(cfg.Placement))
		for t, w := range cfg.Placement {
			c.placement[t] = w
		}
	}
	for r, tasks := range cfg.Regions {
		for _, t := range tasks {
			c.regionOf[t] = r
		}
		c.restarting[r] = true // the first deployment deploys every region
	}
	return c
}

// send sends a coordinator message about checkpoint n to task t, tagged
// with t's region attempt.
func (c *Coordinator) send(ctx engine.Ctx, t engine.ProcID, kind uint16, n int64) {
	m := engine.Msg{Kind: kind, Ctrl: true, Key: uint64(c.regionAttempt[c.regionOf[t]]), Val: n, Size: 16}
	if c.cfg.MailToSources && slices.Contains(c.cfg.Sources, t) {
		ctx.SendOvertaking(t, m)
		return
	}
	ctx.Send(t, m)
}

// running lists the tasks of the regions not waiting for redeployment.
func (c *Coordinator) running() []engine.ProcID {
	var ts []engine.ProcID
	for _, t := range c.cfg.Tasks {
		if !c.restarting[c.regionOf[t]] {
			ts = append(ts, t)
		}
	}
	return ts
}

// MetaKey is where the coordinator records the last completed checkpoint
// (a Meta).
const MetaKey = "checkpoint/latest"

// The milestones of a coordinated checkpoint (systems.Milestoner):
// EventAcknowledged when a checkpoint's last task acknowledged and its
// metadata write begins, EventCompleted when that write is durable and the
// commit notices go out (both the coordinator's), EventSinkCommit when a
// 2PC sink committed a pre-committed transaction (barrier's and snapshot's
// sinks).
const (
	EventAcknowledged = "checkpoint_acknowledged"
	EventCompleted    = "checkpoint_completed"
	EventSinkCommit   = "sink_commit"
)

// Meta is the completed-checkpoint record the coordinator writes under
// MetaKey before a checkpoint counts as complete: Flink's
// CompletedCheckpointStore in HA storage. A new leader (takeOver) restores
// the job from Completed and rebuilds its shared registry from the
// retained checkpoints and the snapshot files each references.
type Meta struct {
	Completed int64
	Retained  []int64    // oldest first, Completed last
	Refs      [][]string // Refs[i]: the store keys Retained[i] references
}

// Key is where task id stores its snapshot of checkpoint n.
func Key(n int64, id engine.ProcID) string { return fmt.Sprintf("checkpoint/%d/%d", n, id) }

// Init deploys the job at its start. An Init after time 0 is a new leader
// taking over after a master crash (the job was submitted at time 0).
func (c *Coordinator) Init(ctx engine.Ctx) {
	if ctx.Now() > 0 {
		c.takeOver(ctx)
	} else {
		c.deploy(ctx)
	}
	ctx.After(c.cfg.Interval, timerTrigger)
}

// takeOver is job-manager high availability: a new leader reads the
// latest completed checkpoint from the store (Flink's JobMaster recovering
// its CompletedCheckpointStore from HA storage) and restarts every task
// from it, as Flink's new JobManager restores all tasks of the job: the
// tasks the old leader left running are cancelled (ctx.Restart) and
// redeployed once every worker is up. The restored 2PC sinks commit the
// checkpoint's pending transactions whose commit notice died with the old
// leader (recoverAndCommit), so a checkpoint completed just before the
// crash commits exactly once.
//
// Checkpoint ids are never reused: a leader triggers at most one
// checkpoint per interval since time 0, so every id triggered before now
// is at most now/interval, and the new leader starts above it (Flink keeps
// the id counter in HA storage for the same reason: an id names snapshot
// files and sink transactions).
func (c *Coordinator) takeOver(ctx engine.Ctx) {
	if v, ok := ctx.Store().Get(MetaKey); ok {
		m := v.(Meta)
		c.completed = m.Completed
		for i, n := range m.Retained {
			c.shared.register(n, m.Refs[i])
			c.retained = append(c.retained, n)
		}
	}
	c.next = max(c.completed+1, int64(ctx.Now()/c.cfg.Interval)+1)
	ctx.Record(engine.Event{Kind: "leader_takeover", ID: c.completed, Note: fmt.Sprintf("next_checkpoint=%d", c.next)})
	all := make([]int, len(c.cfg.Regions))
	for r := range all {
		all[r] = r
	}
	c.restart(ctx, all, engine.MasterNode, "new leader: every task restarts from the latest completed checkpoint")
}

// meta is the record of checkpoint n completing now: the retained
// checkpoints after it, with the files each references.
func (c *Coordinator) meta(n int64, refs []string) Meta {
	m := Meta{Completed: n}
	keep := append(slices.Clone(c.retained), n)
	keep = keep[max(len(keep)-max(c.cfg.Retain, 1), 0):]
	for _, id := range keep {
		r := refs
		if id != n {
			r = c.shared.refs[id]
		}
		m.Retained = append(m.Retained, id)
		m.Refs = append(m.Refs, slices.Clone(r))
	}
	return m
}

// deploy starts the restarting regions' tasks from the latest completed
// checkpoint (their sources rewind to its offsets), in task order.
func (c *Coordinator) deploy(ctx engine.Ctx) {
	c.restoring = false
	for _, t := range c.cfg.Tasks {
		r := c.regionOf[t]
		if !c.restarting[r] {
			continue
		}
		a := c.regionAttempt[r]
		d := Deploy{Attempt: a, Restore: c.completed}
		ctx.Send(t, engine.Msg{Kind: KindDeploy, Ctrl: true, Key: uint64(a), Body: d, Size: 32})
	}
	clear(c.restarting)
	ctx.Record(engine.Event{Kind: "deploy", ID: c.attempt, Value: c.completed})
}

func (c *Coordinator) Timer(ctx engine.Ctx, id int64) {
	switch {
	case id == timerTrigger:
		ctx.After(c.cfg.Interval, timerTrigger)
		if !c.restoring && c.inFlight() < c.cfg.MaxConcurrent {
			c.trigger(ctx)
		}
	case id >= timerDeployBase:
		if c.restoring && len(c.down) == 0 && id-timerDeployBase == c.attempt {
			c.deploy(ctx)
		}
	case id >= timerAlignBase:
		n := id - timerAlignBase
		if p, ok := c.pending[n]; ok && !p.writing {
			for _, t := range c.cfg.Tasks {
				c.send(ctx, t, KindAlignTimeout, n)
			}
		}
	case id >= timerTimeoutBase:
		n := id - timerTimeoutBase
		if p, ok := c.pending[n]; ok && !p.writing {
			c.abort(ctx, n, "timeout")
			c.checkpointFailed(ctx, n)
		}
	}
}

func (c *Coordinator) inFlight() int { return len(c.pending) }

func (c *Coordinator) trigger(ctx engine.Ctx) {
	n := c.next
	c.next++
	c.pending[n] = &pending{started: ctx.Now(), acked: map[engine.ProcID]bool{}}
	for _, s := range c.cfg.Sources {
		c.send(ctx, s, KindTrigger, n)
	}
	ctx.Record(engine.Event{Kind: "checkpoint_triggered", ID: n})
	ctx.After(c.cfg.Timeout, timerTimeoutBase+n)
	if c.cfg.AlignmentTimeout > 0 {
		ctx.After(c.cfg.AlignmentTimeout, timerAlignBase+n)
	}
}

// pendingIDs lists pending checkpoints in id order, so that what is done to
// each (events, messages) does not depend on map iteration order.
func (c *Coordinator) pendingIDs() []int64 {
	ids := make([]int64, 0, len(c.pending))
	for n := range c.pending {
		ids = append(ids, n)
	}
	slices.Sort(ids)
	return ids
}

// abort gives up pending checkpoint n and tells the running tasks, which
// drop their part of it (a task of a restarting region has lost it anyway).
func (c *Coordinator) abort(ctx engine.Ctx, n int64, why string) {
	delete(c.pending, n)
	defer c.sweep(ctx)
	ctx.Record(engine.Event{Kind: "checkpoint_aborted", ID: n, Note: why})
	for _, t := range c.running() {
		c.send(ctx, t, KindAbort, n)
	}
}

func (c *Coordinator) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case KindAck:
		c.onAck(ctx, m)
	case engine.KindStoreDone:
		c.onMetaWritten(ctx, m.Val)
	case engine.KindStoreFailed:
		// The metadata write failed: the checkpoint never completed.
		if p, ok := c.pending[m.Val]; ok && p.writing {
			c.abort(ctx, m.Val, "metadata write failed")
			c.checkpointFailed(ctx, m.Val)
		}
	case KindDecline:
		// A decline of a task's older attempt is stale.
		if r, ok := c.regionOf[from]; ok && int64(m.Key) == c.regionAttempt[r] {
			if _, ok := c.pending[m.Val]; ok {
				c.abort(ctx, m.Val, "declined: snapshot write failed")
				c.checkpointFailed(ctx, m.Val)
			}
		}
	case KindNotReady:
		// The trigger's attempt is in Key: one of an older attempt of
		// the region is stale (its checkpoint was aborted by the
		// failover).
		if r, ok := c.regionOf[from]; ok && int64(m.Key) == c.regionAttempt[r] {
			if _, ok := c.pending[m.Val]; ok {
				c.abort(ctx, m.Val, "declined: task not ready")
			}
		}
	case engine.KindFailure:
		c.onFailure(ctx, m.Body.(engine.Failure))
	case engine.KindWorkerUp:
		delete(c.down, int(m.Val))
		if c.restoring && len(c.down) == 0 {
			c.scheduleDeploy(ctx)
		}
	}
}

// scheduleDeploy deploys once tasks restarted now are up again.
func (c *Coordinator) scheduleDeploy(ctx engine.Ctx) {
	ctx.After(ctx.Cost().TaskRestart+engine.Millisecond, timerDeployBase+c.attempt)
}

func (c *Coordinator) onAck(ctx engine.Ctx, m engine.Msg) {
	a := m.Body.(Ack)
	if r, ok := c.regionOf[a.Task]; !ok || int64(m.Key) != c.regionAttempt[r] {
		return
	}
	p, ok := c.pending[m.Val]
	if !ok || p.writing {
		return
	}
	if p.acked[a.Task] {
		return
	}
	p.acked[a.Task] = true
	p.stateBytes += a.StateBytes
	p.channelBytes += a.ChannelBytes
	if a.RestoreBytes > 0 {
		p.restoreBytes += a.RestoreBytes
	} else {
		p.restoreBytes += a.StateBytes + a.ChannelBytes
	}
	if a.Refs != nil {
		p.refs = append(p.refs, a.Refs...)
	} else {
		p.refs = append(p.refs, Key(m.Val, a.Task))
	}
	if len(p.acked) == len(c.cfg.Tasks) {
		// Every snapshot is durable; the checkpoint exists once its
		// metadata is (Flink's completed-checkpoint store).
		p.writing = true
		ctx.Store().Put(MetaKey, c.meta(m.Val, p.refs), 64, m.Val)
		// A milestone (torture aims faults here): until the metadata is
		// durable the checkpoint does not exist, and the previous one
		// must still be restorable.
		ctx.Record(engine.Event{Kind: EventAcknowledged, ID: m.Val})
		if mutantDiscardBeforeDurable {
			// The mutant: the new checkpoint subsumes the older ones
			// now, before the metadata that makes it complete is
			// durable, and their files go at once.
			c.shared.register(m.Val, p.refs)
			c.retained = append(c.retained, m.Val)
			for len(c.retained) > max(c.cfg.Retain, 1) {
				c.shared.release(c.retained[0], 0)
				c.retained = c.retained[1:]
			}
			c.sweep(ctx)
		}
	}
}

func (c *Coordinator) onMetaWritten(ctx engine.Ctx, n int64) {
	p, ok := c.pending[n]
	if !ok {
		return
	}
	delete(c.pending, n)
	if n > c.completed {
		c.completed = n
	}
	c.failedInRow = 0
	ctx.Record(engine.Event{Kind: EventCompleted, ID: n, Value: int64(ctx.Now() - p.started), Bytes: p.stateBytes})
	ctx.Record(engine.Event{Kind: "checkpoint_channel_state", ID: n, Bytes: p.channelBytes})
	ctx.Record(engine.Event{Kind: "checkpoint_restore_size", ID: n, Bytes: p.restoreBytes})
	// Older pending checkpoints are subsumed, as in Flink.
	for _, old := range c.pendingIDs() {
		if old < n {
			c.abort(ctx, old, "subsumed")
		}
	}
	for _, t := range c.cfg.Tasks {
		c.send(ctx, t, KindComplete, n)
	}
	// Garbage-collect checkpoints beyond the retained number; the newest
	// replaces them for recovery. A file still referenced by a retained
	// checkpoint (an incremental chain's older piece) stays.
	if !mutantDiscardBeforeDurable { // the mutant registered it at its acknowledgement
		c.shared.register(n, p.refs)
		c.retained = append(c.retained, n)
	}
	for len(c.retained) > max(c.cfg.Retain, 1) {
		old := c.retained[0]
		c.retained = c.retained[1:]
		c.shared.release(old, c.next)
	}
	c.sweep(ctx)
}

// sweep deletes the released files that no checkpoint in progress can
// reference any more.
func (c *Coordinator) sweep(ctx engine.Ctx) {
	oldest := c.next
	for n := range c.pending {
		oldest = min(oldest, n)
	}
	for _, key := range c.shared.collect(oldest) {
		ctx.Store().Delete(key)
	}
}

// sharedRegistry is Flink's SharedStateRegistry: for every stored snapshot
// file, how many retained completed checkpoints reference it. A file is
// deleted when the last checkpoint referencing it is discarded, so
// incremental checkpoints can share their chain's older pieces — but not
// before every checkpoint triggered by then has finished: a task that has
// not yet heard that a newer checkpoint completed may still build a delta
// on the discarded one's files (with concurrent checkpoints), as Flink's
// registry keeps a file until no pending checkpoint can use it.
type sharedRegistry struct {
	count map[string]int
	refs  map[int64][]string // retained checkpoint -> the files it references
	dead  []released
}

// released are files no retained checkpoint references, deletable once no
// checkpoint older than until is in progress.
type released struct {
	keys  []string
	until int64
}

func (r *sharedRegistry) register(n int64, keys []string) {
	r.refs[n] = keys
	for _, k := range keys {
		r.count[k]++
	}
}

// release discards checkpoint n; the files no longer referenced become
// deletable once no checkpoint older than next (the next to be triggered)
// is in progress.
func (r *sharedRegistry) release(n, next int64) {
	var unused []string
	for _, k := range r.refs[n] {
		if r.count[k]--; r.count[k] <= 0 {
			delete(r.count, k)
			unused = append(unused, k)
		}
	}
	delete(r.refs, n)
	if len(unused) > 0 {
		r.dead = append(r.dead, released{keys: unused, until: next})
	}
}

// collect returns the released files deletable when the oldest checkpoint
// in progress (or the next to be triggered) is oldest, in release order.
// A file a newer checkpoint registered again meanwhile is kept.
func (r *sharedRegistry) collect(oldest int64) (gone []string) {
	keep := r.dead[:0]
	for _, d := range r.dead {
		if d.until > oldest {
			keep = append(keep, d)
			continue
		}
		for _, k := range d.keys {
			if r.count[k] == 0 {
				gone = append(gone, k)
			}
		}
	}
	r.dead = keep
	return gone
}

// checkpointFailed counts failed checkpoint n (already aborted) and fails
// the job over once more than Config.Tolerable failed in a row (Flink's
// CheckpointFailureManager): every region restarts from the last completed
// checkpoint.
func (c *Coordinator) checkpointFailed(ctx engine.Ctx, n int64) {
	c.failedInRow++
	if c.cfg.Tolerable < 0 || c.failedInRow <= c.cfg.Tolerable {
		return
	}
	c.failedInRow = 0
	ctx.Record(engine.Event{Kind: "failover_on_checkpoint_failure", ID: n, Value: int64(c.cfg.Tolerable)})
	all := make([]int, len(c.cfg.Regions))
	for r := range all {
		all[r] = r
	}
	c.restart(ctx, all, -1, "checkpoint failures exceeded the tolerable number")
}

// onFailure is the failover: the regions holding a task of the failed
// worker restart in a new attempt; the checkpoints in progress are aborted
// (Flink aborts them on any failover: a restarted task's part is lost),
// and the running tasks are told so, releasing their alignments. A worker
// hosting no task changes nothing. The restarted regions are deployed
// without waiting for the worker when the runtime re-placed every task it
// ran in free slots elsewhere (f.Vacated), as Flink's scheduler deploys
// them in the slots its pool still has.
func (c *Coordinator) onFailure(ctx engine.Ctx, f engine.Failure) {
	ctx.Record(engine.Event{Kind: "failure_detected", ID: int64(f.Worker), Value: int64(ctx.Now() - f.FailedAt)})
	failed := c.regionsOn(f.Worker)
	for _, mv := range f.Moved {
		if _, ok := c.placement[mv.Proc]; ok {
			c.placement[mv.Proc] = mv.Worker
		}
	}
	if len(failed) == 0 {
		ctx.Record(engine.Event{Kind: "failover", ID: int64(f.Worker), Note: "no task on the worker"})
		return
	}
	if !f.Back && !f.Vacated {
		c.down[f.Worker] = true
	}
	c.restart(ctx, failed, f.Worker, fmt.Sprintf("%d of %d regions", len(failed), len(c.cfg.Regions)))
}

// restart restarts the tasks of regions rs in a new attempt, aborts the
// checkpoints in progress and deploys the regions from the last completed
// checkpoint once every worker is up. worker is the failed worker (-1: a
// failover the coordinator decided itself).
func (c *Coordinator) restart(ctx engine.Ctx, rs []int, worker int, why string) {
	c.attempt++
	c.restoring = true
	var tasks int64
	for _, r := range rs {
		c.regionAttempt[r] = c.attempt
		c.restarting[r] = true
		for _, t := range c.cfg.Regions[r] {
			ctx.Restart(t)
			tasks++
		}
	}
	ctx.Record(engine.Event{Kind: "failover", ID: int64(worker), Value: tasks, Note: why})
	for _, n := range c.pendingIDs() {
		c.abort(ctx, n, "failure")
	}
	c.sweep(ctx)
	if len(c.down) == 0 {
		c.scheduleDeploy(ctx)
	}
}

// regionsOn lists, in order, the regions that hold a task placed on
// worker w: every region when the placement is not known.
func (c *Coordinator) regionsOn(w int) []int {
	var rs []int
	for r, tasks := range c.cfg.Regions {
		for _, t := range tasks {
			if wt, ok := c.placement[t]; c.placement == nil || ok && wt == w {
				rs = append(rs, r)
				break
			}
		}
	}
	return rs
}

// Completed is the last completed checkpoint (for tests).
func (c *Coordinator) Completed() int64 { return c.completed }

// Participant is the task side: embed it in a task and route coordinator
// messages and store completions through Handle.
type Participant struct {
	Coordinator engine.ProcID
	Attempt     int64
	Deployed    bool
	// Restored is the checkpoint the task was deployed from (-1: none).
	Restored int64
}

// OnDeploy accepts a deployment and returns the checkpoint to restore (-1 for none).
func (p *Participant) OnDeploy(m engine.Msg) int64 {
	d := m.Body.(Deploy)
	p.Attempt, p.Deployed, p.Restored = d.Attempt, true, d.Restore
	return d.Restore
}

// Current reports whether a coordinator message belongs to this attempt.
func (p *Participant) Current(m engine.Msg) bool { return p.Deployed && int64(m.Key) == p.Attempt }

// Persist writes this task's snapshot of checkpoint n; call Acknowledge when
// the store reports it durable (KindStoreDone with Val n).
func (p *Participant) Persist(ctx engine.Ctx, n int64, snapshot any, bytes int64) {
	// snapshot_write ... snapshot_acked at one process is the window in
	// which a crash interrupts a snapshot write (torture's coverage).
	ctx.Record(engine.Event{Kind: "snapshot_write", ID: n, Bytes: bytes})
	ctx.Store().Put(Key(n, ctx.Self()), snapshot, bytes, n)
}

// Acknowledge tells the coordinator that snapshot n is durable.
func (p *Participant) Acknowledge(ctx engine.Ctx, n int64, a Ack) {
	a.Task = ctx.Self()
	ctx.Record(engine.Event{Kind: "snapshot_acked", ID: n})
	ctx.Send(p.Coordinator, engine.Msg{Kind: KindAck, Ctrl: true, Key: uint64(p.Attempt), Val: n, Body: a, Size: 32})
}

// Decline tells the coordinator that this task's snapshot of checkpoint n
// failed (engine.KindStoreFailed for the write Persist started).
func (p *Participant) Decline(ctx engine.Ctx, n int64) {
	ctx.Record(engine.Event{Kind: "snapshot_declined", ID: n})
	ctx.Send(p.Coordinator, engine.Msg{Kind: KindDecline, Ctrl: true, Key: uint64(p.Attempt), Val: n, Size: 16})
}

// NotReady declines trigger m, which reached this task ahead of the
// Deploy of its attempt: a trigger the coordinator sent ahead of the task's
// queued input (Config.MailToSources) overtakes a Deploy still waiting
// there, for instance on a paused worker. The decline carries the
// trigger's attempt.
func (p *Participant) NotReady(ctx engine.Ctx, m engine.Msg) {
	ctx.Record(engine.Event{Kind: "trigger_declined_not_ready", ID: m.Val})
	ctx.Send(p.Coordinator, engine.Msg{Kind: KindNotReady, Ctrl: true, Key: m.Key, Val: m.Val, Size: 16})
}

// Load reads this task's snapshot of checkpoint n (charging the read).
func (p *Participant) Load(ctx engine.Ctx, n int64) (any, bool) {
	if n < 0 {
		return nil, false
	}
	return ctx.Store().Get(Key(n, ctx.Self()))
}

// DescribeMsg names the coordinator's traffic for a run's trace
// (systems.MsgDescriber), with the checkpoint it is about as its id (a
// deploy's: the checkpoint it restores, 0 from scratch); ok is false for
// a kind outside the package's range.
func DescribeMsg(m engine.Msg) (info engine.MsgInfo, ok bool) {
	info.ID = m.Val
	switch m.Kind {
	case KindTrigger:
		info.Kind = "trigger"
	case KindAck:
		info.Kind = "checkpoint_ack"
	case KindComplete:
		// notifyCheckpointComplete: the 2PC sinks commit on it.
		info.Kind = "checkpoint_complete"
	case KindAbort:
		info.Kind = "checkpoint_abort"
	case KindDeploy:
		info.Kind, info.ID = "deploy", 0
		if d, ok := m.Body.(Deploy); ok && d.Restore > 0 {
			info.ID = d.Restore
		}
	case KindAlignTimeout:
		info.Kind = "alignment_timeout"
	case KindDecline:
		info.Kind = "checkpoint_decline"
	default:
		return info, false
	}
	return info, true
}
