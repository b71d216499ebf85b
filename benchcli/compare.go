package benchcli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"ftbench/capacity"
	"ftbench/harness"
	"ftbench/sweep"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "run several systems (and variants) under the same workload, seed and faults into one results folder",
		UsageText: "bench compare --system all --fault crash [--out DIR] [run flags]\n" +
			"bench compare --config 'barrier --sink 2pc' --config 'barrier --sink plain' --config stormack --config none --fault crash\n\n" +
			"--system takes a list: none,stormack,barrier/unaligned, NAME/* for every variant, all, all/*.\n" +
			"--config names one configuration: a system and run flags for it alone (options, --rate, --fault, --cost ...);\n" +
			"flags outside --config apply to every configuration, and a configuration's own override them.\n" +
			"Exits like bench run with the most severe run's code (3 a broken claim, 4 not recovered).",
		Flags: append(gridFlags("all", "results folder (default results/compare-TIMESTAMP)"),
			&cli.BoolFlag{Name: "resume", Usage: "keep the runs already in --out and run only the missing ones"},
			&cli.BoolFlag{Name: "capacity", Usage: "find every system's capacity (bench capacity's search) into DIR/capacity.json instead"},
			&cli.StringFlag{Name: "latency-bound", Usage: "with --capacity: also require p99 end-to-end latency <= this"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench compare takes no arguments, got %q", c.Args().First())
			}
			m, err := manifestFrom(c)
			if err != nil {
				return err
			}
			if m.Seeds, err = sweep.ParseSeeds(c.String("seed")); err != nil || len(m.Seeds) != 1 {
				return usageErr("--seed=%q: want one non-negative integer (bench sweep --seeds runs several)", c.String("seed"))
			}
			m.Command = commandLine(c)
			out := c.String("out")
			if out == "" {
				out = "results/compare-" + time.Now().UTC().Format("20060102T150405")
			}
			if c.Bool("capacity") {
				return compareCapacity(c, out, m)
			}
			if c.IsSet("latency-bound") {
				return usageErr("--latency-bound applies to --capacity only")
			}
			o, err := executeGrid(c, out, m)
			if err != nil {
				return err
			}
			printCompare(c.App.Writer, o)
			fmt.Fprintf(c.App.Writer, "report:  bench report %s\n", out)
			return gridExit(o, true)
		},
	}
}

// printCompare prints one line per system side by side.
func printCompare(w io.Writer, o *sweep.Outcome) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "system\tthroughput rec/s\tp50 ms\tp99 ms\trecovery s\tduplicates\tlost\twrong keys\tclaimed\tobserved\t")
	var problems, warnings []string
	for _, ro := range o.Runs {
		id := ro.Run.Point.ID()
		if ro.Failed != nil {
			fmt.Fprintf(tw, "%s\tFAILED: %s\t\t\t\t\t\t\t\t\t\n", id, firstLine(ro.Failed.Error))
			continue
		}
		r := ro.Result
		rec := "n/a" // no fault to recover from
		if len(r.Faults) > 0 {
			rec = "never"
			if r.RecoveryTimeS != nil {
				rec = fmt.Sprintf("%.3f", *r.RecoveryTimeS)
			}
		}
		// Both halves of the claim: delivery and the reader's view.
		claimed, observed := r.ClaimedGuarantee, r.Verdict
		if r.ClaimedReader != "" {
			claimed += ", " + r.ClaimedReader
			observed += ", " + r.ObservedReader
		}
		if !r.ClaimHeld {
			observed += " (CLAIM BROKEN)"
		}
		p50, p99 := "n/a", "n/a" // nothing committed
		if r.CommittedEffects > 0 {
			p50, p99 = fmt.Sprintf("%.2f", r.LatencyMS.P50), fmt.Sprintf("%.2f", r.LatencyMS.P99)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t\n", id, harness.FormatRPS(r.ThroughputRPS, "n/a"), p50, p99,
			rec, r.Duplicates, r.Lost, r.WrongKeys, claimed, observed)
		for _, p := range r.Problems {
			problems = append(problems, fmt.Sprintf("%s: %s (replay: %s)", id, p, r.Replay))
		}
		if line := overloadWarning(r); line != "" {
			// Its throughput and latency are not a sustained steady state.
			warnings = append(warnings, id+": "+strings.TrimSpace(strings.TrimPrefix(line, "warning:")))
		}
	}
	tw.Flush()
	for _, p := range problems {
		fmt.Fprintln(w, "problem: "+p)
	}
	for _, p := range warnings {
		fmt.Fprintln(w, "warning: "+p)
	}
	if len(o.Runs) > 0 && o.Runs[0].Result != nil && len(o.Runs[0].Result.Faults) > 0 {
		fmt.Fprintf(w, "faults:  %s\n", strings.Join(o.Runs[0].Result.Faults, " "))
	}
}

// compareCapacity runs bench capacity's search for every system of the
// grid, one after the other, and writes out/capacity.json.
func compareCapacity(c *cli.Context, out string, m *sweep.Manifest) error {
	if len(m.Params) > 0 || c.Bool("resume") {
		return usageErr("--capacity takes neither --param nor --resume")
	}
	bound, err := latencyBound(c)
	if err != nil {
		return err
	}
	if err := checkOut("out", out); err != nil {
		return err
	}
	m.Base.NoBudget = c.Bool("no-budget")
	g, err := m.Expand()
	if err != nil {
		return usageErr("%v", err)
	}
	var plans []*capacity.Plan
	var opts []capacity.Options
	for _, r := range g.Runs {
		cfg := r.Config
		if !c.IsSet("duration") {
			cfg.Duration = 0 // capacity.DefaultProbeDuration
		}
		o := capacity.Options{Base: cfg, LatencyBound: bound}
		plan, err := capacity.NewPlan(o)
		if err != nil {
			return runError(fmt.Errorf("%s: %w", r.Point.ID(), err))
		}
		plans, opts = append(plans, plan), append(opts, o)
	}
	cmp := &capacity.Comparison{Format: capacity.CompareFormat, Command: m.Command}
	walls := make([]time.Duration, len(plans))
	for i, plan := range plans {
		fmt.Fprintf(c.App.Writer, "[%d/%d] ", i+1, len(plans))
		started := time.Now()
		res, err := findCapacity(c.App.Writer, plan, opts[i])
		if err != nil {
			return runError(fmt.Errorf("%s: %w", g.Runs[i].Point.ID(), err))
		}
		walls[i] = time.Since(started)
		printCapacity(c.App.Writer, res, walls[i])
		cmp.Systems = append(cmp.Systems, res)
	}
	path := filepath.Join(out, "capacity.json")
	if err := writeJSON(path, cmp); err != nil {
		return &exitError{code: harness.ExitInternal, msg: "writing " + path + ": " + err.Error()}
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "system\tcapacity rec/s\toverloaded at rec/s\tvs none\tprobes\twall s\t")
	for i, r := range cmp.Systems {
		capStr, ratio := "none", "-"
		if r.CapacityRPS != nil {
			capStr = fmt.Sprintf("%.0f", *r.CapacityRPS)
		}
		if x := cmp.Ratio(r); x != nil {
			ratio = fmt.Sprintf("%.3f", *x)
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%.0f\t%s\t%d\t%.1f\t\n", r.System, r.Variant, capStr, r.OverloadedAtRPS, ratio, len(r.Probes), walls[i].Seconds())
	}
	tw.Flush()
	fmt.Fprintf(c.App.Writer, "written: %s\nreport:  bench report %s\n", path, out)
	return nil
}
