package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"ftbench/engine"
)

// proc is one process instance slot. It is the process's Ctx and Store.
type proc struct {
	id   engine.ProcID
	spec *engine.ProcSpec
	sim  *Sim
	cost *engine.CostModel // the model of spec.CostOp (engine.CostModel.For)
	cpu  engine.Time       // CPU charged over the run, every incarnation
	p    engine.Process
	inc  uint32 // incarnation: bumped by every kill, so stale events are ignored
	up   bool
	// frozen: the worker is paused (pause.go); the incarnation keeps its
	// state but runs nothing until it resumes.
	frozen bool
	// initPending: the incarnation was started on a paused worker; it is
	// up (messages to it queue, as a stopped worker's sockets take them)
	// and frozen, and runs Init when the worker wakes.
	initPending bool
	rng         *rand.Rand

	clock     engine.Time // the process's clock during a step
	busyUntil engine.Time // end of its last slice
	scheduled bool        // an evRun is pending
	stepping  bool

	timers    []int64      // fired timers waiting for the CPU
	urgent    []urgentItem // runtime notifications and overtaking messages
	inputs    []*channel   // channels into this process
	rr        int          // round-robin position over inputs
	reading   *channel     // the input whose delivered buffer is being read
	full      int          // data output channels at capacity: >0 means backpressured
	overtaken []engine.Msg // valid during Handle of an overtaking message
	storeFree engine.Time  // the writer's storage bandwidth is busy until then
	slow      []slowRule

	// firing is the timer being handled while inTimer: a timer that re-arms
	// itself from its own handler is periodic (a source's poll, a
	// checkpoint trigger), which quiescence does not wait for.
	firing  int64
	inTimer bool

	// worker is where the process is placed now: spec.Worker until a
	// failure re-places it (slots.go).
	worker int
	// zombie: a detached incarnation still running on the far side of a
	// partition (partition.go); zout are its own output channels.
	zombie bool
	zout   map[engine.ProcID]*channel
	// detached are channels from this process to a zombie: they died with
	// neither end's restart, so they are reset when this process is killed.
	detached []*channel
	// bpSince is when full last became positive; bpTime the time it has
	// been positive within the input, closed spans only (backpressure.go).
	bpSince, bpTime engine.Time
}

type urgentItem struct {
	from engine.ProcID
	ch   *channel // the overtaking message's channel; nil for runtime messages
	seq  uint64
	m    engine.Msg
}

func (p *proc) start(at engine.Time) {
	p.activate()
	p.init(at)
}

// activate brings up a fresh incarnation; init runs its Init. They are
// separate so that at time 0 every process is up before any Init sends.
func (p *proc) activate() {
	p.up = true
	p.p = p.spec.New()
	p.rng = engine.NewRand(engine.ChildSeed(p.sim.seed, p.spec.Name+"#"+strconv.Itoa(int(p.inc))))
}

func (p *proc) init(at engine.Time) {
	p.clock = max(at, p.busyUntil)
	if tr := p.sim.tr; tr != nil && p.inc > 0 {
		tr.procEvent(p.clock, p, "restart", int64(p.worker))
	}
	p.stepping = true
	p.p.Init(p)
	p.stepping = false
	p.busyUntil = p.clock
	p.wake(p.clock)
}

// kill drops the incarnation: its state, timers, queued input and every
// channel to and from it.
func (p *proc) kill() {
	if tr := p.sim.tr; tr != nil {
		tr.procEvent(p.sim.now, p, tr.killKind, int64(p.worker))
	}
	p.up = false
	p.frozen, p.initPending = false, false
	p.inc++
	p.p = nil
	p.scheduled = false
	// The dead incarnation's CPU backlog and queued storage writes die with
	// it: the next one starts with an idle CPU and storage link.
	p.busyUntil = 0
	p.storeFree = 0
	p.timers = p.timers[:0]
	p.urgent = p.urgent[:0]
	p.rr, p.reading = 0, nil
	for _, ch := range p.inputs {
		ch.paused = false
		p.sim.reset(ch)
	}
	for _, ch := range p.sim.chanOf[p.id] {
		if ch != nil {
			p.sim.reset(ch)
		}
	}
	for _, ch := range p.detached {
		p.sim.reset(ch)
	}
	p.detached = nil
	if p.full > 0 {
		p.unblocked(p.sim.now)
	}
	p.full = 0
}

// wake schedules a slice if the process has something it may do.
func (p *proc) wake(at engine.Time) {
	if !p.up || p.frozen || p.scheduled || p.stepping || !p.hasWork() {
		return
	}
	p.scheduled = true
	p.sim.schedule(event{at: max(at, p.busyUntil, p.sim.now), kind: evRun, proc: int32(p.id), inc: p.inc})
}

func (p *proc) hasWork() bool {
	if len(p.urgent) > 0 || (p.full == 0 && len(p.timers) > 0) {
		return true
	}
	for _, ch := range p.inputs {
		if ch.deliverable(p.full > 0) {
			return true
		}
	}
	return false
}

// step runs one CPU slice.
func (p *proc) step(at engine.Time) {
	p.clock = max(at, p.busyUntil)
	deadline := p.clock + p.sim.cost.Quantum
	inc := p.inc
	p.stepping = true
	for p.clock < deadline && p.inc == inc {
		if len(p.urgent) > 0 {
			u := p.urgent[0]
			copy(p.urgent, p.urgent[1:])
			p.urgent = p.urgent[:len(p.urgent)-1]
			if u.ch != nil {
				p.overtaken = u.ch.overtakenBy(u.seq, p.overtaken[:0])
			}
			if tr := p.sim.tr; tr != nil {
				if u.ch == nil {
					tr.runtimeMsg(p, &u.m, p.clock)
				} else if u.ch.tr != nil {
					tr.received(u.ch.tr, u.seq, true, p.clock)
				}
			}
			p.p.Handle(p, u.from, u.m)
			p.overtaken = p.overtaken[:0]
			continue
		}
		if p.full == 0 && len(p.timers) > 0 {
			id := p.timers[0]
			p.timers = p.timers[1:]
			p.firing, p.inTimer = id, true
			p.p.Timer(p, id)
			p.inTimer = false
			continue
		}
		ch := p.nextInput()
		if ch == nil {
			break
		}
		if ch.tr != nil && len(ch.tr.pending) > 0 {
			seq := ch.inq.headSeq()
			m := ch.take()
			p.sim.tr.received(ch.tr, seq, false, p.clock)
			p.p.Handle(p, ch.from.id, m)
			continue
		}
		m := ch.take()
		p.p.Handle(p, ch.from.id, m)
	}
	p.stepping = false
	if p.inc != inc {
		return
	}
	p.busyUntil = p.clock
	p.wake(p.clock)
}

// nextInput picks the next channel to read from. A network buffer is read
// through before another input gets a turn, as Flink's input gate hands a
// task one buffer at a time (StreamTaskNetworkInput deserialises all of its
// records before it polls the gate again) and Storm's receive queue takes a
// transport batch whole. Between buffers it goes round-robin over channels
// with deliverable data, so no input starves another. A buffer is left
// part-read only when its channel stops being deliverable: a barrier paused
// it, or backpressure holds its next data record.
func (p *proc) nextInput() *channel {
	blocked := p.full > 0
	if ch := p.reading; ch != nil && ch.inq.pos > 0 && ch.deliverable(blocked) {
		return ch
	}
	n := len(p.inputs)
	for i := 0; i < n; i++ {
		j := p.rr + i
		if j >= n {
			j -= n
		}
		if ch := p.inputs[j]; ch.deliverable(blocked) {
			p.rr = j + 1
			if p.rr == n {
				p.rr = 0
			}
			p.reading = ch
			return ch
		}
	}
	return nil
}

// --- engine.Ctx ---

func (p *proc) Self() engine.ProcID     { return p.id }
func (p *proc) Now() engine.Time        { return p.clock }
func (p *proc) Rand() *rand.Rand        { return p.rng }
func (p *proc) Store() engine.Store     { return p }
func (p *proc) Cost() *engine.CostModel { return p.cost }
func (p *proc) Overtaken() []engine.Msg { return p.overtaken }

func (p *proc) Work(d engine.Time) {
	if len(p.slow) > 0 {
		for _, r := range p.slow {
			if p.clock >= r.from && p.clock < r.to {
				d = engine.Time(float64(d) * r.factor)
				break
			}
		}
	}
	p.clock += d
	p.cpu += d
}

func (p *proc) After(d engine.Time, id int64) {
	var flags uint8
	if p.inTimer && p.firing == id {
		flags = flagPeriodic
	}
	p.sim.schedule(event{at: p.clock + max(d, 0), kind: evTimer, proc: int32(p.id), inc: p.inc, a: id, flags: flags})
}

func (p *proc) Send(to engine.ProcID, m engine.Msg) { p.sim.send(p, to, m, false) }

func (p *proc) SendOvertaking(to engine.ProcID, m engine.Msg) {
	m.Ctrl = true
	p.sim.send(p, to, m, true)
}

func (p *proc) Record(e engine.Event) {
	e.Time = p.clock
	e.Proc = p.spec.Name
	p.sim.event(e)
}

func (p *proc) Count(name string, delta int64) { p.sim.obs.Count(name, delta) }

func (p *proc) Commit(c engine.Commit) { p.sim.obs.Commit(p.clock, c) }

func (p *proc) CommitAll(cs []engine.Commit) {
	if b, ok := p.sim.obs.(engine.BatchObserver); ok {
		b.CommitAll(p.clock, cs)
		return
	}
	for _, c := range cs {
		p.sim.obs.Commit(p.clock, c)
	}
}

func (p *proc) CommitOwned(cs []engine.Commit) {
	if b, ok := p.sim.obs.(engine.BatchObserver); ok {
		b.CommitOwned(p.clock, cs)
		return
	}
	p.CommitAll(cs)
}

func (p *proc) CommitBuffer(n int) []engine.Commit {
	if b, ok := p.sim.obs.(engine.BatchObserver); ok {
		return b.CommitBuffer(n)
	}
	return make([]engine.Commit, 0, n)
}

func (p *proc) Pause(from engine.ProcID) {
	if ch := p.sim.channel(p.sim.mustProc(from), p); ch != nil {
		ch.paused = true
	}
}

func (p *proc) Resume(from engine.ProcID) {
	ch := p.sim.channel(p.sim.mustProc(from), p)
	if ch != nil && ch.paused {
		ch.paused = false
	}
}

func (p *proc) Restart(id engine.ProcID) {
	q := p.sim.mustProc(id)
	if !q.up {
		return
	}
	if p.sim.unreachable(q) {
		// The cancel cannot reach it: it runs on as a zombie, and the new
		// incarnation waits for its worker to rejoin (partition.go).
		p.sim.detach(q, q.worker)
		return
	}
	q.kill()
	p.sim.event(engine.Event{Time: p.clock, Proc: q.spec.Name, Kind: "task_restart"})
	p.sim.schedule(event{at: p.clock + p.sim.cost.TaskRestart, kind: evProcUp, proc: int32(q.id), inc: q.inc})
}

func (s *Sim) mustProc(id engine.ProcID) *proc {
	if id < 0 || int(id) >= len(s.procs) {
		panic(fmt.Sprintf("sim: no process %d", id))
	}
	return s.procs[id]
}

// InputQueued reports the data messages and bytes held in the channel
// from -> p: its receiver queue, the wire and the sender's buffer. It is not
// part of engine.Ctx (protocol logic must not depend on it); systems reach
// it with a type assertion for metrics, such as the records an aligned
// barrier holds back in a paused channel.
func (p *proc) InputQueued(from engine.ProcID) (msgs, bytes int) {
	if from < 0 || int(from) >= len(p.sim.chanOf) {
		return 0, 0
	}
	ch := p.sim.chanOf[from][p.id]
	if ch == nil {
		return 0, 0
	}
	msgs, _ = ch.dataHeld()
	return msgs, ch.credit.Used
}
