package snapshot

import "testing"

// thaw delivers Mattern's announcement of snapshot 1 from P0 to every
// other process (each at queue index idx[q] of C0q) and their acks, so P0
// records and sends its forces and done messages.
func (s *script) thaw(idx map[int]int) {
	for q := 1; q < s.n; q++ {
		s.deliver(0, q, idx[q])
	}
	for q := 1; q < s.n; q++ {
		s.deliver(q, 0, 0)
	}
}

// Mattern on the lecture's counter-example (12.3.6): neither order on the
// channel matters. A transfer sent after P0's cut overtakes P0's force and
// done: its clock has reached the cut vector, so P1 records before
// applying it and it is in no channel state. A transfer sent before P0's
// cut is overtaken by P0's announcement, force and done: its clock has
// not reached the cut vector, so arriving after P1 recorded it is channel
// state, and P1 closes the channel when the one transfer done announced is in.
func TestMatternHoldsWithoutFIFO(t *testing.T) {
	s := newScript(t, Mattern, 2)
	s.initiate(1)
	s.thaw(nil)
	s.send(0, 1, 100)  // after P0's cut
	s.deliver(0, 1, 2) // overtakes force(1) and done(1)
	s.drain()
	if a := s.audit(1); !a.Consistent || a.ChannelMoney != 0 {
		t.Fatalf("post-cut transfer overtaking: %+v\n%s", a, s.trace.String())
	}

	s = newScript(t, Mattern, 2)
	s.send(0, 1, 100) // before P0's cut
	s.initiate(1)
	s.thaw(map[int]int{1: 1}) // the announcement overtakes the transfer
	s.deliver(0, 1, 1)        // force(1) overtakes it too: P1 records $1000
	s.deliver(0, 1, 1)        // done(1, 1): one transfer to wait for
	s.deliver(0, 1, 0)        // the $100, inside the cut: channel state
	s.drain()
	if a := s.audit(1); !a.Consistent || a.ChannelMoney != 100 {
		t.Fatalf("pre-cut transfer overtaken: %+v\n%s", a, s.trace.String())
	}
	if got := s.counts[cntMarkers]; got != 2 {
		t.Fatalf("%d done messages, want one per channel = 2", got)
	}
	if got := s.counts[cntCoord]; got != 3 {
		t.Fatalf("%d coordination messages, want announce + ack + force = 3(N-1) = 3", got)
	}
	golden(t, "mattern_nonfifo", s.trace.String())
}

// On a one-way ring 0 -> 1 -> 2 -> 0 the frozen initiator holds a transfer
// that arrives during the announcement round; it is received after the
// initiator recorded and was sent inside the cut, so it is channel state.
// So is P1's $30: sent before P1's clock reached the cut, received after
// P0's force made P2 record. Done messages go only on the ring's three
// channels, and the transfers carry 8N bytes of vector clock each.
func TestMatternFreezeOnRing(t *testing.T) {
	s := newScriptOn(t, Mattern, 3, "ring")
	s.send(0, 1, 10)
	s.deliver(0, 1, 0)
	s.initiate(1)      // P0 freezes; announcements to P1 and P2
	s.send(2, 0, 20)   // P2 -> P0 on the ring, before P2's cut
	s.deliver(2, 0, 0) // held: P0 is frozen
	s.thaw(nil)        // P0 records $990, then handles the $20: channel state
	s.send(1, 2, 30)   // P1 has not recorded; its clock has not reached the cut
	s.deliver(0, 2, 0) // force(1): P2 records $980
	s.deliver(1, 2, 0) // the $30, inside the cut: C12's state
	s.drain()
	a := s.audit(1)
	if !a.Consistent || a.ChannelMoney != 50 {
		t.Fatalf("want a consistent snapshot with $20 in C20 and $30 in C12, got %+v\n%s", a, s.trace.String())
	}
	if got := s.counts[cntMarkers]; got != 3 {
		t.Fatalf("%d done messages, want one per ring channel = 3", got)
	}
	if got := s.counts[cntPiggyback]; got != 3*8*3 {
		t.Fatalf("%d piggybacked bytes on 3 transfers, want 3 x 8N = 72", got)
	}
	golden(t, "mattern_ring", s.trace.String())
}

// Chandy-Lamport on a one-way ring 0 -> 1 -> 2 -> 0: one marker per
// channel (3, not N(N-1) = 6); P0 records C20, its one input, and the
// transfer P2 sent before its cut is that channel's state, while the
// transfer P1 sent after its cut is in no state.
func TestCLRing(t *testing.T) {
	s := newScriptOn(t, CL, 3, "ring")
	s.initiate(1)      // P0 records; marker on C01
	s.send(2, 0, 20)   // before P2's cut
	s.deliver(0, 1, 0) // P1 records; marker on C12
	s.send(1, 2, 10)   // after P1's cut
	s.deliver(1, 2, 0) // P2 records; marker on C20
	s.drain()
	a := s.audit(1)
	if !a.Consistent || a.ChannelMoney != 20 {
		t.Fatalf("want a consistent snapshot with $20 in C20, got %+v\n%s", a, s.trace.String())
	}
	if got := s.counts[cntMarkers]; got != 3 {
		t.Fatalf("%d markers, want one per channel = 3", got)
	}
	golden(t, "cl_ring", s.trace.String())
}

// Concurrent Mattern snapshots: P0 and P1 initiate at once and both
// freeze, acknowledging each other's announcement while frozen; a second
// snapshot due at P0 while it is frozen (snapshot 3) waits for the thaw.
// The transfers sent before reach frozen initiators, are held, and are
// channel state of the snapshot each receiver initiated ($20 in snapshot
// 1, $10 in snapshot 2); all three snapshots are consistent.
func TestMatternConcurrentSnapshots(t *testing.T) {
	s := newScript(t, Mattern, 2)
	s.send(0, 1, 10)
	s.send(1, 0, 20)
	s.initiate(1) // P0 freezes
	s.initiate(2) // P1 freezes
	s.initiate(3) // P0 again: queued
	if p := s.procs[0]; p.frozen != 1 || len(p.mtQueued) != 1 {
		t.Fatalf("P0: frozen for %d with %v queued, want 1 with [3]", p.frozen, p.mtQueued)
	}
	s.drain() // announcements, acks, forces, the transfers, done messages, reports
	s.send(0, 1, 30)
	s.send(1, 0, 40)
	s.drain()
	for j, money := range []int64{20, 10, 0} {
		if a := s.audit(int64(j + 1)); !a.Consistent || a.ChannelMoney != money {
			t.Fatalf("snapshot %d: want consistent with $%d in channels, got %+v\n%s", j+1, money, a, s.trace.String())
		}
	}
	if s.procs[0].frozen != 0 || s.procs[1].frozen != 0 || len(s.procs[0].mt)+len(s.procs[1].mt) != 0 {
		t.Fatalf("left frozen or with cuts open:\n%s", s.trace.String())
	}
	golden(t, "mattern_concurrent", s.trace.String())
}
