package sim

import (
	"fmt"

	"ftbench/engine"
)

// Activity is engine.Activity, shared with the live runtime.
type Activity = engine.Activity

// Activity inspects the run now: data in channels, processes down with a
// restart pending, and one-shot timers of live incarnations due before
// deadline. Processes on the client node (the harness's readers) are not
// part of the system under test: their reads would otherwise keep every
// observed run busy forever, and turn its losses into "undrained".
func (s *Sim) Activity(deadline engine.Time) Activity {
	var a Activity
	var chans []engine.BusyChannel
	for _, ch := range s.chans {
		if ch.from.spec.Worker == engine.ClientNode || ch.to.spec.Worker == engine.ClientNode {
			continue
		}
		n, bytes := ch.dataHeld()
		if n > 0 {
			a.DataBytes += bytes
			chans = append(chans, engine.BusyChannel{Name: ch.from.spec.Name + "->" + ch.to.spec.Name, Bytes: bytes})
		}
	}
	a.Channels = engine.TopChannels(chans)
	for _, p := range s.procs {
		if !p.up && p.spec.Worker != engine.ClientNode {
			a.Down = append(a.Down, p.spec.Name)
		}
		if p.up && p.busyUntil > deadline && p.spec.Worker != engine.ClientNode {
			a.Busy = append(a.Busy, p.spec.Name)
		}
	}
	for i := range s.heap.ev {
		e := &s.heap.ev[i]
		if e.kind != evTimer || e.flags&flagPeriodic != 0 || e.at > deadline {
			continue
		}
		if p := s.procs[e.proc]; p.up && p.inc == e.inc && p.spec.Worker != engine.ClientNode {
			a.Timers++
		}
	}
	a.Store = s.storeStall(deadline, len(a.Busy) > 0)
	return a
}

// storeStall says why the store holds the run up past deadline, or "": an
// outage in force now, a slow spell in force while processes are busy past
// the deadline (a read from the slowed store is CPU time of its reader), or
// writes of live processes that complete only after deadline (a write
// bandwidth or slow factor that makes them take longer than the run can
// wait). A write due before the deadline is routine, as a checkpoint's
// write in flight at the end of any run is.
func (s *Sim) storeStall(deadline engine.Time, busy bool) string {
	for _, r := range s.storeRules {
		// r.to is clipped where the run stops at the latest.
		if r.from > s.now || s.now > r.to {
			continue
		}
		switch {
		case r.factor == 0:
			return fmt.Sprintf("down from %s to the end of the run (store-down)", r.from)
		case busy:
			return fmt.Sprintf("%gx slower from %s to the end of the run (store-slow), its readers busy past the settle window", r.factor, r.from)
		}
	}
	n, first := 0, engine.Time(-1)
	for i := range s.heap.ev {
		e := &s.heap.ev[i]
		if e.kind != evStoreDone || e.at <= deadline {
			continue
		}
		if p := s.procs[e.proc]; p.up && p.inc == e.inc {
			n++
			if first < 0 || e.at < first {
				first = e.at
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d writes in progress, the first done only at %s (write bandwidth %g bytes/s, latency %s)",
		n, first, s.cost.StoreWriteBytes, s.cost.StoreLatency)
}

// dataHeld counts the data messages (not control) in the channel and their
// wire bytes.
func (ch *channel) dataHeld() (msgs, bytes int) {
	cost := &ch.from.sim.cost
	add := func(it *item) {
		if !it.Ctrl {
			msgs++
			bytes += cost.WireBytes(it.Size)
		}
	}
	ch.inq.eachBuf(func(b *netBuf, i int) { add(&b.items[i]) })
	for _, b := range ch.inflight {
		for i := range b.items {
			add(&b.items[i])
		}
	}
	for i := range ch.out {
		add(&ch.out[i])
	}
	return msgs, bytes
}
