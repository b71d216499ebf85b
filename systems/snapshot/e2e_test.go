package snapshot_test

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/none"
	_ "ftbench/systems/snapshot"
)

func p2pConfig(variant string, seed uint64, snapshots string, faults ...string) harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Variant, cfg.Workload, cfg.Seed = "snapshot", variant, "bank-p2p", seed
	cfg.Duration = 5 * engine.Second
	cfg.SystemOpts = map[string]string{"snapshots": snapshots}
	cfg.Faults = faults
	return cfg
}

func execute(t *testing.T, cfg harness.Config) *harness.Result {
	t.Helper()
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out.Result
}

func metric(t *testing.T, r *harness.Result, key string) int64 {
	t.Helper()
	v, ok := r.SystemMetrics[key].(int64)
	if !ok {
		t.Fatalf("system_metrics[%q] = %v", key, r.SystemMetrics[key])
	}
	return v
}

func conservation(t *testing.T, r *harness.Result) (surplus, deficit int64) {
	t.Helper()
	c := r.SystemMetrics["conservation"].(map[string]any)
	return c["surplus"].(int64), c["deficit"].(int64)
}

// On FIFO channels every CL snapshot conserves money and has no orphans,
// for any seed; every transfer is delivered exactly once.
func TestP2PChandyLamportConsistent(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := execute(t, p2pConfig("", seed, "25"))
		if metric(t, r, "snapshots_consistent") != 25 || metric(t, r, "orphan_messages") != 0 ||
			metric(t, r, "safety_violations") != 0 || r.ExitCode != 0 || r.Verdict != "exactly-once" {
			t.Fatalf("seed %d: exit %d verdict %s %v %v", seed, r.ExitCode, r.Verdict, r.Problems, r.SystemMetrics)
		}
		if metric(t, r, "snapshots_with_marker_crossings") != 0 || metric(t, r, "expected_breaks") != 0 {
			t.Fatalf("seed %d: FIFO channels, yet markers crossed: %v", seed, r.SystemMetrics)
		}
		if metric(t, r, "markers") != 25*12 {
			t.Fatalf("seed %d: %d markers, want N(N-1) = 12 per snapshot", seed, metric(t, r, "markers"))
		}
	}
}

// Naive snapshots violate conservation in both directions, and since naive
// claims nothing the run does not fail.
func TestP2PNaiveViolates(t *testing.T) {
	r := execute(t, p2pConfig("naive", 1, "50"))
	surplus, deficit := conservation(t, r)
	if surplus == 0 || deficit == 0 || surplus+deficit < 40 {
		t.Fatalf("want most of 50 snapshots to violate conservation both ways, got surplus %d deficit %d", surplus, deficit)
	}
	if metric(t, r, "markers") != 0 || metric(t, r, "safety_violations") != 0 || r.ExitCode != 0 {
		t.Fatalf("exit %d %v", r.ExitCode, r.SystemMetrics)
	}
}

// Under reordering CL breaks, as the lecture predicts; the break is
// detected, reported and expected (exit 0). Every inconsistent snapshot had
// a transfer cross one of its own markers (the only way reordering breaks
// CL), and every snapshot whose markers were crossed is inconsistent.
// Lai-Yang stays consistent.
func TestP2PReorder(t *testing.T) {
	r := execute(t, p2pConfig("cl", 1, "40", "reorder"))
	bad := metric(t, r, "snapshots_inconsistent")
	if bad == 0 || metric(t, r, "fifo_violations_observed") == 0 || metric(t, r, "expected_breaks") != bad ||
		metric(t, r, "snapshots_with_marker_crossings") != bad || metric(t, r, "unexcused_breaks") != 0 {
		t.Fatalf("cl under reorder: %v", r.SystemMetrics)
	}
	if metric(t, r, "safety_violations") != 0 || r.ExitCode != 0 || r.SystemMetrics["expected_break"] == nil {
		t.Fatalf("cl under reorder: exit %d %v", r.ExitCode, r.SystemMetrics)
	}
	r = execute(t, p2pConfig("lai-yang", 1, "40", "reorder"))
	if metric(t, r, "snapshots_consistent") != 40 || metric(t, r, "fifo_violations_observed") == 0 || r.ExitCode != 0 {
		t.Fatalf("lai-yang under reorder: exit %d %v", r.ExitCode, r.SystemMetrics)
	}
}

// windowFault reorders for 200 ms near the end of a 20 s run: it touches
// at most two of 100 snapshots (one every 198 ms) but reorders dozens of
// messages.
const windowFault = "reorder@19.5s-19.7s:edge=all,p=0.5"

// A short reorder window excuses only the snapshots whose own markers it
// made transfers cross: the excused snapshots are exactly the ones listed
// with crossings, no more than the window can touch, and every other
// snapshot stays consistent. Lai-Yang is consistent throughout.
func TestP2PReorderWindowExcusesOnlyCrossedSnapshots(t *testing.T) {
	cfg := p2pConfig("cl", 1, "100", windowFault)
	cfg.Duration = 20 * engine.Second
	r := execute(t, cfg)
	crossed := metric(t, r, "snapshots_with_marker_crossings")
	excused := metric(t, r, "expected_breaks")
	if metric(t, r, "fifo_violations_observed") == 0 || crossed == 0 || crossed > 2 {
		t.Fatalf("the window should reorder and cross the markers of 1 or 2 snapshots: %v", r.SystemMetrics)
	}
	if excused > crossed || metric(t, r, "snapshots_inconsistent") != excused || metric(t, r, "unexcused_breaks") != 0 ||
		metric(t, r, "safety_violations") != 0 || r.ExitCode != 0 {
		t.Fatalf("exit %d: %v", r.ExitCode, r.SystemMetrics)
	}
	if list, _ := r.SystemMetrics["excused_snapshots"].([]map[string]any); int64(len(list)) != excused {
		t.Fatalf("excused_snapshots lists %d, want %d: %v", len(list), excused, r.SystemMetrics["excused_snapshots"])
	}
	cfg.Variant = "lai-yang"
	r = execute(t, cfg)
	if metric(t, r, "snapshots_consistent") != 100 || metric(t, r, "fifo_violations_observed") == 0 || r.ExitCode != 0 {
		t.Fatalf("lai-yang under the window: exit %d %v", r.ExitCode, r.SystemMetrics)
	}
}

func dagConfig(system, workload string, faults ...string) harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Workload, cfg.Faults = system, workload, faults
	cfg.Duration = 3 * engine.Second
	cfg.Rate = 10000
	cfg.SystemOpts = map[string]string{}
	if system == "snapshot" {
		cfg.SystemOpts["checkpoint-interval"] = "500ms"
	}
	return cfg
}

// On dataflows snapshot is a checkpointing scheme: a crash rolls back to
// the last checkpoint, re-injects its channel state, and the result is
// exactly-once; every checkpoint passes the restore-and-drain audit.
func TestDataflowCrashExactlyOnce(t *testing.T) {
	for _, wl := range []string{"wordcount", "bank"} {
		r := execute(t, dagConfig("snapshot", wl, "crash"))
		if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld || r.ExitCode != 0 {
			t.Fatalf("%s: dup %d lost %d wrong %d exit %d %v", wl, r.Duplicates, r.Lost, r.WrongKeys, r.ExitCode, r.Problems)
		}
		taken := metric(t, r, "snapshots_taken")
		if taken < 4 || metric(t, r, "snapshots_consistent") != taken || metric(t, r, "rollbacks") != 1 {
			t.Fatalf("%s: %v", wl, r.SystemMetrics)
		}
	}
}

func TestNoneRunsBank(t *testing.T) {
	r := execute(t, dagConfig("none", "bank"))
	if r.Verdict != "exactly-once" || r.WrongKeys != 0 || r.ExitCode != 0 {
		t.Fatalf("none on bank: %s wrong %d exit %d", r.Verdict, r.WrongKeys, r.ExitCode)
	}
}

// Configurations that make no sense are bad input (exit 2), with a reason.
func TestRejected(t *testing.T) {
	noneP2P := p2pConfig("", 1, "1")
	noneP2P.System, noneP2P.SystemOpts = "none", nil
	naiveDAG := dagConfig("snapshot", "wordcount")
	naiveDAG.Variant = "naive"
	matternDAG := dagConfig("snapshot", "bank")
	matternDAG.Variant = "mattern"
	badTopology := onTopology(p2pConfig("", 1, "1"), "random,degree=9")
	countedDAG := dagConfig("snapshot", "wordcount")
	countedDAG.SystemOpts["snapshots"] = "3"
	for name, cfg := range map[string]harness.Config{
		"none on bank-p2p":      noneP2P,
		"crash on bank-p2p":     p2pConfig("", 1, "1", "crash"),
		"naive on a dataflow":   naiveDAG,
		"mattern on a dataflow": matternDAG,
		"degree above N-1":      badTopology,
		"--snapshots on a DAG":  countedDAG,
	} {
		if _, err := harness.Execute(cfg); err == nil || !harness.IsInputError(err) {
			t.Errorf("%s: want an input error, got %v", name, err)
		}
	}
}

// topologies are the --topology kinds with their channel count at the
// default 4 processes.
var topologies = []struct {
	spec     string
	channels int64
}{{"full", 12}, {"ring", 4}, {"star", 6}, {"random,degree=2", 8}}

func onTopology(cfg harness.Config, spec string) harness.Config {
	cfg.WorkloadOpts = map[string]string{"topology": spec}
	return cfg
}

// On every topology CL sends exactly one marker per channel per snapshot,
// and on FIFO channels every snapshot is consistent and every transfer is
// delivered exactly once; the other variants complete every snapshot too.
// Lai-Yang and Mattern send one done message per channel.
func TestP2PTopologies(t *testing.T) {
	for _, top := range topologies {
		for seed := uint64(1); seed <= 3; seed++ {
			for _, v := range []string{"cl", "lai-yang", "mattern"} {
				r := execute(t, onTopology(p2pConfig(v, seed, "25"), top.spec))
				if metric(t, r, "snapshots_consistent") != 25 || metric(t, r, "markers") != 25*top.channels ||
					metric(t, r, "safety_violations") != 0 || r.ExitCode != 0 || r.Verdict != "exactly-once" {
					t.Fatalf("%s on %s, seed %d: want 25 consistent snapshots with %d markers each: exit %d %s %v",
						v, top.spec, seed, top.channels, r.ExitCode, r.Verdict, r.SystemMetrics)
				}
			}
		}
	}
}

// Under reordering on every topology, Lai-Yang and Mattern keep all of 100
// snapshots consistent over several seeds, CL breaks only where a transfer
// crossed a marker, and naive's breaks are caught by the audit.
func TestP2PReorderTopologies(t *testing.T) {
	for _, top := range topologies[1:] {
		for seed := uint64(1); seed <= 3; seed++ {
			for _, v := range []string{"lai-yang", "mattern"} {
				r := execute(t, onTopology(p2pConfig(v, seed, "100", "reorder"), top.spec))
				if metric(t, r, "snapshots_consistent") != 100 || metric(t, r, "fifo_violations_observed") == 0 || r.ExitCode != 0 {
					t.Fatalf("%s on %s under reorder, seed %d: exit %d %v", v, top.spec, seed, r.ExitCode, r.SystemMetrics)
				}
			}
			r := execute(t, onTopology(p2pConfig("cl", seed, "100", "reorder"), top.spec))
			if bad := metric(t, r, "snapshots_inconsistent"); bad == 0 || metric(t, r, "expected_breaks") != bad || metric(t, r, "safety_violations") != 0 {
				t.Fatalf("cl on %s under reorder, seed %d: %v", top.spec, seed, r.SystemMetrics)
			}
		}
	}
}

// The audit catches the naive scheme on a topology that is not complete,
// under reordering: most snapshots break conservation, in both directions,
// with orphans; naive claims nothing, so the run passes.
func TestP2PNaiveCaughtOnRingUnderReorder(t *testing.T) {
	r := execute(t, onTopology(p2pConfig("naive", 1, "50", "reorder"), "ring"))
	surplus, deficit := conservation(t, r)
	if metric(t, r, "snapshots_inconsistent") < 40 || surplus == 0 || deficit == 0 || metric(t, r, "orphan_messages") == 0 {
		t.Fatalf("want most of 50 naive snapshots inconsistent both ways: %v", r.SystemMetrics)
	}
	if metric(t, r, "safety_violations") != 0 || r.ExitCode != 0 || r.SystemMetrics["consistency_claim"] != "none" {
		t.Fatalf("exit %d %v", r.ExitCode, r.SystemMetrics)
	}
}

// Extra bytes per transfer are the algorithms' piggybacked fields: none
// for cl, an 8-byte colour for lai-yang, an 8N-byte vector clock for
// mattern (N = 6 here); per snapshot, cl's and lai-yang's are one control
// message per channel, and mattern adds 3(N-1) coordination messages.
func TestP2PExtraBytes(t *testing.T) {
	for _, tc := range []struct {
		variant        string
		perMessage     float64
		coordPerSnap   float64
		markersPerSnap float64
	}{{"cl", 0, 0, 6}, {"lai-yang", 8, 0, 6}, {"mattern", 48, 15, 6}} {
		cfg := p2pConfig(tc.variant, 1, "10")
		cfg.WorkloadOpts = map[string]string{"processes": "6", "topology": "ring"}
		r := execute(t, cfg)
		m := r.SystemMetrics
		if m["extra_bytes_per_message"] != tc.perMessage || m["coordination_messages_per_snapshot"] != tc.coordPerSnap ||
			m["markers_per_snapshot"] != tc.markersPerSnap {
			t.Fatalf("%s: %v", tc.variant, m)
		}
		perSnap := float64(metric(t, r, "marker_bytes")+metric(t, r, "coordination_bytes")) / 10
		if m["extra_bytes_per_snapshot"] != perSnap || perSnap <= 0 {
			t.Fatalf("%s: extra_bytes_per_snapshot %v, want %v", tc.variant, m["extra_bytes_per_snapshot"], perSnap)
		}
	}
}

// A checkpoint-store outage fails the writes of the snapshots collected
// during it; their collectors write them again until the store is back, so
// every snapshot is still durable and checked (none incomplete), and no
// violation is reported. Torture found the failed writes counted as
// incomplete snapshots before the rewrite existed.
func TestP2PStoreOutageRewritesSnapshots(t *testing.T) {
	for _, variant := range []string{"cl", "lai-yang", "mattern"} {
		r := execute(t, p2pConfig(variant, 1, "25", "store-down@1s-2s"))
		if r.Counters["store_writes_failed"] == 0 {
			t.Fatalf("%s: no write failed during the outage: %v", variant, r.Counters)
		}
		if metric(t, r, "snapshots_consistent") != 25 || metric(t, r, "snapshots_incomplete") != 0 ||
			metric(t, r, "safety_violations") != 0 || r.ExitCode != 0 {
			t.Fatalf("%s: exit %d %v %v", variant, r.ExitCode, r.Problems, r.SystemMetrics)
		}
	}
}

// A master crash on a dataflow: the coordinator dies, and a new leader
// restores every task from the latest completed checkpoint in the store;
// the restored sinks commit that checkpoint's pending transactions.
func TestDataflowMasterCrashExactlyOnce(t *testing.T) {
	for _, wl := range []string{"wordcount", "bank"} {
		r := execute(t, dagConfig("snapshot", wl, "crash@1600ms:master"))
		if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld || r.ExitCode != 0 || r.RecoveryTimeS == nil {
			t.Fatalf("%s: dup %d lost %d wrong %d exit %d recovery %v %v", wl, r.Duplicates, r.Lost, r.WrongKeys, r.ExitCode, r.RecoveryTimeS, r.Problems)
		}
		taken := metric(t, r, "snapshots_taken")
		if taken < 4 || metric(t, r, "snapshots_consistent") != taken || metric(t, r, "rollbacks") != 1 || metric(t, r, "leader_takeovers") != 1 {
			t.Fatalf("%s: %v", wl, r.SystemMetrics)
		}
	}
}
