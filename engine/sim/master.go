package sim

import "ftbench/engine"

// A master crash (crash@T:master) kills every process on the master node —
// the checkpoint coordinator, Spark's driver — and starts fresh
// incarnations after the restart delay, which have only what the durable
// store holds (a JobManager or driver restarted by its HA setup or cluster
// manager). The workers are not touched, except for the processes bound to
// the master (engine.ProcSpec.MasterBound: Spark's executors exit when
// their driver disconnects), which die with it and come back a
// task-restart delay after it, as the new driver's new executors. Whether
// the other tasks survive the master's loss is the system's business (a
// new Flink JobManager restarts them from the latest checkpoint, Storm's
// workers run on without Nimbus). Nobody is notified of the crash:
// the coordinator is what died. When the master is back, its coordinator
// is told of every worker that is down at that moment (and whose failure
// has been detected; a later detection notifies it then), as a new leader
// learns which TaskManagers or executors never registered with it; a
// worker that crashed and came back meanwhile needs no notice, because the
// new leader treats every task as lost anyway.

func (s *Sim) crashMaster(restart engine.Time) {
	if s.masterDown {
		return
	}
	s.masterDown = true
	s.killing("crash")
	for _, p := range s.procs {
		if (p.spec.Worker == engine.MasterNode || p.spec.MasterBound) && p.up {
			p.kill()
		}
	}
	s.killing("stop")
	s.freeCores(engine.MasterNode)
	s.event(engine.Event{Time: s.now, Kind: "worker_crash", ID: engine.MasterNode, Value: int64(restart)})
	s.schedule(event{at: s.now + restart, kind: evWorkerUp, proc: engine.MasterNode})
}

func (s *Sim) masterUp() {
	s.masterDown = false
	s.event(engine.Event{Time: s.now, Kind: "worker_up", ID: engine.MasterNode})
	for _, p := range s.procs {
		switch {
		case p.spec.Worker == engine.MasterNode && !p.up:
			p.start(s.now)
		case p.spec.MasterBound && !p.up:
			// As a restarted task: not while its worker is down (it comes
			// back with the worker), and on a paused worker when it wakes.
			s.schedule(event{at: s.now + s.cost.TaskRestart, kind: evProcUp, proc: int32(p.id), inc: p.inc})
		}
	}
	for w, down := range s.workerDown {
		if !down {
			continue
		}
		for i := len(s.failures) - 1; i >= 0; i-- {
			if f := s.failures[i]; f.Worker == w {
				// A failure not detected yet is notified when it is.
				if f.FailedAt+s.cost.DetectDelay <= s.now {
					s.notify(engine.KindFailure, i, s.now)
				}
				break
			}
		}
	}
}
