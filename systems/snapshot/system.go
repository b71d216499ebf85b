package snapshot

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/checkpoint"
	"ftbench/workloads"
)

func init() { systems.Register(system{}) }

// Variants.
const (
	CL      = "cl"
	Naive   = "naive"
	LaiYang = "lai-yang"
	Mattern = "mattern"
)

// Flags.
const (
	flagInterval  = "snapshot-interval"
	flagSnapshots = "snapshots"
	// flagCheckpoint is shared with barrier (same meaning and default), so
	// sweeps over the checkpoint interval cover both schemes.
	flagCheckpoint = "checkpoint-interval"
)

type system struct{}

func (system) Name() string { return "snapshot" }

func (system) Describe() string {
	return "distributed snapshots: Chandy-Lamport markers, Lai-Yang colours and Mattern vector clocks on bank-p2p (any strongly connected topology); Chandy-Lamport as a checkpointing scheme with channel state on dataflows"
}

func (system) Variants() []string { return []string{CL, Naive, LaiYang, Mattern} }

func (system) Flags() []systems.Flag {
	return []systems.Flag{
		{Name: flagCheckpoint, Default: "1s", Usage: "time between checkpoint triggers (snapshot: on dataflow workloads)"},
		{Name: flagInterval, Default: "1s", Usage: "bank-p2p: time between snapshots when --snapshots is 0"},
		{Name: flagSnapshots, Default: "0", Usage: "bank-p2p: take this many snapshots, spread evenly over the input (0: one every --snapshot-interval)"},
	}
}

// Claim is the delivery guarantee and reader view (monotonic: the sink
// makes a checkpoint's output visible when it completes). cl and lai-yang deliver every transfer
// exactly once on bank-p2p (no failures there) and cl recovers exactly-once
// on dataflows; naive claims nothing. The snapshot-consistency claim is
// separate and checked by Summarize: see the package documentation.
func (system) Claim(variant string, _ systems.Options) systems.Claim {
	if variant == Naive {
		return systems.Claim{Guarantee: systems.NoClaim}
	}
	return systems.ExactlyOnceMonotonic
}

// RunsPeerToPeer tells the harness that snapshot runs peer-to-peer
// workloads (bank-p2p).
func (system) RunsPeerToPeer() bool { return true }

func (system) Compile(job systems.Job) (*engine.Deployment, error) {
	if w, ok := job.Workload.(workloads.PeerToPeer); ok {
		return compileP2P(job, w)
	}
	if job.Variant != CL {
		return nil, fmt.Errorf("snapshot variant %s runs on bank-p2p only: it is the lecture's counter-example or one of its non-FIFO fixes, not a checkpointing scheme; use --variant cl on dataflow workloads", job.Variant)
	}
	if n, err := job.Opts.Int(flagSnapshots, 0, 1<<20); err != nil {
		return nil, err
	} else if n != 0 {
		return nil, fmt.Errorf("--%s applies to bank-p2p; on dataflow workloads checkpoints are periodic (--%s)", flagSnapshots, flagCheckpoint)
	}
	return compileDAG(job)
}

// schedule is when bank-p2p's snapshots start: times[j-1] for snapshot j.
// With --snapshots S they are spread evenly over the input, End*j/(S+1),
// so every one of them sees traffic and finishes before the input ends;
// otherwise one starts every --snapshot-interval while input is appended.
// spread is the spacing, within which each naive process picks its time.
func schedule(opts systems.Options, end engine.Time) (times []engine.Time, spread engine.Time, err error) {
	interval, err := opts.Duration(flagInterval)
	if err != nil {
		return nil, 0, err
	}
	n, err := opts.Int(flagSnapshots, 0, 1<<20)
	if err != nil {
		return nil, 0, err
	}
	if n > 0 {
		spread = end / engine.Time(n+1)
		if spread <= 0 {
			return nil, 0, fmt.Errorf("--%s=%d does not fit in a %v run", flagSnapshots, n, end)
		}
		for j := 1; j <= n; j++ {
			times = append(times, engine.Time(int64(end)*int64(j)/int64(n+1)))
		}
		return times, spread, nil
	}
	for t := interval; t < end; t += interval {
		times = append(times, t)
	}
	return times, interval, nil
}

// Milestones, on dataflows (peer-to-peer runs have no crash to aim): as
// barrier's, the checkpoint coordinator's acknowledgement and completion
// and the 2PC sink's commit.
func (system) Milestones(string) []string {
	return []string{checkpoint.EventAcknowledged, checkpoint.EventCompleted, checkpoint.EventSinkCommit}
}

// CommitCycle: on dataflow workloads the two-phase-commit sink makes a
// checkpoint interval's effects visible when the checkpoint completes.
func (system) CommitCycle(_ string, opts systems.Options) engine.Time {
	d, _ := opts.Duration(flagCheckpoint)
	return d
}

// DescribeMsg names the snapshot protocols' messages for a run's trace,
// each with its snapshot (on dataflow workloads: its checkpoint): markers,
// Lai-Yang's done messages, Mattern's announcements, acks and forces, the
// local snapshots' reports, the coordinator's traffic; transfers and data
// records are the data.
func (system) DescribeMsg(job systems.Job) func(engine.Msg) engine.MsgInfo {
	_, p2p := job.Workload.(workloads.PeerToPeer)
	return func(m engine.Msg) engine.MsgInfo {
		id := int64(m.Key)
		switch m.Kind {
		case kindTransfer:
			return engine.MsgInfo{Kind: "transfer"}
		case kindMarker:
			if !p2p {
				id = m.Val // Key is the attempt
			}
			return engine.MsgInfo{Kind: "marker", ID: id}
		case kindDone:
			return engine.MsgInfo{Kind: "done", ID: id}
		case kindReport:
			return engine.MsgInfo{Kind: "report", ID: id}
		case kindAnnounce:
			return engine.MsgInfo{Kind: "announce", ID: id}
		case kindAck:
			return engine.MsgInfo{Kind: "ack", ID: id}
		case kindForce:
			return engine.MsgInfo{Kind: "force", ID: id}
		}
		if info, ok := checkpoint.DescribeMsg(m); ok {
			return info
		}
		if !m.Ctrl {
			return systems.Record
		}
		return engine.MsgInfo{}
	}
}
