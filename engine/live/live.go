// Package live runs the same protocol code as the simulator (engine/sim) for
// real: one goroutine per process, wall-clock time, timers from the Go
// runtime, Work paid as real computation on the machine's cores, and a
// durable store of fsynced files. It implements the engine.Process/Ctx
// contract with the simulator's semantics wherever they are not about
// virtual time: per-pair FIFO channels with credit-based backpressure
// (control messages exempt, overtaking messages, Pause/Resume), network
// buffers flushed when full or after the buffer timeout, crashes that kill
// an incarnation and restart it with Init after a delay, and failure notices
// after the detection delay.
//
// A live run is not reproducible byte for byte: the interleaving of
// goroutines and the wall clock decide what the seed decides in the
// simulator. Seeds still derive every process's random stream, so a
// protocol's own choices are the same from run to run.
//
// Locking: each process slot's mutex guards its incarnation state, its
// input channels (the receiver's side and the sender's unflushed buffer
// alike) and its urgent and timer queues; a sender takes the receiver's
// mutex to send. Kills and restarts are serialised by Runtime.life. The
// observer is called under Runtime.obs only, so the harness needs no locks.
// Lock order: life, then a slot's mutex, then obs or the store's mutex;
// never two slots' mutexes at once.
package live

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"ftbench/engine"
	"ftbench/engine/flow"
)

// WorkMode says how ctx.Work is paid.
type WorkMode string

// Work modes.
const (
	// WorkModel pays Work(d) (and the cost model's per-message send cost)
	// with calibrated computation worth d on this machine.
	WorkModel WorkMode = "model"
	// WorkNone pays nothing: the bare implementation's own cost.
	WorkNone WorkMode = "none"
)

// ParseWorkMode checks a --work value.
func ParseWorkMode(s string) (WorkMode, error) {
	switch WorkMode(s) {
	case WorkModel, WorkNone:
		return WorkMode(s), nil
	case "":
		return WorkModel, nil
	}
	return "", fmt.Errorf("--work %q: want model or none", s)
}

// Config configures a live run.
type Config struct {
	Seed        uint64
	Cost        engine.CostModel
	Workers     int
	SampleEvery engine.Time     // 0: no sampling
	Observer    engine.Observer // nil: nothing observed
	Work        WorkMode        // "" = WorkModel
	// StoreDir holds the durable store's files; "" makes a temporary
	// folder that Close removes.
	StoreDir string
	// StoreWriters is the size of the write pool (0: 4).
	StoreWriters int
}

// Runtime is one live run of a deployment.
type Runtime struct {
	cost  engine.CostModel
	dep   *engine.Deployment
	seed  uint64
	work  WorkMode
	burn  *burner
	procs []*proc
	store *store

	started bool
	start   time.Time
	// obs serialises every observer call. Between two calls of Run (and
	// after the last) it is held, so the harness reads its own state
	// without racing the processes.
	obs      sync.Mutex
	observer engine.Observer
	every    engine.Time

	halted   atomic.Bool
	halt     chan struct{} // closed by Close: every goroutine returns
	ended    chan struct{} // closed by Stop: Run returns
	stopOnce sync.Once
	endAt    atomic.Int64 // Now once halted
	wg       sync.WaitGroup

	// life serialises kills and starts, and guards the worker state and
	// the runtime's own timers.
	life       sync.Mutex
	workerDown []bool
	failures   []engine.Failure
	timers     []*time.Timer
	pending    []func() // faults installed before Run, armed by it
	dues       []*dueAction
	nextDue    atomic.Int64 // earliest at of dues (MaxInt64: none)

	errOnce sync.Once
	err     error
}

// New builds a live run of dep; nothing runs until Run.
func New(dep *engine.Deployment, cfg Config) (*Runtime, error) {
	if cfg.Cost.BufferBytes <= 0 || cfg.Cost.ChannelBuffers <= 0 {
		return nil, fmt.Errorf("live: cost model needs positive buffer-bytes and channel-buffers")
	}
	work, err := ParseWorkMode(string(cfg.Work))
	if err != nil {
		return nil, err
	}
	rt := &Runtime{
		cost: cfg.Cost, dep: dep, seed: cfg.Seed, work: work,
		observer: cfg.Observer, every: cfg.SampleEvery,
		halt: make(chan struct{}), ended: make(chan struct{}),
		workerDown: make([]bool, max(cfg.Workers, 0)),
	}
	if rt.observer == nil {
		rt.observer = nopObserver{}
	}
	rt.nextDue.Store(1<<63 - 1)
	if work == WorkModel {
		rt.burn = calibrated()
	}
	writers := cfg.StoreWriters
	if writers <= 0 {
		writers = 4
	}
	rt.store = newStore(rt, cfg.StoreDir, writers)
	n := len(dep.Procs)
	costs := map[string]*engine.CostModel{} // per CostOp, shared by its instances
	for i := range dep.Procs {
		spec := &dep.Procs[i]
		if spec.Worker >= len(rt.workerDown) || spec.Worker < engine.ClientNode {
			return nil, fmt.Errorf("live: process %s is placed on worker %d, but there are %d workers", spec.Name, spec.Worker, cfg.Workers)
		}
		cost, ok := costs[spec.CostOp]
		if !ok {
			cost = rt.cost.For(spec.CostOp)
			costs[spec.CostOp] = cost
		}
		rt.procs = append(rt.procs, &proc{id: engine.ProcID(i), spec: spec, rt: rt, cost: cost, in: make([]*channel, n), pending: map[uint64]*armed{}})
	}
	return rt, nil
}

// Now is wall-clock time since Run started (frozen by Close).
func (rt *Runtime) Now() engine.Time {
	if rt.halted.Load() {
		return engine.Time(rt.endAt.Load())
	}
	if !rt.started {
		return 0
	}
	return engine.Time(time.Since(rt.start))
}

// Events is the number of messages and timers handled so far.
func (rt *Runtime) Events() uint64 {
	var n uint64
	for _, p := range rt.procs {
		n += p.handled.Load()
	}
	return n
}

// Stop makes Run return; the processes go on until Close. It may be
// called from inside an observer callback.
func (rt *Runtime) Stop() { rt.stopOnce.Do(func() { close(rt.ended) }) }

// Err is the first panic of a process or a store failure, if any: the run
// is then meaningless.
func (rt *Runtime) Err() error { return rt.err }

func (rt *Runtime) fail(err error) {
	rt.errOnce.Do(func() { rt.err = err })
	rt.Stop()
}

// Run starts every process (on its first call) and lets the run go on
// until wall-clock time until or Stop. It returns with the observer
// paused, so the caller may read what it observed; the next Run resumes it.
func (rt *Runtime) Run(until engine.Time) {
	if !rt.started {
		rt.begin()
	} else {
		rt.obs.Unlock()
	}
	if d := until - rt.Now(); d > 0 {
		t := time.NewTimer(time.Duration(d))
		select {
		case <-t.C:
		case <-rt.ended:
		}
		t.Stop()
	}
	rt.obs.Lock()
}

// begin brings every process up, runs every Init in process order with the
// clock at 0 (as the simulator does at time 0: no process misses input
// appended while the goroutines of others are being started), then starts
// the clock, the goroutines and the store.
func (rt *Runtime) begin() {
	incs := make([]*incarnation, len(rt.procs))
	for i, p := range rt.procs {
		p.mu.Lock()
		incs[i] = p.activate()
		p.mu.Unlock()
	}
	for _, c := range incs {
		c.init()
	}
	// Nothing else runs yet; life is taken only now, so that an Init may
	// call Restart.
	rt.life.Lock()
	defer rt.life.Unlock()
	rt.start = time.Now()
	rt.started = true
	for _, f := range rt.pending {
		f()
	}
	rt.pending = nil
	if err := rt.store.open(); err != nil {
		rt.fail(err)
	}
	rt.store.run()
	for _, c := range incs {
		rt.wg.Add(1)
		go c.loop(false)
	}
	if rt.every > 0 {
		rt.wg.Add(1)
		go rt.sampler()
	}
}

// Close stops every goroutine and timer and freezes the clock; the run's
// state (Activity, StoreValue, PeakQueuedBytes) stays readable. It must be
// called after the last Run, which left the observer paused.
func (rt *Runtime) Close() {
	if !rt.started || rt.halted.Load() {
		return
	}
	// The observer lock is released before life is taken: a process may
	// hold its slot's mutex waiting for the observer while a crash holds
	// life waiting for that mutex.
	rt.obs.Unlock()
	rt.life.Lock()
	rt.endAt.Store(int64(time.Since(rt.start)))
	rt.halted.Store(true)
	close(rt.halt)
	for _, t := range rt.timers {
		t.Stop()
	}
	rt.life.Unlock()
	rt.wg.Wait()
	for _, p := range rt.procs {
		p.mu.Lock()
		p.stopTimers()
		p.mu.Unlock()
	}
	rt.store.close()
}

// after runs f at wall-clock time at of the run (now if it is past),
// unless the run is closed by then. Callers hold life or run before begin.
func (rt *Runtime) after(d time.Duration, f func()) {
	t := time.AfterFunc(d, func() {
		if !rt.halted.Load() {
			f()
		}
	})
	rt.timers = append(rt.timers, t)
}

// dueAction is a runtime action due at a time (a task re-deployed by
// Restart), run by its Go timer or by catchUp, whichever comes first.
type dueAction struct {
	at   engine.Time
	done bool
	f    func() // called with life held
}

// due schedules f (called with life held) at time at (life held).
func (rt *Runtime) due(at engine.Time, f func()) {
	a := &dueAction{at: at, f: f}
	rt.dues = append(rt.dues, a)
	rt.nextDue.Store(min(rt.nextDue.Load(), int64(at)))
	rt.after(time.Duration(at-rt.Now()), func() {
		rt.life.Lock()
		defer rt.life.Unlock()
		rt.runDue(a)
	})
}

func (rt *Runtime) runDue(a *dueAction) {
	if a.done || rt.halted.Load() {
		return
	}
	a.done = true
	a.f()
}

// catchUp runs every runtime action due by now before a process handles a
// timer, so that a timer set after a Restart for the same moment finds the
// task up, as the simulator orders simultaneous events by insertion (the
// checkpoint coordinator deploys its restarted tasks 1 ms after they are
// due back; a Go timer may fire later than a later one's under load).
func (rt *Runtime) catchUp() {
	if int64(rt.Now()) < rt.nextDue.Load() {
		return
	}
	rt.life.Lock()
	defer rt.life.Unlock()
	now := rt.Now()
	next := int64(1<<63 - 1)
	kept := rt.dues[:0]
	for _, a := range rt.dues {
		if a.at <= now {
			rt.runDue(a)
		}
		if !a.done {
			kept = append(kept, a)
			next = min(next, int64(a.at))
		}
	}
	clear(rt.dues[len(kept):])
	rt.dues = kept
	rt.nextDue.Store(next)
}

func (rt *Runtime) sampler() {
	defer rt.wg.Done()
	for k := engine.Time(1); ; k++ {
		at := k * rt.every
		t := time.NewTimer(time.Until(rt.start.Add(time.Duration(at))))
		select {
		case <-t.C:
		case <-rt.halt:
			t.Stop()
			return
		}
		rt.observe(func() { rt.observer.Sample(at) })
	}
}

// observe calls f under the observer lock unless the run is closed.
func (rt *Runtime) observe(f func()) {
	rt.obs.Lock()
	defer rt.obs.Unlock()
	if !rt.halted.Load() {
		f()
	}
}

// guard turns a panic in a process's goroutine into the run's error.
func (rt *Runtime) guard(name string) {
	if r := recover(); r != nil {
		rt.fail(fmt.Errorf("panic in %s: %v\n%s", name, r, debug.Stack()))
	}
}

// StoreValue reads durable storage from outside the run (for checks).
func (rt *Runtime) StoreValue(key string) (any, bool) { return rt.store.value(key) }

// Capacity is the credit of every channel in bytes.
func (rt *Runtime) Capacity() int { return flow.Capacity(&rt.cost) }

// PeakQueuedBytes is the most data any one channel has held at once.
func (rt *Runtime) PeakQueuedBytes() int {
	peak := 0
	for _, q := range rt.procs {
		q.mu.Lock()
		for _, ch := range q.inputs {
			peak = max(peak, ch.credit.Peak)
		}
		q.mu.Unlock()
	}
	return peak
}

// Activity reports what is still going on (engine.Activity): data in
// channels, processes down, and one-shot timers due before deadline.
// Processes on the client node are left out, as in the simulator.
func (rt *Runtime) Activity(deadline engine.Time) engine.Activity {
	var a engine.Activity
	var busy []engine.BusyChannel
	for _, q := range rt.procs {
		if q.spec.Worker == engine.ClientNode {
			continue
		}
		q.mu.Lock()
		for _, ch := range q.inputs {
			if ch.from.spec.Worker == engine.ClientNode || ch.credit.Used == 0 {
				continue
			}
			a.DataBytes += ch.credit.Used
			busy = append(busy, engine.BusyChannel{Name: ch.from.spec.Name + "->" + q.spec.Name, Bytes: ch.credit.Used})
		}
		if !q.up {
			a.Down = append(a.Down, q.spec.Name)
		}
		for _, t := range q.pending {
			if !t.periodic && t.due <= deadline {
				a.Timers++
			}
		}
		q.mu.Unlock()
	}
	a.Channels = engine.TopChannels(busy)
	return a
}

type nopObserver struct{}

func (nopObserver) Commit(engine.Time, engine.Commit) {}
func (nopObserver) Event(engine.Event)                {}
func (nopObserver) Count(string, int64)               {}
func (nopObserver) Sample(engine.Time)                {}
