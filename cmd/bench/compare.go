package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/sweep"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "run several systems (and variants) under the same workload, seed and faults into one results folder",
		UsageText: "bench compare --system all --fault crash [--out DIR] [run flags]\n\n" +
			"--system takes a list: none,stormack,barrier/unaligned, NAME/* for every variant, all, all/*.\n" +
			"Exits like bench run with the most severe run's code (3 a broken claim, 4 not recovered).",
		Flags: append(gridFlags("all", "results folder (default results/compare-TIMESTAMP)"),
			&cli.BoolFlag{Name: "resume", Usage: "keep the runs already in --out and run only the missing ones"}),
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
	var problems []string
	for _, ro := range o.Runs {
		id := ro.Run.Point.ID()
		if ro.Failed != nil {
			fmt.Fprintf(tw, "%s\tFAILED: %s\t\t\t\t\t\t\t\t\t\n", id, firstLine(ro.Failed.Error))
			continue
		}
		r := ro.Result
		rec := "-"
		if len(r.Faults) > 0 {
			rec = "never"
			if r.RecoveryTimeS != nil {
				rec = fmt.Sprintf("%.3f", *r.RecoveryTimeS)
			}
		}
		observed := r.Verdict
		if !r.ClaimHeld {
			observed += " (CLAIM BROKEN)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%s\t%d\t%d\t%d\t%s\t%s\t\n", id, harness.FormatRPS(r.ThroughputRPS, "-"), r.LatencyMS.P50, r.LatencyMS.P99,
			rec, r.Duplicates, r.Lost, r.WrongKeys, r.ClaimedGuarantee, observed)
		for _, p := range r.Problems {
			problems = append(problems, fmt.Sprintf("%s: %s (replay: %s)", id, p, r.Replay))
		}
	}
	tw.Flush()
	for _, p := range problems {
		fmt.Fprintln(w, "problem: "+p)
	}
	if len(o.Runs) > 0 && o.Runs[0].Result != nil && len(o.Runs[0].Result.Faults) > 0 {
		fmt.Fprintf(w, "faults:  %s\n", strings.Join(o.Runs[0].Result.Faults, " "))
	}
}
