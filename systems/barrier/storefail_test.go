package barrier

import (
	"strconv"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// Checkpoint-storage outages (issue 15): store-down for three checkpoint
// intervals (the triggers at 2, 3 and 4 s), then a crash at 4.8 s.
const (
	storeDown  = "store-down@1.5s-4.5s"
	storeCrash = "crash@4.8s:worker=1"
)

func storeRun(t *testing.T, tolerable int, faults ...string) *harness.Outcome {
	t.Helper()
	cfg := e2eConfig(Aligned, faults...)
	cfg.SystemOpts["tolerable-failed-checkpoints"] = strconv.Itoa(tolerable)
	return execute(t, cfg)
}

// events returns the events of kind k.
func events(out *harness.Outcome, k string) []engine.Event {
	var es []engine.Event
	for _, e := range out.Events {
		if e.Kind == k {
			es = append(es, e)
		}
	}
	return es
}

// With three failed checkpoints tolerated the job keeps running through the
// outage on the last completed checkpoint; the crash after it recovers from
// that checkpoint and so replays more than the same crash without the
// outage. With Flink's default of 0 the first failed checkpoint fails the
// job over. Both stay exactly-once.
func TestStoreOutageTolerableFailedCheckpoints(t *testing.T) {
	t.Parallel()
	clean := storeRun(t, 3, storeCrash)
	tolerant := storeRun(t, 3, storeDown, storeCrash)
	strict := storeRun(t, 0, storeDown, storeCrash)
	for _, run := range []struct {
		name string
		out  *harness.Outcome
	}{{"clean", clean}, {"tolerable=3", tolerant}, {"tolerable=0", strict}} {
		name, out := run.name, run.out
		r := out.Result
		if running := out == tolerant; running != (len(events(out, "sink_txn_rewrite")) > 0) {
			// The 2PC sinks' pre-commits during the outage fail and, as the
			// job keeps running, are written again: the transactions are
			// not lost (exactly-once). With 0 tolerated the sinks restart
			// first, and the rewound sources produce the effects again.
			t.Errorf("%s: %d transaction records written again", name, len(events(out, "sink_txn_rewrite")))
		}
		exactlyOnce(t, r)
		t.Logf("%s: failed(store) %d expired %d failovers on checkpoint failure %d restarts %d replayed %d completed %d",
			name, metric[int64](t, r, "checkpoints_failed_store"), metric[int64](t, r, "checkpoints_expired"),
			metric[int64](t, r, "failovers_on_checkpoint_failure"), metric[int64](t, r, "restarts"),
			metric[int64](t, r, "records_replayed"), metric[int64](t, r, "checkpoints_completed"))
	}

	// tolerable=3: the three checkpoints of the outage fail (store) and are
	// counted, no failover but the crash's, whose restore is the last
	// checkpoint completed before the outage.
	r := tolerant.Result
	if got := metric[int64](t, r, "checkpoints_failed_store"); got != 3 {
		t.Errorf("tolerable=3: checkpoints_failed_store = %d, want 3 (triggers at 2, 3, 4 s)", got)
	}
	if got := metric[int64](t, r, "failovers_on_checkpoint_failure"); got != 0 {
		t.Errorf("tolerable=3: failovers_on_checkpoint_failure = %d, want 0", got)
	}
	if got := metric[int64](t, r, "restarts"); got != 1 {
		t.Errorf("tolerable=3: restarts = %d, want 1 (the crash)", got)
	}
	var lastBefore int64 = -1
	for _, e := range events(tolerant, "checkpoint_completed") {
		if e.Time < 1500*engine.Millisecond {
			lastBefore = e.ID
		}
	}
	deploys := events(tolerant, "deploy")
	if got := deploys[len(deploys)-1].Value; lastBefore < 1 || got != lastBefore {
		t.Errorf("tolerable=3: the crash restored checkpoint %d, want %d (the last completed before the outage)", got, lastBefore)
	}
	if c, o := metric[int64](t, clean.Result, "records_replayed"), metric[int64](t, r, "records_replayed"); o <= c {
		t.Errorf("tolerable=3: records replayed %d with the outage, %d without: want more", o, c)
	}

	// tolerable=0: the first failed checkpoint fails the job over.
	r = strict.Result
	fo := events(strict, "failover_on_checkpoint_failure")
	declined := events(strict, "checkpoint_aborted")
	if len(fo) == 0 || metric[int64](t, r, "failovers_on_checkpoint_failure") != int64(len(fo)) {
		t.Fatalf("tolerable=0: %d failovers on checkpoint failure (metric %d), want at least 1", len(fo), metric[int64](t, r, "failovers_on_checkpoint_failure"))
	}
	var first int64 = -1
	for _, e := range declined {
		if e.Note == "declined: snapshot write failed" {
			first = e.ID
			break
		}
	}
	if fo[0].ID != first {
		t.Errorf("tolerable=0: first failover on checkpoint %d, first failed checkpoint %d", fo[0].ID, first)
	}
	if got := metric[int64](t, r, "restarts"); got != int64(len(fo))+1 {
		t.Errorf("tolerable=0: restarts = %d, want %d failovers on checkpoint failure + the crash", got, len(fo))
	}
}

// Without a crash, the outage's transactions (pre-committed during it, their
// records written again once the store is back) commit with the first
// checkpoint completed after it: nothing lost, nothing twice.
func TestStoreOutageKeepsTransactions(t *testing.T) {
	t.Parallel()
	out := storeRun(t, 3, storeDown)
	r := out.Result
	if r.Duplicates != 0 || r.Lost != 0 || r.Verdict != "exactly-once" || !r.ClaimHeld || r.ExitCode != 0 {
		t.Fatalf("dup=%d lost=%d verdict=%s held=%v exit=%d %v", r.Duplicates, r.Lost, r.Verdict, r.ClaimHeld, r.ExitCode, r.Problems)
	}
	consistent(t, r)
	rewrites := events(out, "sink_txn_rewrite")
	if len(rewrites) == 0 || metric[int64](t, r, "restarts") != 0 {
		t.Fatalf("%d transaction records written again, %d restarts; want some, none", len(rewrites), metric[int64](t, r, "restarts"))
	}
	// Each rewritten transaction commits.
	commits := map[int64]int{}
	for _, e := range events(out, "sink_commit") {
		commits[e.ID]++
	}
	for _, e := range rewrites {
		if commits[e.ID] == 0 {
			t.Errorf("transaction %d written again but never committed", e.ID)
		}
	}
}
