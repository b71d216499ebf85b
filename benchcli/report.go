package benchcli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/reports"
	"ftbench/view"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "render stored results as PNG plots and summary.md (reads results only, never re-runs)",
		UsageText: "bench report DIR [--out DIR/report]\n\n" +
			"DIR is a run folder, a compare or sweep folder, or a results root. Writes throughput and latency over time\n" +
			"(fault windows shaded), delivery bars, recovery-time curves (sweeps), overhead plots, and the CSV data behind each.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output folder (default DIR/report)"},
			&cli.IntFlag{Name: "max-groups", Value: 12, Usage: "most scenario groups (point x seed) to draw time series for"},
		},
		Action: func(c *cli.Context) error {
			rest, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(rest) != 1 {
				return usageErr("bench report takes one results folder, got %d arguments", len(rest))
			}
			dir := rest[0]
			if err := checkAtLeast(c, "max-groups", 1); err != nil {
				return err
			}
			if c.IsSet("out") {
				if err := checkOut("out", c.String("out")); err != nil {
					return err
				}
			}
			rep, err := reports.Generate(dir, reports.Options{Out: c.String("out"), MaxGroups: c.Int("max-groups")})
			if err != nil {
				if errors.Is(err, os.ErrNotExist) || errors.Is(err, reports.ErrNoResults) || isNotDir(err) {
					return usageErr("%v", err)
				}
				return &exitError{code: harness.ExitInternal, msg: err.Error()}
			}
			for _, p := range rep.Problems {
				fmt.Fprintf(c.App.ErrWriter, "bench: note: skipped unreadable results %s\n", p)
			}
			pngs := 0
			for _, f := range rep.Files {
				if filepath.Ext(f) == ".png" {
					pngs++
				}
			}
			index, views, err := writeIndex(c, rep)
			if err != nil {
				return &exitError{code: harness.ExitInternal, msg: err.Error()}
			}
			fmt.Fprintf(c.App.Writer, "report of %d runs: %d plots (PNG + CSV data) and %s\n", rep.Runs, pngs, filepath.Join(rep.Out, "summary.md"))
			fmt.Fprintf(c.App.Writer, "interactive: %s (%d traced runs with their run.html)\n", index, views)
			return nil
		},
	}
}

// writeIndex writes every traced run's run.html and the report's
// index.html linking them; a run whose view cannot be made is noted and
// listed without one.
func writeIndex(c *cli.Context, rep *reports.Report) (index string, views int, err error) {
	var runs []view.IndexRun
	for _, r := range rep.Stored {
		res := r.Result
		ir := view.IndexRun{Name: r.Name, Title: fmt.Sprintf("%s/%s on %s, seed %d, faults %s: verdict %s", res.System, res.Variant, res.Workload, res.Seed, strings.Join(res.Faults, " "), res.Verdict)}
		if view.Traced(r.Dir) {
			path, err := writeView(r.Dir)
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "bench: note: no run.html for %s: %v\n", r.Dir, err)
			} else {
				views++
				if rel, err := filepath.Rel(rep.Out, path); err == nil {
					path = rel
				}
				ir.Href = filepath.ToSlash(path)
			}
		}
		runs = append(runs, ir)
	}
	var csvs []string
	for _, f := range rep.Files {
		if filepath.Ext(f) == ".csv" {
			csvs = append(csvs, f)
		}
	}
	index, err = view.WriteIndex(rep.Out, fmt.Sprintf("Report of %d runs in %s", rep.Runs, rep.Dir), runs, csvs)
	return index, views, err
}

func isNotDir(err error) bool { return strings.HasSuffix(err.Error(), "is not a folder") }

// trailingFlags applies flags written after the positional arguments
// (bench report DIR --out X), which the CLI library stops parsing at, and
// returns the positional arguments.
func trailingFlags(c *cli.Context) ([]string, error) {
	var rest []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var flag cli.Flag
		for _, f := range c.Command.Flags {
			for _, n := range f.Names() {
				if n == name {
					flag = f
				}
			}
		}
		if flag == nil {
			return nil, usageErr("flag provided but not defined: -%s", name)
		}
		if bf, ok := flag.(*cli.BoolFlag); ok && !hasVal {
			_ = bf
			val, hasVal = "true", true
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, usageErr("flag needs an argument: -%s", name)
			}
			i++
			val = args[i]
		}
		if err := c.Set(name, val); err != nil {
			return nil, usageErr("invalid value %q for flag -%s: %v", val, name, err)
		}
	}
	return rest, nil
}
