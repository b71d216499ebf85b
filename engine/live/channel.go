package live

import (
	"slices"
	"time"

	"ftbench/engine"
	"ftbench/engine/flow"
)

// item is a message with its position in the channel, which overtaking
// messages need to know what they jumped.
type item struct {
	m   engine.Msg
	seq uint64
}

// channel is the FIFO link from -> to, as in the simulator: the sender's
// partly filled network buffer and the receiver's queue (in one process
// nothing is on a wire). Its credit counts data bytes in both; a sender
// with a full channel is backpressured and gets no new data input or
// timers until the receiver drains it. The rules of credit and of flushing
// are flow's, shared with the simulator; what is this runtime's own is that
// flush timers are time.AfterFunc and a sender is woken by a signal. Every
// field is guarded by the receiver's mutex.
type channel struct {
	from, to *proc
	epoch    uint32 // bumped by reset; a flush timer of an older epoch does nothing
	paused   bool

	out    []item // sender-side buffer
	outBuf flow.OutBuffer

	inq  []item // receiver's queue from head on
	head int

	credit  flow.Credit
	nextSeq uint64
}

// channelFrom returns the channel s -> p, creating it (p.mu held).
func (p *proc) channelFrom(s *proc) *channel {
	ch := p.in[s.id]
	if ch == nil {
		ch = &channel{from: s, to: p, credit: flow.Credit{Capacity: flow.Capacity(&p.rt.cost)}}
		p.in[s.id] = ch
		p.inputs = append(p.inputs, ch)
	}
	return ch
}

// send appends m to the channel self -> to. What is sent to a process that
// is down is lost (its connections were reset), as in the simulator.
func (c *incarnation) send(to engine.ProcID, m engine.Msg, overtaking bool) {
	if !c.alive() {
		return
	}
	if len(c.commits) > 0 || len(c.deletes) > 0 {
		// What the step did before this send is visible before the message
		// can be: a receiver that acts on it (an acker completing a tree
		// on the sink's ack) must never see it while a crash later in the
		// step could still drop the commit it follows.
		c.publish()
	}
	p := c.p
	rt := p.rt
	rt.pay(p, p.cost.SendCost(m.Size)) // at the sender's operator's costs
	q := rt.mustProc(to)
	q.mu.Lock()
	defer q.mu.Unlock()
	// Checked under the receiver's lock: a kill of the sender resets this
	// channel under the same lock after bumping inc, so a message of a dead
	// incarnation is either refused here or dropped by that reset.
	if !q.up || !c.alive() {
		return
	}
	ch := q.channelFrom(p)
	wire := rt.cost.WireBytes(m.Size)
	// An overtaking message uses up a seq here, where the simulator's
	// borrows the next one: either way it sorts after every message sent
	// before it and before every one sent after, which is all overtakenBy
	// asks of a seq.
	it := item{m: m, seq: ch.nextSeq}
	ch.nextSeq++
	if overtaking {
		q.urgent = append(q.urgent, urgentItem{from: p.id, ch: ch, seq: it.seq, m: m})
		q.syncPrio()
		q.signal()
		return
	}
	ch.out = append(ch.out, it)
	ch.outBuf.Bytes += wire
	if !m.Ctrl && ch.credit.Charge(wire) {
		p.full.Add(1)
	}
	switch {
	case ch.outBuf.FlushNow(m.Ctrl, m.Lazy, rt.cost.BufferBytes):
		ch.flush()
	case ch.outBuf.Arm():
		gen, epoch := ch.outBuf.Gen, ch.epoch
		time.AfterFunc(time.Duration(rt.cost.BufferTimeout), func() {
			q.mu.Lock()
			if ch.epoch == epoch && ch.outBuf.Fire(gen) {
				ch.flush()
			}
			q.mu.Unlock()
		})
	}
}

// flush hands the sender's buffer to the receiver (receiver's lock held).
// Nothing is on a wire in one process, so unlike the simulator's flush it
// appends the items to the receiver's queue at once.
func (ch *channel) flush() {
	ch.outBuf.Clear() // Bytes is already 0 when out is empty
	if len(ch.out) == 0 {
		return
	}
	if ch.head > 0 && ch.head == len(ch.inq) {
		ch.inq, ch.head = ch.inq[:0], 0
	}
	ch.inq = append(ch.inq, ch.out...)
	clear(ch.out)
	ch.out = ch.out[:0]
	ch.to.signal()
}

// deliverable reports whether the receiver may take the head message now:
// the simulator's rule, on this runtime's queue of items.
func (ch *channel) deliverable(blocked bool) bool {
	if ch.head == len(ch.inq) || ch.paused {
		return false
	}
	return !blocked || ch.inq[ch.head].m.Ctrl
}

// take removes the head of the receiver's queue, returning credit to the
// sender and waking it if that ends its backpressure.
func (ch *channel) take() engine.Msg {
	it := ch.inq[ch.head]
	// 1024, not the simulator's 64: this queue holds records, the
	// simulator's holds buffers of them.
	flow.Advance(&ch.inq, &ch.head, 1024)
	if !it.m.Ctrl && ch.credit.Refund(ch.to.rt.cost.WireBytes(it.m.Size)) {
		ch.from.channelDrained()
	}
	return it.m
}

// channelDrained is one of p's full output channels having room again: p
// is backpressured no more once none is full, and is signalled.
func (p *proc) channelDrained() {
	if p.full.Add(-1) == 0 {
		p.signal()
	}
}

// reset drops everything in the channel: the connection died with one of
// its ends (receiver's lock held). An overtaking message waiting in the
// receiver's urgent list dies with it.
func (ch *channel) reset() {
	ch.epoch++
	ch.to.urgent = slices.DeleteFunc(ch.to.urgent, func(u urgentItem) bool { return u.ch == ch })
	ch.to.syncPrio()
	ch.out = nil
	ch.outBuf.Clear()
	ch.inq, ch.head = nil, 0
	if ch.credit.Drop() {
		ch.from.channelDrained()
	}
}

// overtakenBy returns the data messages sent on ch before seq that the
// receiver has not consumed: its queue and the sender's buffer. The
// simulator's applies the same filter, and to the wire besides; the walks
// stay apart because the queues they walk are laid out apart.
func (ch *channel) overtakenBy(seq uint64, dst []engine.Msg) []engine.Msg {
	for _, it := range ch.inq[ch.head:] {
		if it.seq < seq && !it.m.Ctrl {
			dst = append(dst, it.m)
		}
	}
	for _, it := range ch.out {
		if it.seq < seq && !it.m.Ctrl {
			dst = append(dst, it.m)
		}
	}
	return dst
}
