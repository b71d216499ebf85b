package sim

import (
	"fmt"
	"maps"
	"slices"

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
// start, Back: false) and the runtime treats the worker as lost, but the
// paused processes are not dead: nothing can stop a process the master no
// longer talks to. As behind a partition (partition.go), the ones re-placed
// on spare slots, and the ones a failover restarts, are detached as zombies
// (frozen while the pause lasts), while their new incarnations run
// elsewhere or wait for the worker; the others stay up in place, frozen.
// When the worker wakes, all of them run on their stale view — they handle
// what was queued for them (a commit notice sent before the declaration,
// say), fire their timers, flush their buffers, write to the store — until
// they learn they were replaced: the worker's first heartbeat after the
// wake is answered "you were declared lost" one heartbeat round trip
// (2 × NetLatency, as at a partition's heal) later. Then, as a TaskManager,
// Spark executor or Storm supervisor re-registering does, its zombies and
// the processes left on it are cancelled, and it comes back as after a
// crash: fresh incarnations start and the coordinator gets KindWorkerUp.
// That window is where the systems' fences are needed, as for a partition's
// zombies, which the same machinery models (detach, killZombie, reregister).
//
// Invariant: while on, every up process on the worker (zombies included)
// is frozen and none has a slice scheduled; between a declared pause's wake
// and the heartbeat answer (learning) the worker stays down for the
// master; a pause of a worker that is down or already paused is ignored,
// and a crash ends an undeclared pause (the stopped processes die).
type workerPause struct {
	on       bool
	gen      uint32 // tells this pause's resume and detection events from an earlier pause's
	from     engine.Time
	declared bool     // the failure detector declared the worker failed during the pause
	learning bool     // declared and awake: its processes run until the heartbeat answer
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
	s.event(engine.Event{Time: s.now, Kind: "worker_pause", ID: int64(worker), Value: int64(d)})
	// Resume first: a pause that ends exactly when detection would fire
	// is not declared.
	s.schedule(event{at: s.now + d, kind: evResume, proc: int32(worker), inc: ps.gen})
	s.schedule(event{at: s.now + s.cost.DetectDelay, kind: evDeclare, proc: int32(worker), inc: ps.gen})
}

// declare is the failure detector's verdict on a worker paused for
// DetectDelay: lost, as if it had crashed when the pause began. Its
// processes are re-placed, detached as zombies, or left in place frozen;
// none is killed, since the master cannot stop them.
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
		if p.worker != worker || !p.up {
			continue
		}
		if p.initPending {
			// A task deployed onto the stopped worker never ran there:
			// it has no stale view to act on.
			p.kill()
			continue
		}
		ids = append(ids, p.id)
	}
	ps.deploy = nil
	s.event(engine.Event{Time: s.now, Kind: "worker_declared_failed", ID: int64(worker), Value: int64(s.now - ps.from)})
	s.failures = append(s.failures, engine.Failure{Worker: worker, Procs: ids, FailedAt: ps.from})
	s.replace(len(s.failures) - 1)
	s.notify(engine.KindFailure, len(s.failures)-1, s.now)
}

// resume wakes a paused worker. For a declared pause the same event comes
// back a heartbeat round trip later as the master's answer (learn).
func (s *Sim) resume(worker int, gen uint32) {
	ps := &s.pauses[worker]
	if ps.gen != gen {
		return
	}
	if !ps.on {
		if ps.learning {
			s.learn(worker)
		}
		return
	}
	ps.on = false
	s.event(engine.Event{Time: s.now, Kind: "worker_resume", ID: int64(worker), Value: int64(s.now - ps.from)})
	if ps.declared {
		// The stale processes run until the answer to the worker's first
		// heartbeat after the wake tells it it was declared lost.
		ps.learning = true
		s.schedule(event{at: s.now + 2*s.cost.NetLatency, kind: evResume, proc: int32(worker), inc: gen})
	}
	for _, z := range s.zombies {
		if z.worker == worker && z.frozen {
			z.frozen = false
			// In receiver order, never the map's: each flush schedules a
			// delivery, and equal times are ordered by scheduling.
			for _, to := range slices.Sorted(maps.Keys(z.zout)) {
				if ch := z.zout[to]; len(ch.out) > 0 {
					s.flush(ch, s.now)
				}
			}
			z.wake(s.now)
		}
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

// learn is the master's answer to the heartbeat of a worker declared lost
// during its pause: it re-registers, and what ran on its stale view is
// cancelled. A worker cut off by a partition by then cannot hear the
// answer: it learns when the cut heals, as the partition's far workers do.
func (s *Sim) learn(worker int) {
	s.pauses[worker].learning = false
	if s.cutOff(worker) {
		s.part.rejoin(worker)
		return
	}
	s.reregister(worker)
}

// lost reports whether worker was declared failed during a pause and has
// not yet learned so: the master no longer talks to it, so a failover's
// cancel of a process there does not reach it (unreachable).
func (s *Sim) lost(worker int) bool {
	ps := &s.pauses[worker]
	return ps.declared && (ps.on || ps.learning)
}

// endPause ends a worker's pause when it crashes: the stopped processes die
// with it.
func (s *Sim) endPause(worker int) {
	ps := &s.pauses[worker]
	ps.on, ps.declared, ps.learning, ps.deploy = false, false, false, nil
}

// Paused reports whether worker is paused now.
func (s *Sim) Paused(worker int) bool {
	return worker >= 0 && worker < len(s.pauses) && s.pauses[worker].on
}
