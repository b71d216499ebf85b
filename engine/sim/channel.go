package sim

import (
	"math/bits"
	"slices"
	"unsafe"

	"ftbench/engine"
	"ftbench/engine/flow"
)

// item is a message as a channel holds it: engine.Msg without its Body, laid
// out as the Msg's first 48 bytes so that it is copied in and out whole.
// At high parallelism the channels' contents do not fit in cache and every
// queued record costs memory traffic on send and on receipt, so an item is
// kept small: three quarters of a Msg, no pointers (the collector never
// scans a buffer, and a recycled one needs no clearing), no sequence number.
//
// The few messages that carry a Body (control messages, Storm's anchored
// tuples) keep it in their buffer's bodies. A buffer's data messages were
// sent one after another, so the i-th item of a buffer whose first was sent
// as seq f is seq f+i (unless reorder shuffled it; netBuf.orig then keeps
// where each came from).
type item struct {
	Kind uint16
	Ctrl bool
	Lazy bool
	Size int32
	Key  uint64
	Val  int64
	ID   engine.EffectID
	Born engine.Time
}

// bodyAt is the Body of a buffer's item i.
type bodyAt struct {
	i    int32
	body any
}

// itemOf views m's first 48 bytes as an item (TestItemLayout keeps the
// two layouts equal).
func itemOf(m *engine.Msg) *item { return (*item)(unsafe.Pointer(m)) }

// msgOf is the message an item was, with its body. The Body is written
// only when there is one: m starts zeroed by 16-byte stores, and the
// callers copy m on in 16-byte loads, which a pair of 8-byte stores to the
// Body could not serve from the store buffer (a store-forwarding stall).
func msgOf(it *item, body any) (m engine.Msg) {
	*itemOf(&m) = *it
	if body != nil {
		m.Body = body
	}
	return m
}

// channel is the FIFO link from -> to: the sender's partly filled buffer,
// the buffers on the wire, and the receiver's queue. Its credit counts data
// bytes in all three; a sender with a full channel is backpressured and
// gets no new data input or timers until it drains. The rules of credit and
// of flushing are flow's, shared with the live runtime; what is the
// simulator's own is the wire (link serialisation, latency, throttling,
// reordering, partitions) and that timers are events.
type channel struct {
	idx      int
	from, to *proc
	epoch    uint32 // bumped by reset; buffers from an older epoch are dropped
	paused   bool

	out       []item   // sender-side buffer
	outBodies []bodyAt // the bodies of out's items that have one
	lastLen   int      // items in the last buffer flushed: the size of the next
	outBuf    flow.OutBuffer

	inflight []*netBuf
	inq      inQueue

	credit flow.Credit
	// nextSeq is the seq of the next message into out. Only in-band
	// messages take one; an overtaking message is given the seq of the next
	// in-band message without using it up, so that it sorts after every
	// message sent before it and before every one sent after.
	nextSeq  uint64
	linkFree engine.Time // the link is busy serialising until then
	// prioArrive is when the last overtaking message arrives; later
	// buffers never arrive before it.
	prioArrive engine.Time
	tr         *chanTrace // nil unless the trace saw the channel (trace.go)
}

type netBuf struct {
	ch    *channel
	epoch uint32
	items []item
	// bodies are the items' Bodies, by item position (ascending); most
	// buffers have none.
	bodies []bodyAt
	prio   bool   // an overtaking message: goes to the head of the receiver's input
	first  uint64 // seq of items[0] as sent
	// orig is nil unless reorder shuffled the buffer: then items[i] was
	// sent as seq first+orig[i].
	orig []int32
}

// body is the Body of items[i] (nil if it has none).
func (b *netBuf) body(i int) any {
	k, ok := slices.BinarySearchFunc(b.bodies, int32(i), func(x bodyAt, i int32) int { return int(x.i - i) })
	if !ok {
		return nil
	}
	return b.bodies[k].body
}

// msg is items[i] as the message that was sent.
func (b *netBuf) msg(i int) engine.Msg { return msgOf(&b.items[i], b.body(i)) }

// seq is the channel position items[i] was sent at.
func (b *netBuf) seq(i int) uint64 {
	if b.orig != nil {
		return b.first + uint64(b.orig[i])
	}
	return b.first + uint64(i)
}

func (s *Sim) channel(from, to *proc) *channel {
	if from.zombie || to.zombie {
		return s.zombieChannel(from, to)
	}
	ch := s.chanOf[from.id][to.id]
	if ch == nil {
		ch = s.newChannel(from, to)
		s.chanOf[from.id][to.id] = ch
	}
	return ch
}

// newChannel is a new channel from -> to, an input of to; the caller files
// it where the sender looks it up.
func (s *Sim) newChannel(from, to *proc) *channel {
	ch := &channel{
		idx:    len(s.chans),
		from:   from,
		to:     to,
		credit: flow.Credit{Capacity: flow.Capacity(&s.cost)},
	}
	s.chans = append(s.chans, ch)
	to.inputs = append(to.inputs, ch)
	return ch
}

func (s *Sim) send(p *proc, to engine.ProcID, m engine.Msg, overtaking bool) {
	q := s.mustProc(to)
	d := p.cost.SendCost(m.Size)
	if s.local(p, q) {
		d = p.cost.SendCPU // handed over as an object: no serialization
	}
	p.clock += d
	p.cpu += d
	ch := s.channel(p, q)
	if s.tr != nil {
		var seq uint64
		if ch != nil {
			seq = ch.nextSeq
		}
		s.tr.send(p, q, ch, &m, seq, overtaking)
	}
	if ch == nil || !ch.to.up {
		// The connection to a process that is down has been reset: what is
		// sent to it is lost, as Storm's transport drops what it cannot send
		// and a Flink task writing to a failed one fails (its job manager
		// then restarts the job). The sender learns of it only through its
		// protocol (acks, failure notices), and gets no backpressure from a
		// dead peer.
		return
	}
	wire := s.cost.WireBytes(m.Size)
	if overtaking {
		var bodies []bodyAt
		if m.Body != nil {
			bodies = []bodyAt{{0, m.Body}}
		}
		s.transmit(ch, []item{*itemOf(&m)}, bodies, wire, ch.nextSeq, p.clock, true)
		return
	}
	if ch.out == nil {
		ch.out = s.getBuf(ch.lastLen + ch.lastLen/4)
	}
	if m.Body != nil {
		if ch.outBodies == nil {
			ch.outBodies = s.getBodies()
		}
		ch.outBodies = append(ch.outBodies, bodyAt{int32(len(ch.out)), m.Body})
	}
	ch.out = append(ch.out, *itemOf(&m))
	ch.nextSeq++
	ch.outBuf.Bytes += wire
	if !m.Ctrl && ch.credit.Charge(wire) {
		if p.full == 0 {
			p.bpSince = p.clock
		}
		p.full++
	}
	switch {
	case ch.outBuf.FlushNow(m.Ctrl, m.Lazy, s.cost.BufferBytes):
		s.flush(ch, p.clock)
	case ch.outBuf.Arm():
		s.schedule(event{at: p.clock + s.cost.BufferTimeout, kind: evFlush, a: int64(ch.idx), inc: ch.epoch, proc: int32(ch.outBuf.Gen)})
	}
}

// local reports whether a message from p to q goes through an in-process
// queue (engine.Deployment.LocalTransfer): both placed, now, on the same
// worker.
func (s *Sim) local(p, q *proc) bool {
	return s.dep.LocalTransfer && p.worker >= 0 && p.worker == q.worker
}

// flush puts the sender's buffer on the wire. A buffer never holds data
// for a process that is down (its crash reset the channel and later sends
// are dropped), but the check keeps a flush timer armed across a crash
// harmless.
func (s *Sim) flush(ch *channel, at engine.Time) {
	if len(ch.out) == 0 || !ch.to.up {
		return
	}
	items, bodies, bytes := ch.out, ch.outBodies, ch.outBuf.Bytes
	ch.out, ch.outBodies = nil, nil
	ch.outBuf.Clear()
	ch.lastLen = len(items)
	s.transmit(ch, items, bodies, bytes, ch.nextSeq-uint64(len(items)), at, false)
}

// transmit puts a buffer, whose first item was sent as seq first, on the wire.
func (s *Sim) transmit(ch *channel, items []item, bodies []bodyAt, bytes int, first uint64, at engine.Time, prio bool) {
	start := max(at, ch.linkFree)
	xfer := engine.Time(float64(bytes) / s.cost.NetBandwidth * 1e9)
	latency := s.cost.NetLatency
	if s.local(ch.from, ch.to) {
		xfer, latency = 0, 0 // an in-process queue, not the network
	}
	if rate, until := s.throttleRate(ch, start); rate > 0 {
		data := 0
		for i := range items {
			if !items[i].Ctrl {
				data++
			}
		}
		// The link runs at the throttled rate only while the window lasts:
		// the records that fit before its end go slowly, the rest at full
		// bandwidth, so a throttle never outlives its window.
		slow := engine.Time(float64(data) / rate * 1e9)
		if start+slow > until && data > 0 {
			inWindow := until - start
			rest := 1 - float64(inWindow)/float64(slow)
			slow = inWindow + engine.Time(rest*float64(xfer))
		}
		xfer = max(xfer, slow)
	}
	arrive := start + xfer + latency
	var orig []int32
	if prio {
		ch.prioArrive = max(ch.prioArrive, arrive)
	} else {
		ch.linkFree = start + xfer
		// Nothing sent after an overtaking message may arrive before it
		// (a small data buffer could otherwise beat a large barrier).
		arrive = max(arrive, ch.prioArrive)
	}
	if p := s.reorderProb(ch, at); p > 0 {
		// Non-FIFO delivery: this buffer may be held back so that later ones
		// overtake it, and its messages may be shuffled.
		if s.netRand.Float64() < p {
			arrive += engine.Time(s.netRand.Int64N(int64(2*s.cost.BufferTimeout + 10*s.cost.NetLatency + 1)))
		}
		if len(items) > 1 && s.netRand.Float64() < p {
			orig = make([]int32, len(items))
			for i := range orig {
				orig[i] = int32(i)
			}
			s.netRand.Shuffle(len(items), func(i, j int) {
				items[i], items[j] = items[j], items[i]
				orig[i], orig[j] = orig[j], orig[i]
			})
			if len(bodies) > 0 {
				moveBodies(bodies, orig)
			}
		}
	}
	b := s.getNetBuf()
	*b = netBuf{ch: ch, epoch: ch.epoch, items: items, bodies: bodies, prio: prio, first: first, orig: orig}
	ch.inflight = append(ch.inflight, b)
	s.schedule(event{at: arrive, kind: evDeliver, buf: b})
}

// moveBodies renumbers bodies to the items' positions after a shuffle that
// put the item sent at position orig[i] at i, and sorts them by position.
func moveBodies(bodies []bodyAt, orig []int32) {
	now := make([]int32, len(orig)) // now[sent position] = position after the shuffle
	for i, o := range orig {
		now[o] = int32(i)
	}
	for k := range bodies {
		bodies[k].i = now[bodies[k].i]
	}
	slices.SortFunc(bodies, func(a, b bodyAt) int { return int(a.i - b.i) })
}

func (s *Sim) deliver(b *netBuf) {
	ch := b.ch
	if b.epoch != ch.epoch || !ch.to.up {
		return
	}
	if s.part.on && s.cut(ch) {
		// Across a partition: it waits, keeping its credit, until the
		// partition heals or the connection times out.
		s.part.stalled = append(s.part.stalled, b)
		return
	}
	for i, f := range ch.inflight {
		if f == b {
			copy(ch.inflight[i:], ch.inflight[i+1:])
			ch.inflight[len(ch.inflight)-1] = nil
			ch.inflight = ch.inflight[:len(ch.inflight)-1]
			break
		}
	}
	to := ch.to
	if b.prio {
		to.urgent = append(to.urgent, urgentItem{from: ch.from.id, ch: ch, seq: b.first, m: b.msg(0)})
		s.putNetBuf(b)
	} else {
		ch.inq.push(b)
	}
	to.wake(s.now)
}

// take removes the head of the receiver's queue, returning credit to the
// sender (and waking it if that ends its backpressure).
func (ch *channel) take() engine.Msg {
	m, done := ch.inq.pop()
	if done != nil {
		ch.from.sim.putNetBuf(done)
	}
	if !m.Ctrl && ch.credit.Refund(ch.from.sim.cost.WireBytes(m.Size)) {
		ch.from.channelDrained(ch.to.clock)
	}
	return m
}

// channelDrained is one of p's full output channels having room again: p
// is backpressured no more once none is full, and is woken at at.
func (p *proc) channelDrained(at engine.Time) {
	p.full--
	if p.full == 0 {
		p.unblocked(at)
		p.wake(at)
	}
}

// deliverable reports whether the receiver may take the head message now: the
// channel is not paused and, if the receiver is backpressured, the head is a
// control message. The live runtime's deliverable is the same rule, left
// in each runtime because it reads the head of a queue laid out its own way
// (buffers read in place here, items there), on the hottest path of both.
func (ch *channel) deliverable(blocked bool) bool {
	if ch.inq.n == 0 || ch.paused {
		return false
	}
	return !blocked || ch.inq.head().Ctrl
}

// reset drops everything in the channel: the connection died with one of its ends.
func (s *Sim) reset(ch *channel) {
	ch.epoch++
	if s.tr != nil {
		s.tr.reset(ch)
	}
	// An overtaking message already delivered waits in the receiver's
	// urgent list, outside the channel's queues: it dies with the channel
	// too, or the receiver would handle it with the data it jumped gone.
	ch.to.urgent = slices.DeleteFunc(ch.to.urgent, func(u urgentItem) bool { return u.ch == ch })
	ch.prioArrive = 0
	if ch.out != nil {
		s.putBuf(ch.out)
	}
	s.putBodies(ch.outBodies)
	ch.out, ch.outBodies = nil, nil
	ch.outBuf.Clear()
	for i := range ch.inflight {
		ch.inflight[i] = nil
	}
	ch.inflight = ch.inflight[:0]
	ch.inq.clear(s)
	ch.linkFree = 0
	if ch.credit.Drop() {
		ch.from.channelDrained(s.now)
	}
}

// overtakenBy returns the data messages sent on ch before seq that the
// receiver has not consumed: the receiver's queue, the wire, the sender's buffer.
func (ch *channel) overtakenBy(seq uint64, dst []engine.Msg) []engine.Msg {
	ch.inq.eachBuf(func(b *netBuf, i int) {
		if b.seq(i) < seq && !b.items[i].Ctrl {
			dst = append(dst, b.msg(i))
		}
	})
	for _, b := range ch.inflight {
		if b.prio {
			continue
		}
		for i := range b.items {
			if b.seq(i) < seq && !b.items[i].Ctrl {
				dst = append(dst, b.msg(i))
			}
		}
	}
	out := netBuf{items: ch.out, bodies: ch.outBodies, first: ch.nextSeq - uint64(len(ch.out))}
	for i := range out.items {
		if out.seq(i) < seq && !out.items[i].Ctrl {
			dst = append(dst, out.msg(i))
		}
	}
	return dst
}

// Queued returns the number of data messages held in the channel from -> to
// (for tests and backpressure checks).
func (s *Sim) Queued(from, to engine.ProcID) (msgs, bytes int) {
	ch := s.chanOf[from][to]
	if ch == nil {
		return 0, 0
	}
	n := ch.inq.n + len(ch.out)
	for _, b := range ch.inflight {
		n += len(b.items)
	}
	return n, ch.credit.Used
}

// PeakQueuedBytes is the most data any one channel has held at once.
func (s *Sim) PeakQueuedBytes() int {
	peak := 0
	for _, ch := range s.chans {
		peak = max(peak, ch.credit.Peak)
	}
	return peak
}

// Capacity is the credit of every channel in bytes.
func (s *Sim) Capacity() int { return flow.Capacity(&s.cost) }

// Send buffers are pooled by size class: class k holds slices whose
// capacity is at least 2^k items. A sender asks for room for as many items
// as its channel's last buffer held, so a busy channel gets a buffer that
// will not regrow by copying, and a quiet one a small buffer. A buffer that
// outgrew its class comes back to a larger one, so a request takes the
// smallest pooled buffer of up to two classes above what it asked for, and
// the pool keeps at most poolBytes, or poolBytesPerChannel for each channel
// if that is more, of buffers in all: a pool that only grows would hold
// every buffer the run ever outgrew, and one too small for a wide shuffle
// (parallelism 64 has 4 096 channels into one stage) would drop buffers
// that the next flushes allocate again.
const (
	minBufClass         = 4  // 16 items
	maxBufClass         = 20 // larger buffers are left to the garbage collector
	poolBytes           = 16 << 20
	poolBytesPerChannel = 32 << 10
	itemBytes           = int(unsafe.Sizeof(item{}))
)

// bufClassFor is the class to take a buffer for n items from.
func bufClassFor(n int) int {
	return max(minBufClass, bits.Len(uint(max(n, 1)-1)))
}

func (s *Sim) getBuf(n int) []item {
	k := bufClassFor(n)
	if k > maxBufClass {
		return make([]item, 0, n)
	}
	for c := k; c <= min(k+2, maxBufClass); c++ {
		pool := &s.bufPool[c-minBufClass]
		if m := len(*pool); m > 0 {
			b := (*pool)[m-1]
			(*pool)[m-1] = nil
			*pool = (*pool)[:m-1]
			s.pooledBytes -= cap(b) * itemBytes
			return b
		}
	}
	return make([]item, 0, 1<<k)
}

func (s *Sim) putBuf(b []item) {
	k := bits.Len(uint(cap(b))) - 1 // the largest class whose size b reaches
	if cap(b) == 0 || k < minBufClass || k > maxBufClass {
		return
	}
	size := cap(b) * itemBytes
	if s.pooledBytes+size > max(poolBytes, len(s.chans)*poolBytesPerChannel) {
		return
	}
	s.pooledBytes += size
	pool := &s.bufPool[k-minBufClass]
	*pool = append(*pool, b[:0])
}

func (s *Sim) getNetBuf() *netBuf {
	if n := len(s.netPool); n > 0 {
		b := s.netPool[n-1]
		s.netPool = s.netPool[:n-1]
		return b
	}
	return &netBuf{}
}

// getBodies is an empty slice to collect a buffer's bodies in.
func (s *Sim) getBodies() []bodyAt {
	if n := len(s.bodyPool); n > 0 {
		b := s.bodyPool[n-1]
		s.bodyPool = s.bodyPool[:n-1]
		return b
	}
	return nil
}

func (s *Sim) putBodies(b []bodyAt) {
	if cap(b) == 0 || len(s.bodyPool) >= 4096 {
		return
	}
	clear(b) // the bodies may hold memory
	s.bodyPool = append(s.bodyPool, b[:0])
}

// putNetBuf recycles a buffer that nothing refers to any more (every item
// taken by the receiver), with its item slice.
func (s *Sim) putNetBuf(b *netBuf) {
	s.putBuf(b.items)
	s.putBodies(b.bodies)
	*b = netBuf{}
	if len(s.netPool) < 4096 {
		s.netPool = append(s.netPool, b)
	}
}

// inQueue is the receiver's side of a channel: the delivered buffers, in
// arrival order, read in place (bufs[first].items[pos] is the next item),
// so that a record is not copied again between the wire and the receiver.
// n counts the items not yet taken.
type inQueue struct {
	bufs       []*netBuf
	first, pos int
	body       int // bufs[first].bodies[body] is the first body not yet taken
	n          int
}

func (q *inQueue) push(b *netBuf) {
	if len(b.items) == 0 {
		return
	}
	if q.first > 0 && q.first == len(q.bufs) {
		q.bufs, q.first = q.bufs[:0], 0
	}
	q.bufs = append(q.bufs, b)
	q.n += len(b.items)
}

// pop takes the next item; done is its buffer once every item of it has
// been taken (the caller recycles it).
func (q *inQueue) pop() (m engine.Msg, done *netBuf) {
	b := q.bufs[q.first]
	var body any
	if q.body < len(b.bodies) && int(b.bodies[q.body].i) == q.pos {
		body = b.bodies[q.body].body
		q.body++
	}
	m = msgOf(&b.items[q.pos], body)
	q.pos++
	q.n--
	if q.pos == len(b.items) {
		// 64, not the live runtime's 1024: this queue holds buffers, the
		// live one holds records.
		flow.Advance(&q.bufs, &q.first, 64)
		q.pos, q.body = 0, 0
		return m, b
	}
	return m, nil
}

// headSeq is the channel position the next item was sent at.
func (q *inQueue) headSeq() uint64 { return q.bufs[q.first].seq(q.pos) }

// head is the next item (the queue is not empty).
func (q *inQueue) head() *item { return &q.bufs[q.first].items[q.pos] }

// eachBuf calls f(b, i) for every queued item b.items[i], oldest first.
func (q *inQueue) eachBuf(f func(b *netBuf, i int)) {
	pos := q.pos
	for _, b := range q.bufs[q.first:] {
		for i := pos; i < len(b.items); i++ {
			f(b, i)
		}
		pos = 0
	}
}

func (q *inQueue) clear(s *Sim) {
	for _, b := range q.bufs[q.first:] {
		s.putNetBuf(b)
	}
	clear(q.bufs)
	q.bufs, q.first, q.pos, q.body, q.n = q.bufs[:0], 0, 0, 0, 0
}
