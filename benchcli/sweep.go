package benchcli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/sweep"
	"ftbench/systems"
	"ftbench/workloads"
)

// repeated is a repeatable flag whose values are kept whole: fault specs
// and --param lists contain commas, which cli's slice flags would split.
type repeated struct{ vals []string }

func (r *repeated) Set(v string) error { r.vals = append(r.vals, v); return nil }
func (r *repeated) String() string     { return strings.Join(r.vals, " ") }

func repeatedValues(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeated); ok {
		return r.vals
	}
	return nil
}

// gridFlags are the flags of commands that run a grid (compare, sweep): the
// run flags, with --system taking a list and --fault/--cost kept whole,
// plus the execution flags.
func gridFlags(defaultSystem, outUsage string) []cli.Flag {
	var flags []cli.Flag
	for _, f := range runFlags() {
		switch f.Names()[0] {
		case "system":
			flags = append(flags, &cli.StringFlag{Name: "system", Value: defaultSystem,
				Usage: "systems: NAME, NAME/VARIANT, NAME/* (every variant), all, all/* — comma-separated"},
				&cli.GenericFlag{Name: "config", Value: &repeated{},
					Usage: "one configuration instead of --system, repeatable: a system (NAME or NAME/VARIANT) and run flags for it alone, " +
						"quoted as one argument: 'barrier --sink plain'; the flags outside --config apply to every configuration"})
		case "fault":
			flags = append(flags, &cli.GenericFlag{Name: "fault", Value: &repeated{},
				Usage: "fault spec, repeatable, kept whole (commas allowed; see bench list)"})
		case "cost":
			flags = append(flags, &cli.GenericFlag{Name: "cost", Value: &repeated{},
				Usage: "cost-model override name=value (or operator.name=value) for every run, repeatable (see bench list --costs)"})
		case "variant":
			// Variants are given with the system: --system barrier/unaligned.
		default:
			flags = append(flags, f)
		}
	}
	return append(flags,
		&cli.StringFlag{Name: "out", Usage: outUsage},
		&cli.IntFlag{Name: "jobs", Value: runtime.NumCPU(), Usage: "runs executed in parallel", DefaultText: "all cores"},
	)
}

// manifestFrom reads a grid's base configuration and targets from the
// flags. Options given for some systems apply to the systems that have
// them; an option no listed system has is an error.
func manifestFrom(c *cli.Context) (*sweep.Manifest, error) {
	targets, err := targetsFrom(c)
	if err != nil {
		return nil, err
	}
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Seed = "", 0
	cfg.Workload = c.String("workload")
	if _, ok := workloads.Lookup(cfg.Workload); !ok {
		return nil, usageErr("unknown workload %q (have %s)", cfg.Workload, strings.Join(workloads.Names(), ", "))
	}
	cfg.Faults = repeatedValues(c, "fault")
	if cfg.CostOverride, err = withHardware(c, repeatedValues(c, "cost")); err != nil {
		return nil, err
	}
	cfg.Parallelism = c.Int("parallelism")
	cfg.Workers = c.Int("workers")
	if c.IsSet("cores") {
		cfg.Cores = c.Int("cores")
	}
	if c.IsSet("slots") {
		cfg.Slots = c.Int("slots")
	}
	if cfg.Runtime, cfg.Work, err = runtimeFlags(c); err != nil {
		return nil, err
	}
	if cfg.Duration, err = parseDuration("duration", c.String("duration")); err != nil {
		return nil, err
	}
	if c.IsSet("drain") {
		if cfg.Drain, err = parseDuration("drain", c.String("drain")); err != nil {
			return nil, err
		}
	}
	rate, err := parseRate(c)
	if err != nil {
		return nil, err
	}
	cfg.Rate = rate
	switch {
	case cfg.Parallelism < 1 || cfg.Parallelism > 256:
		return nil, usageErr("--parallelism must be from 1 to 256, got %d", cfg.Parallelism)
	case cfg.Workers < 1 || cfg.Workers > 256:
		return nil, usageErr("--workers must be from 1 to 256, got %d", cfg.Workers)
	case c.IsSet("cores") && (cfg.Cores < 1 || cfg.Cores > 1024):
		return nil, usageErr("--cores must be from 1 to 1024, got %d", cfg.Cores)
	case c.IsSet("slots") && (cfg.Slots < 1 || cfg.Slots > 65536):
		return nil, usageErr("--slots must be from 1 to 65536, got %d", cfg.Slots)
	}
	cm := engine.DefaultCost()
	for _, o := range cfg.CostOverride {
		if err := cm.Set(o); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	// Fault syntax is checked now; operator names when each run compiles.
	for _, f := range cfg.Faults {
		if _, err := faults.Parse(f, faults.Defaults{Duration: cfg.Duration, StatefulOp: "op", UpstreamOp: "up"}); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	cfg.SystemOpts = map[string]string{}
	for _, f := range systems.AllFlags() {
		if !c.IsSet(f.Name) {
			continue
		}
		applies := false
		for _, t := range targets {
			sys, _ := systems.Lookup(t.System)
			for _, sf := range sys.Flags() {
				applies = applies || sf.Name == f.Name
			}
		}
		if !applies {
			return nil, usageErr("--%s does not apply to any of the systems %s", f.Name, targetNames(targets))
		}
		cfg.SystemOpts[f.Name] = c.String(f.Name)
	}
	cfg.WorkloadOpts = map[string]string{}
	for _, name := range workloads.Names() {
		fac, _ := workloads.Lookup(name)
		for _, o := range fac.Options {
			if c.IsSet(o.Name) {
				cfg.WorkloadOpts[o.Name] = c.String(o.Name)
			}
		}
	}
	return &sweep.Manifest{Base: cfg, Targets: targets, Params: []sweep.Param{}}, nil
}

// targetsFrom reads what a grid runs: the --config configurations, or else
// the --system list.
func targetsFrom(c *cli.Context) ([]sweep.Target, error) {
	configs := repeatedValues(c, "config")
	if len(configs) == 0 {
		targets, err := sweep.ParseTargets(c.String("system"))
		if err != nil {
			return nil, usageErr("%v", err)
		}
		return targets, nil
	}
	if c.IsSet("system") {
		return nil, usageErr("give --system or --config, not both (a --config names its system)")
	}
	var targets []sweep.Target
	for _, s := range configs {
		t, err := sweep.ParseConfig(s)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

func targetNames(ts []sweep.Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.System+"/"+t.Variant)
	}
	return strings.Join(s, ", ")
}

func sweepCommand() *cli.Command {
	flags := append(gridFlags("none", "results folder (default results/sweep-TIMESTAMP)"),
		&cli.GenericFlag{Name: "param", Value: &repeated{},
			Usage: "swept parameter NAME=V1,V2,..., repeatable: a run option (rate, duration, parallelism, workers, drain, bucket, " +
				"variant, workload, fault with values separated by ';'), a system or workload option (checkpoint-interval=1s,2s; " +
				"topology's values are separated by ';'), " +
				"or a cost-model parameter (cost.restart-delay=1s,2s)"},
		&cli.StringFlag{Name: "seeds", Usage: "seeds of every point, like 1-5 or 1,3,7 (default: --seed)"},
		&cli.BoolFlag{Name: "resume", Usage: "keep the runs already in --out and run only the missing ones"},
	)
	flags = append(flags, shardFlags("points (every N-th point from the I-th)")...)
	return &cli.Command{
		Name:  "sweep",
		Usage: "run a grid of parameter values x systems x seeds in parallel and aggregate it into a curve file",
		UsageText: "bench sweep --system barrier,lineage --param checkpoint-interval=1s,2s,5s --seeds 1-5 --fault crash [--out DIR] [--resume] [--shard I/N]\n\n" +
			"Writes one run folder per run, DIR/sweep.json (the grid), and DIR/curve.json + DIR/curve.csv (median and spread over seeds per point).",
		Flags: flags,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench sweep takes no arguments, got %q (parameters are --param NAME=V1,V2)", c.Args().First())
			}
			m, err := manifestFrom(c)
			if err != nil {
				return err
			}
			for _, p := range repeatedValues(c, "param") {
				param, err := sweep.ParseParam(p)
				if err != nil {
					return usageErr("%v", err)
				}
				m.Params = append(m.Params, param)
			}
			if m.Seeds, err = seedsFrom(c); err != nil {
				return err
			}
			out := c.String("out")
			if out == "" {
				out = "results/sweep-" + time.Now().UTC().Format("20060102T150405")
			}
			if m.Shard, out, err = shardFrom(c, out); err != nil {
				return err
			}
			m.Command = commandLine(c)
			o, err := executeGrid(c, out, m)
			if err != nil {
				return err
			}
			w := c.App.Writer
			printCurve(w, o.Curve)
			fmt.Fprintf(w, "curve:   %s/%s and %s/%s\n", out, sweep.CurveJSON, out, sweep.CurveCSV)
			fmt.Fprintf(w, "report:  bench report %s\n", out)
			return gridExit(o, false)
		},
	}
}

// shardFlags are --shard and --shard-count, for sweep and torture; what
// names the units sharded.
func shardFlags(what string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "run only shard I/N of the " + what + "; join shards with bench merge. " +
			"auto: the shard of this task of a Slurm job array or a Kubernetes Indexed Job, written to --out/shard-I-of-N"},
		&cli.IntFlag{Name: "shard-count", Usage: "with --shard auto in a Kubernetes Indexed Job: the number of shards (the Job's completions)"},
	}
}

// shardFrom reads --shard (nil without it). With --shard auto the shard
// comes from the scheduler's environment, and the results go to a folder
// of the shard's own under out, since every task of an array runs the same
// command line with the same --out.
func shardFrom(c *cli.Context, out string) (*sweep.Shard, string, error) {
	if c.IsSet("shard-count") && c.String("shard") != "auto" {
		return nil, out, usageErr("--shard-count is only for --shard auto (a Kubernetes Indexed Job)")
	}
	if !c.IsSet("shard") {
		return nil, out, nil
	}
	if c.String("shard") != "auto" {
		sh, err := sweep.ParseShard(c.String("shard"))
		if err != nil {
			return nil, out, usageErr("%v", err)
		}
		return &sh, out, nil
	}
	if c.IsSet("shard-count") && c.Int("shard-count") < 1 {
		return nil, out, usageErr("--shard-count must be at least 1, got %d", c.Int("shard-count"))
	}
	sh, err := sweep.ShardFromEnv(os.Getenv, c.Int("shard-count"))
	if err != nil {
		return nil, out, usageErr("%v", err)
	}
	if !c.IsSet("out") {
		return nil, out, usageErr("--shard auto needs --out DIR, the results folder all shards share (each writes DIR/shard-I-of-N)")
	}
	return &sh, sweep.ShardDir(out, sh), nil
}

func seedsFrom(c *cli.Context) ([]uint64, error) {
	if c.IsSet("seeds") && c.IsSet("seed") {
		return nil, usageErr("give --seeds or --seed, not both")
	}
	s := c.String("seed")
	if c.IsSet("seeds") {
		s = c.String("seeds")
	}
	seeds, err := sweep.ParseSeeds(s)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return seeds, nil
}

// executionFlags say where and how a grid runs, not what it is: they are
// left out of the recorded command, so every shard of a grid and their
// merge record the same command and a merged curve.json is byte-identical
// to the unsharded sweep's.
var executionFlags = map[string]bool{"out": true, "jobs": true, "resume": true, "shard": true, "shard-count": true, "no-budget": true}

// commandLine reconstructs the command for the manifest and curve (what the
// results are results of).
func commandLine(c *cli.Context) string {
	args := []string{"bench", c.Command.Name}
	seen := map[string]bool{}
	for _, name := range c.FlagNames() {
		if !c.IsSet(name) || seen[name] || executionFlags[name] {
			continue
		}
		seen[name] = true
		switch v := c.Generic(name).(type) {
		case *repeated:
			for _, x := range v.vals {
				args = append(args, "--"+name, shellWord(x))
			}
			continue
		}
		if b, ok := c.Value(name).(bool); ok {
			if b {
				args = append(args, "--"+name)
			}
			continue
		}
		args = append(args, "--"+name, shellWord(fmt.Sprint(c.Value(name))))
	}
	return strings.Join(args, " ")
}

func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '@' || r == ',' || r == '=' || r == '%' || r == '*' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// executeGrid runs a manifest with progress output: a bar with an ETA on a
// terminal, one plain line per run otherwise. Notes go to stderr.
func executeGrid(c *cli.Context, out string, m *sweep.Manifest) (*sweep.Outcome, error) {
	w, ew := c.App.Writer, c.App.ErrWriter
	jobs := c.Int("jobs")
	if m.Base.Runtime == harness.RuntimeLive && !c.IsSet("jobs") {
		jobs = 1 // live runs compete for the machine's real cores
	}
	if jobs < 1 {
		return nil, usageErr("--jobs must be at least 1, got %d", jobs)
	}
	jobs, err := validateGrid(c, m, jobs)
	if err != nil {
		return nil, err
	}
	if err := checkOut("out", out); err != nil {
		return nil, err
	}
	var bar *progressbar.ProgressBar
	var mu sync.Mutex
	opts := sweep.Options{
		Jobs:   jobs,
		Resume: c.Bool("resume"),
		Notice: func(s string) {
			mu.Lock()
			defer mu.Unlock()
			if bar != nil {
				_ = bar.Clear()
			}
			fmt.Fprintln(ew, "bench: note: "+s)
		},
	}
	started := time.Now()
	if isTerminal(w) {
		opts.Start = func(todo, total int) {
			mu.Lock()
			defer mu.Unlock()
			if todo == 0 {
				return
			}
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true), progressbar.OptionSetElapsedTime(true),
				progressbar.OptionSetDescription("runs"), progressbar.OptionSetWidth(40), progressbar.OptionClearOnFinish(),
				progressbar.OptionSetRenderBlankState(true))
			_ = bar.Set(total - todo)
		}
		opts.Progress = func(p sweep.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.Err != nil {
				_ = bar.Clear()
				fmt.Fprintf(ew, "bench: run failed: %s seed %d: %s\n", p.Run.Point.ID(), p.Run.Seed, firstLine(p.Err.Error()))
			}
			_ = bar.Set(p.Done)
		}
	} else {
		opts.Progress = func(p sweep.Progress) {
			status := fmt.Sprintf("done in %.1fs", p.Wall.Seconds())
			if p.Err != nil {
				status = "FAILED: " + firstLine(p.Err.Error())
			}
			eta := ""
			if p.Done < p.Total {
				eta = fmt.Sprintf("  (ETA %s)", p.ETA.Round(time.Second))
			}
			fmt.Fprintf(w, "[%d/%d] %s seed %d: %s%s\n", p.Done, p.Total, p.Run.Point.ID(), p.Run.Seed, status, eta)
		}
	}
	o, err := sweep.Execute(out, m, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		if sweep.IsInputError(err) {
			return nil, usageErr("%v", err)
		}
		return nil, &exitError{code: harness.ExitInternal, msg: err.Error()}
	}
	failed := 0
	for _, r := range o.Runs {
		if r.Failed != nil {
			failed++
		}
	}
	fmt.Fprintf(w, "%d runs in %s: %d executed (%d failed), %d already done; results in %s\n",
		len(o.Runs), time.Since(started).Round(100*time.Millisecond), o.Executed, failed, len(o.Runs)-o.Executed, out)
	return o, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// gridExit turns a finished grid into an exit code. Runs that failed
// internally exit 1; when every run was refused as bad input, the common
// reason exits 2. With runCodes (compare), the most severe run exit code
// (3 a broken claim, 4 not recovered) is the command's, as for bench run.
// Without (sweep), 3 if any run broke a safety claim and else 4 if any
// stopped undrained: a sweep (the CI regression) must not pass over either.
// A run that only did not recover within the run is a measurement there
// (recovery_time_s null), compared by regress, not a failure of the sweep.
func gridExit(o *sweep.Outcome, runCodes bool) error {
	var internal, input []*sweep.FailedRun
	code := 0
	var broken, undrained []*sweep.RunOutcome
	for _, r := range o.Runs {
		switch {
		case r.Failed != nil && r.Failed.Input:
			input = append(input, r.Failed)
		case r.Failed != nil:
			internal = append(internal, r.Failed)
		case runCodes && r.Result.ExitCode == harness.ExitSafety:
			code = harness.ExitSafety
		case runCodes && r.Result.ExitCode == harness.ExitLiveness && code == 0:
			code = harness.ExitLiveness
		case !runCodes && r.Result.ExitCode == harness.ExitSafety:
			broken = append(broken, r)
		case !runCodes && r.Result.Undrained():
			undrained = append(undrained, r)
		}
	}
	switch {
	case len(internal) > 0, len(input) > 0 && len(input) == len(o.Runs):
	case len(broken) > 0:
		return &exitError{code: harness.ExitSafety, msg: gridProblem(len(broken), "broke a claim", broken[0])}
	case len(undrained) > 0:
		return &exitError{code: harness.ExitLiveness, msg: gridProblem(len(undrained), "stopped undrained", undrained[0])}
	}
	if len(internal) > 0 {
		f := internal[0]
		return &exitError{code: harness.ExitInternal, msg: fmt.Sprintf("%d run(s) failed with an internal error, first %s seed %d (%s): %s",
			len(internal), f.Point, f.Seed, f.Replay, firstLine(f.Error))}
	}
	if len(input) > 0 && len(input) == len(o.Runs) {
		return usageErr("every run was refused: %s", firstLine(input[0].Error))
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// gridProblem names how many runs of a sweep failed how, and the first.
func gridProblem(n int, how string, first *sweep.RunOutcome) string {
	r := first.Result
	problem := ""
	if len(r.Problems) > 0 {
		problem = ": " + firstLine(r.Problems[0])
	}
	return fmt.Sprintf("%d run(s) %s, first %s seed %d%s; replay: %s", n, how, first.Run.Point.ID(), first.Run.Seed, problem, r.Replay)
}

// printCurve prints the medians of the core metrics per point.
func printCurve(w io.Writer, c *sweep.Curve) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tseeds\trecovery s\tthroughput rec/s\tp50 ms\tp99 ms\tduplicates\tlost\twrong keys\tverdicts\t")
	for _, p := range c.Points {
		med := func(name string) string {
			s, ok := p.Metrics[name]
			if p.NoFault && strings.HasSuffix(name, "recovery_time_s") {
				return "n/a" // no fault to recover from
			}
			if !ok || s.Median == nil {
				if ok && s.Null > 0 && strings.HasSuffix(name, "recovery_time_s") {
					return "never"
				}
				return "n/a"
			}
			txt := formatNumber(*s.Median)
			if s.Null > 0 && strings.HasSuffix(name, "recovery_time_s") {
				txt += fmt.Sprintf(" (%d never)", s.Null)
			} else if s.Null > 0 {
				txt += fmt.Sprintf(" (%d n/a)", s.Null)
			}
			return txt
		}
		seeds := fmt.Sprintf("%d", len(p.Seeds))
		if len(p.Failed) > 0 {
			seeds += fmt.Sprintf(" +%d failed", len(p.Failed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.ID, seeds, med("recovery_time_s"), med("throughput_rps"),
			med("latency_p50_ms"), med("latency_p99_ms"), med("duplicates"), med("lost"), med("wrong_keys"), verdicts(p))
	}
	tw.Flush()
	for _, p := range c.Points {
		for _, f := range p.Failed {
			fmt.Fprintf(w, "failed:  %s seed %d: %s\n", p.ID, f.Seed, f.Error)
		}
	}
	if len(c.Missing) > 0 {
		fmt.Fprintf(w, "missing: %d point(s) without results: %s\n", len(c.Missing), strings.Join(c.Missing, "; "))
	}
}

func verdicts(p *sweep.CurvePoint) string {
	seen := map[string]bool{}
	var vs []string
	for _, v := range p.Verdicts {
		if !seen[v] {
			seen[v] = true
			vs = append(vs, v)
		}
	}
	s := strings.Join(vs, ",")
	if len(vs) > 0 && !p.Held {
		s += " (claim " + p.Claimed + " BROKEN)"
	}
	if p.Undrained > 0 {
		s += fmt.Sprintf(" (%d undrained)", p.Undrained)
	}
	return s
}

// formatNumber prints counts and large rates whole, small values with four
// significant digits.
func formatNumber(v float64) string {
	if v == float64(int64(v)) || v >= 1000 || v <= -1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
