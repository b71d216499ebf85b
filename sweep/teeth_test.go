package sweep

import (
	"slices"
	"testing"
)

// eoCurve is handCurve with its points claiming exactly-once and observing
// it in both seeds.
func eoCurve() *Curve {
	c := handCurve()
	for _, p := range c.Points {
		p.Claimed, p.Verdicts, p.Held = ExactlyOnce, []string{"exactly-once", "exactly-once"}, true
	}
	return c
}

func outside(t *testing.T, b *Baseline, cur *Curve) []string {
	t.Helper()
	cmp, err := Compare(b, cur)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range cmp.Outside() {
		out = append(out, r.Point+" "+r.Metric)
	}
	return out
}

// Regress has teeth: one duplicate or loss at a point that
// claims exactly-once is outside, whatever the baseline's tolerance; a
// changed verdict, claim_held or undrained seed is outside; at-least-once
// keeps its tolerance.
func TestRegressTeeth(t *testing.T) {
	b, err := NewBaseline(eoCurve(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.Metrics, MetricVerdict) || !slices.Contains(b.Metrics, MetricClaimHeld) {
		t.Fatalf("a new baseline must list the verdict and claim_held: %v", b.Metrics)
	}
	const p1 = "barrier/aligned checkpoint-interval=1s"
	if o := outside(t, b, eoCurve()); len(o) != 0 {
		t.Fatalf("identical: %v", o)
	}
	for _, m := range []string{"duplicates", "lost"} {
		cur := eoCurve()
		*cur.Points[0].Metrics[m].Median = 1 // within the ±10 the baseline file allows
		if o := outside(t, b, cur); !slices.Equal(o, []string{p1 + " " + m}) {
			t.Errorf("one %s in an exactly-once point: outside %v", m, o)
		}
	}
	cur := eoCurve()
	cur.Points[0].Verdicts[1] = "at-least-once"
	if o := outside(t, b, cur); !slices.Equal(o, []string{p1 + " verdict"}) {
		t.Errorf("a changed verdict: outside %v", o)
	}
	cur = eoCurve()
	cur.Points[0].Held = false
	if o := outside(t, b, cur); !slices.Equal(o, []string{p1 + " claim_held"}) {
		t.Errorf("a changed claim_held: outside %v", o)
	}
	cur = eoCurve()
	cur.Points[1].Undrained = 1
	if o := outside(t, b, cur); len(o) != 1 || o[0] != "barrier/aligned checkpoint-interval=2s verdict" {
		t.Errorf("an undrained seed: outside %v", o)
	}
	// A baseline that does not list them still compares the outcomes.
	old := *b
	old.Metrics = []string{"recovery_time_s", "duplicates", "lost"}
	cur = eoCurve()
	cur.Points[0].Held = false
	if o := outside(t, &old, cur); !slices.Equal(o, []string{p1 + " claim_held"}) {
		t.Errorf("old baseline, changed claim_held: outside %v", o)
	}
	// At-least-once duplicates keep the file's tolerance.
	alo := handCurve()
	bAlo, _ := NewBaseline(alo, nil)
	cur = handCurve()
	*cur.Points[0].Metrics["duplicates"].Median = 5
	if o := outside(t, bAlo, cur); len(o) != 0 {
		t.Errorf("5 more duplicates without an exactly-once claim: outside %v", o)
	}
}
