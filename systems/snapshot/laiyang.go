package snapshot

import "ftbench/engine"

// Lai-Yang (lecture 12.2.7): colouring instead of markers. A process's
// colour is the number of the last snapshot it recorded (white for snapshot
// j means colour < j, red means >= j), and every transfer carries its
// sender's colour. A process records snapshot j when it initiates j or when
// a message red for j reaches it while it is still white, before applying
// that message; white messages that arrive after it recorded j are j's
// channel state. Nothing depends on the order of arrival, so non-FIFO
// channels are fine.
//
// Termination needs the extra round the lecture mentions: on recording j a
// process sends a done(j, c) message on every output channel, with c = the
// white messages it sent on that channel. The receiver closes the channel once it has
// received c white messages on it, whenever they arrive. done is itself red,
// so it also makes a white receiver record. These are the "markers" of
// Lai-Yang and are counted as such: one per channel per snapshot, like CL.

// lyCut is one Lai-Yang snapshot in progress at one process.
type lyCut struct {
	cut
	white     []int64 // per peer: white messages received so far (before and after the cut)
	announced []int64 // per peer: white messages the peer sent, -1 until its done arrives
}

// lyRecord records every snapshot up to j that this process has not
// recorded yet (a red message of a later snapshot implies the earlier ones:
// they are all cut at the same point) and announces the white counts.
func (p *process) lyRecord(ctx engine.Ctx, j int64) {
	for ; p.colour < j; p.colour++ {
		id := p.colour + 1
		c := &lyCut{
			cut:       *p.newCut(ctx, id, -1),
			white:     make([]int64, p.cfg.n),
			announced: make([]int64, p.cfg.n),
		}
		c.local = p.local(ctx, id)
		for q := range c.white {
			// Everything received so far is white for id: a red message
			// would have made this process record id before.
			c.white[q] = p.recv[q].Contig + int64(len(p.recv[q].Extra))
			c.announced[q] = -1
		}
		p.ly = append(p.ly, c)
		wire := int64(ctx.Cost().WireBytes(markerBytes))
		for _, o := range p.outputs() {
			ctx.Send(o, engine.Msg{Kind: kindDone, Ctrl: true, Key: uint64(id), Val: p.sent[o], Size: markerBytes})
			ctx.Count(cntMarkers, 1)
			ctx.Count(cntMarkerBytes, wire)
		}
	}
}

// lyWhite is a transfer of colour colour arriving from q: it is channel
// state of every recorded snapshot it is white for.
func (p *process) lyWhite(ctx engine.Ctx, q int, colour int64, m engine.Msg) {
	for i := 0; i < len(p.ly); i++ {
		c := p.ly[i]
		if colour >= c.id {
			continue
		}
		c.white[q]++
		c.chans[q] = append(c.chans[q], m)
		if p.lyClose(ctx, c, q) {
			i--
		}
	}
}

// lyDone is peer q's done(j, count).
func (p *process) lyDone(ctx engine.Ctx, q int, j, count int64) {
	if p.cfg.variant != LaiYang {
		return
	}
	if p.colour < j {
		p.lyRecord(ctx, j)
	}
	for _, c := range p.ly {
		if c.id == j {
			c.announced[q] = count
			p.lyClose(ctx, c, q)
			return
		}
	}
}

// lyClose closes channel q of c once all its white messages are in, and
// finishes c once every channel is closed; it reports whether c finished.
func (p *process) lyClose(ctx engine.Ctx, c *lyCut, q int) bool {
	if c.closed[q] || c.announced[q] < 0 || c.white[q] < c.announced[q] {
		return false
	}
	c.close(q)
	if c.open > 0 {
		return false
	}
	for i, x := range p.ly {
		if x == c {
			p.ly = append(p.ly[:i], p.ly[i+1:]...)
			break
		}
	}
	p.finish(ctx, &c.cut)
	return true
}
