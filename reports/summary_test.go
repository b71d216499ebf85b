package reports

import (
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/sweep"
)

// summary.md says per run what a reader of its sink saw, how the rate was
// chosen, the checkpoint summary, what a crash took down and the recovery
// phases; and n/a where a value does not exist.
func TestSummaryRunDetails(t *testing.T) {
	dir := t.TempDir()
	ms := int64(engine.Millisecond)
	plain := fixtureRuns()[3].outcome()
	r := plain.Result
	r.Config.SystemOpts = map[string]string{"sink": "plain"}
	r.ClaimedGuarantee, r.Verdict, r.ClaimedReader, r.ObservedReader = "at-least-once", "at-least-once", "non-monotonic", "non-monotonic"
	r.Duplicates, r.ReaderRegressions = 1500, 37
	r.FirstRegression = &harness.Regression{Key: 12, AtS: 1.9, From: 40, To: 31}
	r.RateChosen, r.RateRule, r.OfferedRPS = harness.RateAutomatic, harness.RuleHalfCapacity, fxRate
	one, two := 1.0, 1.2
	r.Recoveries[0].Crashed = &harness.Crashed{Worker: 0, Processes: []string{"source/0", "split/0", "count/0", "sink/0"}}
	r.Recoveries[0].Phases = &harness.Phases{DetectedS: &one, RestoredS: &two}
	plain.Events = append(plain.Events,
		engine.Event{Kind: "checkpoint_triggered"}, engine.Event{Kind: "checkpoint_completed", Value: 20 * ms},
		engine.Event{Kind: "checkpoint_triggered"}, engine.Event{Kind: "checkpoint_aborted"})
	if _, err := harness.Write(dir, "20260101T000000.000000-barrier-aligned-wordcount-s1", plain); err != nil {
		t.Fatal(err)
	}
	// A run that committed nothing and had no whole commit cycle.
	none := fixtureRuns()[0].outcome()
	none.Result.CommittedEffects, none.Result.ThroughputRPS = 0, nil
	none.Result.Lost = none.Result.ExpectedEffects
	none.Result.RateChosen, none.Result.RateRule, none.Result.OfferedRPS = harness.RateAutomatic, harness.RuleHalfCapacity, fxRate
	if _, err := harness.Write(dir, "20260101T000000.000001-none-default-wordcount-s1", none); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Generate(dir, Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	checkSummaryHas(t, out,
		"Offered rate: 10000 records/s (chosen automatically: half the cost model's capacity bound on this hardware).",
		"- **barrier/aligned**: 1500 duplicated and 0 lost of 60000 expected effects; a key's value went back 37 times (first key 12 at 1.900s, 40 to 31); "+
			"every final value right — observed at-least-once, non-monotonic; claimed at-least-once, non-monotonic: held",
		"- **none/default**: 0 duplicated and 60000 lost of 60000 expected effects",
		"- **barrier/aligned**: 2 triggered, 1 completed, 1 aborted; duration p50 20.0 ms, max 20.0 ms",
		"- **barrier/aligned**: crash@800ms:op=count/0 took down worker 0 and every process on it: source/0, split/0, count/0, sink/0; "+
			"recovery: detected 1s, restored 1.2s",
		"| none/default | 1 | n/a | n/a | n/a | 1.300 |")
}

// Configurations of one system beside other systems (compare --config
// 'barrier --sink 2pc' --config 'barrier --sink plain' --config stormack
// --config none) each get a colour of their own: the sink option is no
// dimension of stormack and none.
func TestConfigSeriesColoursDistinct(t *testing.T) {
	var runs []*sweep.StoredRun
	for i, opts := range []map[string]string{{}, {}, {"sink": "2pc", "checkpoint-interval": "1s"}, {"sink": "plain", "checkpoint-interval": "1s"}} {
		r := storedOf(fixtureRuns()[[]int{0, 1, 3, 3}[i]].outcome().Result)
		r.Result.Config.SystemOpts = opts
		runs = append(runs, r)
	}
	g := groupRuns(runs)[0]
	want := []string{"none/default", "stormack/default", "barrier/aligned sink=2pc", "barrier/aligned sink=plain"}
	if strings.Join(g.Labels, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", g.Labels, want)
	}
	seen := map[int]bool{}
	for _, c := range g.Colors {
		seen[c] = true
	}
	if len(seen) != len(runs) || g.Shared {
		t.Errorf("colours %v (shared %v): want one per configuration", g.Colors, g.Shared)
	}
}
