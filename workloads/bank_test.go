package workloads

import (
	"runtime"
	"testing"

	"ftbench/engine"
)

func newTestBank(t *testing.T, name string, opts map[string]string) Workload {
	t.Helper()
	w, err := New(name, 7, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestBankTransfers(t *testing.T) {
	b := newTestBank(t, "bank", map[string]string{"accounts": "5"}).(*Bank)
	p2p := newTestBank(t, "bank-p2p", map[string]string{"processes": "3"}).(*BankP2P)
	for part := int32(0); part < 3; part++ {
		for off := int64(0); off < 500; off++ {
			for _, c := range []struct {
				w *Bank
				n int
			}{{b, 5}, {p2p.Bank, 3}} {
				tr := c.w.Transfer(part, off)
				if tr != c.w.Transfer(part, off) {
					t.Fatal("Transfer is not a pure function")
				}
				if tr.Payer == tr.Payee || tr.Payer < 0 || tr.Payer >= c.n || tr.Payee < 0 || tr.Payee >= c.n {
					t.Fatalf("%s: bad transfer %+v", c.w.Name(), tr)
				}
				if tr.Amount < 10 || tr.Amount > 50 || tr.Amount%10 != 0 {
					t.Fatalf("amount %d", tr.Amount)
				}
			}
			if p := p2p.Transfer(part, off).Payer; p != int(part) {
				t.Fatalf("bank-p2p: payer %d of partition %d", p, part)
			}
		}
	}
}

// The oracle's sink state is every account's outflow and inflow; they agree
// with Balances for the same prefix, and money is conserved.
func TestBankOracleAndBalances(t *testing.T) {
	for _, name := range []string{"bank", "bank-p2p"} {
		w := newTestBank(t, name, nil)
		appended := []int64{300, 250, 0, 123}
		effects, total, final := Expected(w, appended)
		if want := 2 * (300 + 250 + 123); total != int64(want) {
			t.Fatalf("%s: %d effects, want two per transfer (%d)", name, total, want)
		}
		for p := range effects {
			for _, e := range effects[p] {
				if e != 2 {
					t.Fatalf("%s: a transfer with %d effects", name, e)
				}
			}
		}
		var bank *Bank
		switch x := w.(type) {
		case *Bank:
			bank = x
		case *BankP2P:
			bank = x.Bank
		}
		bal := bank.Balances(appended)
		var sum, out, in int64
		for a, b := range bal {
			sum += b
			o, i := final[DebitKey(a)], final[CreditKey(a)]
			out += o
			in += i
			if InitialBalance+i-o != b {
				t.Fatalf("%s: account %d: oracle says %d-%d, Balances says %d", name, a, o, i, b)
			}
		}
		if sum != bank.Total() || out != in || out == 0 {
			t.Fatalf("%s: balances sum to %d (total %d); outflow %d, inflow %d", name, sum, bank.Total(), out, in)
		}
	}
}

// Ledger: money taken by the debit stage, given by the credit stage and in
// flight between them adds up to zero at every step of an execution.
func TestBankLedger(t *testing.T) {
	b := newTestBank(t, "bank", map[string]string{"accounts": "10"}).(*Bank)
	plan := b.Plan()
	debits, credits := map[uint64]int64{}, map[uint64]int64{}
	var inflight []engine.Msg
	money := func() int64 {
		var m int64
		for k, v := range debits {
			m += b.StateMoney(0, k, v)
		}
		for k, v := range credits {
			m += b.StateMoney(1, k, v)
		}
		for _, r := range inflight {
			m += b.InFlightMoney(1, r)
		}
		return m
	}
	for off := int64(0); off < 200; off++ {
		r := b.Record(0, off)
		s := debits[r.Key]
		plan.Stages[0].Update(&s, r, func(m engine.Msg) { inflight = append(inflight, m) })
		debits[r.Key] = s
		if off%3 == 0 { // let some money sit in flight
			continue
		}
		for _, m := range inflight {
			s := credits[m.Key]
			plan.Stages[1].Update(&s, m, func(engine.Msg) {})
			credits[m.Key] = s
		}
		inflight = inflight[:0]
		if got := money(); got != 0 {
			t.Fatalf("after %d transfers: money %d", off+1, got)
		}
	}
}

func TestBankP2PIsPeerToPeer(t *testing.T) {
	if _, ok := newTestBank(t, "bank", nil).(PeerToPeer); ok {
		t.Fatal("the dataflow bank must not be a peer-to-peer workload")
	}
	p, ok := newTestBank(t, "bank-p2p", map[string]string{"processes": "6"}).(PeerToPeer)
	if !ok || p.Processes() != 6 || p.Total() != 6*InitialBalance || p.DefaultRate() <= 0 {
		t.Fatalf("bank-p2p: %v", p)
	}
	if i, name := p.Plan().FirstStateful(); i != 0 || name != ProcessOp {
		t.Fatalf("default fault target %d %q, want the processes", i, name)
	}
	for _, bad := range []string{"1", "65", "x"} {
		if _, err := New("bank-p2p", 1, map[string]string{"processes": bad}); err == nil {
			t.Errorf("processes=%s accepted", bad)
		}
	}
}

// Accounts cost nothing until they have state: a bank of 10^9 accounts is
// built in O(1) memory and its transfers stay within the accounts.
func TestBankManyAccountsCheap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := mustNew(t, "bank", map[string]string{"accounts": "1000000000"}).(*Bank)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Errorf("building a bank of 10^9 accounts allocated %d bytes, want O(1)", grew)
	}
	var high bool
	for off := int64(0); off < 1000; off++ {
		tr := w.Transfer(0, off)
		if tr.Payer < 0 || tr.Payee < 0 || tr.Payer >= 1e9 || tr.Payee >= 1e9 || tr.Payer == tr.Payee {
			t.Fatalf("transfer %+v outside the accounts", tr)
		}
		high = high || tr.Payer > 1<<20
	}
	if !high {
		t.Error("no payer above 2^20 among 1000 transfers over 10^9 accounts")
	}
}
