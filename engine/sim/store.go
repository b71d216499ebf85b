package sim

import "ftbench/engine"

// Store implementation: a process's writes share its storage bandwidth and
// complete in order; a completion is delivered as a KindStoreDone message,
// so a protocol sends what depends on the write only once it is durable.

func (p *proc) Put(key string, val any, size int64, token int64) {
	s := p.sim
	start := max(p.clock, p.storeFree)
	p.storeFree = start + engine.Time(float64(size)/s.cost.StoreWriteBytes*1e9)
	done := p.storeFree + s.cost.StoreLatency
	w := pendingWrite{key: key, val: val, size: size, token: token}
	var slot int64
	if n := len(s.freeWrites); n > 0 {
		slot = s.freeWrites[n-1]
		s.freeWrites = s.freeWrites[:n-1]
		s.writes[slot] = w
	} else {
		slot = int64(len(s.writes))
		s.writes = append(s.writes, w)
	}
	s.schedule(event{at: done, kind: evStoreDone, proc: int32(p.id), inc: p.inc, a: slot})
}

func (s *Sim) storeDone(e *event) {
	w := s.writes[e.a]
	s.writes[e.a] = pendingWrite{}
	s.freeWrites = append(s.freeWrites, e.a)
	p := s.procs[e.proc]
	if !p.up || p.inc != e.inc {
		return // the writer died before the write became durable
	}
	s.store[w.key] = stored{val: w.val, size: w.size}
	p.urgent = append(p.urgent, urgentItem{from: engine.Runtime, m: engine.StoreDoneMsg(w.key, w.token)})
	p.wake(e.at)
}

func (p *proc) Get(key string) (any, bool) {
	s := p.sim
	v, ok := s.store[key]
	p.Work(s.cost.StoreLatency + engine.Time(float64(v.size)/s.cost.StoreReadBytes*1e9))
	return v.val, ok
}

func (p *proc) Delete(key string) { delete(p.sim.store, key) }
