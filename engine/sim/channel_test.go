package sim

import (
	"testing"
	"unsafe"

	"ftbench/engine"
)

// A queued record costs its ring slot: keep the slot compact (Msg's
// fields are ordered to share words; see engine.Msg).
func TestItemIsCompact(t *testing.T) {
	if got := unsafe.Sizeof(engine.Msg{}); got != 64 {
		t.Errorf("engine.Msg is %d bytes, want 64", got)
	}
	if got := unsafe.Sizeof(item{}); got != 72 {
		t.Errorf("item is %d bytes, want 72", got)
	}
}

// The ring keeps FIFO order across wrap-around and growth.
func TestRingFIFO(t *testing.T) {
	var r ring
	next, want := uint64(0), uint64(0)
	for round := 0; round < 200; round++ {
		for i := 0; i < round%37; i++ {
			r.push(item{seq: next})
			next++
		}
		for i := 0; i < round%23 && r.n > 0; i++ {
			if got := r.pop().seq; got != want {
				t.Fatalf("popped %d, want %d", got, want)
			}
			want++
		}
		if r.n > 0 && r.head().seq != want {
			t.Fatalf("head %d, want %d", r.head().seq, want)
		}
	}
	if len(r.buf)&(len(r.buf)-1) != 0 {
		t.Errorf("ring length %d is not a power of two", len(r.buf))
	}
}
