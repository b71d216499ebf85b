// Package checkpoint is the coordinated-checkpoint machinery that barrier
// and snapshot (on DAG workloads) share: a checkpoint coordinator (Flink's
// JobManager role) that triggers checkpoint n at the sources, marks it
// complete only when every task has acknowledged a durable snapshot, and on a
// failure rolls the whole job back to the last completed checkpoint with a
// global restart; and the task-side Participant that stores snapshots, acks
// them after the write is durable, and restores them on deployment.
//
// Recovery follows Flink's restart strategy: on a failure notification the
// coordinator aborts pending checkpoints, starts a new attempt, restarts every
// task (ctx.Restart), waits until every failed worker is back (a job needs all
// its slots), then deploys every task with the checkpoint to restore. Tasks
// that come up by themselves (a restarted worker) stay idle until deployed,
// so no task ever runs with state from a different cut than the others.
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
	// Retain is how many completed checkpoints keep their task snapshots in
	// the store (Flink's state.checkpoints.num-retained); older ones are
	// deleted when a newer one completes. 0 means 1: only the latest, which
	// is all recovery needs. Keeping more lets a post-run check read them.
	Retain int
	// AlignmentTimeout > 0 sends KindAlignTimeout to every task when a
	// checkpoint is still pending that long after its trigger (barrier's
	// aligned-checkpoint-timeout). 0 sends nothing.
	AlignmentTimeout engine.Time
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

// Coordinator is the checkpoint coordinator process.
type Coordinator struct {
	cfg       Config
	attempt   int64
	next      int64   // next checkpoint id
	completed int64   // last completed checkpoint, -1 if none
	retained  []int64 // completed checkpoints whose snapshots are kept, oldest first
	shared    sharedRegistry
	pending   map[int64]*pending
	down      map[int]bool
	restoring bool // between failure and deployment: no triggers
}

// NewCoordinator returns a coordinator process.
func NewCoordinator(cfg Config) *Coordinator {
	if cfg.MaxConcurrent < 1 {
		cfg.MaxConcurrent = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * engine.Second
	}
	return &Coordinator{cfg: cfg, next: 1, completed: -1, pending: map[int64]*pending{}, down: map[int]bool{},
		shared: sharedRegistry{count: map[string]int{}, refs: map[int64][]string{}}}
}

// MetaKey is where the coordinator records the last completed checkpoint.
const MetaKey = "checkpoint/latest"

// Key is where task id stores its snapshot of checkpoint n.
func Key(n int64, id engine.ProcID) string { return fmt.Sprintf("checkpoint/%d/%d", n, id) }

func (c *Coordinator) Init(ctx engine.Ctx) {
	c.deploy(ctx)
	ctx.After(c.cfg.Interval, timerTrigger)
}

func (c *Coordinator) deploy(ctx engine.Ctx) {
	c.restoring = false
	d := Deploy{Attempt: c.attempt, Restore: c.completed}
	for _, t := range c.cfg.Tasks {
		ctx.Send(t, engine.Msg{Kind: KindDeploy, Ctrl: true, Key: uint64(c.attempt), Body: d, Size: 32})
	}
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
				ctx.Send(t, engine.Msg{Kind: KindAlignTimeout, Ctrl: true, Key: uint64(c.attempt), Val: n, Size: 16})
			}
		}
	case id >= timerTimeoutBase:
		n := id - timerTimeoutBase
		if p, ok := c.pending[n]; ok && !p.writing {
			c.abort(ctx, n, "timeout")
		}
	}
}

func (c *Coordinator) inFlight() int { return len(c.pending) }

func (c *Coordinator) trigger(ctx engine.Ctx) {
	n := c.next
	c.next++
	c.pending[n] = &pending{started: ctx.Now(), acked: map[engine.ProcID]bool{}}
	for _, s := range c.cfg.Sources {
		ctx.Send(s, engine.Msg{Kind: KindTrigger, Ctrl: true, Key: uint64(c.attempt), Val: n, Size: 16})
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

func (c *Coordinator) abort(ctx engine.Ctx, n int64, why string) {
	delete(c.pending, n)
	defer c.sweep(ctx)
	ctx.Record(engine.Event{Kind: "checkpoint_aborted", ID: n, Note: why})
	for _, t := range c.cfg.Tasks {
		ctx.Send(t, engine.Msg{Kind: KindAbort, Ctrl: true, Key: uint64(c.attempt), Val: n, Size: 16})
	}
}

func (c *Coordinator) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case KindAck:
		c.onAck(ctx, m)
	case engine.KindStoreDone:
		c.onMetaWritten(ctx, m.Val)
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
	if int64(m.Key) != c.attempt {
		return
	}
	p, ok := c.pending[m.Val]
	if !ok || p.writing {
		return
	}
	a := m.Body.(Ack)
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
		ctx.Store().Put(MetaKey, m.Val, 64, m.Val)
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
	ctx.Record(engine.Event{Kind: "checkpoint_completed", ID: n, Value: int64(ctx.Now() - p.started), Bytes: p.stateBytes})
	ctx.Record(engine.Event{Kind: "checkpoint_channel_state", ID: n, Bytes: p.channelBytes})
	ctx.Record(engine.Event{Kind: "checkpoint_restore_size", ID: n, Bytes: p.restoreBytes})
	// Older pending checkpoints are subsumed, as in Flink.
	for _, old := range c.pendingIDs() {
		if old < n {
			c.abort(ctx, old, "subsumed")
		}
	}
	for _, t := range c.cfg.Tasks {
		ctx.Send(t, engine.Msg{Kind: KindComplete, Ctrl: true, Key: uint64(c.attempt), Val: n, Size: 16})
	}
	// Garbage-collect checkpoints beyond the retained number; the newest
	// replaces them for recovery. A file still referenced by a retained
	// checkpoint (an incremental chain's older piece) stays.
	c.shared.register(n, p.refs)
	c.retained = append(c.retained, n)
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

func (c *Coordinator) onFailure(ctx engine.Ctx, f engine.Failure) {
	c.attempt++
	c.restoring = true
	if !f.Back {
		c.down[f.Worker] = true
	}
	ctx.Record(engine.Event{Kind: "failure_detected", ID: int64(f.Worker), Value: int64(ctx.Now() - f.FailedAt)})
	for _, n := range c.pendingIDs() {
		delete(c.pending, n)
		ctx.Record(engine.Event{Kind: "checkpoint_aborted", ID: n, Note: "failure"})
	}
	c.sweep(ctx)
	for _, t := range c.cfg.Tasks {
		ctx.Restart(t)
	}
	if len(c.down) == 0 {
		c.scheduleDeploy(ctx)
	}
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

// Load reads this task's snapshot of checkpoint n (charging the read).
func (p *Participant) Load(ctx engine.Ctx, n int64) (any, bool) {
	if n < 0 {
		return nil, false
	}
	return ctx.Store().Get(Key(n, ctx.Self()))
}
