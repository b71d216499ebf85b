package check

import (
	"slices"
	"testing"
)

func TestReceivedAdd(t *testing.T) {
	var r Received
	var inOrder []bool
	for _, s := range []int64{0, 1, 3, 5, 2, 4, 6} {
		inOrder = append(inOrder, r.Add(s))
	}
	if want := []bool{true, true, false, false, false, false, true}; !slices.Equal(inOrder, want) {
		t.Fatalf("in order %v, want %v", inOrder, want)
	}
	if r.Contig != 7 || len(r.Extra) != 0 || r.Max() != 6 {
		t.Fatalf("got %+v max %d", r, r.Max())
	}
	r = Received{}
	r.Add(0)
	r.Add(2)
	r.Add(5)
	c := r.Clone()
	r.Add(1)
	if c.Contig != 1 || !slices.Equal(c.Extra, []int64{2, 5}) {
		t.Fatalf("clone changed with the original: %+v", c)
	}
	for s, want := range map[int64]bool{0: true, 1: false, 2: true, 3: false, 5: true, 6: false} {
		if c.Has(s) != want {
			t.Errorf("Has(%d) = %v", s, !want)
		}
	}
	if n := c.countFrom(2); n != 2 {
		t.Errorf("countFrom(2) = %d, want 2", n)
	}
	if n := c.countFrom(0); n != 3 {
		t.Errorf("countFrom(0) = %d, want 3", n)
	}
}

// r has received messages 0, 2 and 5 of a channel when a marker arrives. If
// it was sent after 3 messages (0, 1, 2), message 5 overtook it and it
// overtook message 1; sent after 6 messages, it overtook 1, 3 and 4; sent
// after message 0 only, messages 2 and 5 overtook it.
func TestReceivedCrossing(t *testing.T) {
	r := Received{}
	for _, s := range []int64{0, 2, 5} {
		r.Add(s)
	}
	for _, c := range []struct{ sent, overtook, overtaken int64 }{
		{0, 3, 0}, {1, 2, 0}, {3, 1, 1}, {6, 0, 3}, {7, 0, 4},
	} {
		if a, b := r.Crossing(c.sent); a != c.overtook || b != c.overtaken {
			t.Errorf("Crossing(%d) = %d, %d; want %d, %d", c.sent, a, b, c.overtook, c.overtaken)
		}
	}
	fifo := Received{}
	for s := int64(0); s < 4; s++ {
		fifo.Add(s)
	}
	if a, b := fifo.Crossing(4); a != 0 || b != 0 {
		t.Errorf("FIFO channel: Crossing(4) = %d, %d; want 0, 0", a, b)
	}
}

// Two processes with $100 each and one channel 0 -> 1 carrying $10
// messages 0, 1, 2.
func TestAuditSnapshot(t *testing.T) {
	rec := func(seqs ...int64) []Recorded {
		var r []Recorded
		for _, s := range seqs {
			r = append(r, Recorded{Seq: s, Amount: 10})
		}
		return r
	}
	for _, tc := range []struct {
		name     string
		balances []int64
		ch       ChannelCut
		want     Audit
	}{
		{"consistent, in flight recorded", []int64{80, 110}, ChannelCut{Sent: 2, Received: Received{Contig: 1}, Recorded: rec(1)},
			Audit{Consistent: true, ChannelMoney: 10}},
		{"consistent, nothing in flight", []int64{70, 130}, ChannelCut{Sent: 3, Received: Received{Contig: 3}},
			Audit{Consistent: true}},
		{"orphan", []int64{90, 120}, ChannelCut{Sent: 1, Received: Received{Contig: 2}},
			Audit{Imbalance: 10, Orphans: 1}},
		{"orphan received out of order", []int64{90, 110}, ChannelCut{Sent: 1, Received: Received{Contig: 0, Extra: []int64{1}}},
			Audit{Imbalance: 0, Orphans: 1, Missing: 1}},
		{"in flight not recorded", []int64{80, 110}, ChannelCut{Sent: 2, Received: Received{Contig: 1}},
			Audit{Imbalance: -10, Missing: 1}},
		{"recorded but sent after the cut", []int64{90, 100}, ChannelCut{Sent: 1, Received: Received{}, Recorded: rec(0, 1)},
			Audit{Imbalance: 10, LateRecorded: 1, ChannelMoney: 20}},
		{"recorded twice", []int64{90, 110}, ChannelCut{Sent: 1, Received: Received{Contig: 1}, Recorded: rec(0)},
			Audit{Imbalance: 10, DoubleCounted: 1, ChannelMoney: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.ch.From, tc.ch.To = 0, 1
			g := &GlobalSnapshot{Balances: tc.balances, Channels: []ChannelCut{tc.ch}, Total: 200}
			got := AuditSnapshot(g)
			if (len(got.Examples) == 0) != got.Consistent {
				t.Errorf("examples %q for consistent=%v", got.Examples, got.Consistent)
			}
			got.Examples = nil
			if got.Imbalance != tc.want.Imbalance || got.Orphans != tc.want.Orphans || got.Missing != tc.want.Missing ||
				got.LateRecorded != tc.want.LateRecorded || got.DoubleCounted != tc.want.DoubleCounted ||
				got.ChannelMoney != tc.want.ChannelMoney || got.Consistent != tc.want.Consistent {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
