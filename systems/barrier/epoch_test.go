package barrier

import (
	"testing"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
)

// The broker's answer to a commit of pre-committed transaction 5 (opened
// with epoch 1 at 1 s, committed at 2 s): Kafka commits it while the
// producer's epoch is current and the transaction is open; it refuses a
// commit from an epoch older than its own (a zombie: a newer attempt
// called initTransactions), one whose transaction a newer attempt
// committed already (its record is gone), and one the broker aborted on
// its transaction timeout (the effects are lost).
func TestSinkCommitFencing(t *testing.T) {
	const sinkID engine.ProcID = 7
	for _, tc := range []struct {
		name      string
		brokerAt  int64 // the broker's current epoch
		sinkEpoch int64 // the committing attempt's
		gone      bool  // the record was committed and deleted
		timeout   engine.Time
		committed bool
		event     string // the refusal's event kind
		note      string
	}{
		{"current epoch, open", 1, 1, false, 0, true, "", ""},
		{"zombie: the broker's epoch is newer", 2, 1, false, 0, false, "sink_commit_fenced", "epoch"},
		{"own epoch bumped since", 1, 2, false, 0, false, "sink_commit_fenced", "epoch"},
		{"committed by a newer attempt", 1, 1, true, 0, false, "sink_commit_fenced", "committed"},
		{"within the broker's timeout", 1, 1, false, 2 * engine.Second, true, "", ""},
		{"aborted by the broker's timeout", 1, 1, false, engine.Second / 2, false, "sink_txn_timed_out", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := newFakeCtx(sinkID)
			ctx.now = 2 * engine.Second
			for e := int64(1); e <= tc.brokerAt; e++ {
				ctx.store[epochKey(sinkID, e)] = e
			}
			r := txnRecord{Epoch: 1, Opened: engine.Second, Effects: txnEffects{{{ID: engine.EffectID{Off: 50}}}}}
			if !tc.gone {
				ctx.store[txnKey(sinkID, 5)] = r
			}
			s := &sink{twoPC: true, epoch: tc.sinkEpoch, timeout: tc.timeout}
			s.txns.Add(5, r)
			s.commitThrough(ctx, 5)
			if got := len(ctx.commits) == 1; got != tc.committed {
				t.Fatalf("commits %v, want committed: %v", ctx.commits, tc.committed)
			}
			if tc.committed {
				return
			}
			if len(ctx.events) != 1 || ctx.events[0].Kind != tc.event || ctx.events[0].Note != tc.note {
				t.Errorf("events %+v, want one %s %q", ctx.events, tc.event, tc.note)
			}
			if _, ok := ctx.store[txnKey(sinkID, 5)]; ok && tc.event == "sink_txn_timed_out" {
				t.Error("a transaction the broker aborted is still pending")
			}
		})
	}
}

// A restored 2PC sink re-commits the restored checkpoint's pre-committed
// transactions with their stored epoch and only then bumps the epoch
// (Flink's recoverAndCommit before initTransactions): bumped first, the
// broker would fence its own re-commits (ftbench_mutant_epoch_first).
func TestSinkRecoveryRecommitsThenBumps(t *testing.T) {
	c := func(off int64) engine.Commit { return engine.Commit{ID: engine.EffectID{Off: off}} }
	for _, tc := range []struct {
		name     string
		pending  bool        // transaction 5's record is still there
		timeout  engine.Time // the broker's
		commits  int
		timedOut int64
	}{
		{"pending: re-committed", true, 0, 2, 0},
		{"committed before the failure", false, 0, 0, 0},
		{"the outage outlasted the broker's timeout", true, engine.Second, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			par := &params{mode: modeAligned, twoPC: true, txnTimeout: tc.timeout}
			g, _, _, _ := traceGraph(par)
			sinkID := g.Stages[1][0]
			ctx := newFakeCtx(sinkID, g.Stages[0][0])
			ctx.now = 5 * engine.Second
			ctx.store[epochKey(sinkID, 1)] = int64(1)
			if tc.pending {
				ctx.store[txnKey(sinkID, 5)] = txnRecord{Epoch: 1, Opened: 3 * engine.Second, Effects: txnEffects{{c(50)}, {c(51)}}}
			}
			ctx.store[checkpoint.Key(5, sinkID)] = &snapshot{Ops: []opSnapshot{{Pending: []int64{4, 5}}}}
			task := newTask(par, g, 1, 0)
			task.Handle(ctx, par.coord, deployMsg(5))
			if len(ctx.commits) != tc.commits {
				t.Errorf("commits %v, want %d", ctx.commits, tc.commits)
			}
			if got := ctx.counts["barrier_sink_txns_timed_out"]; got != tc.timedOut {
				t.Errorf("timed out %d, want %d", got, tc.timedOut)
			}
			if task.chain.sink().epoch != 2 || ctx.store[epochKey(sinkID, 2)] != int64(2) {
				t.Errorf("epoch %d, broker's 2: %v; want bumped to 2", task.chain.sink().epoch, ctx.store[epochKey(sinkID, 2)])
			}
			var order []string
			for _, e := range ctx.events {
				if e.Kind == "sink_commit" || e.Kind == "sink_epoch" {
					order = append(order, e.Kind)
				}
			}
			if last := len(order) - 1; order[last] != "sink_epoch" {
				t.Errorf("events %v: the bump must come after the re-commits", order)
			}
			if ctx.counts["barrier_sink_fenced_commits"] != 0 {
				t.Error("a re-commit was fenced")
			}
			if tc.timedOut > 0 {
				if _, ok := ctx.store[txnKey(sinkID, 5)]; ok {
					t.Error("the broker aborted transaction 5 but its record is pending")
				}
			}
		})
	}
}

// Flink's documented pitfall: Kafka's transaction.max.timeout.ms (15 min)
// caps the sink's transaction timeout (Flink sets 1 h), and a broker aborts
// a pre-committed transaction open longer than that. An outage between a
// checkpoint's pre-commit and its commit (a long store-down the job
// tolerates, or a master outage just after the checkpoint completed, before
// its commit notices went out) then loses the transaction's effects, and
// the run reports it. The same runs with the defaults (a 15 min timeout
// against a few seconds of outage) are exactly-once.
func TestBrokerTxnTimeoutLosesData(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     string
		tolerable string
		broker    string
		lost      bool
	}{
		{"store-down, default timeout", "store-down@1.5s-4.5s", "3", DefaultBrokerTxnTimeout, false},
		{"store-down, 2s broker timeout", "store-down@1.5s-4.5s", "3", "2s", true},
		{"master outage, default timeout", "crash@2.0105s:master,restart=3s", "0", DefaultBrokerTxnTimeout, false},
		{"master outage, 2s broker timeout", "crash@2.0105s:master,restart=3s", "0", "2s", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := e2eConfig(Aligned, tc.fault)
			cfg.Rate = 2000
			cfg.SystemOpts["tolerable-failed-checkpoints"] = tc.tolerable
			cfg.SystemOpts["broker-txn-timeout"] = tc.broker
			r := execute(t, cfg).Result
			timedOut := r.Counters["barrier_sink_txns_timed_out"]
			if !tc.lost {
				if timedOut != 0 || r.Lost != 0 || !r.ClaimHeld || r.ExitCode != 0 {
					t.Errorf("timed out %d lost %d held %v exit %d, want exactly-once", timedOut, r.Lost, r.ClaimHeld, r.ExitCode)
				}
				return
			}
			if timedOut == 0 || r.Lost == 0 || r.ClaimHeld || r.ExitCode != 3 {
				t.Errorf("timed out %d lost %d held %v exit %d, want the loss reported (exit 3)", timedOut, r.Lost, r.ClaimHeld, r.ExitCode)
			}
		})
	}
}
