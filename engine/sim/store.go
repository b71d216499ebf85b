package sim

import (
	"fmt"

	"ftbench/engine"
)

// Store implementation: a process's writes share its storage bandwidth and
// complete in order; a completion is delivered as a KindStoreDone message,
// so a protocol sends what depends on the write only once it is durable.
//
// Storage faults model the checkpoint store (an object store or DFS) going
// slow or away, while the source log and the output store stay up:
//   - slow (StoreSlow): a write issued in the window takes factor times its
//     transfer time and latency, a read factor times its cost — a throttled
//     or overloaded store.
//   - down (StoreDown): a write that is in progress at any time in the
//     window fails; its writer gets KindStoreFailed one store latency after
//     the outage reached it (an error response; it is never reported
//     durable, and nothing is written). Reads and deletes are not affected:
//     a restore during an outage is not modelled.

type storeRule struct {
	from, to engine.Time
	factor   float64 // slow: > 0; down: 0
}

// StoreSlow multiplies the cost of writes issued, and reads made, during
// [from, to) by factor.
func (s *Sim) StoreSlow(from, to engine.Time, factor float64) error {
	if !(factor > 0) {
		return fmt.Errorf("store-slow: factor must be positive, got %g", factor)
	}
	if to <= from {
		return fmt.Errorf("store-slow: window ends at or before it starts (%s <= %s)", to, from)
	}
	s.storeRules = append(s.storeRules, storeRule{from: from, to: to, factor: factor})
	return nil
}

// StoreDown fails every write in progress during [from, to).
func (s *Sim) StoreDown(from, to engine.Time) error {
	if to <= from {
		return fmt.Errorf("store-down: window ends at or before it starts (%s <= %s)", to, from)
	}
	s.storeRules = append(s.storeRules, storeRule{from: from, to: to})
	return nil
}

// storeFactor is the slow-down of storage at time at (1: none).
func (s *Sim) storeFactor(at engine.Time) float64 {
	for _, r := range s.storeRules {
		if r.factor > 0 && at >= r.from && at < r.to {
			return r.factor
		}
	}
	return 1
}

// storeFails returns when a write in progress during [from, done] learns
// that it failed, if an outage overlaps it.
func (s *Sim) storeFails(from, done engine.Time) (engine.Time, bool) {
	at, failed := done, false
	for _, r := range s.storeRules {
		if r.factor == 0 && r.from <= done && r.to > from {
			at, failed = min(at, max(from, r.from)+s.cost.StoreLatency), true
		}
	}
	return at, failed
}

func (p *proc) Put(key string, val any, size int64, token int64) {
	s := p.sim
	start := max(p.clock, p.storeFree)
	xfer, lat := engine.Time(float64(size)/s.cost.StoreWriteBytes*1e9), s.cost.StoreLatency
	if f := s.storeFactor(start); f != 1 {
		xfer, lat = engine.Time(float64(xfer)*f), engine.Time(float64(lat)*f)
	}
	p.storeFree = start + xfer
	done := p.storeFree + lat
	var flags uint8
	if at, failed := s.storeFails(p.clock, done); failed {
		done, flags = at, flagFailed
		p.storeFree = min(p.storeFree, at) // the link is free once the write is abandoned
	}
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
	s.schedule(event{at: done, kind: evStoreDone, proc: int32(p.id), inc: p.inc, a: slot, flags: flags})
}

func (s *Sim) storeDone(e *event) {
	w := s.writes[e.a]
	s.writes[e.a] = pendingWrite{}
	s.freeWrites = append(s.freeWrites, e.a)
	p := s.procs[e.proc]
	if p.inc != e.inc && len(s.zombies) > 0 {
		if z := s.incarnation(e.proc, e.inc); z != nil {
			p = z // a zombie's write: the store is reachable from both sides
		}
	}
	if !p.up || p.inc != e.inc {
		return // the writer died before the write became durable
	}
	kind := engine.KindStoreDone
	if e.flags&flagFailed != 0 {
		kind = engine.KindStoreFailed
		s.obs.Count("store_writes_failed", 1)
	} else {
		s.store[w.key] = stored{val: w.val, size: w.size}
	}
	p.urgent = append(p.urgent, urgentItem{from: engine.Runtime, m: engine.Msg{Kind: kind, Ctrl: true, Val: w.token, Body: w.key}})
	p.wake(e.at)
}

func (p *proc) Get(key string) (any, bool) {
	s := p.sim
	v, ok := s.store[key]
	cost := s.cost.StoreLatency + engine.Time(float64(v.size)/s.cost.StoreReadBytes*1e9)
	if f := s.storeFactor(p.clock); f != 1 {
		cost = engine.Time(float64(cost) * f)
	}
	p.Work(cost)
	return v.val, ok
}

func (p *proc) Delete(key string) { delete(p.sim.store, key) }

// Has is engine.KeyChecker: whether key exists, free.
func (p *proc) Has(key string) bool {
	_, ok := p.sim.store[key]
	return ok
}
