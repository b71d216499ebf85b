package snapshot

import (
	"slices"

	"ftbench/engine"
)

// Mattern (lecture 12.2.7; Mattern 1989, "Virtual Time and Global States
// of Distributed Systems"): vector time instead of markers or colours.
// Every process keeps a vector clock of N entries, ticks its own entry at
// each send and receive, merges the sender's clock on receipt, and every
// transfer carries its sender's clock: 8N bytes on every message, the
// algorithm's price. A snapshot is a cut vector s; a process records its
// state at the event where its clock first reaches s (every entry >= s),
// before that event happens. The events whose clocks are not >= s are
// closed under causality (if e happened before f, then VC(e) <= VC(f)),
// so the recorded cut is consistent on any channels: FIFO plays no part.
// A transfer is inside the cut iff its clock is not >= s; those received
// after the receiver recorded are the channel state.
//
// The cut vector is chosen as the textbook version of the algorithm does
// (Kshemkalyani and Singhal, Distributed Computing, 4.3.5): the initiator
// i takes s = its clock with entry i advanced by one — its own next event
// — and freezes (no sends, no receives: they wait) while it announces s to
// every process and collects their acknowledgements. Until i ticks, no
// event anywhere can reach s[i], so every process knows s before any clock
// reaches it. Then i records, ticks (its clock reaches s), and sends every
// process a force message carrying its clock, whose receipt makes the
// receiver's clock reach s, so every process records. The freeze delays the
// initiator's transfers by one round trip per snapshot.
//
// Termination is the counting of Lai-Yang (laiyang.go): on recording, a
// process sends done(j, c) on every output channel with c = the transfers
// it sent on it before the cut, and the receiver closes the channel once c
// of them have arrived. Announcements, acknowledgements and forces travel
// the collection network, directly, like reports; done messages travel the
// topology's channels.

// mtCut is one Mattern snapshot known at one process: announced, and once
// the process's clock reaches s, recorded.
type mtCut struct {
	lyCut
	s        []int64 // the cut vector
	recorded bool
}

// vectorBytes is the size of a vector clock or cut vector on the wire.
func (c *p2pConfig) vectorBytes() int32 { return int32(8 * c.n) }

// geq reports whether clock a has reached b: every entry a[k] >= b[k].
func geq(a, b []int64) bool {
	for k := range b {
		if a[k] < b[k] {
			return false
		}
	}
	return true
}

// mtStart is snapshot j's time at its initiator: choose the cut vector,
// freeze, announce it. A snapshot due while an earlier one still freezes
// this process waits for the freeze to end.
func (p *process) mtStart(ctx engine.Ctx, j int64) {
	if p.frozen != 0 {
		p.mtQueued = append(p.mtQueued, j)
		return
	}
	s := slices.Clone(p.vc)
	s[p.self]++
	p.mtCutFor(ctx, j, s)
	p.frozen, p.acks = j, 0
	for q := 0; q < p.cfg.n; q++ {
		if q != p.self {
			p.coord(ctx, q, engine.Msg{Kind: kindAnnounce, Ctrl: true, Key: uint64(j), Body: s, Size: p.cfg.vectorBytes()})
		}
	}
}

// mtCutFor opens this process's cut for snapshot j with cut vector s.
func (p *process) mtCutFor(ctx engine.Ctx, j int64, s []int64) *mtCut {
	c := &mtCut{lyCut: lyCut{cut: *p.newCut(ctx, j, -1), white: make([]int64, p.cfg.n), announced: make([]int64, p.cfg.n)}, s: s}
	for q := range c.announced {
		c.announced[q] = -1
	}
	p.mt = append(p.mt, c)
	return c
}

// coord sends one of the snapshot's coordination messages (announce, ack,
// force) on the collection network.
func (p *process) coord(ctx engine.Ctx, to int, m engine.Msg) {
	ctx.Send(engine.ProcID(to), m)
	ctx.Count(cntCoord, 1)
	ctx.Count(cntCoordBytes, int64(ctx.Cost().WireBytes(m.Size)))
}

// mtAnnounce is snapshot j's cut vector arriving from its initiator.
func (p *process) mtAnnounce(ctx engine.Ctx, from int, j int64, s []int64) {
	p.mtCutFor(ctx, j, s)
	p.coord(ctx, from, engine.Msg{Kind: kindAck, Ctrl: true, Key: uint64(j), Size: markerBytes})
}

// mtAck is an acknowledgement of snapshot j at its initiator. With all
// N-1 in, every process knows the cut vector: the initiator records and
// ticks (its snapshot event, which reaches s), forces everyone else's
// clock to reach s, and thaws.
func (p *process) mtAck(ctx engine.Ctx, j int64) {
	if p.frozen != j {
		return
	}
	if p.acks++; p.acks < p.cfg.n-1 {
		return
	}
	p.frozen = 0
	p.mtTick(ctx, nil)
	for q := 0; q < p.cfg.n; q++ {
		if q != p.self {
			p.coord(ctx, q, engine.Msg{Kind: kindForce, Ctrl: true, Key: uint64(j), Body: slices.Clone(p.vc), Size: p.cfg.vectorBytes()})
		}
	}
	held := p.held
	p.held = nil
	for _, h := range held {
		p.Handle(ctx, h.from, h.m)
	}
	if p.pollHeld {
		p.pollHeld = false
		ctx.After(0, timerPoll)
	}
	if len(p.mtQueued) > 0 {
		next := p.mtQueued[0]
		p.mtQueued = p.mtQueued[1:]
		p.mtStart(ctx, next)
	}
}

// mtTick is an event of this process: a send (with nil) or the receipt of
// a message stamped with. Its clock is the merge of both, own entry
// advanced; every snapshot whose cut vector that clock reaches for the
// first time is recorded first: the event has not changed the balance or
// the counts yet, so the recorded state is the one just before it (the
// clock itself is not part of the recorded state).
func (p *process) mtTick(ctx engine.Ctx, with []int64) {
	for k := range with {
		p.vc[k] = max(p.vc[k], with[k])
	}
	p.vc[p.self]++
	for i := 0; i < len(p.mt); i++ {
		if c := p.mt[i]; !c.recorded && geq(p.vc, c.s) {
			if p.mtRecord(ctx, c) {
				i--
			}
		}
	}
}

// mtRecord records this process's state for c and announces on every
// output channel how many transfers it sent there before the cut; it
// reports whether c finished at once.
func (p *process) mtRecord(ctx engine.Ctx, c *mtCut) bool {
	c.recorded, c.at = true, ctx.Now()
	c.local = p.local(ctx, c.id)
	for q := range c.white {
		// Everything received so far is inside the cut: a message from
		// outside it would have made this process record already.
		c.white[q] = p.recv[q].Contig + int64(len(p.recv[q].Extra))
	}
	wire := int64(ctx.Cost().WireBytes(markerBytes))
	for _, o := range p.outputs() {
		ctx.Send(o, engine.Msg{Kind: kindDone, Ctrl: true, Key: uint64(c.id), Val: p.sent[o], Size: markerBytes})
		ctx.Count(cntMarkers, 1)
		ctx.Count(cntMarkerBytes, wire)
	}
	for q := range c.closed {
		if p.mtClose(ctx, c, q) {
			return true
		}
	}
	return false
}

// mtReceive classifies a transfer stamped vc from q for the recorded
// snapshots: inside a cut (its clock has not reached s), it is channel
// state. The receive event itself (mtTick) came first.
func (p *process) mtReceive(ctx engine.Ctx, q int, vc []int64, m engine.Msg) {
	for i := 0; i < len(p.mt); i++ {
		c := p.mt[i]
		if !c.recorded || geq(vc, c.s) {
			continue
		}
		c.white[q]++
		c.chans[q] = append(c.chans[q], m)
		if p.mtClose(ctx, c, q) {
			i--
		}
	}
}

// mtDone is peer q's done(j, count).
func (p *process) mtDone(ctx engine.Ctx, q int, j, count int64) {
	for _, c := range p.mt {
		if c.id == j {
			c.announced[q] = count
			p.mtClose(ctx, c, q)
			return
		}
	}
}

// mtClose closes channel q of a recorded cut once all the transfers sent
// on it inside the cut are in, and finishes c once every channel is
// closed; it reports whether c finished.
func (p *process) mtClose(ctx engine.Ctx, c *mtCut, q int) bool {
	if !c.recorded {
		return false
	}
	if !c.closed[q] && c.announced[q] >= 0 && c.white[q] >= c.announced[q] {
		c.close(q)
	}
	if c.open > 0 {
		return false
	}
	p.mt = slices.DeleteFunc(p.mt, func(x *mtCut) bool { return x == c })
	p.finish(ctx, &c.cut)
	return true
}
