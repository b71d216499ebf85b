package sim

import (
	"fmt"

	"ftbench/engine"
)

// workerPause is a worker whose processes are stopped (SIGSTOP, a long
// stop-the-world garbage collection) while time goes on for everyone else.
//
// A paused process keeps its state, timers and queued input but executes
// nothing: no slices, no timers, no flushes of its network buffers. What is
// sent to it queues in its channels (a stopped process's sockets still take
// data until the window is full), so its senders get backpressure; its
// timers and storage completions wait and are handled when it resumes, as a
// stopped JVM's expired timers all fire when it wakes.
//
// Its heartbeats stop too: a pause that outlasts the cost model's
// DetectDelay is declared a failure at pause start + DetectDelay, exactly as
// a crash is. The coordinator gets KindFailure (FailedAt: the pause's
// start, Back: false) and the runtime treats the worker as lost: the paused
// incarnations are killed there and then (their channels reset like a
// crash's), and nothing is deployed on the worker until it wakes. When it
// wakes, the paused incarnations are zombies: without re-placement (tasks
// redeployed elsewhere) the only fence modelled is the one every real system
// has, that a worker the master declared lost must re-register, and its old
// tasks are cancelled when it does (Flink's TaskManager, Spark's executor,
// Storm's supervisor). So the killed incarnations never run again — their
// Ctx calls are dropped — and the worker comes back as after a crash: fresh
// incarnations start and the coordinator gets KindWorkerUp.
//
// Invariant: while on, every up process on the worker is frozen and none has
// a slice scheduled; a pause of a worker that is down or already paused is
// ignored, and a crash ends a pause (the stopped processes die).
type workerPause struct {
	on       bool
	gen      uint32 // tells this pause's resume and detection events from an earlier pause's
	from     engine.Time
	declared bool     // the failure detector declared the worker failed during the pause
	deploy   []runReq // tasks re-deployed (ctx.Restart) onto the worker while paused: up and frozen, they run Init when it wakes
}

// Pause stops every process on worker during [from, to).
func (s *Sim) Pause(worker int, from, to engine.Time) error {
	if worker < 0 || worker >= len(s.workerDown) {
		return fmt.Errorf("pause: no worker %d (workers are 0-%d)", worker, len(s.workerDown)-1)
	}
	if to <= from {
		return fmt.Errorf("pause: window ends at or before it starts (%s <= %s)", to, from)
	}
	s.schedule(event{at: from, kind: evPause, proc: int32(worker), a: int64(to - from)})
	return nil
}

func (s *Sim) pauseWorker(worker int, d engine.Time) {
	ps := &s.pauses[worker]
	if ps.on || s.workerDown[worker] || s.cutOff(worker) {
		// (A worker cut off by a partition is not paused as well: its
		// processes are as unreachable either way.)
		return
	}
	ps.on, ps.declared, ps.from = true, false, s.now
	ps.gen++
	for _, p := range s.procs {
		if p.worker == worker && p.up {
			p.frozen = true
		}
	}
	s.obs.Event(engine.Event{Time: s.now, Kind: "worker_pause", ID: int64(worker), Value: int64(d)})
	// Resume first: a pause that ends exactly when detection would fire
	// is not declared.
	s.schedule(event{at: s.now + d, kind: evResume, proc: int32(worker), inc: ps.gen})
	s.schedule(event{at: s.now + s.cost.DetectDelay, kind: evDeclare, proc: int32(worker), inc: ps.gen})
}

// declare is the failure detector's verdict on a worker paused for
// DetectDelay: lost, as if it had crashed when the pause began.
func (s *Sim) declare(worker int, gen uint32) {
	ps := &s.pauses[worker]
	if !ps.on || ps.gen != gen {
		return
	}
	ps.declared = true
	if s.workerDown[worker] {
		return // a partition had the worker declared failed already
	}
	s.workerDown[worker] = true
	var ids []engine.ProcID
	for _, p := range s.procs {
		if p.worker == worker && p.up {
			if !p.initPending { // a task not started yet was not running there
				ids = append(ids, p.id)
			}
			p.kill()
		}
	}
	ps.deploy = nil
	s.freeCores(worker)
	s.obs.Event(engine.Event{Time: s.now, Kind: "worker_declared_failed", ID: int64(worker), Value: int64(s.now - ps.from)})
	s.failures = append(s.failures, engine.Failure{Worker: worker, Procs: ids, FailedAt: ps.from})
	s.replace(len(s.failures) - 1)
	s.notify(engine.KindFailure, len(s.failures)-1, s.now)
}

func (s *Sim) resume(worker int, gen uint32) {
	ps := &s.pauses[worker]
	if !ps.on || ps.gen != gen {
		return
	}
	ps.on = false
	s.obs.Event(engine.Event{Time: s.now, Kind: "worker_resume", ID: int64(worker), Value: int64(s.now - ps.from)})
	if ps.declared {
		// The zombies learn they were declared lost and are gone; the
		// worker re-registers as after a crash.
		s.workerUp(worker)
		return
	}
	for _, p := range s.procs {
		if p.worker != worker || !p.frozen || p.initPending {
			continue
		}
		p.frozen = false
		for _, ch := range s.chanOf[p.id] {
			if ch != nil && len(ch.out) > 0 {
				s.flush(ch, s.now)
			}
		}
		p.wake(s.now)
	}
	for _, r := range ps.deploy {
		if r.p.up && r.p.inc == r.inc && r.p.initPending {
			r.p.frozen, r.p.initPending = false, false
			r.p.init(s.now)
		}
	}
	ps.deploy = nil
}

// endPause ends a worker's pause when it crashes: the stopped processes die
// with it.
func (s *Sim) endPause(worker int) {
	ps := &s.pauses[worker]
	ps.on, ps.declared, ps.deploy = false, false, nil
}

// Paused reports whether worker is paused now.
func (s *Sim) Paused(worker int) bool {
	return worker >= 0 && worker < len(s.pauses) && s.pauses[worker].on
}
