package live

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"ftbench/engine"
)

// proc is one process slot. Its incarnations come and go with crashes; the
// slot's mutex guards what they share with senders and the runtime.
type proc struct {
	id   engine.ProcID
	spec *engine.ProcSpec
	rt   *Runtime
	cost *engine.CostModel // the model of spec.CostOp (engine.CostModel.For), as in the simulator
	// inc is the current incarnation's number, bumped by every kill. Every
	// Ctx call compares its own number with it, so a goroutine still
	// inside a handler of a killed incarnation can neither send nor commit.
	inc  atomic.Uint32
	cur  atomic.Pointer[incarnation] // nil while down
	full atomic.Int32                // data output channels at capacity: >0 means backpressured
	// prio mirrors len(urgent)+len(timers) for the goroutine's batch loop,
	// which must yield to them without taking the mutex (syncPrio).
	prio atomic.Int32
	slow []slowRule // set before Run
	// handled counts the messages and timers its incarnations handled
	// (Runtime.Events); one counter per process rather than one shared
	// by every goroutine, which would bounce its cache line per message.
	handled atomic.Uint64

	mu       sync.Mutex
	up       bool
	in       []*channel // input channels by sender, created on first send
	inputs   []*channel // the same in creation order, for round robin
	rr       int
	urgent   []urgentItem
	timers   []int64 // fired timers waiting for the process
	pending  map[uint64]*armed
	timerSeq uint64
}

type urgentItem struct {
	from engine.ProcID
	ch   *channel // the overtaking message's channel; nil for runtime messages
	seq  uint64
	m    engine.Msg
}

// armed is a timer of the current incarnation that has not fired yet.
type armed struct {
	due      engine.Time
	periodic bool // re-armed from its own handler: not activity
	t        *time.Timer
}

// incarnation is one life of a process: its Process value, its goroutine
// and its Ctx. Fields below done are used by its goroutine only.
type incarnation struct {
	p    *proc
	inc  uint32
	proc engine.Process
	done chan struct{} // closed by the kill
	wake chan struct{} // capacity 1: something may be ready

	rng       *rand.Rand
	overtaken []engine.Msg
	firing    int64
	inTimer   bool
	// commits and deletes wait for the end of the step (publish).
	commits []engine.Commit
	deletes []string
	// counts are Count calls made while alive, summed by name and handed
	// to the observer with the next commits, before the goroutine waits
	// for input, and when it returns: counters are read only after the
	// run, and a lock round trip per Count (stormack counts every ack
	// message) was a large share of the runtime's cost per message.
	counts []counted

	// batch holds messages taken from batchCh in one go, handled one
	// by one while nothing else may go first (runBatch); paused is set
	// when the process pauses or resumes a channel meanwhile.
	batch      []item
	batchPos   int
	batchCh    *channel
	batchEpoch uint32
	paused     bool
}

type counted struct {
	name string
	n    int64
}

// maxBatch is the most messages taken from a channel under one lock.
const maxBatch = 64

// activate brings up a fresh incarnation (p.mu held); its goroutine is
// started by the caller.
func (p *proc) activate() *incarnation {
	p.up = true
	inc := p.inc.Load()
	c := &incarnation{
		p: p, inc: inc, proc: p.spec.New(),
		done: make(chan struct{}), wake: make(chan struct{}, 1),
		rng: engine.NewRand(engine.ChildSeed(p.rt.seed, p.spec.Name+"#"+strconv.Itoa(int(inc)))),
	}
	p.cur.Store(c)
	return c
}

// signal wakes the current incarnation's goroutine.
func (p *proc) signal() {
	if c := p.cur.Load(); c != nil {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// syncPrio publishes how many urgent messages and fired timers wait (p.mu held).
func (p *proc) syncPrio() { p.prio.Store(int32(len(p.urgent) + len(p.timers))) }

func (c *incarnation) alive() bool { return c.p.inc.Load() == c.inc }

func (c *incarnation) init() {
	c.step(func() { c.proc.Init(c) })
}

// step runs one step of the process. The processes of the client node are
// the harness's own (its readers of the sink) and share its state, which
// the simulator's single thread protected: their steps run under the
// observer lock, as the harness's callbacks do. (They only read the clock
// and set timers, so holding it there orders no other lock after it but
// their own slot's.)
func (c *incarnation) step(f func()) {
	if c.p.spec.Worker == engine.ClientNode {
		rt := c.p.rt
		rt.obs.Lock()
		if !rt.halted.Load() {
			f()
		}
		rt.obs.Unlock()
	} else {
		f()
	}
	c.publish()
}

// loop runs Init (if init: a restart), then handles urgent messages, fired
// timers and input in the simulator's order until the incarnation is
// killed or the run closed.
func (c *incarnation) loop(init bool) {
	rt := c.p.rt
	defer rt.wg.Done()
	defer c.flushCounts()
	defer rt.guard(c.p.spec.Name)
	if init {
		c.init()
	}
	for {
		// Atomic loads rather than a select on done and halt: this runs
		// once per message, and a select locks both channels (halt is
		// shared by every goroutine of the run).
		if !c.alive() || rt.halted.Load() {
			return
		}
		if c.batchPos < len(c.batch) {
			c.runBatch()
			continue
		}
		c.batch, c.batchPos = c.batch[:0], 0
		var (
			kind int
			from engine.ProcID
			m    engine.Msg
			id   int64
		)
		c.p.mu.Lock()
		if c.alive() {
			kind, from, m, id = c.p.next(c)
		}
		c.p.mu.Unlock()
		switch kind {
		case stepNone:
			c.flushCounts()
			select {
			case <-c.wake:
			case <-c.done:
				return
			case <-rt.halt:
				return
			}
		case stepMsg:
			c.handle(from, m)
		case stepTimer:
			rt.catchUp()
			c.firing, c.inTimer = id, true
			c.step(func() { c.proc.Timer(c, id) })
			c.inTimer = false
			c.p.handled.Add(1)
		}
	}
}

func (c *incarnation) handle(from engine.ProcID, m engine.Msg) {
	c.step(func() { c.proc.Handle(c, from, m) })
	c.overtaken = nil
	c.p.handled.Add(1)
}

// runBatch handles the next batched message, unless something the
// simulator would run first has come up — a runtime notice, an overtaking
// message, a fired timer, backpressure, a Pause or Resume, a kill — in
// which case the rest of the batch goes back to the head of its channel
// (with its credit), and the next step is chosen under the lock again.
func (c *incarnation) runBatch() {
	p := c.p
	it := c.batch[c.batchPos]
	if p.prio.Load() > 0 || (p.full.Load() > 0 && !it.m.Ctrl) || c.paused || !c.alive() {
		c.putBack()
		return
	}
	c.batch[c.batchPos] = item{}
	c.batchPos++
	c.handle(c.batchCh.from.id, it.m)
}

func (c *incarnation) putBack() {
	p := c.p
	rest := c.batch[c.batchPos:]
	p.mu.Lock()
	if ch := c.batchCh; c.alive() && ch.epoch == c.batchEpoch && len(rest) > 0 {
		if ch.head >= len(rest) {
			// Back into the slots they were taken from: no copy of the
			// queue, which for control messages (no credit) can be long.
			ch.head -= len(rest)
			copy(ch.inq[ch.head:], rest)
		} else {
			// The queue was emptied and refilled from its start since:
			// what came since is at most one batch's worth of arrivals.
			q := make([]item, 0, len(rest)+len(ch.inq)-ch.head)
			q = append(q, rest...)
			q = append(q, ch.inq[ch.head:]...)
			ch.inq, ch.head = q, 0
		}
		bytes := 0
		for _, it := range rest {
			if !it.m.Ctrl {
				bytes += p.rt.cost.WireBytes(it.m.Size)
			}
		}
		if ch.credit.Restore(bytes) {
			ch.from.full.Add(1)
		}
	}
	p.mu.Unlock()
	clear(c.batch)
	c.batch, c.batchPos, c.batchCh, c.paused = c.batch[:0], 0, nil, false
}

const (
	stepNone = iota
	stepMsg
	stepTimer
)

// next picks what the process does next (p.mu held): runtime notices and
// overtaking messages first, then fired timers unless backpressured, then
// input round-robin over the channels (only control messages at the head
// of a channel while backpressured, nothing from a paused channel).
func (p *proc) next(c *incarnation) (kind int, from engine.ProcID, m engine.Msg, id int64) {
	if len(p.urgent) > 0 {
		u := p.urgent[0]
		copy(p.urgent, p.urgent[1:])
		p.urgent[len(p.urgent)-1] = urgentItem{}
		p.urgent = p.urgent[:len(p.urgent)-1]
		p.syncPrio()
		if u.ch != nil {
			c.overtaken = u.ch.overtakenBy(u.seq, nil)
		}
		return stepMsg, u.from, u.m, 0
	}
	blocked := p.full.Load() > 0
	if !blocked && len(p.timers) > 0 {
		id := p.timers[0]
		p.timers = p.timers[1:]
		p.syncPrio()
		return stepTimer, 0, engine.Msg{}, id
	}
	n := len(p.inputs)
	for i := 0; i < n; i++ {
		j := (p.rr + i) % n
		if ch := p.inputs[j]; ch.deliverable(blocked) {
			p.rr = (j + 1) % n
			m := ch.take()
			if len(p.timers) == 0 {
				// Take the messages behind it too (runBatch), so that a
				// busy channel costs one lock per batch rather than per
				// message; control messages as well (stormack's acks are
				// most of its traffic), but while backpressured only the
				// control messages at the head, as deliverable allows.
				c.batchCh, c.batchEpoch, c.paused = ch, ch.epoch, false
				for len(c.batch) < maxBatch-1 && ch.deliverable(blocked) {
					it := ch.inq[ch.head] // with its seq, for putBack
					ch.take()
					c.batch = append(c.batch, it)
				}
			}
			return stepMsg, ch.from.id, m, 0
		}
	}
	return stepNone, 0, engine.Msg{}, 0
}

// kill drops p's incarnation: its state, timers, queued input and every
// channel to and from it (rt.life held).
func (rt *Runtime) kill(p *proc) bool {
	p.mu.Lock()
	if !p.up {
		p.mu.Unlock()
		return false
	}
	p.up = false
	p.inc.Add(1)
	if c := p.cur.Swap(nil); c != nil {
		close(c.done)
	}
	p.urgent = nil
	p.timers = nil
	p.syncPrio()
	p.stopTimers()
	p.rr = 0
	for _, ch := range p.inputs {
		ch.paused = false
		ch.reset()
	}
	p.mu.Unlock()
	for _, q := range rt.procs {
		if q == p {
			continue
		}
		q.mu.Lock()
		if ch := q.in[p.id]; ch != nil {
			ch.reset()
		}
		q.mu.Unlock()
	}
	return true
}

func (p *proc) stopTimers() {
	for k, t := range p.pending {
		t.t.Stop()
		delete(p.pending, k)
	}
}

// startProc starts a new incarnation of p if it is down (rt.life held).
func (rt *Runtime) startProc(p *proc) {
	if rt.halted.Load() {
		return
	}
	p.mu.Lock()
	if p.up {
		p.mu.Unlock()
		return
	}
	c := p.activate()
	p.mu.Unlock()
	rt.wg.Add(1)
	go c.loop(true)
}

// --- engine.Ctx ---

func (c *incarnation) Self() engine.ProcID     { return c.p.id }
func (c *incarnation) Now() engine.Time        { return c.p.rt.Now() }
func (c *incarnation) Rand() *rand.Rand        { return c.rng }
func (c *incarnation) Store() engine.Store     { return c }
func (c *incarnation) Cost() *engine.CostModel { return c.p.cost }
func (c *incarnation) Overtaken() []engine.Msg { return c.overtaken }

// Work pays d in calibrated computation (nothing with --work none).
func (c *incarnation) Work(d engine.Time) {
	if !c.alive() {
		return
	}
	c.p.rt.pay(c.p, d)
}

func (c *incarnation) After(d engine.Time, id int64) {
	if !c.alive() {
		return
	}
	p := c.p
	periodic := c.inTimer && c.firing == id
	d = max(d, 0)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.alive() {
		return
	}
	if d == 0 {
		// Due now: fired at once, without a Go timer (a source re-arms
		// its poll this way after every batch it reads).
		p.timers = append(p.timers, id)
		p.syncPrio()
		p.signal()
		return
	}
	seq := p.timerSeq
	p.timerSeq++
	a := &armed{due: p.rt.Now() + d, periodic: periodic}
	p.pending[seq] = a
	a.t = time.AfterFunc(time.Duration(d), func() {
		p.mu.Lock()
		if _, ok := p.pending[seq]; ok && c.alive() {
			delete(p.pending, seq)
			p.timers = append(p.timers, id)
			p.syncPrio()
			p.signal()
		}
		p.mu.Unlock()
	})
}

func (c *incarnation) Send(to engine.ProcID, m engine.Msg) { c.send(to, m, false) }

func (c *incarnation) SendOvertaking(to engine.ProcID, m engine.Msg) {
	m.Ctrl = true
	c.send(to, m, true)
}

func (c *incarnation) Record(e engine.Event) {
	rt := c.p.rt
	e.Time = rt.Now()
	e.Proc = c.p.spec.Name
	rt.observe(func() {
		if c.alive() {
			rt.observer.Event(e)
		}
	})
}

// Count adds to a counter of the incarnation's own (counts), handed to the
// observer in bulk (flushCounts) with what the incarnation counted while it
// was alive.
func (c *incarnation) Count(name string, delta int64) {
	if !c.alive() {
		return
	}
	for i := range c.counts {
		if c.counts[i].name == name {
			c.counts[i].n += delta
			return
		}
	}
	c.counts = append(c.counts, counted{name, delta})
}

// flushCounts hands the incarnation's counts to the observer, also after
// the incarnation was killed (they were counted while it was alive) and
// while Close is waiting for the goroutines (which then read nothing).
func (c *incarnation) flushCounts() {
	if len(c.counts) == 0 {
		return
	}
	rt := c.p.rt
	rt.obs.Lock()
	c.countLocked()
	rt.obs.Unlock()
}

// countLocked hands the counts over (rt.obs held).
func (c *incarnation) countLocked() {
	for _, k := range c.counts {
		if k.n != 0 {
			c.p.rt.observer.Count(k.name, k.n)
		}
	}
	clear(c.counts)
	c.counts = c.counts[:0]
}

// Commit is published when the step ends (publish).
func (c *incarnation) Commit(cm engine.Commit) {
	if c.alive() {
		c.commits = append(c.commits, cm)
	}
}

// publish makes the step's commits visible and its store deletes take
// effect, all together and only if the incarnation is still alive: a crash
// never splits a step's effects on the sink and the store. The simulator
// gives the same guarantee by crashing only between steps, and systems rely
// on it where a real system has an atomic commit (barrier's 2PC sink
// commits a transaction and deletes its pending record in one handler, as
// a transactional store's commit marker does). Sends are not held back: a
// process that dies mid-step has sent what it sent, so a send first
// publishes what the step committed before it (the simulator's order: a
// step's commits and sends are all or nothing, so no one can see a send
// whose earlier commit was lost).
func (c *incarnation) publish() {
	if len(c.commits) == 0 && len(c.deletes) == 0 {
		return
	}
	p, rt := c.p, c.p.rt
	p.mu.Lock() // excludes a kill between the check and the effects
	if c.alive() {
		if len(c.commits) > 0 {
			rt.obs.Lock()
			if !rt.halted.Load() {
				// Stamped when they become visible, under the observer
				// lock: commits reach the harness in time order, which
				// its output store (what readers see when) relies on.
				at := rt.Now()
				for _, cm := range c.commits {
					rt.observer.Commit(at, cm)
				}
				c.countLocked()
			}
			rt.obs.Unlock()
		}
		rt.store.remove(c.deletes)
	}
	p.mu.Unlock()
	clear(c.commits)
	c.commits = c.commits[:0]
	c.deletes = c.deletes[:0]
}

func (c *incarnation) Pause(from engine.ProcID) { c.setPaused(from, true) }

func (c *incarnation) Resume(from engine.ProcID) { c.setPaused(from, false) }

func (c *incarnation) setPaused(from engine.ProcID, paused bool) {
	p := c.p
	s := p.rt.mustProc(from)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.alive() {
		return
	}
	ch := p.channelFrom(s)
	ch.paused = paused
	c.paused = true // a batch of ours must not run past a Pause
}

// Restart kills p's current incarnation and re-deploys it after the cost
// model's TaskRestart delay, unless its worker is down by then.
func (c *incarnation) Restart(id engine.ProcID) {
	if !c.alive() {
		return
	}
	rt := c.p.rt
	q := rt.mustProc(id)
	// The event is recorded after life is released: the observer lock is
	// never taken while life is held (Close takes them the other way round).
	rt.life.Lock()
	killed := !rt.halted.Load() && rt.kill(q)
	if killed {
		inc := q.inc.Load()
		rt.due(c.p.rt.Now()+rt.cost.TaskRestart, func() {
			if q.inc.Load() == inc && (q.spec.Worker < 0 || !rt.workerDown[q.spec.Worker]) {
				rt.startProc(q)
			}
		})
	}
	rt.life.Unlock()
	if killed {
		at := rt.Now()
		rt.observe(func() {
			rt.observer.Event(engine.Event{Time: at, Proc: q.spec.Name, Kind: "task_restart"})
		})
	}
}

func (rt *Runtime) mustProc(id engine.ProcID) *proc {
	if id < 0 || int(id) >= len(rt.procs) {
		panic(fmt.Sprintf("live: no process %d", id))
	}
	return rt.procs[id]
}
