// Package flow holds the rules of a channel that both runtimes apply alike
// (engine/sim in simulated time, engine/live on goroutines and the wall
// clock): credit-based flow control, when a sender's network buffer is
// flushed, and how a receiver's queue gives back the room of what was read.
//
// They are small value types and functions that the compiler inlines,
// because the simulator calls them once per record: no interface, no
// indirect call, no allocation. What a runtime does with their answers
// (wake or signal a sender, arm a timer event or a time.AfterFunc, hand a
// buffer over) stays in the runtime.
package flow

import "ftbench/engine"

// Capacity is the credit of every channel under cost: ChannelBuffers
// network buffers of BufferBytes each, as Flink gives each input channel a
// fixed number of exclusive buffers.
func Capacity(cost *engine.CostModel) int { return cost.ChannelBuffers * cost.BufferBytes }

// Credit is a channel's credit-based flow control, as in Flink's
// credit-based network stack (a sender may only send into buffers the
// receiver announced) and Storm's bounded transfer queues: the data bytes
// the channel holds — the sender's buffer, the wire and the receiver's
// queue — counted against a fixed capacity. Control messages take no
// credit, so they pass a full channel.
//
// Invariant: Full == (Used >= Capacity). Full changes only in Charge,
// Restore, Refund and Drop, and each reports the change, so that a
// runtime counts each full channel of a sender exactly once (a sender with
// any full channel is backpressured).
type Credit struct {
	Used     int // data bytes held by the channel
	Peak     int // high-water mark of Used
	Capacity int
	Full     bool
}

// Charge takes the credit of a data message of wire bytes sent into the
// channel. It reports whether that filled the channel: the sender is
// backpressured on it from now on.
func (c *Credit) Charge(wire int) (filled bool) {
	c.Used += wire
	c.Peak = max(c.Peak, c.Used)
	return c.fill()
}

// Restore takes again the credit of data messages that were taken from
// the channel (and refunded) but are put back unread, as the live
// runtime's batch is when something must run before it. It reports
// whether that filled the channel. Peak is not raised: these bytes were
// counted when they were sent.
func (c *Credit) Restore(wire int) (filled bool) {
	c.Used += wire
	return c.fill()
}

func (c *Credit) fill() bool {
	if !c.Full && c.Used >= c.Capacity {
		c.Full = true
		return true
	}
	return false
}

// Refund returns the credit of a data message of wire bytes the receiver
// took. It reports whether that ended the sender's backpressure on the
// channel.
func (c *Credit) Refund(wire int) (drained bool) {
	c.Used -= wire
	if c.Full && c.Used < c.Capacity {
		c.Full = false
		return true
	}
	return false
}

// Drop returns all credit: the channel's connection died with one of its
// ends and what it held is lost. It reports whether the channel was full,
// so that its sender is no longer backpressured on it.
func (c *Credit) Drop() (wasFull bool) {
	c.Used = 0
	wasFull, c.Full = c.Full, false
	return wasFull
}

// OutBuffer is when a sender's partly filled network buffer goes on the
// wire, as Flink's RecordWriter and output flusher decide it: at once when
// it holds BufferBytes or when a control message that is not lazy (a
// barrier, an ack that must not wait) enters it, and otherwise when a
// buffer timeout fires, armed by the first message that finds no timer
// pending. The messages themselves stay in the runtime, whose item layout
// is its own.
//
// Invariant: Bytes is the wire size of the buffer's messages; Armed only
// while the buffer holds messages; Gen names the one timer that may still
// flush it, so a timer armed before a flush or a reset does nothing when
// it fires (the runtime also checks the channel's epoch, which a reset
// bumps).
type OutBuffer struct {
	Bytes int    // wire bytes in the buffer
	Armed bool   // a flush timer is pending
	Gen   uint32 // generation of the pending flush timer
}

// FlushNow reports whether the buffer must be flushed at once after a
// message (ctrl and lazy are its flags) entered it.
func (b *OutBuffer) FlushNow(ctrl, lazy bool, bufferBytes int) bool {
	return (ctrl && !lazy) || b.Bytes >= bufferBytes
}

// Arm arms the flush timer unless one is pending. It reports whether the
// runtime must start one; the timer carries Gen.
func (b *OutBuffer) Arm() bool {
	if b.Armed {
		return false
	}
	b.Armed = true
	b.Gen++
	return true
}

// Fire is a flush timer of generation gen going off. It reports whether it
// is the pending one, which then is pending no more: the runtime flushes
// the buffer.
func (b *OutBuffer) Fire(gen uint32) bool {
	if !b.Armed || b.Gen != gen {
		return false
	}
	b.Armed = false
	return true
}

// Clear is the buffer emptied, flushed or dropped: no timer is pending.
// Gen is kept, so that a timer armed before does not match a later one.
func (b *OutBuffer) Clear() { b.Bytes, b.Armed = 0, false }

// Advance moves the head of the queue (*q)[*head:] past an element that
// was read. Its slot is zeroed, so that it holds no memory, and the read
// prefix is given back: the whole slice when it is all read, or by moving
// the rest down once at least compactAt elements and half of the slice
// are read, so that a queue that never quite drains does not grow without
// bound. It takes pointers and shrinks *q in place, so that the slice's
// data pointer is never stored again: in the simulator's queue of buffers
// that store would cost a write barrier on every buffer read.
func Advance[T any](q *[]T, head *int, compactAt int) {
	var zero T
	(*q)[*head] = zero
	*head++
	// (*q)[:n], not a local copy's: the compiler then sees a slice
	// shrink in place and stores only its length.
	switch h := *head; {
	case h == len(*q):
		*q, *head = (*q)[:0], 0
	case h >= compactAt && 2*h >= len(*q):
		n := copy(*q, (*q)[h:])
		clear((*q)[n:])
		*q, *head = (*q)[:n], 0
	}
}
