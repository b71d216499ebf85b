package sim

import (
	"fmt"
	"sort"

	"ftbench/engine"
)

// Activity is what the runtime still sees going on: the evidence the
// harness needs to tell a run that lost effects (quiescent: nothing can
// deliver them any more) from one that ran out of time (undrained). It is
// observed by the runtime, never reported by a system, so a protocol bug
// cannot turn a loss into "still busy".
type Activity struct {
	// DataBytes is data held in channels: senders' buffers, the wire and
	// receivers' queues; Channels names the busiest ones (at most five).
	DataBytes int      `json:"data_bytes"`
	Channels  []string `json:"channels,omitempty"`
	// Down lists processes that are down with a restart pending.
	Down []string `json:"down,omitempty"`
	// Timers counts one-shot timers due before the deadline. Periodic
	// timers (re-armed by their own handler: polls, checkpoint triggers)
	// fire forever and are not activity.
	Timers int `json:"timers"`
}

// Quiet reports whether nothing is going on.
func (a Activity) Quiet() bool { return a.DataBytes == 0 && len(a.Down) == 0 && a.Timers == 0 }

func (a Activity) String() string {
	if a.Quiet() {
		return "quiescent"
	}
	s := fmt.Sprintf("%d data bytes in channels", a.DataBytes)
	if len(a.Channels) > 0 {
		s += fmt.Sprintf(" (%v)", a.Channels)
	}
	if len(a.Down) > 0 {
		s += fmt.Sprintf(", %d processes down with a restart pending (%v)", len(a.Down), a.Down)
	}
	if a.Timers > 0 {
		s += fmt.Sprintf(", %d one-shot timers due", a.Timers)
	}
	return s
}

// Activity inspects the run now: data in channels, processes down with a
// restart pending, and one-shot timers of live incarnations due before
// deadline. Processes on the client node (the harness's readers) are not
// part of the system under test: their reads would otherwise keep every
// observed run busy forever, and turn its losses into "undrained".
func (s *Sim) Activity(deadline engine.Time) Activity {
	var a Activity
	type busy struct {
		name  string
		bytes int
	}
	var chans []busy
	for _, ch := range s.chans {
		if ch.from.spec.Worker == engine.ClientNode || ch.to.spec.Worker == engine.ClientNode {
			continue
		}
		n, bytes := ch.dataHeld()
		if n > 0 {
			a.DataBytes += bytes
			chans = append(chans, busy{ch.from.spec.Name + "->" + ch.to.spec.Name, bytes})
		}
	}
	sort.SliceStable(chans, func(i, j int) bool { return chans[i].bytes > chans[j].bytes })
	for i := 0; i < len(chans) && i < 5; i++ {
		a.Channels = append(a.Channels, chans[i].name)
	}
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
		if !it.m.Ctrl {
			msgs++
			bytes += cost.WireBytes(it.m.Size)
		}
	}
	for i := 0; i < ch.inq.n; i++ {
		add(ch.inq.at(i))
	}
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
