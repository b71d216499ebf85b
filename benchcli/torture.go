package benchcli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/systems"
	"ftbench/torture"
)

func tortureCommand() *cli.Command {
	return &cli.Command{
		Name:  "torture",
		Usage: "randomized fault campaign: runs with random faults and workload parameters, every check on, failures shrunk",
		UsageText: "bench torture --system barrier [--variant V] [--workload W] --runs 200 [--seed S] [--out DIR]\n\n" +
			"Each run draws its duration, rate, parallelism and workers (unless given) and several faults from the\n" +
			"campaign seed. Failing runs are printed with the `bench run` line that replays them. Exit 3 if any run\n" +
			"broke the system's claim, 1 if a run could not execute, 4 if a run did not recover, else 0.",
		// The run flags' defaults do not apply: each run draws what is not given.
		Flags: append(append(setDefaultText(runFlags(), "drawn per run", "duration", "rate", "parallelism", "workers"),
			shardFlags("runs (runs I-1, I-1+N, ...)")...),
			&cli.IntFlag{Name: "runs", Value: 100, Usage: "runs in the campaign"},
			&cli.StringFlag{Name: "out", Usage: "results folder (default results/torture/<time>-<system>-<variant>-<workload>-s<seed>)"},
			&cli.IntFlag{Name: "jobs", Usage: "parallel runs", DefaultText: "all cores"},
			&cli.BoolFlag{Name: "observe", Value: true, Usage: "check what a reader of the sink observes with porcupine (--observe=false skips it)"},
			&cli.IntFlag{Name: "shrink", Value: 3, Usage: "broken runs to shrink, lowest first (0: none)"},
			&cli.IntFlag{Name: "shrink-budget", Value: torture.DefaultShrinkBudget, Usage: "most runs one shrink executes"},
			&cli.BoolFlag{Name: "stop", Usage: "stop starting runs after the first broken one (then shrink it)"},
			&cli.BoolFlag{Name: "aim", Value: true, Usage: "aim some crashes, pauses and partitions just after the system's protocol milestones (--aim=false: the schedules as drawn)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench torture takes no arguments, got %q", c.Args().First())
			}
			if c.IsSet("fault") {
				return usageErr("bench torture draws its own faults; --fault is for bench run")
			}
			cfg, err := configFrom(c)
			if err != nil {
				return err
			}
			cfg.Observe = c.Bool("observe")
			if cfg.Runtime == harness.RuntimeLive && !c.IsSet("observe") {
				cfg.Observe = false // not supported live (harness.Config.validate)
			}
			out := c.String("out")
			if out == "" {
				out = filepath.Join("results", "torture", harness.NewRunID(cfg, time.Now()))
			}
			sh, out, err := shardFrom(c, out)
			if err != nil {
				return err
			}
			fixed := torture.Fixed{Duration: c.IsSet("duration"), Rate: c.IsSet("rate"),
				Parallelism: c.IsSet("parallelism"), Workers: c.IsSet("workers")}
			jobs, err := validateTorture(c, cfg, fixed, c.Int("jobs"))
			if err != nil {
				return err
			}
			if err := checkOut("out", out); err != nil {
				return err
			}
			opts := torture.Options{}
			if sh != nil {
				opts.Shard = *sh
			}
			runs := 0 // this shard's
			for i := range c.Int("runs") {
				if opts.Shard.Has(i) {
					runs++
				}
			}
			progress := func(done, broken int) {
				// On stderr: stdout is the report alone.
				if done%10 == 0 && done < runs {
					fmt.Fprintf(c.App.ErrWriter, "torture: %d of %d runs done, %d broken\n", done, runs, broken)
				}
			}
			opts.Progress, opts.Base, opts.Runs, opts.Jobs, opts.Out = progress, cfg, c.Int("runs"), c.Int("jobs"), out
			opts.Shrink, opts.ShrinkBudget, opts.Stop = c.Int("shrink"), c.Int("shrink-budget"), c.Bool("stop")
			opts.NoAim = !c.Bool("aim")
			opts.Jobs = jobs
			if cfg.Runtime == harness.RuntimeLive && !c.IsSet("jobs") {
				opts.Jobs = 1 // live runs compete for the machine's real cores
			}
			opts.Fixed = torture.Fixed{Duration: c.IsSet("duration"), Rate: c.IsSet("rate"),
				Parallelism: c.IsSet("parallelism"), Workers: c.IsSet("workers")}
			rep, err := torture.Campaign(opts)
			return reportTorture(c, rep, out, err)
		},
	}
}

// reportTorture prints a campaign (run or merged from shards) and turns its
// outcome into the command's exit: 2 for bad input, 1 for an internal
// error, else the campaign's own code.
func reportTorture(c *cli.Context, rep *torture.Report, out string, err error) error {
	if err != nil {
		if harness.IsInputError(err) {
			return usageErr("%v", err)
		}
		return &exitError{code: harness.ExitInternal, msg: err.Error()}
	}
	printTorture(c.App.Writer, rep, out)
	if code := rep.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// printTorture prints one line per run that needs attention (with its
// replay command), the shrunk schedules and the summary table.
func printTorture(w io.Writer, rep *torture.Report, out string) {
	for _, r := range rep.Runs {
		var what string
		switch r.Class {
		case torture.Broken:
			what = "CLAIM BROKEN: " + r.Problem
		case torture.Liveness:
			what = "not recovered: " + r.Problem
		case torture.Undrained:
			what = r.Problem
		case torture.Unknown:
			what = "porcupine unknown (the checker timed out; not a pass)"
		case torture.Errored:
			what = "error: " + r.Problem
		default:
			continue
		}
		fmt.Fprintf(w, "run %d %s  replay: %s\n", r.Index, what, r.Replay)
	}
	for _, s := range rep.Shrunk {
		fmt.Fprintf(w, "shrunk run %d: %d faults -> %d, %gs -> %gs of input (%d runs); %s  replay: %s\n",
			s.Run, s.FaultsBefore, len(s.Faults), s.DurationBeforeS, s.DurationS, s.Tries, s.Problem, s.Replay)
	}
	variant := rep.Variant
	if sys, err := systems.Lookup(rep.System); err == nil {
		if v, err := systems.ResolveVariant(sys, variant); err == nil {
			variant = v // as in the run folders' names; a drawn campaign's "a | b" stays
		}
	}
	if variant == "" {
		variant = "default"
	}
	if rep.Shard != nil {
		fmt.Fprintf(w, "shard %d/%d: %d of the campaign's %d runs (join the shards with bench merge)\n",
			rep.Shard.I, rep.Shard.N, len(rep.Runs), rep.CampaignRuns)
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "missing: %d of %d runs have no result (a shard did not finish): %s\n",
			len(rep.Missing), rep.CampaignRuns, intList(rep.Missing))
	}
	fmt.Fprintf(w, "torture %s/%s on %s (claims %s), %d runs from seed %d, %d jobs, %.1fs wall\n",
		rep.System, variant, rep.Workload, rep.Claim, len(rep.Runs), rep.Seed, rep.Jobs, rep.WallS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var head, row []string
	for _, c := range append([]torture.Class{"runs"}, torture.Classes...) {
		head = append(head, string(c))
		n := rep.Counts[c]
		if c == "runs" {
			n = len(rep.Runs)
		}
		row = append(row, fmt.Sprint(n))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	fmt.Fprintln(tw, strings.Join(row, "\t"))
	tw.Flush()
	if n := rep.Counts[torture.Expected]; n > 0 {
		var lost, dups int64
		var nl, nd, nw int
		for _, r := range rep.Runs {
			if r.Class != torture.Expected {
				continue
			}
			lost += r.Lost
			dups += r.Duplicates
			if r.Lost > 0 {
				nl++
			}
			if r.Duplicates > 0 {
				nd++
			}
			if r.WrongKeys > 0 {
				nw++
			}
		}
		fmt.Fprintf(w, "expected: %d runs lost effects (%d in all), %d duplicated effects (%d in all), %d ended with wrong values; %s allows it\n",
			nl, lost, nd, dups, nw, rep.Claim)
	}
	printCoverage(w, torture.Summarize(rep).Coverage.Paths)
	fmt.Fprintf(w, "results: %s (torture.json, summary.json)\n", out)
}

// intList prints indices, the first 20 of them.
func intList(xs []int) string {
	var s []string
	for i, x := range xs {
		if i == 20 {
			s = append(s, fmt.Sprintf("... (%d more)", len(xs)-20))
			break
		}
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, " ")
}

// printCoverage prints how many runs took each protocol path, of those whose
// configuration could; paths no run reached are named.
func printCoverage(w io.Writer, paths []torture.PathCoverage) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "coverage\truns hit\tof applicable\t")
	var missed []string
	for _, p := range paths {
		if p.Status == "n/a" {
			fmt.Fprintf(tw, "%s\tn/a\t\t\n", p.Path)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", p.Path, p.Hit, p.Applicable)
		if p.Status == "missed" {
			missed = append(missed, p.Path)
		}
	}
	tw.Flush()
	if len(missed) > 0 {
		fmt.Fprintf(w, "coverage: no run reached %s\n", strings.Join(missed, ", "))
	}
}
