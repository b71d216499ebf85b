package harness

import (
	"strings"

	"ftbench/faults"
	"ftbench/systems"
	"ftbench/workloads"
)

// PeerToPeerRunner is implemented by systems that can run peer-to-peer
// workloads (workloads.PeerToPeer, such as bank-p2p): N processes joined
// by channels rather than a dataflow. Only snapshot does; barrier, lineage and
// Storm-style acking need a DAG.
type PeerToPeerRunner interface {
	RunsPeerToPeer() bool
}

// peerToPeer applies the rules of peer-to-peer workloads before anything is
// built: the system must run them; the partition count is the workload's
// process count (so the oracle and the delivery checker see one partition
// per process); the default rate is the workload's own; and crash faults
// are refused, since these workloads model the snapshot algorithm's
// failure-free system (lecture 12.2.4) — recovery is exercised on the
// dataflow bank workload.
func peerToPeer(sys systems.System, w workloads.Workload, cfg *Config) error {
	p2p, ok := w.(workloads.PeerToPeer)
	if !ok {
		return nil
	}
	if r, ok := sys.(PeerToPeerRunner); !ok || !r.RunsPeerToPeer() {
		return inputErr("workload %s is %d processes joined by channels, not a dataflow; system %s needs a dataflow (use --system snapshot, or --workload bank)",
			w.Name(), p2p.Processes(), sys.Name())
	}
	for _, f := range cfg.Faults {
		kind, _, _ := strings.Cut(strings.TrimSpace(f), "@")
		// A pause longer than the detection delay is a failure too.
		if k := faults.Kind(kind); k == faults.Crash || k == faults.Pause || k == faults.Partition {
			return inputErr("fault %q: workload %s has no failures in its model (the snapshot algorithm assumes none); use --workload bank to test recovery", f, w.Name())
		}
	}
	cfg.Parallelism = p2p.Processes()
	if cfg.Rate == 0 {
		cfg.Rate = p2p.DefaultRate()
	}
	return nil
}
