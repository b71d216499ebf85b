package reports

import (
	"testing"

	"ftbench/harness"
	"ftbench/sweep"
)

// The committed-rate panel draws a sink that commits once per cycle of a
// second as one step a cycle, and one whose cycle is a bucket (kstreams'
// 100 ms exactly-once commits) as continuous output, 1 s steps: its bursts
// run together, and steps from one empty bucket to the next would span
// seconds (the long flat kstreams line of earlier reports).
func TestRateStepsFollowTheCommitCycle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cycle    float64 // commit_cycle_s
		every    int     // buckets between commits
		skip     map[int]bool
		maxStepS float64
		steps    int
	}{
		{"checkpoint every 1 s", 1, 10, nil, 1.0001, 8},
		{"commit interval 100 ms, one bucket empty", 0.1, 1, map[int]bool{35: true}, 1.0001, 8},
		{"commit interval 100 ms", 0.1, 1, nil, 1.0001, 8},
	} {
		res := &harness.Result{}
		res.Config.BucketS, res.Config.DurationS, res.Config.CommitCycleS = 0.1, 8, tc.cycle
		r := &sweep.StoredRun{Result: res}
		for i := range 80 {
			row := sweep.SeriesRow{T: float64(i) * 0.1}
			if (i+1)%tc.every == 0 && !tc.skip[i] {
				row.Committed = 100
			}
			r.Series = append(r.Series, row)
		}
		starts, lens, rates := rateSteps(r)
		if len(starts) != tc.steps {
			t.Errorf("%s: %d steps (%v long), want %d", tc.name, len(starts), lens, tc.steps)
			continue
		}
		for i, l := range lens {
			if l > tc.maxStepS {
				t.Errorf("%s: step %d is %.2f s long, at most %.2f s", tc.name, i, l, tc.maxStepS)
			}
			if rates[i] <= 0 {
				t.Errorf("%s: step %d has rate %.0f", tc.name, i, rates[i])
			}
		}
	}
}
