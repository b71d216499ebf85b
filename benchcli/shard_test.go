package benchcli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ftbench/harness"
	"ftbench/sweep"
)

// schedulerEnv are the variables --shard auto reads; tests set them all, so
// that a test run inside a Slurm job or a Kubernetes pod behaves the same.
var schedulerEnv = []string{sweep.EnvSlurmTaskID, sweep.EnvSlurmTaskMin, sweep.EnvSlurmTaskMax,
	sweep.EnvSlurmTaskCount, sweep.EnvSlurmTaskStep, sweep.EnvK8sIndex}

func clearScheduler(t *testing.T) {
	for _, k := range schedulerEnv {
		t.Setenv(k, "")
	}
}

// slurmTask pretends to be task id of a Slurm array 0..count-1.
func slurmTask(t *testing.T, id, count int) {
	clearScheduler(t)
	t.Setenv(sweep.EnvSlurmTaskID, strconv.Itoa(id))
	t.Setenv(sweep.EnvSlurmTaskMin, "0")
	t.Setenv(sweep.EnvSlurmTaskMax, strconv.Itoa(count-1))
	t.Setenv(sweep.EnvSlurmTaskCount, strconv.Itoa(count))
	t.Setenv(sweep.EnvSlurmTaskStep, "1")
}

// --shard auto outside a scheduler: one line, exit 2, before any run.
func TestShardAutoWithoutScheduler(t *testing.T) {
	clearScheduler(t)
	dir := t.TempDir()
	for _, cmd := range [][]string{
		args([]string{"sweep", "--system", "none", "--param", "rate=4000,5000"}, tinyRun),
		{"torture", "--system", "none", "--runs", "4", "--duration", "2s"},
	} {
		out := filepath.Join(dir, cmd[0])
		t.Run(cmd[0], func(t *testing.T) {
			requireUsageError(t, "neither a Slurm job array (SLURM_ARRAY_TASK_ID) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)",
				append(cmd, "--shard", "auto", "--out", out)...)
			requireUsageError(t, "--shard-count is only for --shard auto", append(cmd, "--shard", "1/2", "--shard-count", "2", "--out", out)...)
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created: work started before the usage error", out)
			}
		})
	}
	t.Setenv(sweep.EnvK8sIndex, "1")
	requireUsageError(t, "--shard-count", "torture", "--system", "none", "--runs", "4", "--shard", "auto", "--out", dir)
	slurmTask(t, 1, 4)
	t.Setenv(sweep.EnvSlurmTaskStep, "2")
	requireUsageError(t, "step", "torture", "--system", "none", "--runs", "4", "--shard", "auto", "--out", dir)
	slurmTask(t, 1, 4)
	t.Setenv(sweep.EnvK8sIndex, "3")
	requireUsageError(t, "disagree", "torture", "--system", "none", "--runs", "4", "--shard", "auto", "--out", dir)
	slurmTask(t, 1, 4)
	requireUsageError(t, "--shard auto needs --out", "torture", "--system", "none", "--runs", "4", "--shard", "auto")
	requireUsageError(t, "--stop cannot be combined with --shard", "torture", "--system", "none", "--runs", "4", "--shard", "2/4", "--stop", "--out", dir)
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, errA := os.ReadFile(a)
	y, errB := os.ReadFile(b)
	if errA != nil || errB != nil || !bytes.Equal(x, y) {
		t.Fatalf("%s and %s differ (%v, %v):\n%s\n---\n%s", a, b, errA, errB, x, y)
	}
}

// The tasks of a Slurm array sweep into one shared folder, each into its
// own shard folder; their merge is the unsharded sweep, byte for byte,
// whatever the folders and jobs.
func TestShardAutoSweep(t *testing.T) {
	dir := t.TempDir()
	grid := args([]string{"sweep", "--system", "none", "--param", "rate=4000,5000,6000", "--seeds", "1-2"}, tinyRun)
	shared := filepath.Join(dir, "shared")
	for id := range 2 {
		slurmTask(t, id, 2)
		if code, o, e := bench(t, append(grid, "--shard", "auto", "--out", shared, "--jobs", "1")...); code != 0 {
			t.Fatalf("task %d: exit %d\n%s\n%s", id, code, o, e)
		}
	}
	clearScheduler(t)
	shards := []string{sweep.ShardDir(shared, sweep.Shard{I: 1, N: 2}), sweep.ShardDir(shared, sweep.Shard{I: 2, N: 2})}
	merged := filepath.Join(shared, "merged")
	if code, o, e := bench(t, append([]string{"merge", "--out", merged}, shards...)...); code != 0 || !strings.Contains(o, "3 points, 0 missing") {
		t.Fatalf("merge: exit %d\n%s\n%s", code, o, e)
	}
	local := filepath.Join(dir, "local")
	if code, o, e := bench(t, append(grid, "--out", local, "--jobs", "2")...); code != 0 {
		t.Fatalf("local sweep: exit %d\n%s\n%s", code, o, e)
	}
	sameFile(t, filepath.Join(local, sweep.CurveJSON), filepath.Join(merged, sweep.CurveJSON))
	sameFile(t, filepath.Join(local, sweep.CurveCSV), filepath.Join(merged, sweep.CurveCSV))
}

// Torture shards of a campaign that breaks its claim (test-liar) merge into
// the unsharded campaign's summary, shrunk schedules included, and the
// merge exits as the campaign does.
func TestShardAutoTorture(t *testing.T) {
	dir := t.TempDir()
	campaign := []string{"torture", "--system", "test-liar", "--runs", "5", "--seed", "4", "--duration", "1500ms",
		"--rate", "3000", "--drain", "3s", "--shrink", "2", "--shrink-budget", "8"}
	shared := filepath.Join(dir, "shared")
	var shards []string
	for id := range 3 {
		slurmTask(t, id, 3)
		code, o, e := bench(t, append(campaign, "--shard", "auto", "--out", shared, "--jobs", "1")...)
		if code != harness.ExitSafety && code != 0 {
			t.Fatalf("task %d: exit %d\n%s\n%s", id, code, o, e)
		}
		shards = append(shards, sweep.ShardDir(shared, sweep.Shard{I: id + 1, N: 3}))
	}
	clearScheduler(t)
	local := filepath.Join(dir, "local")
	lcode, lo, le := bench(t, append(campaign, "--out", local, "--jobs", "2")...)
	if lcode != harness.ExitSafety || !strings.Contains(lo, "CLAIM BROKEN") || !strings.Contains(lo, "shrunk run") {
		t.Fatalf("the liar's campaign should break its claim and shrink: exit %d\n%s\n%s", lcode, lo, le)
	}
	merged := filepath.Join(shared, "merged")
	code, o, e := bench(t, append([]string{"merge", "--out", merged}, shards...)...)
	if code != lcode {
		t.Fatalf("merge exit %d, the campaign's %d\n%s\n%s", code, lcode, o, e)
	}
	sameFile(t, filepath.Join(local, "summary.json"), filepath.Join(merged, "summary.json"))
	// The printed failures and replay lines are the campaign's too.
	pick := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "run ") || strings.HasPrefix(l, "shrunk run ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if pick(o) != pick(lo) || pick(o) == "" {
		t.Fatalf("merge printed\n%s\nthe campaign\n%s", pick(o), pick(lo))
	}
	// A shard missing: refused, and with --allow-partial its runs are
	// listed and the merge does not pass.
	requireUsageError(t, "shard(s) 2/3 missing", "merge", "--out", filepath.Join(dir, "refused"), shards[0], shards[2])
	partial := filepath.Join(dir, "partial")
	code, o, _ = bench(t, "merge", "--allow-partial", "--out", partial, shards[0], shards[2])
	if code == 0 || !strings.Contains(o, "missing: 2 of 5 runs") {
		t.Fatalf("merge without shard 2: exit %d\n%s", code, o)
	}
	// A sweep and a campaign do not merge.
	requireUsageError(t, "not a torture campaign folder", "merge", "--out", filepath.Join(dir, "bad"), shards[0], t.TempDir())
}
