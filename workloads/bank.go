package workloads

import (
	"ftbench/engine"
)

// bank: money transfers between accounts as a dataflow. Each source record
// is one transfer (payer, payee, amount), a pure function of the seed and
// its (partition, offset). The plan is
//
//	source -> debit (keyed by payer) -> credit (keyed by payee) -> sink
//
// The debit stage adds the amount to the payer's outflow and emits two
// records: the debit effect (Sub 0, keyed DebitKey(payer), Val = the payer's
// cumulative outflow) and the credit (Sub 1, keyed CreditKey(payee), Val =
// the amount) — the money in flight between the stages. The credit stage
// adds credits to the payee's inflow and emits the credit effect (Val = the
// payee's cumulative inflow); it passes debit effects through unchanged.
// The records are told apart by their effect id's Sub, not by Msg.Kind,
// because Kind belongs to the systems (protocol messages).
//
// So every transfer has two effects at the sink, and the sink shows, per
// account, its total outflow and total inflow; balance = InitialBalance +
// inflow - outflow. Cumulative values make the final visible value of a key
// independent of the interleaving: the last commit of a key carries its
// total. Transfers are not checked against the balance (an overdraft is
// allowed): a check would make the outcome depend on the order in which
// partitions interleave, and the oracle could not give it for a prefix.
//
// Conservation: at a consistent cut, the money the debit stage has taken
// (sum of outflows) equals the money the credit stage has given (sum of
// inflows) plus the credits in flight between them. Bank implements Ledger
// so a snapshot of the dataflow can be audited for exactly that.
type Bank struct {
	name     string
	seed     uint64
	accounts int
	p2p      bool // bank-p2p: the payer of partition p's transfers is account p
	// top, for bank-p2p on a topology other than full, restricts each
	// payee to the payer's out-neighbours (nil: any other account).
	top  *Topology
	plan Plan
}

// Bank constants.
const (
	// InitialBalance is every account's balance before the first transfer.
	InitialBalance = 1000
	// SubDebit and SubCredit are the effect ids' Sub of a transfer's two effects.
	SubDebit  = 0
	SubCredit = 1
	// transferBytes is a transfer record's payload: payer, payee, amount.
	transferBytes = 24
	effectBytes   = 16
)

// Transfer is one transfer of the log.
type Transfer struct {
	Payer, Payee int
	Amount       int64
}

// DebitKey is the sink key holding account a's cumulative outflow.
func DebitKey(a int) uint64 { return uint64(a) << 1 }

// CreditKey is the sink key (and credit-stage state key) holding account
// a's cumulative inflow.
func CreditKey(a int) uint64 { return uint64(a)<<1 | 1 }

// AccountOf inverts DebitKey and CreditKey.
func AccountOf(key uint64) (account int, credit bool) { return int(key >> 1), key&1 == 1 }

func init() {
	Register(Factory{
		Name:     "bank",
		Describe: "money transfers as a dataflow: debit keyed by payer, credit keyed by payee; conservation is checkable",
		Options: []Option{
			{Name: "accounts", Default: "1000", Usage: "number of accounts (bank)"},
		},
		New: func(seed uint64, opts map[string]string) (Workload, error) {
			n, err := intOption(opts, "accounts", 2, 1<<30)
			if err != nil {
				return nil, err
			}
			return newBank("bank", seed, n, false), nil
		},
	})
}

func newBank(name string, seed uint64, accounts int, p2p bool) *Bank {
	b := &Bank{name: name, seed: engine.ChildSeed(seed, "workload/"+name), accounts: accounts, p2p: p2p}
	debitInput, debitName, source := Hash, "debit", "source"
	if p2p {
		// Process p is account p and reads partition p: its debits stay on
		// the process (Forward). The source and the debit stage carry the
		// deployment's operator name, so that default fault targets
		// (slow, throttle) resolve to the processes.
		debitInput, debitName, source = Forward, ProcessOp, ProcessOp
	}
	b.plan = Plan{Source: source, Stages: []Stage{
		{
			Name:   debitName,
			Input:  debitInput,
			Cost:   func(c *engine.CostModel, _ engine.Msg) engine.Time { return c.StateCPU },
			Update: b.debit,
		},
		{
			Name:  "credit",
			Input: Hash,
			Cost: func(c *engine.CostModel, m engine.Msg) engine.Time {
				if m.ID.Sub == SubCredit {
					return c.StateCPU
				}
				return c.RecordCPU
			},
			Update: credit,
		},
		sinkStage(),
	}}
	return b
}

func (b *Bank) Name() string { return b.name }
func (b *Bank) Plan() *Plan  { return &b.plan }

// Accounts is the number of accounts.
func (b *Bank) Accounts() int { return b.accounts }

// Transfer is the transfer at (part, off): a pure function. Amounts are
// 10..50 in steps of 10, as in the lecture's simulation; the payee is
// uniform over the other accounts.
func (b *Bank) Transfer(part int32, off int64) Transfer {
	h := engine.Mix64(b.seed ^ uint64(part)<<48 ^ uint64(off))
	payer := int(part)
	if !b.p2p {
		payer = int(h % uint64(b.accounts))
	}
	payee := int(engine.Mix64(h) % uint64(b.accounts-1))
	if payee >= payer {
		payee++
	}
	if b.top != nil && b.top.Kind != TopologyFull {
		out := b.top.Out[payer]
		payee = out[engine.Mix64(b.seed^0x746f706f6c6f6779^uint64(part)<<48^uint64(off))%uint64(len(out))]
	}
	return Transfer{Payer: payer, Payee: payee, Amount: 10 * int64(1+(h>>40)%5)}
}

// Record is the transfer at (part, off), keyed by its payer, carrying its
// amount; the payee is derived from the id by the debit stage.
func (b *Bank) Record(part int32, off int64) engine.Msg {
	t := b.Transfer(part, off)
	return engine.Msg{ID: engine.EffectID{Part: part, Off: off}, Key: uint64(t.Payer), Val: t.Amount, Size: transferBytes}
}

// debit takes the amount from the payer (state: its cumulative outflow) and
// sends the debit effect and the credit on.
func (b *Bank) debit(state *int64, m engine.Msg, emit func(engine.Msg)) {
	t := b.Transfer(m.ID.Part, m.ID.Off)
	*state += m.Val
	d := m
	d.Key, d.Val, d.ID.Sub, d.Size = DebitKey(t.Payer), *state, SubDebit, effectBytes
	emit(d)
	c := m
	c.Key, c.Val, c.ID.Sub, c.Size = CreditKey(t.Payee), m.Val, SubCredit, effectBytes
	emit(c)
}

// credit gives a credit to the payee (state: its cumulative inflow) and
// passes debit effects through.
func credit(state *int64, m engine.Msg, emit func(engine.Msg)) {
	if m.ID.Sub != SubCredit {
		emit(m)
		return
	}
	*state += m.Val
	m.Val = *state
	emit(m)
}

func (b *Bank) CostPerRecord(c *engine.CostModel) map[string]engine.Time {
	if b.p2p {
		// One process does it all: read, debit and commit, send; and on
		// average it receives and credits one transfer per transfer it sends.
		return map[string]engine.Time{
			ProcessOp: c.SourceRecord + 2*c.StateCPU + 2*c.SinkCPU + c.SendCost(transferBytes),
		}
	}
	send := c.SendCost(effectBytes)
	return map[string]engine.Time{
		"source": c.SourceRecord + c.SendCost(transferBytes),
		"debit":  c.StateCPU + 2*send,
		"credit": c.StateCPU + c.RecordCPU + 2*send,
		"sink":   2 * c.SinkCPU,
	}
}

// Balances returns every account's balance once the first appended[p]
// transfers of each partition p have been applied. Any interleaving of the
// partitions gives the same balances, so this is the oracle's answer for
// every prefix of offsets.
func (b *Bank) Balances(appended []int64) []int64 {
	bal := make([]int64, b.accounts)
	for i := range bal {
		bal[i] = InitialBalance
	}
	for p, n := range appended {
		for off := int64(0); off < n; off++ {
			t := b.Transfer(int32(p), off)
			bal[t.Payer] -= t.Amount
			bal[t.Payee] += t.Amount
		}
	}
	return bal
}

// Total is the money in the system: the sum of balances, always.
func (b *Bank) Total() int64 { return int64(b.accounts) * InitialBalance }

// Ledger is implemented by workloads whose keyed state is money, so that a
// snapshot of their dataflow can be audited for conservation: summed over
// every task's recorded state and every recorded in-flight record, the
// money of a consistent snapshot is zero.
type Ledger interface {
	// StateMoney is the money that stage's state value val for key stands
	// for. For bank: minus the outflow in the debit stage, plus the inflow
	// in the credit stage.
	StateMoney(stage int, key uint64, val int64) int64
	// InFlightMoney is the money record m carries on its way into stage:
	// a credit between the debit and the credit stage.
	InFlightMoney(stage int, m engine.Msg) int64
}

func (b *Bank) StateMoney(stage int, key uint64, val int64) int64 {
	switch {
	case stage == 0:
		return -val
	case stage == 1 && key&1 == 1:
		return val
	}
	return 0
}

func (b *Bank) InFlightMoney(stage int, m engine.Msg) int64 {
	if stage == 1 && m.ID.Sub == SubCredit {
		return m.Val
	}
	return 0
}
