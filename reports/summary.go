package reports

import (
	"bytes"
	"fmt"
	"strings"

	"ftbench/capacity"
	"ftbench/harness"
	"ftbench/sweep"
)

type image struct{ title, file string }

type summaryGroup struct {
	g      *group
	images []image
	notes  []string
}

type summary struct {
	rep           *Report
	failed        []*sweep.FailedRun
	curve         *sweep.Curve
	groups        []*summaryGroup
	curves        []image
	curveNotes    []string
	overhead      []image
	overheadNotes []string
	caps          *capacity.Comparison
	capacity      []image
}

// markdown renders summary.md: the runs table, then each scenario's
// images, the parameter curves, the overhead plots and the notes.
func (s *summary) markdown() []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# ftbench report\n\n")
	p("Results in `%s`: %d runs", s.rep.Dir, s.rep.Runs)
	if len(s.failed) > 0 {
		p(", %d failed", len(s.failed))
	}
	if len(s.rep.Problems) > 0 {
		p(", %d unreadable (skipped)", len(s.rep.Problems))
	}
	p(". Rendered from the stored results only.\n\n")
	p("Fault bands: a window fault (slow, throttle, reorder) is shaded from its start to its end; " +
		"a crash is shaded while the worker is down (from the crash until it is back up, crash + restart delay), " +
		"and a dashed line marks when the failure detector notified the coordinator (crash + detect-delay) for systems that have one. " +
		"Throughput is drawn unsmoothed, in input records: on top the cumulative committed output against the appended input (the vertical distance is the lag; " +
		"a flat stretch is a stall, the climb back to the input line the recovery, a line ending below it a loss and above it duplicates), " +
		"below the committed rate per commit period as steps, from one commit to the next for micro-batch and two-phase-commit sinks and per second for continuous ones " +
		"(`window_start_s`, `window_s`, `window_rps` in the CSV); time plots end at the input plus the longest recovery. " +
		"Latency is commit time minus append time of each bucket's commits, joined from commit to commit and broken where a system stops committing.\n\n")

	if s.caps != nil {
		p("## Capacity\n\n")
		capacityTable(&b, s.caps)
		for _, im := range s.capacity {
			p("![%s](%s)\n\nData: [%s](%s)\n\n", im.title, im.file, csvName(im.file), csvName(im.file))
		}
	}
	for _, sg := range s.groups {
		g := sg.g
		if len(s.groups) > 1 {
			p("## Scenario %s%s\n\n", strings.TrimSuffix(g.Prefix, "-"), ": "+g.Title)
		} else {
			p("## %s\n\n", g.Title)
		}
		p("%s\n\n", rateLine(g.Runs[0].Result))
		p("| system | seed | throughput (records/s) | latency p50 (ms) | p99 (ms) | recovery (s) | duplicates | lost | wrong keys | claimed | observed | claim |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n")
		for i, r := range g.Runs {
			res := r.Result
			// n/a where a value does not exist: no fault to recover
			// from, no whole commit cycle, nothing committed.
			rec := "n/a"
			if len(res.Faults) > 0 {
				rec = "never"
				if res.RecoveryTimeS != nil {
					rec = fmt.Sprintf("%.3f", *res.RecoveryTimeS)
				}
			}
			p50, p99 := "n/a", "n/a"
			if res.CommittedEffects > 0 {
				p50, p99 = fmt.Sprintf("%.2f", res.LatencyMS.P50), fmt.Sprintf("%.2f", res.LatencyMS.P99)
			}
			held := "held"
			if !res.ClaimHeld {
				held = "**BROKEN**"
			}
			p("| %s | %d | %s | %s | %s | %s | %d | %d | %d | %s | %s | %s |\n", g.Labels[i], res.Seed, harness.FormatRPS(res.ThroughputRPS, "n/a"),
				p50, p99, rec, res.Duplicates, res.Lost, res.WrongKeys, res.ClaimedGuarantee, res.Verdict, held)
		}
		p("\n")
		runDetails(&b, g)
		for _, r := range g.Runs {
			for _, prob := range r.Result.Problems {
				p("- %s/%s: %s — replay: `%s`\n", r.Result.System, r.Result.Variant, prob, r.Result.Replay)
			}
		}
		if len(g.Bands) > 0 {
			p("Fault windows (`%sfaults.csv`):\n\n", g.Prefix)
			for _, bd := range g.Bands {
				p("- %s: %.3g s – %.3g s", bd.Label, bd.Start, bd.End)
				if bd.Detected > 0 {
					p(", detected at %.3g s", bd.Detected)
				}
				p("\n")
			}
			p("\n")
		}
		imageSections(&b, sg.images)
		noteList(&b, sg.notes)
		if len(sg.notes) > 0 {
			p("\n")
		}
	}

	p("## Parameter curves\n\n")
	if s.curve != nil {
		p("Curve: `%s` (%d points, seeds %s", sweep.CurveJSON, len(s.curve.Points), sweep.FormatSeeds(s.curve.Seeds))
		if s.curve.Command != "" {
			p(", from `%s`", s.curve.Command)
		}
		p(").\n\n")
		s.curveTable(&b)
	}
	imageSections(&b, s.curves)
	noteList(&b, s.curveNotes)
	p("\n## Overhead\n\n")
	imageSections(&b, s.overhead)
	noteList(&b, s.overheadNotes)
	if len(s.failed) > 0 {
		p("\n## Failed runs\n\n")
		for _, f := range s.failed {
			p("- %s seed %d: %s (replay: `%s`)\n", f.Point, f.Seed, firstLine(f.Error), f.Replay)
		}
	}
	if len(s.rep.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range s.rep.Notes {
			p("- %s\n", n)
		}
	}
	return b.Bytes()
}

// rateLine says what input rate the runs had and how it was chosen.
func rateLine(r *harness.Result) string {
	rate := r.OfferedRPS
	if rate == 0 {
		rate = r.Config.RateRPS // results written before offered_rps
	}
	switch r.RateChosen {
	case harness.RateAutomatic:
		return fmt.Sprintf("Offered rate: %.0f records/s (chosen automatically: %s).", rate, r.RateRule)
	case harness.RateGiven:
		return fmt.Sprintf("Offered rate: %.0f records/s (given by --rate).", rate)
	}
	return fmt.Sprintf("Offered rate: %.0f records/s.", rate)
}

// runDetails writes, per run of a group, one line on what a reader of its
// sink saw, then its checkpoint summary and what each crash took down and
// how the recovery went, where the run has them.
func runDetails(b *bytes.Buffer, g *group) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("What a reader of each sink saw (an effect is one output of one input record; docs/metrics.md, Effect):\n\n")
	for i, r := range g.Runs {
		p("- **%s**: %s\n", g.Labels[i], harness.ReaderView(r.Result))
	}
	p("\n")
	var cps, recs []string
	for i, r := range g.Runs {
		if c := harness.SummarizeCheckpoints(r.Events); c != nil {
			cps = append(cps, fmt.Sprintf("- **%s**: %s\n", g.Labels[i], c))
		}
		for _, rc := range r.Result.Recoveries {
			line := rc.CrashLine()
			if ph := rc.Phases.String(); ph != "" {
				if line == "" {
					line = rc.Fault
				}
				line += "; recovery: " + ph
			}
			if line != "" {
				recs = append(recs, fmt.Sprintf("- **%s**: %s\n", g.Labels[i], line))
			}
		}
	}
	if len(cps) > 0 {
		p("Checkpoints (trigger to completion; from `events.jsonl`):\n\n%s\n", strings.Join(cps, ""))
	}
	if len(recs) > 0 {
		p("Crashes and recovery phases (seconds after the crash; docs/metrics.md, Recovery phases):\n\n%s\n", strings.Join(recs, ""))
	}
}

// curveTable lists the core medians per point.
func (s *summary) curveTable(b *bytes.Buffer) {
	c := s.curve
	fmt.Fprintf(b, "| point | seeds | recovery (s) | throughput (records/s) | p99 (ms) | duplicates | lost |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, pt := range c.Points {
		med := func(k string) string {
			st, ok := pt.Metrics[k]
			if pt.NoFault && k == "recovery_time_s" {
				return "n/a" // no fault to recover from
			}
			if !ok || st.Median == nil {
				if ok && st.Null > 0 && k == "recovery_time_s" {
					return "never"
				}
				return "n/a"
			}
			txt := fmt.Sprintf("%.4g", *st.Median)
			if st.Min != nil && *st.Max != *st.Min {
				txt += fmt.Sprintf(" [%.4g–%.4g]", *st.Min, *st.Max)
			}
			return txt
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", pt.ID, len(pt.Seeds), med("recovery_time_s"), med("throughput_rps"),
			med("latency_p99_ms"), med("duplicates"), med("lost"))
	}
	fmt.Fprintf(b, "\nMedian over seeds, [min–max] where seeds differ.\n\n")
}

// imageSections shows each plot under its title, with a link to its data.
func imageSections(b *bytes.Buffer, images []image) {
	for _, im := range images {
		fmt.Fprintf(b, "### %s\n\n![%s](%s)\n\nData: [%s](%s)\n\n", im.title, im.title, im.file, csvName(im.file), csvName(im.file))
	}
}

// noteList lists notes (plots skipped and why) as bullets.
func noteList(b *bytes.Buffer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
}

func csvName(png string) string { return strings.TrimSuffix(png, ".png") + ".csv" }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
