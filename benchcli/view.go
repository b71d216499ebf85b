package benchcli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/sweep"
	"ftbench/view"
)

func viewCommand() *cli.Command {
	return &cli.Command{
		Name:  "view",
		Usage: "write a traced run's self-contained run.html: space-time diagram, checkpoint history, summary, charts",
		UsageText: "bench view RUN_DIR\n\n" +
			"RUN_DIR is a run folder made with bench run --trace (results/latest for the last run). Writes RUN_DIR/run.html,\n" +
			"which opens from file:// with no network (docs/view.md).",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("bench view takes one run folder, got %d arguments", c.NArg())
			}
			dir := c.Args().First()
			if err := requireRunDir(dir); err != nil {
				return err
			}
			path, err := writeView(dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "view: %s\n", path)
			return nil
		},
	}
}

// requireRunDir refuses, as bad input, a folder that is not a traced run.
func requireRunDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return usageErr("%v", err)
	case !st.IsDir():
		return usageErr("%s is not a folder", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, sweep.RunFile)); err != nil {
		return usageErr("%s is not a run folder: no %s", dir, sweep.RunFile)
	}
	if !view.Traced(dir) {
		return usageErr("%s: %v", dir, view.ErrNotTraced)
	}
	return nil
}

// writeView renders dir's run.html with bench run's summary of the run.
func writeView(dir string) (string, error) {
	run, err := sweep.LoadRun(dir)
	if err != nil {
		return "", usageErr("%v", err)
	}
	var sum strings.Builder
	printSummary(&sum, run.Result, harness.SummarizeCheckpoints(run.Events), dir)
	page, err := view.Load(dir, sum.String())
	if err != nil { // a missing or corrupt trace.jsonl, run.json ...: bad input
		return "", usageErr("%v", err)
	}
	path, err := view.Save(dir, page)
	if err != nil {
		return "", &exitError{code: harness.ExitInternal, msg: err.Error()}
	}
	return path, nil
}
