package sim

import (
	"fmt"

	"ftbench/engine"
)

// Slots and re-placement. Every worker offers a number of slots, each of
// which hosts one process (Config.Slots; by default exactly as many as its
// initial placement uses, so there is no spare slot anywhere). When the
// runtime detects that a worker failed — its detection delay after a
// crash, or the failure detector's verdict on a pause — and the worker is
// still down, it re-places the worker's processes that are down and not
// pinned on live workers with free slots, as Flink's scheduler redeploys a
// lost TaskManager's tasks in the free slots of the others (and Storm's
// nimbus reassigns a dead supervisor's executors). A re-placed process
// comes up on its new worker after the cost model's TaskRestart, and the
// coordinator learns where it went from the failure notice
// (engine.Failure.Moved). A process for which no slot is free waits for
// its worker, as before; so does a pinned one.
//
// Placement is deterministic: processes in id order, each on the
// lowest-numbered live worker (up, not paused, not cut off) with a free slot.
//
// Invariant: placed[w] is the number of processes whose worker is w, and
// never exceeds slots[w].

// initSlots sets every worker's slot count: n, or (n == 0) the number of
// processes placed on it.
func (s *Sim) initSlots(n int) error {
	s.slots = make([]int, len(s.workerDown))
	s.placed = make([]int, len(s.workerDown))
	for _, p := range s.procs {
		if p.worker >= 0 {
			s.placed[p.worker]++
		}
	}
	for w := range s.slots {
		s.slots[w] = s.placed[w]
		if n == 0 {
			continue
		}
		if s.placed[w] > n {
			return fmt.Errorf("sim: worker %d hosts %d processes, more than its %d slots", w, s.placed[w], n)
		}
		s.slots[w] = n
	}
	return nil
}

// replace re-places the processes of failure i's worker, if it is still
// down, and records the moves in the failure. A process still running there
// (cut off by a partition, or stopped by a pause the master declared lost)
// is detached as a zombie (partition.go, pause.go).
func (s *Sim) replace(i int) {
	f := &s.failures[i]
	w := f.Worker
	if !s.workerDown[w] {
		return
	}
	for _, p := range s.procs {
		if p.worker != w || p.spec.Pinned {
			continue
		}
		to := s.freeSlot()
		if to < 0 {
			break
		}
		s.placed[w]--
		s.placed[to]++
		if p.up {
			// Still running, on the far side of a partition: it goes on
			// as a zombie, and a fresh incarnation is deployed here.
			p = s.detach(p, to)
		}
		p.worker = to
		f.Moved = append(f.Moved, engine.Move{Proc: p.id, Worker: to})
		s.event(engine.Event{Time: s.now, Proc: p.spec.Name, Kind: "task_replaced", ID: int64(to), Value: int64(w)})
		s.schedule(event{at: s.now + s.cost.TaskRestart, kind: evProcUp, proc: int32(p.id), inc: p.inc})
	}
	f.Vacated = s.placed[w] == 0
}

// freeSlot is the lowest-numbered live worker with a free slot, -1 if none
// (a worker cut off by a partition is not live for the master).
func (s *Sim) freeSlot() int {
	for w := range s.slots {
		if !s.workerDown[w] && !s.pauses[w].on && !s.cutOff(w) && s.placed[w] < s.slots[w] {
			return w
		}
	}
	return -1
}

// Worker is the worker process id is placed on now.
func (s *Sim) Worker(id engine.ProcID) int { return s.mustProc(id).worker }

// Slots is worker w's slot count.
func (s *Sim) Slots(w int) int { return s.slots[w] }
