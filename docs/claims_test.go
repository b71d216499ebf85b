package docs

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"ftbench/capacity"
	"ftbench/check"
	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/metrics"
	"ftbench/sweep"
	"ftbench/systems"
	"ftbench/torture"
	"ftbench/workloads"
)

// The docs' counted claims — defaults, limits, counts, rates — are pure
// functions of the code, so each is computed here and compared with what
// the page says. Wall-clock figures (performance.md's speeds, live.md's
// measurements) are not: they stay measured, with their command and date.

// page is a doc (a path from docs/, "../README.md" for the README) as the
// claims are matched: code-span backticks dropped and every run of white
// space one space, so that a sentence matches however it is wrapped.
func page(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(string(b), "`", "")), " ")
}

// claim is a figure a page states: each match of re (at least one) must
// capture what want computes, group by group.
type claim struct {
	file string
	re   string
	want func(t *testing.T) []string
}

func TestCountedClaims(t *testing.T) {
	cost := engine.DefaultCost()
	for _, c := range []claim{
		// cost-model.md: the magnitudes of the defaults.
		{"cost-model.md", `(\d+) µs LAN latency`, is(ms(cost.NetLatency, engine.Microsecond))},
		{"cost-model.md", `(\d+) Gbit/s links`, is(num(cost.NetBandwidth * 8 / 1e9))},
		{"cost-model.md", `(\d+) KiB network buffers`, is(num(float64(cost.BufferBytes) / 1024))},
		{"cost-model.md", `file system with (\d+) ms latency and (\d+) MB/s per writer`,
			is(ms(cost.StoreLatency, engine.Millisecond), num(cost.StoreWriteBytes/1e6))},
		{"cost-model.md", `checks in all (\w+) systems`, is(word(len(systems.Names())))},

		// metrics.md: what a run is, its defaults and limits.
		{"metrics.md", `machines of --cores cores each \(default (\d+)\)`, is(strconv.Itoa(cost.Cores))},
		{"metrics.md", `up to --drain, default (\d+) s`, is(ms(harness.DefaultDrain, engine.Second))},
		{"metrics.md", `Defaults: (\d+) s of input, (\d+) workers of (\d+) cores numbered from 0, parallelism (\d+)`,
			is(ms(harness.DefaultDuration, engine.Second), strconv.Itoa(harness.DefaultWorkers), strconv.Itoa(cost.Cores), strconv.Itoa(harness.DefaultParallelism))},
		{"metrics.md", `one row per (\d+) ms bucket`, is(ms(harness.DefaultBucket, engine.Millisecond))},
		{"metrics.md", `--vocabulary takes up to 10\^(\d+) words`, is(num(math.Log10(workloads.MaxVocabulary)))},
		{"metrics.md", `A vocabulary of at most ([\d,]+) words draws ranks from a ([\d,]+)-entry table`,
			func(t *testing.T) []string {
				n := grouped(sourceConst(t, "workloads", "zipfTableBits").shift(), ",")
				return []string{n, n}
			}},
		{"metrics.md", `bank --accounts takes up to 2\^(\d+)`, func(t *testing.T) []string {
			return []string{sourceMatch(t, "../workloads/bank.go", `intOption\(opts, "accounts", \d+, 1<<(\d+)\)`)}
		}},
		{"metrics.md", `--active-keys F \(default (\S+)\)`, is(option(t, "wordcount", "active-keys"))},
		{"metrics.md", `--active-warmup W records of every partition \(default (\d+)\)`, is(option(t, "wordcount", "active-warmup"))},
		{"metrics.md", `--active-period \(records of each partition, default ([\d,]+)\)`, func(t *testing.T) []string {
			n, _ := strconv.ParseInt(option(t, "wordcount", "active-period"), 10, 64)
			return []string{grouped(n, ",")}
		}},
		{"metrics.md", `for one (second), the default checkpoint interval`, is(secondWord(flag(t, "barrier", "checkpoint-interval")))},
		{"metrics.md", `at least (\d+)% of the offered rate`, is(num(100 * metrics.OverloadSlope))},
		{"metrics.md", `the fit needs at least (\d+) whole cycles`, is(strconv.Itoa(metrics.MinTrendSamples))},
		{"metrics.md", `With fewer than (\d+) points`, is(strconv.Itoa(metrics.MinTrendSamples))},
		{"metrics.md", `at least (\d+) s for a 1 s cycle`, is(ms(harness.MinSteadyDuration(engine.Second, harness.DefaultBucket), engine.Second))},
		{"metrics.md", `(\d+) reads per simulated second`, is(num(harness.DefaultReadRate))},
		{"metrics.md", `the default crash is at (\d+)% of the run`, is(bareCrashPercent(t))},

		// The README's defaults of barrier's options and its other counts.
		{"../README.md", `--checkpoints-retained \(default (\d+)\)`, is(flag(t, "barrier", "checkpoints-retained"))},
		{"../README.md", `--checkpoint-timeout \(default (\w+)\)`, is(flag(t, "barrier", "checkpoint-timeout"))},
		{"../README.md", `--tolerable-failed-checkpoints \(default (\d+)`, is(flag(t, "barrier", "tolerable-failed-checkpoints"))},
		{"../README.md", `becomes the crash of the worker hosting the first stateful operator's instance 0 at (\d+)% of the run`, is(bareCrashPercent(t))},
		{"../README.md", `runs CI's (\w+) sweeps`, is(word(len(baselines(t))))},
		{"../README.md", `stays at most (\d+) lines`, is(strconv.Itoa(maxReadmeLines))},
		{"contributing.md", `runs the (\w+) sweeps`, is(word(len(baselines(t))))},
		{"contributing.md", `results/baseline/ holds the regression sweeps' curves \(([^)]*)\)`, is(strings.Join(baselines(t), ", "))},
		{"contributing.md", `runs both on (\d+) fixed configurations`, is(strconv.Itoa(len(samerunConfigs(t))))},

		// capacity.md: the search's constants.
		{"capacity.md", `here (\d+) s by default`, is(ms(capacity.DefaultProbeDuration, engine.Second))},
		{"capacity.md", `bisects until they are within (\d+)%`, is(num(100 * capacity.DefaultTolerance))},
		{"capacity.md", `extended to (\d+) whole commit cycles`, is(strconv.Itoa(metrics.MinTrendSamples))},
		{"capacity.md", `\((\d+) s for a 1 s checkpoint or batch interval`, is(ms(harness.MinSteadyDuration(engine.Second, harness.DefaultBucket), engine.Second))},
		{"capacity.md", `A probe appends at least (\d+) records`, is(strconv.Itoa(capacity.MinProbeRecords))},
		{"capacity.md", `p99 latency is at least (0\.\d+) of the cycle`, is(num(float64(capacity.MinP99(100*engine.Second)) / float64(100*engine.Second)))},
		{"capacity.md", `A failed probe under (0\.\d+) of its cores`, is(num(capacity.LowCPUShare))},
		{"live.md", `flags a failed probe under (0\.\d+) of its cores`, is(num(capacity.LowCPUShare))},

		// snapshot.md: the bank workloads' and snapshot's defaults.
		{"snapshot.md", `bank-p2p \(--processes N, default (\d+); --topology, default (\w+)\)`,
			is(option(t, "bank-p2p", "processes"), option(t, "bank-p2p", "topology"))},
		{"snapshot.md", `Its default rate is (\d+) transfers/s per process`, func(t *testing.T) []string {
			cfg := harness.DefaultConfig()
			cfg.System, cfg.Workload = "snapshot", "bank-p2p"
			n, _ := strconv.Atoi(option(t, "bank-p2p", "processes"))
			return []string{num(rate(t, cfg) / float64(n))}
		}},
		{"snapshot.md", `bank \(--accounts, default (\d+)\)`, is(option(t, "bank", "accounts"))},
		{"snapshot.md", `balance = (\d+) \+ inflow - outflow`, is(strconv.Itoa(workloads.InitialBalance))},
		{"snapshot.md", `every --snapshot-interval \(default (\w+)\)`, is(flag(t, "snapshot", "snapshot-interval"))},
		{"snapshot.md", `every --checkpoint-interval \(default (\w+), the same flag and default as barrier`,
			func(t *testing.T) []string {
				if b, s := flag(t, "barrier", "checkpoint-interval"), flag(t, "snapshot", "checkpoint-interval"); b != s {
					t.Errorf("barrier's --checkpoint-interval defaults to %s, snapshot's to %s", b, s)
				}
				return []string{flag(t, "snapshot", "checkpoint-interval")}
			}},

		// torture.md: what a campaign draws (torture/schedule.go).
		{"torture.md", `duration (\d+)-\d+ s, rate (\d+)-(\d+) records/s \(log-uniform\), parallelism 1-(\d+), workers 1-(\d+) \(each unless given on the command line\), and 1-(\d+) faults`,
			func(t *testing.T) []string {
				c := func(name string) string { return strconv.FormatInt(sourceConst(t, "torture", name).int(), 10) }
				return []string{num(float64(sourceConst(t, "torture", "minDuration").int()) / float64(engine.Second)),
					c("minRate"), c("maxRate"), c("maxPar"), c("maxWorkers"), c("maxFaults")}
			}},
		{"torture.md", `at least (\d+) records/s per channel`, func(t *testing.T) []string {
			return []string{strconv.FormatInt(sourceConst(t, "torture", "minThrottle").int(), 10)}
		}},
		{"torture.md", `within (\d+) ms after one of its multiples`, func(t *testing.T) []string {
			return []string{ms(engine.Time(sourceConst(t, "torture", "checkpointSkew").int()), engine.Millisecond)}
		}},
		{"torture.md", `Three in four start (\d+) to (\d+) ms after a checkpoint trigger`, func(t *testing.T) []string {
			return []string{ms(engine.Time(sourceConst(t, "torture", "partitionSkewMin").int()), engine.Millisecond),
				ms(engine.Time(sourceConst(t, "torture", "partitionSkewMax").int()), engine.Millisecond)}
		}},

		// sweeps.md and contributing.md: file formats, baseline defaults,
		// the regression sweeps' common flags.
		{"sweeps.md", `format "(ftbench-sweep/\d+)"`, is(sweep.ManifestFormat)},
		{"sweeps.md", `format (ftbench-curve/\d+)`, is(sweep.CurveFormat)},
		{"sweeps.md", `"format": "(ftbench-curve/\d+)"`, is(sweep.CurveFormat)},
		{"sweeps.md", `"format": "(ftbench-baseline/\d+)"`, is(sweep.BaselineFormat)},
		{"sweeps.md", `format (ftbench-capacity-compare/\d+)`, is(capacity.CompareFormat)},
		{"sweeps.md", `a new baseline defaults to ([a-z_,]+) with the tolerances below`, is(strings.Join(sweep.DefaultMetrics, ","))},
		{"sweeps.md", `"metrics": \[([^]]*)\]`, func(*testing.T) []string {
			return []string{`"` + strings.Join(sweep.DefaultMetrics, `", "`) + `"`}
		}},
		{"sweeps.md", `"(default|recovery_time_s|duplicates|lost)": \{"rel": ([\d.]+), "abs": ([\d.]+)\}`, nil},
		{"contributing.md", `runs the four sweeps \((\w+), a crash, (\d+) s at ([\d ]+) records/s, seeds ([\d-]+)\)`, func(t *testing.T) []string {
			b, err := os.ReadFile("../scripts/regress.sh")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`common=\(--workload (\w+) --fault crash --duration (\d+)s --rate (\d+) --seeds ([\d-]+)\)`).FindSubmatch(b)
			if m == nil {
				t.Fatal("scripts/regress.sh's common flags are not as this check reads them")
			}
			r, _ := strconv.ParseInt(string(m[3]), 10, 64)
			return []string{string(m[1]), string(m[2]), grouped(r, " "), string(m[4])}
		}},
		{"snapshot.md", `N\(N-1\) = (\d+) for (\d+) fully connected processes`, func(t *testing.T) []string {
			n, _ := strconv.Atoi(option(t, "bank-p2p", "processes"))
			return []string{strconv.Itoa(n * (n - 1)), strconv.Itoa(n)}
		}},

		// The exit codes' numbers.
		{"metrics.md", `\| (\d+) \| ok \|`, is(strconv.Itoa(harness.ExitOK))},
		{"metrics.md", `\| (\d+) \| internal error`, is(strconv.Itoa(harness.ExitInternal))},
		{"metrics.md", `\| (\d+) \| bad usage or input`, is(strconv.Itoa(harness.ExitUsage))},
		{"metrics.md", `\| (\d+) \| a safety claim broken`, is(strconv.Itoa(harness.ExitSafety))},
		{"metrics.md", `\| (\d+) \| not recovered within the run`, is(strconv.Itoa(harness.ExitLiveness))},
		{"architecture.md", `say which: (\d+) a safety claim broken, (\d+) not recovered`, is(strconv.Itoa(harness.ExitSafety), strconv.Itoa(harness.ExitLiveness))},
		{"sweeps.md", `\((\d+) a broken claim, (\d+) not recovered\)`, is(strconv.Itoa(harness.ExitSafety), strconv.Itoa(harness.ExitLiveness))},

		// cluster.md: what scripts/slurm/test.sh submits.
		{"cluster.md", `submits a (\d+)-task sweep \(barrier aligned and unaligned × checkpoint interval 1 s, 2 s × seeds ([\d-]+), (\d+) s of input, a crash\) and a (\d+)-task torture campaign \(barrier, (\d+) runs of (\d+) s\)`,
			func(t *testing.T) []string {
				g := func(re string) string { return sourceMatch(t, "../scripts/slurm/test.sh", re) }
				tasks := g(`submit\.sh --tasks (\d+)`)
				return []string{tasks, g(`sweep=\(sweep [^)]*--seeds ([\d-]+)`), g(`sweep=\(sweep [^)]*--duration (\d+)s`),
					tasks, g(`campaign=\(torture [^)]*--runs (\d+)`), g(`campaign=\(torture [^)]*--duration (\d+)s`)}
			}},
		{"cluster.md", `A third campaign \((\d+) runs\)`, func(t *testing.T) []string {
			return []string{sourceMatch(t, "../scripts/slurm/test.sh", `broken=\(torture [^)]*--runs (\d+)`)}
		}},

		// architecture.md: the commit pipe's queue and the send-buffer pool.
		{"architecture.md", `\((\d+) a record, between (\d+) and (\d+) MB\)`, func(t *testing.T) []string {
			mb := func(name string) string { return strconv.FormatInt(sourceConst(t, "harness", name).int()>>20, 10) }
			return []string{strconv.FormatInt(sourceConst(t, "harness", "pipeEntriesPerRecord").int(), 10), mb("minPipeQueueBytes"), mb("maxPipeQueueBytes")}
		}},
		{"architecture.md", `the pool holds at most (\d+) MB, or (\d+) KB a channel`, func(t *testing.T) []string {
			return []string{strconv.FormatInt(sourceConst(t, "engine/sim", "poolBytes").int()>>20, 10),
				strconv.FormatInt(sourceConst(t, "engine/sim", "poolBytesPerChannel").int()>>10, 10)}
		}},
		{"lineage.md", `The (\d+) workers have (\d+) cores each, so lineage runs (\d+) single-core executors`,
			is(strconv.Itoa(harness.DefaultWorkers), strconv.Itoa(cost.Cores), strconv.Itoa(harness.DefaultWorkers*cost.Cores))},
		{"workloads.md", `instance 0 \(here views/0\) at (\d+)% of the run`, is(bareCrashPercent(t))},
		{"torture.md", `--shrink K, default (\d+)`, func(t *testing.T) []string {
			return []string{sourceMatch(t, "../benchcli/torture.go", `Name: "shrink", Value: (\d+)`)}
		}},

		// torture.md and reproductions.md: defaults they lean on.
		{"torture.md", `--shrink-budget runs \(default (\d+)\)`, is(strconv.Itoa(torture.DefaultShrinkBudget))},
		{"torture.md", `At Poisson instants, (\d+) per simulated second`, is(num(harness.DefaultReadRate))},
		{"torture.md", `(\d+) s would outlast the drain`, is(strings.TrimSuffix(flag(t, "stormack", "ack-timeout"), "s"))},
		{"reproductions.md", `Kafka's default max.poll.records (\d+)`, is(flag(t, "stormack", "max-poll-records"))},
		{"reproductions.md", `\(store-latency, (\d+) ms\)`, is(ms(cost.StoreLatency, engine.Millisecond))},
		{"reproductions.md", `(\d+) ns a byte`, is(ms(cost.SerdePerByte, engine.Nanosecond))},
		{"reproductions.md", `need (\d+) whole cycles, (\d+) s at a 3 s interval`, is(strconv.Itoa(metrics.MinTrendSamples), strconv.Itoa(3*metrics.MinTrendSamples))},
		{"reproductions.md", `none: [\d ]+ records/s, the cost-model bound ([\d ]+)`, func(t *testing.T) []string {
			cfg := harness.DefaultConfig()
			cfg.System, cfg.Workload, cfg.WorkloadOpts = "none", "bank", map[string]string{"accounts": "100000"}
			cfg.Parallelism, cfg.Workers = 2, 2
			return []string{grouped(int64(math.Round(bound(t, cfg))), " ")}
		}},

		// performance.md: the default rate of the main job.
		{"performance.md", `the main job \(20 s of input at (\d+) k records/s`, is(num(math.Round(mainJobRate(t) / 1000)))},
		{"performance.md", `\(it is (\d+) k now\)`, is(num(math.Round(mainJobRate(t) / 1000)))},

		// architecture.md, workloads.md, live.md: the runtimes' constants.
		{"architecture.md", `A process runs in slices of at most quantum \((\d+) ms\)`, is(ms(cost.Quantum, engine.Millisecond))},
		{"architecture.md", `hands it commits in batches of ([\d ]+),`, is(grouped(sourceConst(t, "harness", "pipeBatch").int(), " "))},
		{"architecture.md", `steps of about ([\d ]+) records`, is(grouped(sourceConst(t, "harness", "oracleStepRecords").int(), " "))},
		{"architecture.md", `up to (\d+) evenly spaced points of the log and at its end, at most 2\^(\d+) keys`,
			is(strconv.FormatInt(sourceConst(t, "workloads", "maxMilestones").int(), 10), strconv.Itoa(log2(sourceConst(t, "workloads", "milestoneKeys").int())))},
		{"architecture.md", `A process takes up to (\d+) consecutive messages`, is(strconv.FormatInt(sourceConst(t, "engine/live", "maxBatch").int(), 10))},
		{"live.md", `a lock per (\d+) messages taken`, is(strconv.FormatInt(sourceConst(t, "engine/live", "maxBatch").int(), 10))},
		{"workloads.md", `at most check.MaxSubs \((\d+)\)`, is(strconv.Itoa(check.MaxSubs))},
		{"workloads.md", `Fan-out gives sub-indices 0..n-1 \(n ≤ (\d+)\)`, is(strconv.Itoa(check.MaxSubs))},
	} {
		t.Run(c.file+" "+c.re, func(t *testing.T) {
			p := page(t, c.file)
			ms := regexp.MustCompile(c.re).FindAllStringSubmatch(p, -1)
			if len(ms) == 0 {
				t.Fatalf("%s does not say %q any more: reword the claim here too", c.file, c.re)
			}
			for _, m := range ms {
				want := tolerance(m[1:])
				if c.want != nil {
					want = c.want(t)
				}
				if !slices.Equal(m[1:], want) {
					t.Errorf("%s says %q: %q, the code %q", c.file, m[0], m[1:], want)
				}
			}
		})
	}
}

// Every name of a registry appears in the pages that list them all.
func TestListsNameEveryOne(t *testing.T) {
	var variants []string
	for _, name := range systems.Names() {
		s, _ := systems.Lookup(name)
		for _, v := range s.Variants() {
			variants = append(variants, name+"/"+v)
		}
	}
	for _, c := range []struct {
		file, from, to string // the list lies between these two texts
		names          []string
	}{
		{"architecture.md", "## Faults", "## What is checked", faultKinds()},
		{"architecture.md", "## Workloads", "## The systems", workloads.Names()},
		{"architecture.md", "## The systems, as their sources describe them", "## Faults", systems.Names()},
		{"metrics.md", "### Workloads and defaults", "### Large state", workloads.Names()},
		{"contributing.md", "systems/* is every child of systems/", "and a new one", systems.Names()},
		{"torture.md", "### Two-part claims", "*Monotonic*", systems.Names()},
		{"sweeps.md", "Metrics per point:", "every numeric leaf", runMetrics()},
	} {
		p := page(t, c.file)
		i := strings.Index(p, c.from)
		j := strings.Index(p[max(i, 0):], c.to)
		if i < 0 || j < 0 {
			t.Errorf("%s has no list between %q and %q", c.file, c.from, c.to)
			continue
		}
		list := p[i : i+j]
		for _, n := range c.names {
			if !regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(n) + `($|[^\w-])`).MatchString(list) {
				t.Errorf("%s's list after %q does not name %s", c.file, c.from, n)
			}
		}
	}
	// contributing.md: scripts/samerun.sh's configurations run every
	// system and every variant but snapshot's naive.
	ran := map[string]bool{}
	for _, cfg := range samerunConfigs(t) {
		sys := regexp.MustCompile(`--system (\S+)`).FindStringSubmatch(cfg)
		v := regexp.MustCompile(`--variant (\S+)`).FindStringSubmatch(cfg)
		if sys == nil {
			t.Fatalf("samerun.sh configuration %q has no --system", cfg)
		}
		s, err := systems.Lookup(sys[1])
		if err != nil {
			t.Fatal(err)
		}
		variant := s.Variants()[0]
		if v != nil {
			variant = v[1]
		}
		ran[sys[1]+"/"+variant] = true
	}
	if !strings.Contains(page(t, "contributing.md"), "every system, every variant but snapshot's naive") {
		t.Error("contributing.md no longer says which variants samerun.sh runs: reword this check too")
	}
	for _, v := range variants {
		if !ran[v] && v != "snapshot/naive" {
			t.Errorf("scripts/samerun.sh runs no %s, but contributing.md says it runs every variant but snapshot's naive", v)
		}
	}
}

// performance.md's "Default rates at any parallelism": each row's rate is
// what a default barrier run gets at that parallelism and worker count.
// (Its lag slopes are simulated too, but need the full runs, 40 s of wall
// time at P = 64: they stay figures with their command.)
func TestDefaultRatesTable(t *testing.T) {
	p := page(t, "performance.md")
	i := strings.Index(p, "### Default rates at any parallelism")
	if i < 0 {
		t.Fatal("performance.md has no section \"Default rates at any parallelism\"")
	}
	row := regexp.MustCompile(`\| (\d+) \| (\d+) \| ([\d ]+) \| [-+][\d.]+ \|`)
	rows := row.FindAllStringSubmatch(p[i:], -1)
	if len(rows) < 3 {
		t.Fatalf("found %d rows in the default-rates table: is the pattern still right?", len(rows))
	}
	for _, r := range rows {
		cfg := harness.DefaultConfig()
		cfg.System = "barrier"
		cfg.Parallelism, _ = strconv.Atoi(r[1])
		cfg.Workers, _ = strconv.Atoi(r[2])
		if want := grouped(int64(rate(t, cfg)), " "); strings.TrimSpace(r[3]) != want {
			t.Errorf("P = %s, W = %s: the table says %s records/s, harness.DefaultRate %s", r[1], r[2], r[3], want)
		}
	}
}

// reproductions.md's capacity table: the cost-model bound column is
// harness.CapacityBound of grep at each record size.
func TestCapacityBoundColumn(t *testing.T) {
	p := page(t, "reproductions.md")
	row := regexp.MustCompile(`\| (\d+) B \| (?:[\d ]+ \| ){5}([\d ]+) \|`)
	rows := row.FindAllStringSubmatch(p, -1)
	if len(rows) != 2 {
		t.Fatalf("found %d rows in the grep capacity table, want 2: is the pattern still right?", len(rows))
	}
	for _, r := range rows {
		cfg := harness.DefaultConfig()
		cfg.Workload, cfg.WorkloadOpts = "grep", map[string]string{"record-size": r[1]}
		if want := grouped(int64(math.Round(bound(t, cfg))), " "); strings.TrimSpace(r[2]) != want {
			t.Errorf("grep at %s B: the table's bound is %s records/s, harness.CapacityBound %s", r[1], r[2], want)
		}
	}
}

// A sweep whose run count a page states makes that many runs: the grid of
// its command, expanded as bench sweep expands it.
func TestSweepRunCounts(t *testing.T) {
	found := 0
	files, _ := filepath.Glob("*.md")
	for _, name := range append(files, "../README.md") {
		p := page(t, name)
		claim := regexp.MustCompile(`a sweep of (\d+) runs \(([^)]*)\)[^|]*\| [^|]*\| (?:/usr/bin/time )?(bench sweep [^|]*?) \|`)
		for _, m := range claim.FindAllStringSubmatch(p, -1) {
			found++
			want, _ := strconv.Atoi(m[1])
			g := expandCommand(t, m[3])
			if len(g.Runs) != want {
				t.Errorf("%s: %q makes %d runs, not %d", name, m[3], len(g.Runs), want)
			}
			// The product given beside the count (before any comma).
			product, _, _ := strings.Cut(m[2], ",")
			factors := regexp.MustCompile(`(\d+) \w+`).FindAllStringSubmatch(product, -1)
			prod := 1
			for _, f := range factors {
				n, _ := strconv.Atoi(f[1])
				prod *= n
			}
			if len(factors) < 2 || prod != want {
				t.Errorf("%s: %q is not a product that makes %d", name, product, want)
			}
		}
	}
	if found == 0 {
		t.Error("no page states a sweep's run count: is the pattern still right?")
	}
}

// expandCommand expands a bench sweep command's grid: --system, --param
// and --seeds (other flags do not change the number of runs).
func expandCommand(t *testing.T, cmd string) *sweep.Grid {
	t.Helper()
	words := strings.Fields(strings.ReplaceAll(cmd, "'", ""))
	m := &sweep.Manifest{Base: harness.DefaultConfig(), Seeds: []uint64{1}}
	m.Base.System, m.Base.Seed = "", 0
	for i := 2; i+1 < len(words); i++ {
		var err error
		switch words[i] {
		case "--system":
			m.Targets, err = sweep.ParseTargets(words[i+1])
		case "--param":
			var p sweep.Param
			p, err = sweep.ParseParam(words[i+1])
			m.Params = append(m.Params, p)
		case "--seeds":
			m.Seeds, err = sweep.ParseSeeds(words[i+1])
		}
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	g, err := m.Expand()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return g
}

// tolerance is a row of sweeps.md's baseline example with its figures
// from sweep.DefaultTolerance (the claims table's nil want).
func tolerance(row []string) []string {
	tol := sweep.DefaultTolerance()[row[0]]
	return []string{row[0], num(tol.Rel), num(tol.Abs)}
}

// runMetrics are the metrics every point of a curve has (sweep.RunMetrics
// of a run without system metrics or counters).
func runMetrics() []string {
	var out []string
	for k := range sweep.RunMetrics(&harness.Result{}) {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// faultKinds are the fault kinds' names (faults.Kinds describes each,
// its name first).
func faultKinds() []string {
	var out []string
	for _, k := range faults.Kinds() {
		out = append(out, strings.Fields(k)[0])
	}
	return out
}

// is wants exactly these figures.
func is(figures ...string) func(*testing.T) []string {
	return func(*testing.T) []string { return figures }
}

// ms is d in whole units of unit ("8" for 8 s in seconds).
func ms(d, unit engine.Time) string { return num(float64(d) / float64(unit)) }

// num writes x as the docs do: no exponent, no trailing zeros.
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// grouped writes n with its thousands separated by sep ("122 022").
func grouped(n int64, sep string) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + sep + s[i:]
	}
	return s
}

func word(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	if n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// secondWord is "second" for a default of 1s, the word the page uses.
func secondWord(d string) string {
	if d == "1s" {
		return "second"
	}
	return d
}

func log2(n int64) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// flag is a system option's default.
func flag(t *testing.T, system, name string) string {
	t.Helper()
	s, err := systems.Lookup(system)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Flags() {
		if f.Name == name {
			return f.Default
		}
	}
	t.Fatalf("%s has no option --%s", system, name)
	return ""
}

// option is a workload option's default.
func option(t *testing.T, workload, name string) string {
	t.Helper()
	f, ok := workloads.Lookup(workload)
	if !ok {
		t.Fatalf("no workload %s", workload)
	}
	for _, o := range f.Options {
		if o.Name == name {
			return o.Default
		}
	}
	t.Fatalf("%s has no option --%s", workload, name)
	return ""
}

func rate(t *testing.T, cfg harness.Config) float64 {
	t.Helper()
	r, err := harness.DefaultRate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bound(t *testing.T, cfg harness.Config) float64 {
	t.Helper()
	b, err := harness.CapacityBound(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mainJobRate is the main job's default rate (bench run --system barrier).
func mainJobRate(t *testing.T) float64 {
	cfg := harness.DefaultConfig()
	cfg.System = "barrier"
	return rate(t, cfg)
}

// bareCrashPercent is when a bare --fault crash strikes, in percent of the
// input.
func bareCrashPercent(t *testing.T) string {
	t.Helper()
	d := 100 * engine.Second
	s, err := faults.Parse("crash", faults.Defaults{Duration: d, StatefulOp: "count", UpstreamOp: "split"})
	if err != nil {
		t.Fatal(err)
	}
	return num(100 * float64(s.At) / float64(d))
}

// baselines are the committed regression baselines (scripts/regress.sh's
// sweeps, one file each), by file name.
func baselines(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../results/baseline/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no baselines in results/baseline: %v", err)
	}
	b, err := os.ReadFile("../scripts/regress.sh")
	if err != nil {
		t.Fatal(err)
	}
	sweeps := regexp.MustCompile(`(?m)^sweep (\S+) `).FindAllStringSubmatch(string(b), -1)
	if len(sweeps) != len(files) {
		t.Errorf("scripts/regress.sh runs %d sweeps, results/baseline holds %d baselines", len(sweeps), len(files))
	}
	var names []string
	for _, s := range sweeps {
		names = append(names, s[1]+".json")
	}
	return names
}

// samerunConfigs are scripts/samerun.sh's default configurations.
func samerunConfigs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../scripts/samerun.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)default_configs=\$\(cat <<'CFG'\n(.*?)\nCFG`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/samerun.sh has no default_configs here-document")
	}
	var out []string
	for _, l := range strings.Split(string(m[1]), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// sourceMatch is the first group of re's first match in a file of the
// repository (a script's flags, a flag's default in package main).
func sourceMatch(t *testing.T, file, re string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(re).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no match for %q any more: read it anew", file, re)
	}
	return string(m[1])
}

// value is a Go constant's value.
type value struct{ constant.Value }

func (v value) int() int64 {
	n, ok := constant.Int64Val(constant.ToInt(v.Value))
	if !ok {
		panic(fmt.Sprintf("%v is not an integer", v.Value))
	}
	return n
}

// shift is 1 << v.
func (v value) shift() int64 { return 1 << v.int() }

// sourceConst evaluates a package-level constant of the module's package
// pkg from its source, for figures the docs give of unexported constants:
// its expression may use literals, operators and the package's other
// constants.
func sourceConst(t *testing.T, pkg, name string) value {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]ast.Expr{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						exprs[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	var eval func(e ast.Expr) constant.Value
	eval = func(e ast.Expr) constant.Value {
		switch e := e.(type) {
		case *ast.BasicLit:
			return constant.MakeFromLiteral(e.Value, e.Kind, 0)
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.UnaryExpr:
			return constant.UnaryOp(e.Op, eval(e.X), 0)
		case *ast.BinaryExpr:
			if e.Op == token.SHL || e.Op == token.SHR {
				n, _ := constant.Uint64Val(eval(e.Y))
				return constant.Shift(eval(e.X), e.Op, uint(n))
			}
			return constant.BinaryOp(eval(e.X), e.Op, eval(e.Y))
		case *ast.Ident:
			if x, ok := exprs[e.Name]; ok {
				return eval(x)
			}
		case *ast.SelectorExpr: // engine's units
			if x, ok := e.X.(*ast.Ident); ok && x.Name == "engine" {
				if u, ok := map[string]engine.Time{"Nanosecond": engine.Nanosecond, "Microsecond": engine.Microsecond,
					"Millisecond": engine.Millisecond, "Second": engine.Second}[e.Sel.Name]; ok {
					return constant.MakeInt64(int64(u))
				}
			}
		}
		t.Fatalf("%s.%s: cannot evaluate %T", pkg, name, e)
		return nil
	}
	e, ok := exprs[name]
	if !ok {
		t.Fatalf("package %s has no constant %s", pkg, name)
	}
	return value{eval(e)}
}

// lineage.md's options table is lineage's options: each with its default,
// every option once, and the default variant.
func TestLineageOptionsTable(t *testing.T) { optionsTable(t, "lineage") }

// optionsTable checks that system's page, <system>.md, has an options
// table of its options: each with its default, every option once, and the
// default variant.
func optionsTable(t *testing.T, system string) {
	t.Helper()
	s, err := systems.Lookup(system)
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`\| --([a-z-]+) \| (\S+)`).FindAllStringSubmatch(page(t, system+".md"), -1)
	want := map[string]string{"variant": s.Variants()[0]}
	for _, f := range s.Flags() {
		want[f.Name] = f.Default
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r[1]] = true
		if def, ok := want[r[1]]; !ok {
			t.Errorf("%s.md's table has --%s, which %s does not take", system, r[1], system)
		} else if r[2] != def {
			t.Errorf("--%s: the table says %s, %s's default is %s", r[1], r[2], system, def)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s.md's options table has no row for --%s", system, name)
		}
	}
}
