package flow

import (
	"math/rand/v2"
	"slices"
	"testing"

	"ftbench/engine"
)

func TestCapacity(t *testing.T) {
	cost := engine.DefaultCost()
	if got, want := Capacity(&cost), cost.ChannelBuffers*cost.BufferBytes; got != want {
		t.Errorf("Capacity = %d, want %d", got, want)
	}
}

// Every change of Full is reported, once, and Full == (Used >= Capacity)
// holds after every operation: a runtime's count of a sender's full
// channels is only right if both are true.
func TestCreditReportsEveryChangeOfFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := Credit{Capacity: 100}
	var held []int // wire sizes of the data messages in the channel
	full := 0      // the runtime's count, kept from the reports alone
	peak := 0
	for step := range 10_000 {
		switch op := rng.IntN(10); {
		case op < 5:
			w := 1 + rng.IntN(40)
			held = append(held, w)
			if c.Charge(w) {
				full++
			}
		case op < 9 && len(held) > 0:
			w := held[0]
			held = held[1:]
			if c.Refund(w) {
				full--
			}
		case op == 9 && len(held) > 0:
			// Taken and put back unread, as the live runtime's batch.
			w := held[0]
			if c.Refund(w) {
				full--
			}
			if c.Restore(w) {
				full++
			}
		default:
			held = held[:0]
			if c.Drop() {
				full--
			}
		}
		used := 0
		for _, w := range held {
			used += w
		}
		peak = max(peak, used)
		if c.Used != used || c.Full != (used >= c.Capacity) || full != b2i(c.Full) || c.Peak != peak {
			t.Fatalf("step %d: %+v, want Used %d, Full %v, Peak %d, and reports counting %d full", step, c, used, used >= c.Capacity, peak, full)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Restore does not raise Peak: the bytes were counted when they were sent.
func TestCreditRestoreKeepsPeak(t *testing.T) {
	c := Credit{Capacity: 100}
	c.Charge(60)
	c.Refund(60)
	c.Charge(30)
	if c.Restore(60) || c.Peak != 60 || c.Used != 90 {
		t.Errorf("after Restore: %+v, want Used 90, Peak 60, not full", c)
	}
}

func TestOutBufferFlushRule(t *testing.T) {
	const bufferBytes = 100
	var b OutBuffer
	b.Bytes += 10
	if b.FlushNow(false, false, bufferBytes) {
		t.Fatal("a data message into a buffer not full flushed it")
	}
	if b.FlushNow(true, true, bufferBytes) {
		t.Fatal("a lazy control message flushed the buffer")
	}
	if !b.FlushNow(true, false, bufferBytes) {
		t.Fatal("a control message that is not lazy waits for the timeout")
	}
	if !b.Arm() || b.Gen != 1 {
		t.Fatalf("the first message armed no timer: %+v", b)
	}
	b.Bytes += 90
	if b.Arm() {
		t.Fatal("a second timer was armed while one is pending")
	}
	if !b.FlushNow(false, false, bufferBytes) {
		t.Fatal("a full buffer waits for the timeout")
	}
	b.Clear() // flushed at once
	if b.Fire(1) {
		t.Fatal("the timer of a buffer flushed since fired")
	}
	b.Bytes += 10
	if !b.Arm() || b.Gen != 2 {
		t.Fatalf("the next message armed no new timer: %+v", b)
	}
	if b.Fire(1) {
		t.Fatal("an older timer fired for the new buffer")
	}
	if !b.Fire(2) || b.Armed {
		t.Fatalf("the pending timer did not fire: %+v", b)
	}
	if b.Fire(2) {
		t.Fatal("a timer fired twice")
	}
}

// Advance gives the same elements, in order, as a plain queue, zeroes what
// was read, and gives the read prefix back.
func TestAdvance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var q []*int
	head := 0
	var want []int
	next := 0
	for range 20_000 {
		if rng.IntN(2) == 0 {
			for range rng.IntN(5) {
				v := next
				next++
				q = append(q, &v)
				want = append(want, v)
			}
			continue
		}
		if head == len(q) {
			continue
		}
		got := *q[head]
		Advance(&q, &head, 16)
		if got != want[0] {
			t.Fatalf("read %d, want %d", got, want[0])
		}
		want = want[1:]
		if slices.ContainsFunc(q[:head], func(p *int) bool { return p != nil }) {
			t.Fatal("a read slot still holds its element")
		}
		if head >= 16 && 2*head >= len(q) {
			t.Fatalf("head %d of %d: the read prefix was not given back", head, len(q))
		}
	}
	if len(q)-head != len(want) {
		t.Errorf("%d elements queued, want %d", len(q)-head, len(want))
	}
}
