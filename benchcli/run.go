package benchcli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/number"
	"ftbench/systems"
	"ftbench/torture"
	"ftbench/workloads"
)

// runFlags are the flags shared by every command that runs the harness.
// Usage strings hold no backticks: the CLI library would turn the quoted
// text into the flag's placeholder (--system bench list).
func runFlags() []cli.Flag {
	d := harness.DefaultConfig()
	flags := []cli.Flag{
		&cli.StringFlag{Name: "system", Value: d.System, Usage: "fault-tolerance system, NAME or NAME/VARIANT (see bench list)"},
		&cli.StringFlag{Name: "variant", Usage: "system variant, the same as --system NAME/VARIANT", DefaultText: "the system's first"},
		&cli.StringFlag{Name: "workload", Value: d.Workload, Usage: "workload (see bench list)"},
		&cli.StringSliceFlag{Name: "fault", Usage: "fault spec, repeatable (crash, slow, throttle, reorder, pause, partition, store-slow, store-down, source-down; see bench list)"},
		&cli.StringFlag{Name: "duration", Value: "20s", Usage: "simulated time during which input is appended"},
		&cli.StringFlag{Name: "rate", Value: "0", Usage: "source records/s over all partitions",
			DefaultText: "half the cost model's capacity bound on this hardware"},
		&cli.IntFlag{Name: "parallelism", Value: d.Parallelism, Usage: "instances per operator (and source partitions)"},
		&cli.IntFlag{Name: "workers", Value: d.Workers, Usage: "workers (machines), numbered from 0"},
		&cli.IntFlag{Name: "cores", Value: engine.DefaultCost().Cores, Usage: "cores per worker and on the master node, shared by the processes placed there"},
		&cli.IntFlag{Name: "slots", Usage: "processes each worker can host; spare slots let a failed worker's tasks be re-placed on live workers",
			DefaultText: "exactly what the placement uses: no spare"},
		&cli.StringFlag{Name: "seed", Value: "1", Usage: "run seed"},
		&cli.StringFlag{Name: "drain", Value: "10s", Usage: "longest simulated drain after the input ends"},
		&cli.StringFlag{Name: "bucket", Value: "100ms", Usage: "time-series bucket"},
		&cli.StringSliceFlag{Name: "cost", Usage: "cost-model override name=value, or operator.name=value for one operator (count.state-cpu=8us), repeatable (see bench list --costs)"},
		&cli.StringFlag{Name: "hardware", Usage: "named hardware profile: the cost-model values of a published testbed, applied before any --cost (see bench list --hardware)",
			DefaultText: "today's default cost model"},
		&cli.StringFlag{Name: "runtime", Value: harness.RuntimeSim, Usage: "sim (deterministic simulator) or live (goroutines, wall clock, real disk; not byte-reproducible)"},
		&cli.StringFlag{Name: "work", Usage: "live runtime only: how Work is paid: model (calibrated computation, default) or none (the bare implementation)"},
	}
	for _, f := range systems.AllFlags() {
		usage, def := systemOptionHelp(f)
		flags = append(flags, &cli.StringFlag{Name: f.Name, Value: f.Default, Usage: usage, DefaultText: def})
	}
	seen := map[string]bool{}
	for _, name := range workloads.Names() {
		fac, _ := workloads.Lookup(name)
		for _, o := range fac.Options {
			if !seen[o.Name] {
				seen[o.Name] = true
				flags = append(flags, &cli.StringFlag{Name: o.Name, Value: o.Default, Usage: o.Usage + " (workload option)"})
			}
		}
	}
	return append(flags, budgetFlag())
}

// systemOptionHelp is the usage of a system option: its text, without a
// leading "SYSTEM: " when one system takes it, then the systems that take
// it. The default is the flag's own unless the systems' defaults differ;
// then defText names each (and the flag's Value is never shown).
func systemOptionHelp(f systems.Flag) (usage, defText string) {
	var takers, defs, usages []string
	differ, different := false, false
	for _, name := range systems.Names() {
		sys, _ := systems.Lookup(name)
		for _, sf := range sys.Flags() {
			if sf.Name == f.Name {
				takers = append(takers, name)
				defs = append(defs, name+" "+sf.Default)
				differ = differ || sf.Default != f.Default
				text := strings.TrimPrefix(sf.Usage, name+": ")
				usages = append(usages, name+": "+text)
				different = different || sf.Usage != f.Usage
			}
		}
	}
	usage = f.Usage
	switch {
	case len(takers) == 1:
		usage = strings.TrimPrefix(usage, takers[0]+": ")
	case different:
		// Systems that share a flag name mean their own thing by it
		// (trident's --ackers refuses 0, stormack's turns acking off).
		usage = strings.Join(usages, "; ")
	}
	usage += " (system option of " + strings.Join(takers, ", ") + ")"
	if differ {
		defText = strings.Join(defs, ", ")
	}
	return usage, defText
}

// setDefaultText replaces the default the help shows for the named flags:
// a command that does not use a flag's Value says what it does instead.
func setDefaultText(flags []cli.Flag, text string, names ...string) []cli.Flag {
	for _, f := range flags {
		for _, n := range names {
			if f.Names()[0] != n {
				continue
			}
			switch f := f.(type) {
			case *cli.StringFlag:
				f.DefaultText = text
			case *cli.IntFlag:
				f.DefaultText = text
			}
		}
	}
	return flags
}

// parseRate reads --rate: a finite, non-negative number of records per
// second, positive when given (0, the default, picks the rate).
func parseRate(c *cli.Context) (float64, error) {
	rate, err := number.Float(c.String("rate"))
	if errors.Is(err, number.ErrNotFinite) {
		return 0, usageErr("--rate must be a finite number of records per second, got %s", c.String("rate"))
	}
	if err != nil {
		return 0, usageErr("--rate=%q: not a number of records per second", c.String("rate"))
	}
	if rate < 0 || (c.IsSet("rate") && rate == 0) {
		return 0, usageErr("--rate must be positive, got %s", c.String("rate"))
	}
	return rate, nil
}

func parseDuration(flag, s string) (engine.Time, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, usageErr("--%s=%q: not a duration (like 20s or 500ms)", flag, s)
	}
	if d <= 0 {
		return 0, usageErr("--%s must be positive, got %s", flag, s)
	}
	return engine.Time(d), nil
}

// runtimeFlags reads --runtime and --work. The simulator is the empty
// default, so replay lines, run keys and manifests of simulator runs are
// unchanged.
func runtimeFlags(c *cli.Context) (runtime, work string, err error) {
	runtime, work = c.String("runtime"), c.String("work")
	switch runtime {
	case harness.RuntimeSim:
		runtime = ""
	case harness.RuntimeLive:
	default:
		return "", "", usageErr("--runtime %q: want sim or live", runtime)
	}
	if work != "" && runtime == "" {
		return "", "", usageErr("--work applies to --runtime live only")
	}
	if work != "" && work != "model" && work != "none" {
		return "", "", usageErr("--work %q: want model or none", work)
	}
	return runtime, work, nil
}

// withHardware puts the --hardware profile's overrides before costs (the
// --cost values), so that a --cost given on the command line wins. No
// profile leaves costs as they are: runs without --hardware keep their
// configuration, run keys and replay lines.
func withHardware(c *cli.Context, costs []string) ([]string, error) {
	name := c.String("hardware")
	if name == "" {
		return costs, nil
	}
	h, err := engine.Hardware(name)
	if err != nil {
		return nil, usageErr("--hardware: %v", err)
	}
	return append(h.Overrides(), costs...), nil
}

// configFrom reads a harness.Config from the run flags.
func configFrom(c *cli.Context) (harness.Config, error) {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Variant = c.String("system"), c.String("variant")
	// --system NAME/VARIANT, as compare and sweep take it.
	if name, variant, ok := strings.Cut(cfg.System, "/"); ok {
		if cfg.Variant != "" && cfg.Variant != variant {
			return cfg, usageErr("--system %s and --variant %s name different variants", cfg.System, cfg.Variant)
		}
		cfg.System, cfg.Variant = name, variant
	}
	cfg.Workload = c.String("workload")
	cfg.Faults = c.StringSlice("fault")
	var err error
	if cfg.CostOverride, err = withHardware(c, c.StringSlice("cost")); err != nil {
		return cfg, err
	}
	cfg.Parallelism = c.Int("parallelism")
	cfg.Workers = c.Int("workers")
	if cfg.Runtime, cfg.Work, err = runtimeFlags(c); err != nil {
		return cfg, err
	}
	if c.IsSet("cores") {
		cfg.Cores = c.Int("cores")
		if cfg.Cores < 1 {
			return cfg, usageErr("--cores must be from 1 to 1024, got %d", cfg.Cores)
		}
	}
	if c.IsSet("slots") {
		cfg.Slots = c.Int("slots")
		if cfg.Slots < 1 || cfg.Slots > 65536 {
			return cfg, usageErr("--slots must be from 1 to 65536, got %d", cfg.Slots)
		}
	}
	if cfg.Duration, err = parseDuration("duration", c.String("duration")); err != nil {
		return cfg, err
	}
	if c.IsSet("drain") {
		if cfg.Drain, err = parseDuration("drain", c.String("drain")); err != nil {
			return cfg, err
		}
	}
	if c.IsSet("bucket") {
		if cfg.Bucket, err = parseDuration("bucket", c.String("bucket")); err != nil {
			return cfg, err
		}
	}
	rate, err := parseRate(c)
	if err != nil {
		return cfg, err
	}
	cfg.Rate = rate
	if cfg.Seed, err = strconv.ParseUint(c.String("seed"), 10, 64); err != nil {
		return cfg, usageErr("--seed=%q: want a non-negative integer", c.String("seed"))
	}
	sys, err := systems.Lookup(cfg.System)
	if err != nil {
		return cfg, usageErr("%v", err)
	}
	cfg.SystemOpts = map[string]string{}
	own := map[string]bool{}
	for _, f := range sys.Flags() {
		own[f.Name] = true
	}
	for _, f := range systems.AllFlags() {
		if c.IsSet(f.Name) {
			if !own[f.Name] {
				return cfg, usageErr("--%s does not apply to system %s", f.Name, cfg.System)
			}
			cfg.SystemOpts[f.Name] = c.String(f.Name)
		}
	}
	cfg.WorkloadOpts = map[string]string{}
	if fac, ok := workloads.Lookup(cfg.Workload); ok {
		for _, o := range fac.Options {
			if c.IsSet(o.Name) {
				cfg.WorkloadOpts[o.Name] = c.String(o.Name)
			}
		}
	}
	return cfg, runFlagChecks(c, &cfg)
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one system under one workload and fault schedule",
		UsageText: "bench run --system barrier --fault crash [flags]",
		Flags: append(runFlags(),
			&cli.StringFlag{Name: "out", Value: "results", Usage: "results root folder"},
			&cli.BoolFlag{Name: "observe", Usage: "record what a reader of the sink sees and check it with porcupine"},
			&cli.BoolFlag{Name: "trace", Usage: "write trace.jsonl: every control message, process event and fault in a window, data messages sampled and counted (docs/metrics.md)"},
			&cli.StringFlag{Name: "trace-window", Usage: "with --trace: the simulated time to trace, FROM-TO (like 4s-6s or 10%-30%)",
				DefaultText: "1s before to 3s after the first fault, or the first 2s without one"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench run takes no arguments, got %q", c.Args().First())
			}
			cfg, err := configFrom(c)
			if err != nil {
				return err
			}
			cfg.Observe = c.Bool("observe")
			if err := traceFlags(c, &cfg); err != nil {
				return err
			}
			if err := checkOut("out", c.String("out")); err != nil {
				return err
			}
			cfg.Progress = progressPrinter(c.App.ErrWriter)
			if reorders(cfg) && torture.ReliesOnFIFO(cfg) {
				// Not an error (the experiment shows why FIFO matters),
				// but a broken claim here is the fault's, not a bug's.
				fmt.Fprintf(c.App.ErrWriter, "note: %s relies on FIFO channels, as the real system's network gives them; a reorder window can break its claim by construction, not by a bug (docs/faults.md#reorder)\n", cfg.System)
			}
			started := time.Now()
			runID := harness.NewRunID(cfg, started)
			var storeTmp string
			if cfg.Runtime == harness.RuntimeLive {
				// The live store's files are written next to the run
				// folder, which Write creates at the end, and moved into it.
				storeTmp = filepath.Join(c.String("out"), ".live-"+runID)
				cfg.StoreDir = filepath.Join(storeTmp, "store")
				defer os.RemoveAll(storeTmp)
			}
			out, err := harness.Execute(cfg)
			if err != nil {
				if harness.IsInputError(err) {
					return usageErr("%v", err)
				}
				return &exitError{code: harness.ExitInternal, msg: err.Error()}
			}
			dir, err := harness.Write(c.String("out"), runID, out)
			if err != nil {
				return &exitError{code: harness.ExitInternal, msg: "writing results: " + err.Error()}
			}
			if storeTmp != "" {
				if err := os.Rename(cfg.StoreDir, filepath.Join(dir, "store")); err != nil && !os.IsNotExist(err) {
					return &exitError{code: harness.ExitInternal, msg: "moving the live store: " + err.Error()}
				}
			}
			printSummary(c.App.Writer, out.Result, harness.SummarizeCheckpoints(out.Events), dir)
			if out.Result.ExitCode != 0 {
				return &exitError{code: out.Result.ExitCode}
			}
			return nil
		},
	}
}

// traceFlags reads --trace and --trace-window.
func traceFlags(c *cli.Context, cfg *harness.Config) error {
	cfg.Trace = c.Bool("trace")
	if !c.IsSet("trace-window") {
		return nil
	}
	if !cfg.Trace {
		return usageErr("--trace-window applies with --trace only")
	}
	from, to, err := faults.ParseWindow("trace-window", c.String("trace-window"), cfg.Duration)
	if err != nil {
		return usageErr("%v", err)
	}
	cfg.TraceFrom, cfg.TraceTo = from, to
	return nil
}

// printSummary is bench run's account of a run; cps is its checkpoint
// summary (nil without checkpoints). A figure that does not exist prints
// n/a, never 0.
func printSummary(w io.Writer, r *harness.Result, cps *harness.Checkpoints, dir string) {
	fmt.Fprintf(w, "%s/%s on %s, seed %d: %gs of input at %.0f records/s, parallelism %d on %d workers x %d cores\n",
		r.System, r.Variant, r.Workload, r.Seed, r.Config.DurationS, r.Config.RateRPS, r.Config.Parallelism, r.Config.Workers, r.Config.Cores)
	if r.Runtime == harness.RuntimeLive {
		fmt.Fprintf(w, "runtime:     live (goroutines, wall-clock time, real disk; work %s): NOT byte-reproducible, the seed and fault schedule are recorded but timing decides the interleaving\n", r.Work)
	}
	if len(r.Tasks) > 0 {
		var ts []string
		for _, t := range r.Tasks {
			ts = append(ts, fmt.Sprintf("%s ×%d", t.Name(), t.Instances))
		}
		fmt.Fprintf(w, "tasks:       %s\n", strings.Join(ts, ", "))
	}
	if len(r.Faults) > 0 {
		fmt.Fprintf(w, "faults:      %s\n", strings.Join(r.Faults, " "))
		for _, rc := range r.Recoveries {
			if line := rc.CrashLine(); line != "" {
				fmt.Fprintf(w, "crashed:     %s\n", line)
			}
		}
	}
	printThroughput(w, r)
	if line := overloadWarning(r); line != "" {
		fmt.Fprintln(w, line)
	}
	if r.CommittedEffects == 0 {
		fmt.Fprintf(w, "latency:     n/a (nothing was committed)\n")
	} else {
		fmt.Fprintf(w, "latency:     p50 %.2f ms  p99 %.2f ms  p99.9 %.2f ms  max %.2f ms\n",
			r.LatencyMS.P50, r.LatencyMS.P99, r.LatencyMS.P999, r.LatencyMS.Max)
	}
	if cps != nil {
		fmt.Fprintf(w, "checkpoints: %s\n", cps)
	}
	if line := restoresLine(r); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(r.Faults) > 0 {
		rec := "never (not recovered within the run)"
		if r.RecoveryTimeS != nil {
			rec = fmt.Sprintf("%.3f s", *r.RecoveryTimeS)
		}
		lag := "never"
		if r.LagRecoveryTimeS != nil {
			lag = fmt.Sprintf("%.3f s", *r.LagRecoveryTimeS)
		}
		fmt.Fprintf(w, "recovery:    %s until output staleness is back to normal (source lag: %s)\n", rec, lag)
		for _, rc := range r.Recoveries {
			if p := rc.Phases.String(); p != "" {
				fmt.Fprintf(w, "  phases:    %s after %s\n", p, rc.Fault)
			}
		}
	}
	wrong := fmt.Sprint(r.WrongKeys)
	if r.WrongKeys > 0 {
		wrong += fmt.Sprintf(" (%d stale, %d ahead)", r.StaleFinalKeys, r.AheadFinalKeys)
	}
	fmt.Fprintf(w, "delivery:    duplicates %d  lost %d  wrong keys %s  (of %d expected effects)\n",
		r.Duplicates, r.Lost, wrong, r.ExpectedEffects)
	if r.Undrained() {
		// Pending effects are neither lost nor in the verdict: the run
		// stopped while still busy (the problem line says where).
		fmt.Fprintf(w, "undrained:   %d effects still pending, not counted as lost\n", r.PendingEffects)
	}
	fmt.Fprintf(w, "verdict:     %s, %s (claimed %s, %s): %s%s\n", r.Verdict, r.ObservedReader, r.ClaimedGuarantee, r.ClaimedReader, heldWord(r), finalsNote(r))
	printObserver(w, r)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem:     %s\n", p)
	}
	if r.ExitCode != 0 {
		fmt.Fprintf(w, "replay:      %s\n", r.Replay)
	}
	clock := "simulated"
	if r.Runtime == harness.RuntimeLive {
		clock = "ran"
	}
	fmt.Fprintf(w, "results:     %s (%s %.1fs, %d events, %.2fs wall)\n", dir, clock, r.SimTimeS, r.SimEvents, r.Host.WallTimeS)
}

// overloadWarning is the one line bench run prints for an overloaded run:
// its throughput and latency are not a steady state the system sustains,
// because the source lag kept growing. A run the lag trend could not judge
// (too few points before the first fault) says so and why, so that no
// warning is not read as "sustained". "" for a sustained run.
func overloadWarning(r *harness.Result) string {
	if r.Overloaded == nil {
		if r.LagTrend.Reason == "" {
			return ""
		}
		return "overload:    not judged: " + r.LagTrend.Reason
	}
	if !*r.Overloaded {
		return ""
	}
	return fmt.Sprintf("warning:     OVERLOADED: offered %.0f records/s, source lag grows by %.0f records/s before the first fault (not a sustained rate; see bench capacity)",
		r.Config.RateRPS, *r.LagSlopeRPS)
}

// printThroughput says what was offered, how that rate was chosen, and what
// the sink committed over whole commit cycles.
func printThroughput(w io.Writer, r *harness.Result) {
	how := "given by --rate"
	if r.RateChosen == harness.RateAutomatic {
		how = "chosen automatically: " + r.RateRule
	}
	fmt.Fprintf(w, "offered:     %.0f records/s (%s)\n", r.OfferedRPS, how)
	if r.ThroughputRPS == nil {
		fmt.Fprintf(w, "throughput:  not measured (no whole commit cycle of %gs between warm-up and the first fault or the end of the input)\n",
			r.Config.CommitCycleS)
		return
	}
	win := ""
	if len(r.ThroughputWindowS) == 2 {
		win = fmt.Sprintf(" over %gs-%gs", r.ThroughputWindowS[0], r.ThroughputWindowS[1])
		if r.Config.CommitCycleS > 0 {
			win += fmt.Sprintf(", whole %gs commit cycles", r.Config.CommitCycleS)
		}
	}
	fmt.Fprintf(w, "throughput:  %s records/s committed (steady state%s)\n", harness.FormatRPS(r.ThroughputRPS, ""), win)
}

// reorders reports whether cfg's schedule has a reorder window.
func reorders(cfg harness.Config) bool {
	for _, f := range cfg.Faults {
		if sp, err := faults.Parse(f, faults.Defaults{Duration: cfg.Duration}); err == nil && sp.Kind == faults.Reorder {
			return true
		}
	}
	return false
}

// restoresLine is the restores: line of a system that rebuilds task state
// from a changelog (kstreams): how many task restores, the longest, and
// the changelog records they replayed; "" for other systems.
func restoresLine(r *harness.Result) string {
	records, ok := r.SystemMetrics["changelog_records_restored"]
	if !ok {
		return ""
	}
	n := r.SystemMetrics["restores"]
	longest := "n/a"
	if ms, ok := r.SystemMetrics["restore_ms"].(map[string]any); ok {
		if max, ok := ms["max"].(float64); ok {
			longest = fmt.Sprintf("%.1f ms", max)
		}
	}
	return fmt.Sprintf("restores:    %v task restores, the longest %s; %v changelog records restored", n, longest, records)
}
