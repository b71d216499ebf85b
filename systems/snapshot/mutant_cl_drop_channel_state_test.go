//go:build ftbench_mutant_cl_drop_channel_state

package snapshot_test

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/systems/snapshot"
)

// These tests run only in the mutant build (go test -tags
// ftbench_mutant_cl_drop_channel_state ./systems/snapshot), whose cl drops
// the recorded channel state of every fifth snapshot
// (mutant_cl_drop_channel_state_on.go). The audit must catch it: on
// bank-p2p on FIFO channels, and under a reorder window that gives the run
// FIFO violations but crosses the markers of at most two snapshots, so it
// may excuse those and nothing else.
func TestMutantCLDropChannelStateCaughtOnBankP2P(t *testing.T) {
	for _, faults := range [][]string{nil, {windowFault}} {
		cfg := p2pConfig("cl", 1, "100", faults...)
		cfg.Duration = 20 * engine.Second
		r := execute(t, cfg)
		unexcused := metric(t, r, "unexcused_breaks")
		if r.ExitCode != 3 || unexcused < 19 || metric(t, r, "safety_violations") < unexcused {
			t.Fatalf("faults %v: the mutant's 20 broken snapshots must fail the run: exit %d %v", faults, r.ExitCode, r.SystemMetrics)
		}
		if metric(t, r, "expected_breaks") > metric(t, r, "snapshots_with_marker_crossings") {
			t.Fatalf("faults %v: more snapshots excused than crossed: %v", faults, r.SystemMetrics)
		}
		for _, id := range r.SystemMetrics["unexcused_snapshots"].([]int64) {
			if id%5 != 0 {
				t.Fatalf("faults %v: snapshot %d is unexcused but the mutant only breaks every fifth: %v", faults, id, r.SystemMetrics)
			}
		}
	}
}

// On dataflows the restore-and-drain audit catches the checkpoints whose
// channel state the mutant dropped.
func TestMutantCLDropChannelStateCaughtOnDataflows(t *testing.T) {
	for _, wl := range []string{"wordcount", "bank"} {
		r := execute(t, dagConfig("snapshot", wl))
		if r.ExitCode != 3 || metric(t, r, "snapshots_inconsistent") == 0 {
			t.Fatalf("%s: exit %d %v", wl, r.ExitCode, r.SystemMetrics)
		}
	}
}

// TestWriteAuditCorpus records the snapshots the audit rejects in a short
// bank-p2p run of the mutant into the checker mutants' corpus
// (check/testdata/corpus/audit-cl_drop_channel_state.json.gz):
//
//	FTBENCH_WRITE_CORPUS=1 go test -tags ftbench_mutant_cl_drop_channel_state ./systems/snapshot -run TestWriteAuditCorpus
func TestWriteAuditCorpus(t *testing.T) {
	if os.Getenv("FTBENCH_WRITE_CORPUS") == "" {
		t.Skip("set FTBENCH_WRITE_CORPUS=1 to record the corpus")
	}
	snapshot.MutantAudits = nil
	cfg := p2pConfig("cl", 1, "10")
	cfg.Duration = 2 * engine.Second
	if r := execute(t, cfg); r.ExitCode != 3 || len(snapshot.MutantAudits) == 0 {
		t.Fatalf("exit %d, %d rejected snapshots: is this the mutant build?", r.ExitCode, len(snapshot.MutantAudits))
	}
	h := struct {
		Mutant    string                  `json:"mutant"`
		Replay    string                  `json:"replay"`
		Snapshots []*check.GlobalSnapshot `json:"snapshots"`
	}{"ftbench_mutant_cl_drop_channel_state", cfg.ReplayCommand(), snapshot.MutantAudits}
	f, err := os.Create("../../check/testdata/corpus/audit-cl_drop_channel_state.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	z, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err := json.NewEncoder(z).Encode(&h); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
