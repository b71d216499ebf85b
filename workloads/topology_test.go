package workloads

import (
	"fmt"
	"slices"
	"testing"
)

// Every kind gives the channels it promises, strongly connected, for any
// process count and seed; random is a pure function of the seed.
func TestTopologies(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		channels func(n int) int
	}{
		{"full", func(n int) int { return n * (n - 1) }},
		{"ring", func(n int) int { return n }},
		{"star", func(n int) int { return 2 * (n - 1) }},
		{"random,degree=1", func(n int) int { return n }},
		{"random,degree=2", func(n int) int { return 2 * n }},
	} {
		for n := 3; n <= 9; n++ {
			for seed := uint64(1); seed <= 20; seed++ {
				top, err := ParseTopology(tc.spec, n, seed)
				if err != nil {
					t.Fatalf("%s n=%d: %v", tc.spec, n, err)
				}
				if got := top.Channels(); got != tc.channels(n) || !top.StronglyConnected() || top.String() != tc.spec {
					t.Fatalf("%s n=%d seed %d: %d channels (want %d), strongly connected %v, %q", tc.spec, n, seed, got, tc.channels(n), top.StronglyConnected(), top.String())
				}
				for p, out := range top.Out {
					if slices.Contains(out, p) || !slices.IsSorted(out) {
						t.Fatalf("%s: process %d's channels %v", tc.spec, p, out)
					}
				}
				again, _ := ParseTopology(tc.spec, n, seed)
				if fmt.Sprint(again.Out) != fmt.Sprint(top.Out) {
					t.Fatalf("%s n=%d seed %d: not deterministic", tc.spec, n, seed)
				}
			}
		}
	}
	a, _ := ParseTopology("random,degree=2", 8, 1)
	b, _ := ParseTopology("random,degree=2", 8, 2)
	if fmt.Sprint(a.Out) == fmt.Sprint(b.Out) {
		t.Error("two seeds drew the same random graph")
	}
}

// A graph that is not strongly connected is recognised as such.
func TestStronglyConnectedDetectsOneWayCut(t *testing.T) {
	top := &Topology{Out: [][]int{{1}, {2}, {1}}} // 0 -> 1 <-> 2: nothing reaches 0
	top.index()
	if top.StronglyConnected() {
		t.Fatal("0 is unreachable, yet strongly connected")
	}
}

func TestBadTopologies(t *testing.T) {
	for _, spec := range []string{"", "mesh", "ring,degree=2", "random", "random,degree=0", "random,degree=4", "random,k=2", "random,degree=x"} {
		if _, err := New("bank-p2p", 1, map[string]string{"processes": "4", "topology": spec}); err == nil {
			t.Errorf("--topology=%q accepted", spec)
		}
	}
}

// Transfers follow the topology, and the oracle (through the plan) and
// Balances agree with them: money is conserved.
func TestBankP2PTransfersFollowTopology(t *testing.T) {
	for _, spec := range []string{"full", "ring", "star", "random,degree=2"} {
		w := mustNew(t, "bank-p2p", map[string]string{"processes": "5", "topology": spec}).(*BankP2P)
		top := w.Topology()
		used := map[[2]int]bool{}
		appended := []int64{300, 300, 300, 300, 300}
		for p := int32(0); p < 5; p++ {
			for off := int64(0); off < 300; off++ {
				tr := w.Transfer(p, off)
				if tr.Payer != int(p) || !top.Has(tr.Payer, tr.Payee) {
					t.Fatalf("%s: transfer (%d,%d) %+v is not on a channel", spec, p, off, tr)
				}
				used[[2]int{tr.Payer, tr.Payee}] = true
			}
		}
		if len(used) != top.Channels() {
			t.Errorf("%s: transfers used %d of %d channels", spec, len(used), top.Channels())
		}
		bal := w.Balances(appended)
		var sum int64
		for _, b := range bal {
			sum += b
		}
		if sum != w.Total() {
			t.Fatalf("%s: balances add up to %d, want %d", spec, sum, w.Total())
		}
		_, _, final := Expected(w, appended)
		for a := 0; a < 5; a++ {
			if got := InitialBalance + final[CreditKey(a)] - final[DebitKey(a)]; got != bal[a] {
				t.Fatalf("%s: account %d: oracle %d, Balances %d", spec, a, got, bal[a])
			}
		}
	}
}
