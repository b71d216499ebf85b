package workloads

import "ftbench/engine"

// bank-p2p: the setting of Chandy-Lamport's paper and of the lecture's
// reference simulation. N processes, each holding one account, joined by
// one-way channels (by default every ordered pair: --topology full; see
// topology.go for ring, star and random graphs); each process sends random
// transfers to its out-neighbours, debiting the amount when it sends and
// crediting it when the payee receives it. Money is conserved by construction: the balances plus
// the money in the channels always add up to N * InitialBalance.
//
// It is not a dataflow, so it is run only by systems that implement peer-
// to-peer workloads (snapshot); the harness rejects the others and uses
// Processes() as the partition count. Its logical plan is bank's with the
// payer fixed to the partition: the source log gives process p's k-th
// transfer at (p, k), the debit effect (Sub 0) is committed by the payer
// when it sends and the credit effect (Sub 1) by the payee when it
// receives, so the same oracle and delivery checker apply.

// ProcessOp is the operator name of bank-p2p's processes.
const ProcessOp = "process"

// PeerToPeer is implemented by workloads that are a set of processes joined
// by channels rather than a dataflow: process p owns source partition p.
type PeerToPeer interface {
	Workload
	// Processes is the number of processes (= source partitions).
	Processes() int
	// Transfer is the transfer process part sends as its off-th message;
	// its payee is one of the process's out-neighbours.
	Transfer(part int32, off int64) Transfer
	// Topology is the channels between the processes (strongly connected).
	Topology() *Topology
	// Total is the money in the system.
	Total() int64
	// DefaultRate is the source rate (messages/s over all processes) when
	// --rate is not given. Peer-to-peer workloads measure protocol
	// behaviour message by message, so it follows the setting they model
	// rather than the throughput heuristic (DefaultRate) of dataflows.
	DefaultRate() float64
}

func init() {
	Register(Factory{
		Name:     "bank-p2p",
		Describe: "N processes sending random transfers over FIFO channels of a strongly connected topology (Chandy-Lamport's setting; snapshot only)",
		Options: []Option{
			{Name: "processes", Default: "4", Usage: "number of processes (bank-p2p; sets the partition count, overriding --parallelism)"},
			{Name: "topology", Default: "full", Usage: "bank-p2p channels: full, ring, star or random,degree=K (K out-channels per process, drawn from the seed)"},
		},
		New: func(seed uint64, opts map[string]string) (Workload, error) {
			n, err := intOption(opts, "processes", 2, 64)
			if err != nil {
				return nil, err
			}
			top, err := ParseTopology(opts["topology"], n, engine.ChildSeed(seed, "workload/bank-p2p/topology"))
			if err != nil {
				return nil, err
			}
			return newBankP2P(newBank("bank-p2p", seed, n, true), top), nil
		},
	})
}

// BankP2P is bank-p2p: a Bank whose payer is the partition and whose payee
// is one of the payer's out-neighbours (Bank.Transfer follows the
// topology, so its plan, oracle and balances do too). It is its own type so
// that only it, not the dataflow bank, is a PeerToPeer workload.
type BankP2P struct {
	*Bank
}

func newBankP2P(b *Bank, top *Topology) *BankP2P {
	b.top = top
	return &BankP2P{Bank: b}
}

// Topology is the channels between the processes.
func (b *BankP2P) Topology() *Topology { return b.top }

// Processes is the number of processes; account p belongs to process p.
func (b *BankP2P) Processes() int { return b.accounts }

// DefaultRate is 250 transfers per second per process, the scale of the
// lecture's simulation (a transfer every few milliseconds): a snapshot
// then finds a few transfers in the channels, and a process's balance
// moves by a few transfers while naive processes pick their recording
// times, so naive snapshots err in both directions. At the throughput
// heuristic's rate (~150k/s) money in flight dwarfs that motion and every
// naive snapshot would come out short.
func (b *BankP2P) DefaultRate() float64 { return 250 * float64(b.accounts) }
