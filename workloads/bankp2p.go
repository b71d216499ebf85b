package workloads

// bank-p2p: the setting of Chandy-Lamport's paper and of the lecture's
// reference simulation. N processes, each holding one account, every ordered
// pair joined by a FIFO channel; each process sends random transfers to the
// others, debiting the amount when it sends and crediting it when the
// payee receives it. Money is conserved by construction: the balances plus
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

// PeerToPeer is implemented by workloads that are a set of fully connected
// processes rather than a dataflow: process p owns source partition p.
type PeerToPeer interface {
	Workload
	// Processes is the number of processes (= source partitions).
	Processes() int
	// Transfer is the transfer process part sends as its off-th message.
	Transfer(part int32, off int64) Transfer
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
		Describe: "N fully connected processes sending random transfers over FIFO channels (Chandy-Lamport's setting; snapshot only)",
		Options: []Option{
			{Name: "processes", Default: "4", Usage: "number of processes (bank-p2p; sets the partition count, overriding --parallelism)"},
		},
		New: func(seed uint64, opts map[string]string) (Workload, error) {
			n, err := intOption(opts, "processes", 2, 64)
			if err != nil {
				return nil, err
			}
			return &BankP2P{newBank("bank-p2p", seed, n, true)}, nil
		},
	})
}

// BankP2P is bank-p2p: a Bank whose payer is the partition. It is its own
// type so that only it, not the dataflow bank, is a PeerToPeer workload.
type BankP2P struct{ *Bank }

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
