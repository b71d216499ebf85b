package sim

import (
	"fmt"
	"slices"

	"ftbench/engine"
)

// partition is a network partition: the far workers are cut off from the
// master node and from every other worker. The durable store, the source
// log and the output store stay reachable from both sides (an object store
// and Kafka usually are), and so does the client node.
//
// While it lasts:
//   - Buffers on a channel across the cut stall where they are (stalled):
//     they keep their credit, so senders into the cut are backpressured,
//     and they are delivered, in order, when the partition heals.
//   - Heartbeats to the master fail: DetectDelay after the cut, every far
//     worker is declared failed (KindFailure, FailedAt: the cut), exactly
//     as after a crash, and its processes are re-placed on near workers
//     with free slots (slots.go). A far process that is still running is
//     not stopped — the master cannot reach it — but detached: it goes on
//     as a zombie with its state, timers, input channels and store, while
//     a fresh incarnation of the same process id starts on the near side.
//     A zombie talks only to what it was connected to: its sends reach
//     other zombies and the master node (whose protocols ignore an old
//     attempt), never a newer incarnation of a process. A far process
//     that could not be re-placed (no free slot, or pinned) keeps running
//     in place; a failover's Restart of it cannot reach it, so it is
//     detached as well, and its new incarnation waits for the worker.
//   - ConnTimeout after the cut, every connection across it is reset (its
//     data dropped) and a far process using one fails, as a Flink task
//     whose connection resets does: zombies die, processes in place go
//     down until the worker rejoins. (The near side's ends are not failed:
//     the failover restarted them already, since a failover region is
//     closed under the job's channels; Storm's transport just drops.)
//
// When it heals, the stalled buffers are delivered one net latency later,
// and a heartbeat round trip later (2 × NetLatency) every far worker that
// was declared failed learns so and re-registers: its zombies and the
// processes still on it are cancelled, and it comes back as after a crash
// (fresh incarnations of what is placed on it, KindWorkerUp). So what was
// stalled towards a zombie (a commit notice sent just before the
// detection, say) reaches it before it is cancelled: the window in which
// the real systems need their fences.
//
// Faults on the far side during the cut: a pause starting there is ignored;
// a crashed worker whose restart falls in the cut (or a paused one declared
// failed that wakes in it) cannot register with the master until the heal,
// so it rejoins then; a crash of a worker the partition had declared failed
// is ignored (its zombies run on).
//
// Invariant: while on, far[w] tells the sides apart; one partition at a
// time (a partition starting during another is ignored).
type partition struct {
	on       bool
	gen      uint32
	from     engine.Time
	far      []bool
	declared []int // far workers declared failed (or back from a crash), to rejoin at the heal
	stalled  []*netBuf
}

// Partition cuts the workers in far off from the master node and the other
// workers during [from, to).
func (s *Sim) Partition(far []int, from, to engine.Time) error {
	if to <= from {
		return fmt.Errorf("partition: window ends at or before it starts (%s <= %s)", to, from)
	}
	if len(far) == 0 || len(far) >= len(s.workerDown)+1 {
		return fmt.Errorf("partition: the far side needs from 1 to %d workers, got %d", len(s.workerDown), len(far))
	}
	for _, w := range far {
		if w < 0 || w >= len(s.workerDown) {
			return fmt.Errorf("partition: no worker %d (workers are 0-%d)", w, len(s.workerDown)-1)
		}
	}
	if s.cost.ConnTimeout <= s.cost.DetectDelay {
		return fmt.Errorf("partition: conn-timeout (%s) must exceed detect-delay (%s): a connection resets only after the master declared the far side failed", s.cost.ConnTimeout, s.cost.DetectDelay)
	}
	s.cuts = append(s.cuts, cutSpec{far: append([]int(nil), far...), to: to})
	s.schedule(event{at: from, kind: evPartition, a: int64(len(s.cuts) - 1)})
	return nil
}

type cutSpec struct {
	far []int
	to  engine.Time
}

func (s *Sim) partitionStart(i int) {
	pt := &s.part
	if pt.on {
		return
	}
	c := s.cuts[i]
	pt.on, pt.from, pt.declared = true, s.now, nil
	pt.gen++
	pt.far = make([]bool, len(s.workerDown))
	for _, w := range c.far {
		pt.far[w] = true
	}
	s.event(engine.Event{Time: s.now, Kind: "partition_start", ID: int64(c.far[0]), Value: int64(c.to - s.now), Note: fmt.Sprintf("far=%v", c.far)})
	gen := pt.gen
	s.schedule(event{at: s.now + s.cost.DetectDelay, kind: evPartDetect, inc: gen})
	s.schedule(event{at: s.now + s.cost.ConnTimeout, kind: evConnTimeout, inc: gen})
	s.schedule(event{at: c.to, kind: evHeal, inc: gen})
}

// cut reports whether ch crosses the partition now.
func (s *Sim) cut(ch *channel) bool {
	return s.part.on && s.farSide(ch.from) != s.farSide(ch.to) &&
		ch.from.worker != engine.ClientNode && ch.to.worker != engine.ClientNode
}

func (s *Sim) farSide(p *proc) bool { return p.worker >= 0 && s.part.far[p.worker] }

// partitionDetect declares every far worker failed, as the master's
// heartbeat timeout does, and re-places (detaching) what runs there.
func (s *Sim) partitionDetect(gen uint32) {
	pt := &s.part
	if !pt.on || pt.gen != gen {
		return
	}
	for w, far := range pt.far {
		if !far || s.workerDown[w] || s.pauses[w].on {
			// Down already, or paused: its pause's own failure detection
			// declares it (pause.go), and it rejoins when the cut heals.
			continue
		}
		pt.declared = append(pt.declared, w)
		s.workerDown[w] = true
		var ids []engine.ProcID
		for _, p := range s.procs {
			if p.worker == w && p.up {
				ids = append(ids, p.id)
			}
		}
		s.event(engine.Event{Time: s.now, Kind: "worker_declared_failed", ID: int64(w), Value: int64(s.now - pt.from), Note: "partition"})
		s.failures = append(s.failures, engine.Failure{Worker: w, Procs: ids, FailedAt: pt.from})
		s.replace(len(s.failures) - 1)
		s.notify(engine.KindFailure, len(s.failures)-1, s.now)
	}
}

// detach turns p, running on a worker cut off by a partition, into a zombie
// and installs a fresh, down incarnation of the same process on worker to.
func (s *Sim) detach(p *proc, to int) *proc {
	// The slot's backpressure so far stays with the slot; what the zombie
	// is backpressured from now on is its own, and not reported.
	np := &proc{id: p.id, spec: p.spec, sim: s, cost: p.cost, cpu: p.cpu, inc: p.inc + 1, worker: to, bpTime: p.backpressured(s.now)}
	s.procs[p.id] = np
	p.zombie = true
	p.zout = map[engine.ProcID]*channel{}
	for i, ch := range s.chanOf[p.id] {
		if ch != nil {
			p.zout[engine.ProcID(i)] = ch
			s.chanOf[p.id][i] = nil
		}
	}
	for _, ch := range p.inputs {
		if !ch.from.zombie && s.chanOf[ch.from.id][p.id] == ch {
			s.chanOf[ch.from.id][p.id] = nil
			ch.from.detached = append(ch.from.detached, ch)
		}
	}
	s.zombies = append(s.zombies, p)
	s.event(engine.Event{Time: s.now, Proc: p.spec.Name, Kind: "zombie", ID: int64(p.worker)})
	return np
}

// zombieChannel is the channel a send or a Pause involving a zombie uses,
// nil if there is none: a zombie sends only on its own connections to
// other zombies and to the master node (opening one to the master node if
// needed), and nothing new connects to a zombie.
func (s *Sim) zombieChannel(from, to *proc) *channel {
	if from.zombie {
		if ch := from.zout[to.id]; ch != nil && (ch.to.zombie || ch.to.worker == -1) {
			return ch
		}
		if to.worker != -1 {
			return nil
		}
		ch := s.newChannel(from, to)
		from.zout[to.id] = ch
		return ch
	}
	for _, ch := range to.inputs {
		if ch.from.id == from.id {
			return ch
		}
	}
	return nil
}

// incarnation is the process running incarnation inc of id, a zombie's
// included; nil if none.
func (s *Sim) incarnation(id int32, inc uint32) *proc {
	for _, z := range s.zombies {
		if z.id == engine.ProcID(id) && z.inc == inc {
			return z
		}
	}
	return nil
}

// killZombie cancels a zombie: its channels reset, and it never runs again.
func (s *Sim) killZombie(z *proc) {
	for _, ch := range z.inputs {
		s.reset(ch)
	}
	for _, ch := range z.zout {
		s.reset(ch)
	}
	z.up, z.frozen, z.p = false, false, nil
	z.timers, z.urgent = nil, nil
	s.zombies = removeProc(s.zombies, z)
	s.event(engine.Event{Time: s.now, Proc: z.spec.Name, Kind: "zombie_cancelled", ID: int64(z.worker)})
}

func removeProc(ps []*proc, p *proc) []*proc {
	out := ps[:0]
	for _, q := range ps {
		if q != p {
			out = append(out, q)
		}
	}
	clear(ps[len(out):])
	return out
}

// connTimeout resets every connection across the cut; far processes using
// one fail.
func (s *Sim) connTimeout(gen uint32) {
	pt := &s.part
	if !pt.on || pt.gen != gen {
		return
	}
	var failed []*proc
	for _, ch := range s.chans {
		if !s.cut(ch) {
			continue
		}
		s.reset(ch)
		far := ch.to
		if s.farSide(ch.from) {
			far = ch.from
		}
		if far.up && far.worker >= 0 && s.workerDown[far.worker] {
			failed = append(failed, far)
		}
	}
	s.dropStalled()
	s.event(engine.Event{Time: s.now, Kind: "partition_conn_reset", Value: int64(len(failed))})
	for _, p := range failed {
		switch {
		case p.zombie:
			if p.up {
				s.killZombie(p)
			}
		case p.up:
			p.kill()
		}
	}
}

// dropStalled forgets stalled buffers whose channel was reset.
func (s *Sim) dropStalled() {
	keep := s.part.stalled[:0]
	for _, b := range s.part.stalled {
		if b.epoch == b.ch.epoch {
			keep = append(keep, b)
		}
	}
	clear(s.part.stalled[len(keep):])
	s.part.stalled = keep
}

// heal ends the partition: stalled buffers arrive one net latency later, in
// order, and the far workers declared failed rejoin a heartbeat round trip
// later.
func (s *Sim) heal(gen uint32) {
	pt := &s.part
	if !pt.on || pt.gen != gen {
		return
	}
	pt.on = false
	s.event(engine.Event{Time: s.now, Kind: "partition_heal", Value: int64(s.now - pt.from)})
	for _, b := range pt.stalled {
		s.schedule(event{at: s.now + s.cost.NetLatency, kind: evDeliver, buf: b})
	}
	pt.stalled = nil
	s.schedule(event{at: s.now + 2*s.cost.NetLatency, kind: evRejoin, inc: gen})
}

// rejoin cancels the zombies and the processes left on the far workers that
// were declared failed, and brings those workers back as after a crash.
func (s *Sim) rejoin(gen uint32) {
	pt := &s.part
	if pt.gen != gen {
		return
	}
	for _, w := range pt.declared {
		s.reregister(w)
	}
	pt.declared = nil
}

// reregister is a worker declared failed learning so from the master (at a
// partition's heal, or after a declared pause, pause.go): its zombies and
// the processes left on it are cancelled, and it comes back as after a
// crash.
func (s *Sim) reregister(w int) {
	for _, z := range append([]*proc(nil), s.zombies...) {
		if z.worker == w {
			s.killZombie(z)
		}
	}
	for _, p := range s.procs {
		if p.worker == w && p.up {
			p.kill()
		}
	}
	s.freeCores(w)
	s.workerUp(w)
}

// Zombies is the number of zombie processes now (for tests).
func (s *Sim) Zombies() int { return len(s.zombies) }

// unreachable reports whether q runs in place on a worker the master
// declared failed and no longer talks to — cut off by a partition, or
// paused (pause.go) — so a failover's Restart (a cancel from the master)
// cannot reach it.
func (s *Sim) unreachable(q *proc) bool {
	if q.worker < 0 {
		return false
	}
	return s.part.on && s.part.far[q.worker] && s.workerDown[q.worker] || s.lost(q.worker)
}

// cutOff reports whether worker is on the far side of a partition now.
func (s *Sim) cutOff(worker int) bool {
	return s.part.on && worker >= 0 && s.part.far[worker]
}

// rejoin makes worker rejoin when the partition heals.
func (pt *partition) rejoin(worker int) {
	if !slices.Contains(pt.declared, worker) {
		pt.declared = append(pt.declared, worker)
	}
}
