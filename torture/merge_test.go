package torture

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"ftbench/harness"
	"ftbench/sweep"
)

// A campaign run in shards, with other jobs than the unsharded one, merges
// into the same campaign: the same summary.json byte for byte (failures,
// replay lines, shrunk schedules, coverage), the same runs in the same
// order, and the run folders joined in one place.
func TestMergedShardsEqualTheCampaign(t *testing.T) {
	dir := t.TempDir()
	opt := small("test-liar", 7)
	opt.Shrink, opt.ShrinkBudget = 2, 12
	opt.Base.Observe = false // the delivery check catches this liar
	whole := opt
	whole.Jobs, whole.Out = 3, filepath.Join(dir, "whole")
	wrep, err := Campaign(whole)
	if err != nil {
		t.Fatal(err)
	}
	if wrep.Counts[Broken] < 2 || len(wrep.Shrunk) != 2 || wrep.Counts[Broken] == len(wrep.Runs) {
		t.Fatalf("the test needs broken and unbroken runs and two shrinks: counts %v, %d shrunk", wrep.Counts, len(wrep.Shrunk))
	}
	// Run i is a pure function of the campaign seed and i: drawn alone, in
	// reverse order, it is the campaign's run i.
	for i := len(wrep.Runs) - 1; i >= 0; i-- {
		cfg, err := draw(opt.Base, opt.Fixed, RunSeed(opt.Base.Seed, i))
		if err != nil || !reflect.DeepEqual(cfg, wrep.Runs[i].Config) {
			t.Fatalf("run %d drawn alone differs from the campaign's (%v)", i, err)
		}
	}
	var shards []string
	for i := 1; i <= 3; i++ {
		o := opt
		o.Jobs, o.Shard = 1, sweep.Shard{I: i, N: 3}
		o.Out = sweep.ShardDir(filepath.Join(dir, "shared"), o.Shard)
		rep, err := Campaign(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Runs {
			if r.Index%3 != i-1 {
				t.Fatalf("shard %d/3 ran run %d", i, r.Index)
			}
		}
		shards = append(shards, o.Out)
	}
	merged := filepath.Join(dir, "merged")
	mrep, err := Merge(merged, shards)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(whole.Out, SummaryFile))
	b, _ := os.ReadFile(filepath.Join(merged, SummaryFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("merged summary differs from the campaign's:\n%s\n---\n%s", a, b)
	}
	if mrep.ExitCode() != wrep.ExitCode() || len(mrep.Runs) != len(wrep.Runs) {
		t.Fatalf("merged: exit %d, %d runs; campaign: exit %d, %d runs", mrep.ExitCode(), len(mrep.Runs), wrep.ExitCode(), len(wrep.Runs))
	}
	for i, r := range mrep.Runs {
		w := wrep.Runs[i]
		if r.Index != i || r.Replay != w.Replay || r.Class != w.Class || r.Problem != w.Problem {
			t.Fatalf("merged run %d: %+v\ncampaign: %+v", i, r, w)
		}
		if filepath.Dir(r.Dir) != merged {
			t.Fatalf("run %d's folder %s is not in the merged folder", i, r.Dir)
		}
		if _, err := os.Stat(filepath.Join(r.Dir, "run.json")); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range mrep.Shrunk {
		if _, err := os.Stat(filepath.Join(s.Dir, "run.json")); err != nil || !strings.HasPrefix(s.Dir, merged) {
			t.Fatalf("shrunk run %d: folder %s (%v)", s.Run, s.Dir, err)
		}
	}
	// Read back, the merged folder merges again into the same summary.
	again := filepath.Join(dir, "again")
	if _, err := Merge(again, []string{merged}); err != nil {
		t.Fatal(err)
	}
	if c, _ := os.ReadFile(filepath.Join(again, SummaryFile)); !bytes.Equal(a, c) {
		t.Fatalf("re-merged summary differs:\n%s", c)
	}
	// Without a shard, its runs are missing and the merge does not pass.
	part, err := Merge(filepath.Join(dir, "part"), shards[1:])
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 3, 6}; !reflect.DeepEqual(part.Missing, want) || part.ExitCode() == harness.ExitOK {
		t.Fatalf("missing %v (want %v), exit %d", part.Missing, want, part.ExitCode())
	}
	// Shards of another campaign are refused, naming the folder.
	other := opt
	other.Base.Seed++
	other.Runs, other.Out, other.Shrink = 1, filepath.Join(dir, "other"), 0
	if _, err := Campaign(other); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(filepath.Join(dir, "bad"), []string{shards[0], other.Out}); !harness.IsInputError(err) || !strings.Contains(err.Error(), other.Out) {
		t.Fatalf("merging two campaigns: %v", err)
	}
	if _, err := Merge(filepath.Join(dir, "bad"), []string{t.TempDir()}); !harness.IsInputError(err) {
		t.Fatalf("merging an empty folder: %v", err)
	}
}
