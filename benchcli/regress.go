package benchcli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/sweep"
)

func regressCommand() *cli.Command {
	return &cli.Command{
		Name:  "regress",
		Usage: "compare a curve file point by point with a committed baseline (exit 3 outside tolerance)",
		UsageText: "bench regress --baseline results/baseline/NAME.json --current DIR/curve.json [--update [--metrics a,b]]\n\n" +
			"--current takes a curve.json or a sweep folder. Exit 0 all within tolerance, 3 any point outside,\n" +
			"2 malformed or mismatched input (different grid, seeds, scenario, or a missing metric).\n" +
			"--update writes the current curve as the baseline (keeping its metrics and tolerances).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "baseline", Usage: "baseline file (results/baseline/NAME.json)"},
			&cli.StringFlag{Name: "current", Usage: "curve file (curve.json) or the sweep folder holding it"},
			&cli.BoolFlag{Name: "update", Usage: "rewrite the baseline from the current curve, deliberately"},
			&cli.StringFlag{Name: "metrics", Usage: "with --update: metrics the baseline compares (default: the old baseline's, or " +
				strings.Join(sweep.DefaultMetrics, ",") + ")"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench regress takes no arguments, got %q", c.Args().First())
			}
			basePath, curPath := c.String("baseline"), c.String("current")
			if basePath == "" || curPath == "" {
				return usageErr("bench regress needs --baseline FILE and --current CURVE")
			}
			if c.IsSet("metrics") && !c.Bool("update") {
				return usageErr("--metrics only applies with --update")
			}
			if fi, err := os.Stat(curPath); err == nil && fi.IsDir() {
				curPath = filepath.Join(curPath, sweep.CurveJSON)
			}
			cur, err := sweep.ReadCurve(curPath)
			if err != nil {
				return usageErr("%v", err)
			}
			base, err := sweep.ReadBaseline(basePath)
			if c.Bool("update") {
				return updateBaseline(c, basePath, base, err, cur)
			}
			if err != nil {
				return usageErr("%v", err)
			}
			cmp, err := sweep.Compare(base, cur)
			if err != nil {
				return usageErr("%s vs %s: %v", basePath, curPath, err)
			}
			printComparison(c.App.Writer, cmp)
			if out := cmp.Outside(); len(out) > 0 {
				var names []string
				for _, r := range out {
					names = append(names, r.Point+" "+r.Metric)
				}
				return &exitError{code: harness.ExitSafety, msg: fmt.Sprintf("regression: %d of %d values outside tolerance: %s",
					len(out), len(cmp.Rows), strings.Join(names, "; "))}
			}
			fmt.Fprintf(c.App.Writer, "all %d values within tolerance of %s\n", len(cmp.Rows), basePath)
			return nil
		},
	}
}

func updateBaseline(c *cli.Context, path string, old *sweep.Baseline, oldErr error, cur *sweep.Curve) error {
	if oldErr != nil && !errors.Is(oldErr, os.ErrNotExist) {
		return usageErr("%v (remove it to start a new baseline)", oldErr)
	}
	var metrics []string
	if c.IsSet("metrics") {
		for _, m := range strings.Split(c.String("metrics"), ",") {
			if m = strings.TrimSpace(m); m != "" {
				metrics = append(metrics, m)
			}
		}
		if len(metrics) == 0 {
			return usageErr("--metrics %q names no metric", c.String("metrics"))
		}
	} else if old != nil {
		metrics = old.Metrics
	}
	nb, err := sweep.NewBaseline(cur, metrics)
	if err != nil {
		return usageErr("%v", err)
	}
	if old != nil {
		nb.Tolerance = old.Tolerance
		if cmp, err := sweep.Compare(old, cur); err == nil {
			printComparison(c.App.Writer, cmp)
		} else {
			fmt.Fprintf(c.App.Writer, "the old baseline is not comparable (%v); replacing it\n", err)
		}
	}
	if err := sweep.WriteBaseline(path, nb); err != nil {
		return &exitError{code: harness.ExitInternal, msg: "writing baseline: " + err.Error()}
	}
	fmt.Fprintf(c.App.Writer, "baseline %s written: %d points, comparing %s\n", path, len(cur.Points), strings.Join(nb.Metrics, ", "))
	return nil
}

func printComparison(w io.Writer, cmp *sweep.Comparison) {
	for _, n := range cmp.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "point\tmetric\tbaseline\tcurrent\tchange\ttolerance\tresult\t")
	for _, r := range cmp.Rows {
		result := "within"
		if !r.Within {
			result = "OUTSIDE"
			if r.Reason != "" {
				result += ": " + r.Reason
			}
		}
		tol := "±" + strconv.FormatFloat(100*r.Tol.Rel, 'g', 4, 64) + "%"
		if r.Tol.Abs > 0 {
			tol += " ±" + strconv.FormatFloat(r.Tol.Abs, 'g', 4, 64)
		}
		if r.Exact() {
			tol = "exact"
		}
		base, cur := r.Values()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Point, r.Metric, base, cur, r.Change(), tol, result)
	}
	tw.Flush()
}
