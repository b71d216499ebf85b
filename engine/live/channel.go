package live

import (
	"time"

	"ftbench/engine"
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
// timers until the receiver drains it. Every field is guarded by the
// receiver's mutex.
type channel struct {
	from, to *proc
	epoch    uint32 // bumped by reset; a flush timer of an older epoch does nothing

	out        []item // sender-side buffer
	outBytes   int
	flushArmed bool
	flushGen   uint32

	inq  []item // receiver's queue from head on
	head int

	used     int // data bytes held by the channel
	peak     int
	capacity int
	full     bool
	paused   bool
	nextSeq  uint64
}

// channelFrom returns the channel s -> p, creating it (p.mu held).
func (p *proc) channelFrom(s *proc) *channel {
	ch := p.in[s.id]
	if ch == nil {
		ch = &channel{from: s, to: p, capacity: p.rt.cost.ChannelBuffers * p.rt.cost.BufferBytes}
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
	it := item{m: m, seq: ch.nextSeq}
	ch.nextSeq++
	if overtaking {
		q.urgent = append(q.urgent, urgentItem{from: p.id, ch: ch, seq: it.seq, m: m})
		q.syncPrio()
		q.signal()
		return
	}
	ch.out = append(ch.out, it)
	ch.outBytes += wire
	if !m.Ctrl {
		ch.used += wire
		ch.peak = max(ch.peak, ch.used)
		if !ch.full && ch.used >= ch.capacity {
			ch.full = true
			p.full.Add(1)
		}
	}
	switch {
	case (m.Ctrl && !m.Lazy) || ch.outBytes >= rt.cost.BufferBytes:
		ch.flush()
	case !ch.flushArmed:
		ch.flushArmed = true
		ch.flushGen++
		gen, epoch := ch.flushGen, ch.epoch
		time.AfterFunc(time.Duration(rt.cost.BufferTimeout), func() {
			q.mu.Lock()
			if ch.epoch == epoch && ch.flushArmed && ch.flushGen == gen {
				ch.flush()
			}
			q.mu.Unlock()
		})
	}
}

// flush hands the sender's buffer to the receiver (receiver's lock held).
func (ch *channel) flush() {
	ch.flushArmed = false
	if len(ch.out) == 0 {
		return
	}
	if ch.head > 0 && ch.head == len(ch.inq) {
		ch.inq, ch.head = ch.inq[:0], 0
	}
	ch.inq = append(ch.inq, ch.out...)
	clear(ch.out)
	ch.out, ch.outBytes = ch.out[:0], 0
	ch.to.signal()
}

// deliverable reports whether the receiver may take the head message now.
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
	ch.inq[ch.head] = item{}
	ch.head++
	if ch.head == len(ch.inq) {
		ch.inq, ch.head = ch.inq[:0], 0
	} else if ch.head >= 1024 && ch.head*2 >= len(ch.inq) {
		n := copy(ch.inq, ch.inq[ch.head:])
		clear(ch.inq[n:])
		ch.inq, ch.head = ch.inq[:n], 0
	}
	if !it.m.Ctrl {
		ch.used -= ch.to.rt.cost.WireBytes(it.m.Size)
		if ch.full && ch.used < ch.capacity {
			ch.full = false
			if ch.from.full.Add(-1) == 0 {
				ch.from.signal()
			}
		}
	}
	return it.m
}

// reset drops everything in the channel: the connection died with one of
// its ends (receiver's lock held). An overtaking message waiting in the
// receiver's urgent list dies with it.
func (ch *channel) reset() {
	ch.epoch++
	urgent := ch.to.urgent[:0]
	for _, u := range ch.to.urgent {
		if u.ch != ch {
			urgent = append(urgent, u)
		}
	}
	clear(ch.to.urgent[len(urgent):])
	ch.to.urgent = urgent
	ch.to.syncPrio()
	ch.out, ch.outBytes, ch.flushArmed = nil, 0, false
	ch.inq, ch.head = nil, 0
	ch.used = 0
	if ch.full {
		ch.full = false
		if ch.from.full.Add(-1) == 0 {
			ch.from.signal()
		}
	}
}

// overtakenBy returns the data messages sent on ch before seq that the
// receiver has not consumed: its queue and the sender's buffer.
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
