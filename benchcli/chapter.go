package benchcli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"ftbench/capacity"
	"ftbench/chapter"
	"ftbench/harness"
	"ftbench/reports"
	"ftbench/sweep"
	"ftbench/view"
)

func chapterCommand() *cli.Command {
	return &cli.Command{
		Name:  "chapter",
		Usage: "measure seed 004's comparison table of Storm, Spark Streaming, Flink and Kafka Streams and write chapter.md (docs/chapter.md)",
		UsageText: "bench chapter [--out DIR] [--quick] [--jobs N] [--hardware NAME] [--shard I/N]\n\n" +
			"Runs a fixed campaign (capacity on grep 100 B and 1000 B, latency at half capacity, a crash, a partition,\n" +
			"a slow operator and restores at two state sizes, for every system in its usual configurations), then\n" +
			"writes DIR/chapter.md and PNGs under DIR/plots. Re-running with the same --out reuses finished runs; shards are\n" +
			"joined by copying their runs/ folders into one --out and running bench chapter there (docs/chapter.md).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Value: filepath.Join("results", "chapter"), Usage: "campaign folder (resumable)"},
			&cli.BoolFlag{Name: "quick", Usage: "the quick campaign: short probes, capacity within 10%, one seed (under 5 minutes on 2 cores)"},
			&cli.IntFlag{Name: "jobs", Value: runtime.NumCPU(), Usage: "runs executed in parallel", DefaultText: "all cores"},
			&cli.StringFlag{Name: "hardware", Value: chapter.Hardware, Usage: "hardware profile of every run (see bench list --hardware)"},
			&cli.BoolFlag{Name: "list", Usage: "print the campaign's jobs and their commands, run nothing"},
		}, shardFlags("setups (each with all its jobs)")...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench chapter takes no arguments, got %q", c.Args().First())
			}
			if err := checkOut("out", c.String("out")); err != nil {
				return err
			}
			if c.Int("jobs") < 1 {
				return usageErr("--jobs must be at least 1, got %d", c.Int("jobs"))
			}
			shape := chapter.Full
			if c.Bool("quick") {
				shape = chapter.Quick
			}
			shape.Hardware = c.String("hardware")
			jobs, err := chapter.Jobs(shape)
			if err != nil {
				return usageErr("--hardware: %v", err)
			}
			sh, out, err := shardFrom(c, c.String("out"))
			if err != nil {
				return err
			}
			if sh != nil {
				jobs = chapter.Shard(jobs, sh.I, sh.N)
			}
			if c.Bool("list") {
				fmt.Fprintln(c.App.Writer, strings.Join(chapter.CommandLines(jobs), "\n"))
				return nil
			}
			started := time.Now()
			res, err := chapter.Run(out, jobs, c.Int("jobs"), c.App.ErrWriter)
			if err != nil {
				return runError(err)
			}
			pngs, err := chapterPlots(out, jobs, res)
			if err != nil {
				return &exitError{code: harness.ExitInternal, msg: "plots: " + err.Error()}
			}
			page := chapter.Page{Command: commandLine(c), Quick: c.Bool("quick"), Hardware: shape.Hardware,
				Rows: chapter.Build(res), Papers: chapter.PaperFigures(res), Jobs: jobs, Res: res, PNGs: pngs}
			path := filepath.Join(out, "chapter.md")
			if err := sweep.WriteFileAtomic(path, []byte(chapter.Markdown(page))); err != nil {
				return &exitError{code: harness.ExitInternal, msg: "writing " + path + ": " + err.Error()}
			}
			// The traced runs' explorer pages, and chapter.html linking them.
			views := map[string]string{}
			for _, j := range jobs {
				dir := filepath.Join(out, res.Dirs[j.ID])
				if _, ok := res.Dirs[j.ID]; !ok || !view.Traced(dir) {
					continue
				}
				if _, err := writeView(dir); err != nil {
					return err
				}
				views[j.ID] = filepath.ToSlash(filepath.Join(res.Dirs[j.ID], view.PageFile))
			}
			html, err := chapter.HTML(page, views)
			if err != nil {
				return &exitError{code: harness.ExitInternal, msg: "chapter.html: " + err.Error()}
			}
			hpath := filepath.Join(out, chapter.HTMLFile)
			if err := sweep.WriteFileAtomic(hpath, html); err != nil {
				return &exitError{code: harness.ExitInternal, msg: "writing " + hpath + ": " + err.Error()}
			}
			fmt.Fprintf(c.App.Writer, "chapter: %d jobs (%d failed) in %.1fs wall\nwritten: %s, %s\n", len(jobs), len(res.Failed), time.Since(started).Seconds(), path, hpath)
			return nil
		},
	}
}

// chapterPlots draws the chapter's PNGs with the report code: capacity
// bars of grep 100 B and 1000 B (a capacity comparison file of every
// setup), and the crash runs' timelines (one folder holds them all, so
// reports draws one series per system). It returns the PNGs relative to
// out.
func chapterPlots(out string, jobs []chapter.Job, res *chapter.Results) ([]string, error) {
	var pngs []string
	for _, m := range []chapter.Measure{chapter.Cap100, chapter.Cap1000} {
		cmp := &capacity.Comparison{Format: capacity.CompareFormat, Command: "bench chapter"}
		for _, j := range jobs {
			if c := res.Caps[j.ID]; j.Measure == m && c != nil {
				// Bars are labelled SYSTEM/VARIANT: name the setup,
				// since two setups share a system and variant
				// (stormack with and without acking). none keeps its
				// name, which the ratio labels divide by.
				cp := *c
				cp.System, cp.Variant = j.Setup.ID, j.Setup.System
				cmp.Systems = append(cmp.Systems, &cp)
			}
		}
		if len(cmp.Systems) == 0 {
			continue
		}
		dir := filepath.Join(out, "plots", string(m))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := writeJSON(filepath.Join(dir, reports.CapacityFile), cmp); err != nil {
			return nil, err
		}
		rep, err := reports.Generate(dir, reports.Options{Out: dir})
		if err != nil {
			return nil, err
		}
		pngs = append(pngs, pngsOf(out, rep)...)
	}
	var series []reports.LatencySeries
	for _, j := range jobs {
		if c := res.Caps[j.ID]; j.Measure == chapter.Cap100 && c != nil {
			series = append(series, reports.LatencySeries{Name: j.Setup.ID, Probes: c.Probes})
		}
	}
	if len(series) > 0 {
		dir := filepath.Join(out, "plots", "latency-vs-rate")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := reports.WriteLatencyVsRate(dir, "p99 latency against offered rate: the probes of each capacity search, grep 100 B on one node", series); err != nil {
			return nil, err
		}
		pngs = append(pngs, filepath.Join("plots", "latency-vs-rate", reports.LatencyVsRateFile+".png"))
	}
	crash := filepath.Join(out, "runs", string(chapter.Crash))
	if _, err := os.Stat(crash); err == nil {
		rep, err := reports.Generate(crash, reports.Options{Out: filepath.Join(out, "plots", string(chapter.Crash)), MaxGroups: 1})
		if err != nil {
			return nil, err
		}
		pngs = append(pngs, pngsOf(out, rep)...)
	}
	return pngs, nil
}

// chapterPNGs are the report's plots chapter.md shows (the folders keep
// the others): capacity bars, and the crash runs' committed output,
// latency and delivery.
var chapterPNGs = map[string]bool{"capacity.png": true, "throughput.png": true, "latency.png": true, "delivery.png": true}

// pngsOf lists a report's PNGs that chapter.md shows, relative to out.
func pngsOf(out string, rep *reports.Report) []string {
	var pngs []string
	for _, f := range rep.Files {
		if chapterPNGs[f] {
			rel, _ := filepath.Rel(out, filepath.Join(rep.Out, f))
			pngs = append(pngs, rel)
		}
	}
	return pngs
}
