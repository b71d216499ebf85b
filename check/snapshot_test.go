package check

import (
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/workloads"
)

func wordcount(t *testing.T) workloads.Workload {
	t.Helper()
	w, err := workloads.New("wordcount", 7, map[string]string{"vocabulary": "50"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// cutAt builds the cut a correct system persists when source partition p
// has read offsets[p] records, of which the last inflight[p] lines are still
// in flight into split (channel state of stage 0): count holds the state of
// everything else, split in two instances by key parity.
func cutAt(t *testing.T, w workloads.Workload, id int64, offsets, inflight []int64) CheckpointCut {
	t.Helper()
	o := workloads.NewOracle(w)
	c := CheckpointCut{ID: id, Offsets: offsets, Stages: make([]StageCut, 3)}
	for p, end := range offsets {
		for off := int64(0); off < end-inflight[p]; off++ {
			o.Feed(int32(p), off)
		}
		for off := end - inflight[p]; off < end; off++ {
			c.Stages[0].InFlight = append(c.Stages[0].InFlight, w.Record(int32(p), off))
		}
	}
	var even, odd []StateKV
	for k, v := range o.State(1) {
		if k%2 == 0 {
			even = append(even, StateKV{k, v})
		} else {
			odd = append(odd, StateKV{k, v})
		}
	}
	c.Stages[1].State = [][]StateKV{even, odd}
	return c
}

func TestConsistentCuts(t *testing.T) {
	w := wordcount(t)
	cuts := []CheckpointCut{
		cutAt(t, w, 1, []int64{10, 12}, []int64{0, 0}),
		cutAt(t, w, 2, []int64{40, 35}, []int64{3, 0}), // lines in flight into split
		cutAt(t, w, 3, []int64{90, 80}, []int64{5, 7}),
		// A rollback: a later checkpoint of a new attempt behind the last
		// checked offsets makes the check restart its oracle.
		cutAt(t, w, 5, []int64{60, 60}, []int64{1, 1}),
	}
	// Channel state into count: words split from partition 0's last line.
	c := cutAt(t, w, 4, []int64{100, 100}, []int64{1, 0})
	line := c.Stages[0].InFlight[0]
	c.Stages[0].InFlight = nil
	w.Plan().Stages[0].Fn(line, func(m engine.Msg) { c.Stages[1].InFlight = append(c.Stages[1].InFlight, m) })
	cuts = append(cuts, c)
	for _, ms := range []*workloads.Milestones{nil, milestones(w, 2, 100), milestones(w, 2, 20)} {
		res := CheckSnapshotsFrom(w, cuts, ms)
		if res.Checked != 5 || res.Consistent != 5 || res.Inconsistent != 0 {
			t.Fatalf("milestones of %d rounds: %+v", ms.Base([]int64{1000, 1000}), res)
		}
	}
}

// milestones are those the harness's oracle pass over parts x total
// records takes.
func milestones(w workloads.Workload, parts int, total int64) *workloads.Milestones {
	m := workloads.NewMilestones(parts, total)
	o := workloads.NewOracle(w)
	for off := range total {
		m.Take(off, o)
		for p := range parts {
			o.Feed(int32(p), off)
		}
	}
	m.End(o)
	return m
}

func TestInconsistentCuts(t *testing.T) {
	w := wordcount(t)
	tests := []struct {
		name   string
		mutate func(c *CheckpointCut)
		want   string
	}{
		{"lost in-flight record", func(c *CheckpointCut) {
			c.Stages[0].InFlight = c.Stages[0].InFlight[1:]
		}, "keys differ"},
		{"record both in state and in flight", func(c *CheckpointCut) {
			c.Stages[0].InFlight = append(c.Stages[0].InFlight, w.Record(1, 0))
		}, "keys differ"},
		{"state past the recorded offsets", func(c *CheckpointCut) {
			c.Offsets[1]--
		}, "keys differ"},
		{"channel state beyond the cut", func(c *CheckpointCut) {
			c.Stages[0].InFlight = append(c.Stages[0].InFlight, w.Record(0, 50))
		}, "beyond the recorded offset 50"},
		{"key in two instances", func(c *CheckpointCut) {
			c.Stages[1].State[1] = append(c.Stages[1].State[1], c.Stages[1].State[0][0])
		}, "two instances"},
		{"missing stage", func(c *CheckpointCut) {
			c.Stages = c.Stages[:2]
		}, "2 stages persisted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cutAt(t, w, 9, []int64{50, 50}, []int64{2, 0})
			tc.mutate(&c)
			// Replayed, and from the milestones of a pass over 100 or
			// exactly 50 records a partition (the end of the log).
			for _, ms := range []*workloads.Milestones{nil, milestones(w, 2, 100), milestones(w, 2, 50)} {
				res := CheckSnapshotsFrom(w, []CheckpointCut{c}, ms)
				if res.Inconsistent != 1 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0], tc.want) {
					t.Fatalf("%+v, want one problem mentioning %q", res, tc.want)
				}
				if !strings.HasPrefix(res.Problems[0], "checkpoint 9: ") {
					t.Fatalf("problem %q does not name the checkpoint", res.Problems[0])
				}
			}
		})
	}
}
