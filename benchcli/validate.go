package benchcli

// Checks made before any work is done (docs/limits.md): each returns
// a usage error (one line, exit 2) and is called by a small hook from the
// command it guards.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/sweep"
	"ftbench/torture"
	"ftbench/workloads"
)

// budgetFlag lifts the size budget (harness/budget.go).
func budgetFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-budget", Usage: fmt.Sprintf("run even if the estimate exceeds a budget: lifts both the size budget (%s of estimated memory) and the time budget (%.0f minutes of estimated wall time on a 2-core machine); docs/limits.md",
		harness.FormatBytes(harness.BudgetBytes), harness.TimeBudget.Seconds()/60)}
}

// runFlagChecks finishes configFrom: the budget flag, and no option of a
// workload other than the chosen one (it would be silently ignored).
func runFlagChecks(c *cli.Context, cfg *harness.Config) error {
	cfg.NoBudget = c.Bool("no-budget")
	return foreignWorkloadOptions(c, []string{cfg.Workload})
}

// foreignWorkloadOptions refuses a workload option set on the command line
// that none of the workloads in play has.
func foreignWorkloadOptions(c *cli.Context, inPlay []string) error {
	own := map[string]bool{}
	for _, w := range inPlay {
		fac, _ := workloads.Lookup(w)
		for _, o := range fac.Options {
			own[o.Name] = true
		}
	}
	for _, name := range workloads.Names() {
		fac, _ := workloads.Lookup(name)
		for _, o := range fac.Options {
			if c.IsSet(o.Name) && !own[o.Name] {
				return usageErr("--%s is an option of workload %s, not of %s", o.Name, name, strings.Join(inPlay, " or "))
			}
		}
	}
	return nil
}

// checkOut makes sure results can be written to folder dir before any run
// starts, without creating it: dir, or the nearest of its parents that
// exists, must be a folder bench can create a file in.
func checkOut(flag, dir string) error {
	if strings.TrimSpace(dir) == "" {
		return usageErr("--%s is empty: name a results folder", flag)
	}
	at := filepath.Clean(dir)
	for {
		fi, err := os.Stat(at)
		if err == nil {
			if !fi.IsDir() {
				return usageErr("--%s %q: %s is not a folder", flag, dir, at)
			}
			break
		}
		parent := filepath.Dir(at)
		// ENOTDIR: a parent is a file, which the walk up then names.
		if (!os.IsNotExist(err) && !errors.Is(err, syscall.ENOTDIR)) || parent == at {
			return usageErr("--%s %q: %v", flag, dir, unwrapPath(err))
		}
		at = parent
	}
	f, err := os.CreateTemp(at, ".write-check-")
	if err != nil {
		return usageErr("--%s %q: cannot write in %s: %v", flag, dir, at, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// validateGrid checks every point of a compare or sweep grid as its run
// would be checked, before the first run: parameter values, options,
// faults and the size budget. It returns how many runs may execute at once
// (fitJobs).
func validateGrid(c *cli.Context, m *sweep.Manifest, jobs int) (int, error) {
	m.Base.NoBudget = c.Bool("no-budget")
	// Every run of the grid reports its progress when it runs long.
	m.Base.Progress = progressPrinter(c.App.ErrWriter)
	inPlay := []string{m.Base.Workload}
	for _, p := range m.Params {
		if p.Name == "workload" {
			inPlay = append(inPlay, p.Values...)
		}
	}
	if err := foreignWorkloadOptions(c, inPlay); err != nil {
		return 0, err
	}
	g, err := m.Expand()
	if err != nil {
		return 0, usageErr("%v", err)
	}
	var sizes []int64
	seen := map[*sweep.Point]bool{}
	for _, r := range g.Runs {
		if seen[r.Point] {
			continue // seeds do not change what a run checks or costs
		}
		seen[r.Point] = true
		e, err := harness.Validate(r.Config)
		if err != nil {
			return 0, usageErr("%s: %v", r.Point.ID(), firstLine(err.Error()))
		}
		sizes = append(sizes, e.Bytes)
	}
	return fitJobs(c.App.ErrWriter, sizes, jobs, m.Base.NoBudget), nil
}

// fitJobs is how many of --jobs runs may execute at once: the budget is
// the whole command's, so the largest runs executing together must fit it.
// Fewer at once change no result (runs are independent and deterministic),
// only the wall time, so the command runs anyway and says so on stderr.
func fitJobs(w io.Writer, sizes []int64, jobs int, noBudget bool) int {
	if noBudget || jobs <= 1 || len(sizes) <= 1 {
		return jobs
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] > sizes[j] })
	k := 1 // every run alone fits: harness.Validate checked it
	sum := sizes[0]
	for k < min(jobs, len(sizes)) && sum+sizes[k] <= harness.BudgetBytes {
		sum += sizes[k]
		k++
	}
	if k < min(jobs, len(sizes)) {
		fmt.Fprintf(w, "bench: note: running at most %d runs at once (not --jobs %d): more would exceed the size budget of %s together\n",
			k, jobs, harness.FormatBytes(harness.BudgetBytes))
		return k
	}
	return jobs
}

// validateTorture checks a campaign's base configuration at the largest
// values torture draws (torture.WorstCase), so that no run of the campaign
// is refused after others ran. It returns how many runs may execute at
// once (fitJobs; 0 keeps torture's default).
func validateTorture(c *cli.Context, cfg harness.Config, fixed torture.Fixed, jobs int) (int, error) {
	switch {
	case c.Int("shrink") < 0:
		return 0, usageErr("--shrink must be 0 or more, got %d", c.Int("shrink"))
	case c.Int("shrink-budget") < 1:
		return 0, usageErr("--shrink-budget must be at least 1, got %d", c.Int("shrink-budget"))
	case c.IsSet("jobs") && c.Int("jobs") < 1:
		return 0, usageErr("--jobs must be at least 1, got %d", c.Int("jobs"))
	}
	e, err := harness.Validate(torture.WorstCase(cfg, fixed))
	if err != nil {
		return 0, usageErr("%v", firstLine(err.Error()))
	}
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0) // torture's default
	}
	sizes := make([]int64, min(jobs, max(c.Int("runs"), 1)))
	for i := range sizes {
		sizes[i] = e.Bytes
	}
	return fitJobs(c.App.ErrWriter, sizes, jobs, cfg.NoBudget), nil
}

// checkShards refuses a merge of shard folders that are not one whole
// sharded sweep or campaign: shards of different sharding (1/2 with 1/3),
// the same shard twice, or (unless allowPartial) a set that lacks shards.
// Different grids or campaigns are refused by the merge itself.
func checkShards(dirs []string, allowPartial bool) error {
	type shard struct {
		dir string
		s   *sweep.Shard
	}
	var shards []shard
	seenDir := map[string]bool{}
	for _, dir := range dirs {
		abs, _ := filepath.Abs(dir)
		if seenDir[abs] {
			return usageErr("shard folder %s is named twice", dir)
		}
		seenDir[abs] = true
		var s *sweep.Shard
		switch {
		case torture.IsCampaign(dir):
			rep, err := torture.ReadReport(dir)
			if err != nil {
				return usageErr("%v", err)
			}
			s = rep.Shard
		default:
			m, ok, err := sweep.ReadManifest(dir)
			if err != nil {
				return usageErr("%v", err)
			}
			if !ok {
				return nil // the merge names what the folder is not
			}
			s = m.Shard
		}
		shards = append(shards, shard{dir, s})
	}
	if len(shards) == 0 {
		return nil
	}
	whole := sweep.Shard{I: 1, N: 1}
	byIndex := map[int]string{}
	n := 0
	for _, sh := range shards {
		s := whole
		if sh.s != nil {
			s = *sh.s
		}
		if n == 0 {
			n = s.N
		}
		if s.N != n {
			return usageErr("%s is shard %d/%d but %s is of %d shards: shards of one sharding only", sh.dir, s.I, s.N, shards[0].dir, n)
		}
		if other, dup := byIndex[s.I]; dup {
			return usageErr("%s and %s are both shard %d/%d", other, sh.dir, s.I, s.N)
		}
		byIndex[s.I] = sh.dir
	}
	if allowPartial || len(byIndex) == n {
		return nil
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	return usageErr("shard(s) %s missing: a merge needs every shard (--allow-partial merges what there is)", strings.Join(missing, ", "))
}

// checkAtLeast refuses a count flag below lo.
func checkAtLeast(c *cli.Context, name string, lo int) error {
	if c.IsSet(name) && c.Int(name) < lo {
		return usageErr("--%s must be at least %d, got %d", name, lo, c.Int(name))
	}
	return nil
}
