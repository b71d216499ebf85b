// Package sim is the deterministic discrete-event runtime: virtual time,
// machines whose cores are shared by the processes placed on them
// (cores.go), CPU charged by Work, bounded FIFO channels that carry records
// in network buffers, crashes and durable storage. Everything random is drawn
// from generators derived from the run seed, and simultaneous events are
// ordered by insertion, so a config and seed always give the same run.
//
// A process runs in slices: when it has input it takes up to one Quantum of
// CPU, handling messages back to back on its own clock (ctx.Now advances by
// the Work charged), then yields. Records travel in network buffers that are
// flushed when full or after the buffer timeout, so one heap event carries
// hundreds of records and millions of simulated records per second stay cheap.
package sim

import (
	"fmt"
	"math/rand/v2"

	"ftbench/engine"
)

// Observer is engine.Observer: what the harness measures, called
// synchronously from the simulation loop.
type Observer = engine.Observer

// Config configures a simulation.
type Config struct {
	Seed        uint64
	Cost        engine.CostModel
	Workers     int
	SampleEvery engine.Time // 0: no sampling
	Observer    Observer    // nil: nothing observed
	// Slots is every worker's slot count (slots.go): how many processes it
	// can host. 0: each worker has exactly the slots its initial placement
	// uses, so no failed worker's process can be re-placed.
	Slots int
	// InputEnd is when the input stops being appended: the backpressure
	// of every operator over [0, InputEnd) is counted at the first sample
	// at or after it (backpressure.go). 0: not measured.
	InputEnd engine.Time
	// Trace, if set, records a trace of the run in its window (trace.go);
	// Sim.Trace returns it.
	Trace *TraceConfig
}

// Sim is one simulated run of a deployment.
type Sim struct {
	now     engine.Time
	seq     uint64
	heap    eventHeap
	procs   []*proc
	chans   []*channel   // every channel, by index
	chanOf  [][]*channel // [from][to], created on first use
	cost    engine.CostModel
	obs     Observer
	dep     *engine.Deployment
	seed    uint64
	netRand *rand.Rand

	workerDown []bool
	masterDown bool // master.go
	pauses     []workerPause
	slots      []int // per worker: how many processes it can host
	placed     []int // per worker: how many processes are placed on it
	part       partition
	cuts       []cutSpec
	zombies    []*proc // detached incarnations still running (partition.go)
	failures   []engine.Failure
	store      map[string]stored
	writes     []pendingWrite
	freeWrites []int64

	reorders   []reorderRule
	throttles  []throttleRule
	storeRules []storeRule

	sampleEvery engine.Time
	inputEnd    engine.Time // Config.InputEnd
	bpReported  bool        // the backpressure has been counted
	stopped     bool
	processed   uint64

	bufPool     [maxBufClass - minBufClass + 1][][]item // send buffers by size class (channel.go)
	pooledBytes int                                     // their capacity in bytes
	netPool     []*netBuf
	bodyPool    [][]bodyAt // bodies slices for reuse (channel.go)

	// machines[w+1] is worker w's CPU, machines[0] the master node's; nil
	// when the cost model's Cores is 0 (a CPU per process).
	machines []machine

	tr *tracer // nil unless Config.Trace (trace.go)
}

type stored struct {
	val  any
	size int64
}

type pendingWrite struct {
	key   string
	val   any
	size  int64
	token int64
}

// New builds a simulation of dep. Init of every process runs at time 0, in
// process order, when Run starts.
func New(dep *engine.Deployment, cfg Config) (*Sim, error) {
	if cfg.Cost.BufferBytes <= 0 || cfg.Cost.ChannelBuffers <= 0 || cfg.Cost.Quantum <= 0 {
		return nil, fmt.Errorf("sim: cost model needs positive buffer-bytes, channel-buffers and quantum")
	}
	s := &Sim{
		cost:        cfg.Cost,
		obs:         cfg.Observer,
		dep:         dep,
		seed:        cfg.Seed,
		netRand:     engine.NewRand(engine.ChildSeed(cfg.Seed, "network")),
		workerDown:  make([]bool, max(cfg.Workers, 0)),
		pauses:      make([]workerPause, max(cfg.Workers, 0)),
		store:       map[string]stored{},
		sampleEvery: cfg.SampleEvery,
		inputEnd:    max(cfg.InputEnd, 0),
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if cfg.Trace != nil {
		s.tr = newTracer(*cfg.Trace, cfg.Seed, dep.Describe)
	}
	if c := cfg.Cost.Cores; c > 0 {
		s.machines = make([]machine, len(s.workerDown)+1)
		for i := range s.machines {
			s.machines[i].free = make([]engine.Time, c)
		}
	}
	n := len(dep.Procs)
	s.chanOf = make([][]*channel, n)
	costs := map[string]*engine.CostModel{} // per CostOp, shared by its instances
	for i := range dep.Procs {
		spec := &dep.Procs[i]
		if spec.Worker >= len(s.workerDown) || spec.Worker < engine.ClientNode {
			return nil, fmt.Errorf("sim: process %s is placed on worker %d, but there are %d workers", spec.Name, spec.Worker, cfg.Workers)
		}
		cost, ok := costs[spec.CostOp]
		if !ok {
			cost = s.cost.For(spec.CostOp)
			costs[spec.CostOp] = cost
		}
		s.procs = append(s.procs, &proc{id: engine.ProcID(i), spec: spec, sim: s, cost: cost, worker: spec.Worker})
		s.chanOf[i] = make([]*channel, n)
	}
	if err := s.initSlots(cfg.Slots); err != nil {
		return nil, err
	}
	return s, nil
}

// CPU is the CPU time charged to process id so far (Work and sends, every
// incarnation, slow faults included).
func (s *Sim) CPU(id engine.ProcID) engine.Time { return s.mustProc(id).cpu }

// Now is the simulation's current time.
func (s *Sim) Now() engine.Time { return s.now }

// Events is the number of events processed so far.
func (s *Sim) Events() uint64 { return s.processed }

// Stop ends Run after the current event.
func (s *Sim) Stop() { s.stopped = true }

// StoreValue reads durable storage from outside the run (for checks).
func (s *Sim) StoreValue(key string) (any, bool) {
	v, ok := s.store[key]
	return v.val, ok
}

// StoreKeys returns every key in durable storage, in no particular order.
func (s *Sim) StoreKeys() []string {
	keys := make([]string, 0, len(s.store))
	for k := range s.store {
		keys = append(keys, k)
	}
	return keys
}

func (s *Sim) schedule(e event) {
	s.seq++
	e.seq = s.seq
	s.heap.push(e)
}

// Run starts every process and processes events until Stop is called, no
// events are left, or the next event lies after until.
func (s *Sim) Run(until engine.Time) {
	if s.processed == 0 {
		for _, p := range s.procs {
			p.activate()
		}
		for _, p := range s.procs {
			p.init(0)
		}
		if s.sampleEvery > 0 {
			s.schedule(event{at: s.sampleEvery, kind: evSample})
		}
	}
	for s.heap.len() > 0 && !s.stopped {
		if s.heap.peek().at > until {
			break
		}
		e := s.heap.pop()
		s.now = e.at
		s.processed++
		s.dispatch(&e)
	}
}

func (s *Sim) dispatch(e *event) {
	switch e.kind {
	case evRun:
		p := s.procs[e.proc]
		if p.inc != e.inc && len(s.zombies) > 0 {
			if z := s.incarnation(e.proc, e.inc); z != nil {
				p = z
			}
		}
		if p.up && p.inc == e.inc {
			p.scheduled = false
			if !p.frozen {
				s.runSlice(p, e.at)
			}
		}
	case evCores:
		s.dispatchCores(int(e.proc), e.at)
	case evTimer:
		p := s.procs[e.proc]
		if p.inc != e.inc && len(s.zombies) > 0 {
			if z := s.incarnation(e.proc, e.inc); z != nil {
				p = z
			}
		}
		if p.up && p.inc == e.inc {
			p.timers = append(p.timers, e.a)
			p.wake(e.at)
		}
	case evDeliver:
		s.deliver(e.buf)
	case evFlush:
		ch := s.chans[e.a]
		if ch.epoch == e.inc && ch.outBuf.Fire(uint32(e.proc)) {
			if !ch.from.frozen { // a stopped sender flushes when it resumes
				s.flush(ch, e.at)
			}
		}
	case evCrash:
		s.crash(int(e.proc), engine.Time(e.a))
	case evWorkerUp:
		s.workerUp(int(e.proc))
	case evProcUp:
		p := s.procs[e.proc]
		switch {
		case p.up || p.inc != e.inc || (p.worker >= 0 && s.workerDown[p.worker]):
		case p.worker >= 0 && s.pauses[p.worker].on:
			// A task re-deployed onto a stopped worker is up, so what is
			// sent to it (its deployment) waits in its channels, but it
			// runs Init only when the worker wakes.
			ps := &s.pauses[p.worker]
			p.activate()
			p.frozen, p.initPending = true, true
			ps.deploy = append(ps.deploy, runReq{p: p, inc: p.inc})
		default:
			p.start(e.at)
		}
	case evNotify:
		s.replace(int(e.a))
		s.notify(engine.KindFailure, int(e.a), e.at)
	case evStoreDone:
		s.storeDone(e)
	case evPause:
		s.pauseWorker(int(e.proc), engine.Time(e.a))
	case evResume:
		s.resume(int(e.proc), e.inc)
	case evDeclare:
		s.declare(int(e.proc), e.inc)
	case evPartition:
		s.partitionStart(int(e.a))
	case evPartDetect:
		s.partitionDetect(e.inc)
	case evConnTimeout:
		s.connTimeout(e.inc)
	case evHeal:
		s.heal(e.inc)
	case evRejoin:
		s.rejoin(e.inc)
	case evSample:
		if s.inputEnd > 0 && !s.bpReported && e.at >= s.inputEnd {
			s.reportBackpressure()
		}
		s.obs.Sample(e.at)
		s.schedule(event{at: e.at + s.sampleEvery, kind: evSample})
	}
}

// Crash schedules a crash of worker at time at; it restarts after restart
// (the cost model's RestartDelay when restart < 0). Worker
// engine.MasterNode crashes the master node (master.go).
func (s *Sim) Crash(worker int, at, restart engine.Time) error {
	if worker != engine.MasterNode && (worker < 0 || worker >= len(s.workerDown)) {
		return fmt.Errorf("crash: no worker %d (workers are 0-%d)", worker, len(s.workerDown)-1)
	}
	if restart < 0 {
		restart = s.cost.RestartDelay
	}
	s.schedule(event{at: at, kind: evCrash, proc: int32(worker), a: int64(restart)})
	return nil
}

func (s *Sim) crash(worker int, restart engine.Time) {
	if worker == engine.MasterNode {
		s.crashMaster(restart)
		return
	}
	if s.workerDown[worker] {
		return
	}
	s.workerDown[worker] = true
	s.endPause(worker)
	var ids []engine.ProcID
	s.killing("crash")
	for _, p := range s.procs {
		if p.worker == worker && p.up {
			ids = append(ids, p.id)
			p.kill()
		}
	}
	s.killing("stop")
	s.freeCores(worker)
	s.event(engine.Event{Time: s.now, Kind: "worker_crash", ID: int64(worker), Value: int64(restart)})
	s.failures = append(s.failures, engine.Failure{Worker: worker, Procs: ids, FailedAt: s.now})
	s.schedule(event{at: s.now + s.cost.DetectDelay, kind: evNotify, a: int64(len(s.failures) - 1)})
	s.schedule(event{at: s.now + restart, kind: evWorkerUp, proc: int32(worker)})
}

func (s *Sim) workerUp(worker int) {
	if worker == engine.MasterNode {
		s.masterUp()
		return
	}
	if s.cutOff(worker) {
		// It cannot register with the master across the cut: it rejoins
		// when the partition heals (partition.go).
		s.part.rejoin(worker)
		return
	}
	s.workerDown[worker] = false
	s.event(engine.Event{Time: s.now, Kind: "worker_up", ID: int64(worker)})
	for _, p := range s.procs {
		if p.worker == worker && !p.up {
			p.start(s.now)
		}
	}
	s.notify(engine.KindWorkerUp, worker, s.now)
}

// notify hands a runtime message to the deployment's coordinator.
func (s *Sim) notify(kind uint16, a int, at engine.Time) {
	c := s.dep.Coordinator
	if c < 0 || int(c) >= len(s.procs) {
		return
	}
	m := engine.Msg{Kind: kind, Ctrl: true, Val: int64(a)}
	if kind == engine.KindFailure {
		f := s.failures[a]
		m = engine.FailureMsg(f, !s.workerDown[f.Worker])
	}
	p := s.procs[c]
	if !p.up {
		return
	}
	p.urgent = append(p.urgent, urgentItem{from: engine.Runtime, m: m})
	p.wake(at)
}

// event hands e to the observer, and to the trace.
func (s *Sim) event(e engine.Event) {
	s.obs.Event(e)
	if s.tr != nil {
		s.tr.event(e)
	}
}

type nopObserver struct{}

func (nopObserver) Commit(engine.Time, engine.Commit) {}
func (nopObserver) Event(engine.Event)                {}
func (nopObserver) Count(string, int64)               {}
func (nopObserver) Sample(engine.Time)                {}
