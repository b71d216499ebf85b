package sim

import "ftbench/engine"

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
	return a
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
