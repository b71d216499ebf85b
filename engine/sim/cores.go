package sim

import "ftbench/engine"

// machine models one node's CPU: a worker, or the master node that runs
// coordinators and drivers. Its processes share its cores, as the threads
// of a TaskManager, a Storm worker or a Spark executor share their
// machine's cores: a process runs on at most one core at a time, and when
// more processes are runnable than there are cores, the rest wait in a FIFO
// run queue and get a core in turn, one quantum at a time (a round-robin
// scheduler with the cost model's quantum as time slice).
//
// Invariant: at every instant at most len(free) slices run on the machine,
// and a process waits in the run queue only while every core is busy (so a
// machine with at least as many cores as processes behaves as if each
// process had a CPU of its own).
type machine struct {
	free  []engine.Time // when each core finishes its current slice
	runq  []runReq      // processes waiting for a core, oldest first
	armed bool          // an evCores dispatch is pending
}

// runReq is a process incarnation waiting for a core; a stale incarnation
// (killed while it waited) is skipped.
type runReq struct {
	p   *proc
	inc uint32
}

// core returns a core free at time at, or -1. The lowest index wins, so the
// choice is deterministic.
func (m *machine) core(at engine.Time) int {
	for i, f := range m.free {
		if f <= at {
			return i
		}
	}
	return -1
}

func (m *machine) earliest() engine.Time {
	t := m.free[0]
	for _, f := range m.free[1:] {
		t = min(t, f)
	}
	return t
}

// machineOf is p's machine; nil when cores are unlimited (every process
// has a CPU of its own).
func (s *Sim) machineOf(p *proc) *machine {
	if s.machines == nil || p.worker == engine.ClientNode {
		return nil
	}
	return &s.machines[p.worker+1]
}

// runSlice gives p a core for its next slice at time at, or queues it
// behind the processes already waiting on its machine.
func (s *Sim) runSlice(p *proc, at engine.Time) {
	m := s.machineOf(p)
	if m == nil {
		p.step(at)
		return
	}
	c := -1
	if len(m.runq) == 0 {
		c = m.core(at)
	}
	if c < 0 {
		p.scheduled = true // waiting for a core counts as scheduled
		m.runq = append(m.runq, runReq{p: p, inc: p.inc})
		s.armCores(p.worker, m)
		return
	}
	s.stepOn(m, c, p, at)
}

// stepOn runs p's slice on core c and keeps the core busy until it ends.
func (s *Sim) stepOn(m *machine, c int, p *proc, at engine.Time) {
	p.step(at)
	m.free[c] = max(p.clock, at)
}

// armCores schedules a dispatch of the run queue when the next core frees.
func (s *Sim) armCores(worker int, m *machine) {
	if m.armed || len(m.runq) == 0 {
		return
	}
	m.armed = true
	s.schedule(event{at: max(m.earliest(), s.now), kind: evCores, proc: int32(worker)})
}

// dispatchCores hands the cores free at time at to the oldest waiters.
func (s *Sim) dispatchCores(worker int, at engine.Time) {
	m := &s.machines[worker+1]
	m.armed = false
	for len(m.runq) > 0 {
		c := m.core(at)
		if c < 0 {
			break
		}
		r := m.runq[0]
		m.runq[0] = runReq{}
		m.runq = m.runq[1:]
		if !r.p.up || r.p.inc != r.inc {
			continue
		}
		r.p.scheduled = false
		if r.p.frozen {
			continue // woken when its worker resumes
		}
		s.stepOn(m, c, r.p, at)
	}
	if len(m.runq) == 0 {
		m.runq = m.runq[:0:0]
	}
	s.armCores(worker, m)
}

// freeCores releases a crashed worker's cores: the slices it was running
// died with it.
func (s *Sim) freeCores(worker int) {
	if s.machines == nil {
		return
	}
	m := &s.machines[worker+1]
	for i := range m.free {
		m.free[i] = min(m.free[i], s.now)
	}
}
