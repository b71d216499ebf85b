package storm

import "testing"

// The lecture's worked example (section 21.2.4 and the walk-through of
// algorithm 21.3.1): T0 (spout, A001) has children T1 (B002) and T2 (C003);
// T1 has child T3 (D004), T2 has child T4 (E005). Ids are truncated to 16
// bits as in the lecture. want is the checksum column of the lecture's table.
var seedEvents = []struct {
	event string
	id    uint64
	want  uint64
}{
	{"create T0 (spout emits the root)", 0xA001, 0xA001},
	{"create T1 (bolt1, anchored on T0)", 0xB002, 0x1003},
	{"create T2 (bolt1, anchored on T0)", 0xC003, 0xD000},
	{"ack    T0 (bolt1 done with T0)", 0xA001, 0x7001},
	{"create T3 (bolt2, anchored on T1)", 0xD004, 0xA005},
	{"ack    T1 (bolt2 done with T1)", 0xB002, 0x1007},
	{"create T4 (bolt2, anchored on T2)", 0xE005, 0xF002},
	{"ack    T2 (bolt2 done with T2)", 0xC003, 0x3001},
	{"ack    T3 (sink done with T3)", 0xD004, 0xE005},
	{"ack    T4 (sink done with T4)", 0xE005, 0x0000},
}

const (
	exRoot  = 0x7007
	exSpout = 3
)

// kindOf sends the first event (the spout's create of T0) as the init, so
// the acker learns the owning spout; every other event is a plain XOR.
func kindOf(i int) uint16 {
	if i == 0 {
		return KindInit
	}
	return KindAck
}

// TestLectureWorkedExample replays the lecture's table on the acker, event by
// event: the checksum after each event matches the table, the tree is
// pending until the last event, and the last event completes it.
func TestLectureWorkedExample(t *testing.T) {
	l := newLedger()
	for i, ev := range seedEvents {
		e, out := l.update(kindOf(i), exRoot, ev.id, exSpout)
		if e.val != ev.want {
			t.Fatalf("step %d %s ^ %04X: checksum %04X, lecture's table says %04X", i+1, ev.event, ev.id, e.val, ev.want)
		}
		last := i == len(seedEvents)-1
		if (out == completed) != last {
			t.Fatalf("step %d %s: outcome %d, want completion only at the last step", i+1, ev.event, out)
		}
		if last && e.spout != exSpout {
			t.Fatalf("completion goes to spout %d, want %d", e.spout, exSpout)
		}
	}
	if l.n != 0 {
		t.Fatalf("acker still holds %d entries after the tree completed", l.n)
	}
}

// TestLectureAnyOrderEndsAtZero: XOR is commutative and associative, so every
// permutation of the ten events (all 10! of them) leaves the checksum at 0.
// (Intermediate values do depend on the order; see
// TestFoldedMessagesNeverCompleteEarly for why that matters on the wire.)
func TestLectureAnyOrderEndsAtZero(t *testing.T) {
	ids := make([]uint64, len(seedEvents))
	for i, ev := range seedEvents {
		ids[i] = ev.id
	}
	n := 0
	permute(ids, len(ids), func(p []uint64) {
		var v uint64
		for _, id := range p {
			v ^= id
		}
		if v != 0 {
			t.Fatalf("order %04X ends at %04X", p, v)
		}
		n++
	})
	if n != 3628800 {
		t.Fatalf("visited %d orders, want 10! = 3628800", n)
	}
}

// TestLectureDuplicatedAck: acking T2 twice XORs its id out twice, which is
// the same as never acking it: the checksum ends at C003, not 0, and the
// tree can only time out (the lecture's exercise 2, part 3).
func TestLectureDuplicatedAck(t *testing.T) {
	l := newLedger()
	for i, ev := range seedEvents {
		l.update(kindOf(i), exRoot, ev.id, exSpout)
		if i == 7 { // ack T2, again
			l.update(KindAck, exRoot, ev.id, exSpout)
		}
	}
	e := l.take(exRoot)
	if e.val != 0xC003 {
		t.Fatalf("checksum after a duplicated ack of T2 = %04X, want C003 (never 0)", e.val)
	}
}

// TestFoldedMessagesNeverCompleteEarly: on the wire, Storm folds each
// child's "create" into its parent's ack, so the lecture's tree is six
// messages. However they are reordered, none but the last completes the
// tree. The unfolded events have no such guarantee: "create T0, ack T0"
// arriving first sums to 0 while T1..T4 are unprocessed — the reason the
// bolts here fold (and ack a tuple only after emitting its children).
func TestFoldedMessagesNeverCompleteEarly(t *testing.T) {
	msgs := []struct {
		kind uint16
		val  uint64
	}{
		{KindInit, 0xA001},                  // spout: T0 created
		{KindAck, 0xA001 ^ 0xB002 ^ 0xC003}, // bolt1: ack T0, T1 and T2 created
		{KindAck, 0xB002 ^ 0xD004},          // bolt2: ack T1, T3 created
		{KindAck, 0xC003 ^ 0xE005},          // bolt2: ack T2, T4 created
		{KindAck, 0xD004},                   // sink: ack T3
		{KindAck, 0xE005},                   // sink: ack T4
	}
	idx := []uint64{0, 1, 2, 3, 4, 5}
	permute(idx, len(idx), func(p []uint64) {
		l := newLedger()
		for k, i := range p {
			_, out := l.update(msgs[i].kind, exRoot, msgs[i].val, exSpout)
			if (out == completed) != (k == len(p)-1) {
				t.Fatalf("order %v: outcome %d after %d messages", p, out, k+1)
			}
		}
	})
	l := newLedger()
	l.update(KindInit, exRoot, 0xA001, exSpout)
	if _, out := l.update(KindAck, exRoot, 0xA001, exSpout); out != completed {
		t.Fatalf("unfolded create T0, ack T0: want the premature completion the folded form avoids")
	}
}

// permute calls f with every permutation of a[:k] (Heap's algorithm).
func permute(a []uint64, k int, f func([]uint64)) {
	if k == 1 {
		f(a)
		return
	}
	for i := 0; i < k-1; i++ {
		permute(a, k-1, f)
		if k%2 == 0 {
			a[i], a[k-1] = a[k-1], a[i]
		} else {
			a[0], a[k-1] = a[k-1], a[0]
		}
	}
	permute(a, k-1, f)
}
