package check_test

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/all"
	"ftbench/workloads"
)

// The checker mutants' corpus: bad histories recorded from the protocol
// mutants' failing runs (docs/torture.md, "Mutants"), stored as what each
// checker reads, gzipped JSON in testdata/corpus:
//
//   - delivery-*.json.gz: per source partition, per offset, how often each
//     of the record's expected effects was committed (deliveryHistory);
//   - audit-*.json.gz: global snapshots the snapshot audit rejected.
//
// The normal checkers reject every history (TestCorpusRejected); a checker
// mutant must accept at least one (mutant_*_test.go, with its build tag).

// deliveryHistory is one run's commits as the delivery checker sees them.
type deliveryHistory struct {
	Mutant string `json:"mutant"` // build tag of the protocol mutant that made it
	Replay string `json:"replay"` // the bench run line that recorded it
	Claim  string `json:"claim"`
	// Parts[p] lists partition p's offsets, separated by ",": for each, one
	// base-36 digit per expected effect, its commit count (at most 35). An
	// offset without effects is empty.
	Parts []string `json:"parts"`
}

// auditHistory is a set of global snapshots the audit rejected.
type auditHistory struct {
	Mutant    string                  `json:"mutant"`
	Replay    string                  `json:"replay"`
	Snapshots []*check.GlobalSnapshot `json:"snapshots"`
}

const corpusDir = "testdata/corpus"

func readGz(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(z).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func writeGz(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err := json.NewEncoder(z).Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// deliveryVerdict replays h through the delivery checker: whether the claim
// held, as the harness judges it (wrong keys are the oracle's, not this
// checker's, so they are left out).
func deliveryVerdict(t *testing.T, h *deliveryHistory) (held bool, r check.Result) {
	t.Helper()
	effects := make([][]string, len(h.Parts))
	appended := make([]int64, len(h.Parts))
	for p, s := range h.Parts {
		effects[p] = strings.Split(s, ",")
		appended[p] = int64(len(effects[p]))
	}
	d := check.NewDelivery(func(p int32, off int64) int32 {
		if int(p) >= len(effects) || off < 0 || off >= int64(len(effects[p])) {
			return 0
		}
		return int32(len(effects[p][off]))
	}, len(h.Parts))
	for p, offs := range effects {
		for off, subs := range offs {
			for sub, c := range subs {
				n := strings.IndexRune("0123456789abcdefghijklmnopqrstuvwxyz", c)
				for range n {
					d.Commit(engine.EffectID{Part: int32(p), Sub: int32(sub), Off: int64(off)})
				}
			}
		}
	}
	r = d.Finish(appended)
	return r.Unexpected == 0 && check.ClaimHeld(check.Guarantee(h.Claim), r.Duplicates, r.Lost, 0), r
}

// auditAccepts counts the snapshots of h the audit finds consistent.
func auditAccepts(h *auditHistory) int {
	n := 0
	for _, g := range h.Snapshots {
		if check.AuditSnapshot(g).Consistent {
			n++
		}
	}
	return n
}

func corpus(t *testing.T, prefix string) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(corpusDir, prefix+"-*.json.gz"))
	if len(paths) == 0 {
		t.Fatalf("no %s histories in %s", prefix, corpusDir)
	}
	return paths
}

// acceptedByDelivery counts the corpus's delivery histories the checker
// accepts (logging each verdict).
func acceptedByDelivery(t *testing.T) (accepted, total int) {
	for _, path := range corpus(t, "delivery") {
		var h deliveryHistory
		readGz(t, path, &h)
		held, r := deliveryVerdict(t, &h)
		t.Logf("%s (%s, claims %s): duplicates %d, lost %d, unexpected %d: claim held %v",
			filepath.Base(path), h.Mutant, h.Claim, r.Duplicates, r.Lost, r.Unexpected, held)
		if held {
			accepted++
		}
		total++
	}
	return accepted, total
}

// acceptedByAudit counts the snapshots of the corpus the audit accepts.
func acceptedByAudit(t *testing.T) (accepted, total int) {
	for _, path := range corpus(t, "audit") {
		var h auditHistory
		readGz(t, path, &h)
		accepted += auditAccepts(&h)
		total += len(h.Snapshots)
	}
	return accepted, total
}

// TestCorpusRejected: the checkers reject every recorded bad history. Run
// it in normal builds only (a checker mutant accepts some, on purpose).
func TestCorpusRejected(t *testing.T) {
	if a, n := acceptedByDelivery(t); a > 0 {
		t.Errorf("the delivery checker accepts %d of %d bad histories", a, n)
	}
	if a, n := acceptedByAudit(t); a > 0 {
		t.Errorf("the snapshot audit accepts %d of %d inconsistent snapshots", a, n)
	}
}

// corpusRuns are the protocol mutants' pinned failing runs whose commits
// make the delivery corpus, by file name: the shrunk replays
// scripts/mutants.sh found (seed 1), without --observe (the delivery
// checker does not need it), and one run on a single partition, where a
// checker that skips a partition sees nothing wrong.
var corpusRuns = map[string]struct {
	tag string
	cfg harness.Config
}{
	"double_commit": {"ftbench_mutant_double_commit", harness.Config{System: "barrier", Workload: "wordcount", Seed: 11260839177826854807,
		Duration: engine.Second, Parallelism: 2, Workers: 3, Rate: 2400,
		Faults:     []string{"crash@700ms:worker=1"},
		SystemOpts: map[string]string{"checkpoint-interval": "500ms", "max-concurrent-checkpoints": "2", "sink": "2pc"}}},
	"double_commit_p1": {"ftbench_mutant_double_commit", harness.Config{System: "barrier", Workload: "wordcount", Seed: 11260839177826854807,
		Duration: engine.Second, Parallelism: 1, Workers: 2, Rate: 2400,
		Faults:     []string{"crash@700ms:worker=0"},
		SystemOpts: map[string]string{"checkpoint-interval": "200ms", "sink": "2pc"}}},
	"early_ack": {"ftbench_mutant_early_ack", harness.Config{System: "stormack", Workload: "wordcount", Seed: 11260839177826854807,
		Duration: 500 * engine.Millisecond, Parallelism: 2, Workers: 3, Rate: 2400,
		Faults:     []string{"crash@0s:worker=1,restart=1s"},
		SystemOpts: map[string]string{"ack-timeout": "1s"}}},
	"early_commit": {"ftbench_mutant_early_commit", harness.Config{System: "barrier", Workload: "wordcount", Seed: 11260839177826854807,
		Duration: 700 * engine.Millisecond, Parallelism: 2, Workers: 3, Rate: 2400,
		Faults:     []string{"crash@502ms:worker=1,restart=1s"},
		SystemOpts: map[string]string{"checkpoint-interval": "500ms", "max-concurrent-checkpoints": "2", "sink": "2pc"}}},
}

// TestWriteDeliveryCorpus records a protocol mutant's pinned run into the
// corpus. Run it in that mutant's build:
//
//	FTBENCH_WRITE_CORPUS=early_ack go test -tags ftbench_mutant_early_ack ./check -run TestWriteDeliveryCorpus
func TestWriteDeliveryCorpus(t *testing.T) {
	name := os.Getenv("FTBENCH_WRITE_CORPUS")
	run, ok := corpusRuns[name]
	if !ok {
		t.Skip("set FTBENCH_WRITE_CORPUS to a corpusRuns name (and build with its mutant's tag) to record its run")
	}
	tag, cfg := run.tag, run.cfg
	counts := map[engine.EffectID]int{}
	cfg.OnCommit = func(_ engine.Time, c engine.Commit) { counts[c.ID]++ }
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result
	if res.ExitCode != harness.ExitSafety {
		t.Fatalf("exit %d: is this the %s build?", res.ExitCode, tag)
	}
	w, err := workloads.New(cfg.Workload, engine.ChildSeed(cfg.Seed, "workload"), cfg.WorkloadOpts)
	if err != nil {
		t.Fatal(err)
	}
	appended := make([]int64, cfg.Parallelism)
	for p := range appended {
		appended[p] = res.AppendedRecords / int64(cfg.Parallelism)
	}
	effects, _, _ := workloads.Expected(w, appended)
	h := deliveryHistory{Mutant: tag, Replay: cfg.ReplayCommand(), Claim: res.ClaimedGuarantee}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	for p := range effects {
		var b strings.Builder
		for off, k := range effects[p] {
			if off > 0 {
				b.WriteByte(',')
			}
			for sub := range int(k) {
				b.WriteByte(digits[min(counts[engine.EffectID{Part: int32(p), Sub: int32(sub), Off: int64(off)}], 35)])
			}
		}
		h.Parts = append(h.Parts, b.String())
	}
	if held, _ := deliveryVerdict(t, &h); held {
		t.Fatalf("the recorded history passes the delivery checker: nothing for the corpus (exit 3 came from another check)")
	}
	writeGz(t, filepath.Join(corpusDir, "delivery-"+name+".json.gz"), &h)
}
