package chapter

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Page is what chapter.md is made of.
type Page struct {
	Command string // the bench chapter line that made it
	Quick   bool   // --quick
	// Hardware is the campaign's hardware profile.
	Hardware string
	Rows     []Row    // Build
	Papers   []Paper  // PaperFigures
	Jobs     []Job    // the campaign, for the runs section
	Res      *Results // for each run's replay line
	PNGs     []string // plots, relative to chapter.md
}

// markText is how a mark reads in a cell.
func markText(e Entry) string {
	switch e.Mark {
	case Agrees:
		return " ✓"
	case Disagrees:
		return " **✗ disagrees:** " + e.Why
	case NotMeasured:
		return "not measured: " + e.Why
	}
	return ""
}

// cellText is one cell: the seed's claim, then each setup's figure with
// its mark and links to the runs behind it.
func cellText(c Cell, r *Results) string {
	parts := []string{"*seed:* “" + c.Claim + "”"}
	for _, e := range c.Entries {
		s := "**" + e.Setup + ":** "
		if e.Mark == NotMeasured {
			s += markText(e)
		} else {
			s += e.Text + markText(e)
		}
		var links []string
		for _, j := range e.Jobs {
			links = append(links, fmt.Sprintf("[%s](%s)", j, r.link(j)))
		}
		if len(links) > 0 {
			s += " (" + strings.Join(links, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.ReplaceAll(strings.Join(parts, "<br>"), "|", `\|`)
}

// Markdown is chapter.md.
func Markdown(p Page) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# The chapter's comparison table, measured\n\n")
	w("Seed 004's comparison table of Storm (+Trident), Spark Streaming (D-Streams), Flink and Kafka Streams (end of section 21.2.7), ")
	w("with each cell's claim translated from the seed and, below it, what ftbench measured for each configuration of the system ")
	w("on the same workloads, hardware model (`--hardware %s`) and faults. ✓ marks a figure that agrees with the claim, ", p.Hardware)
	w("**✗** one that does not; a figure without a mark answers a claim no number can break. Each figure links the run behind it; ")
	w("the replay lines are under [Runs](#runs). How each cell is measured and where the model departs from the real systems: docs/chapter.md.\n\n")
	if p.Quick {
		w("This is the **quick** campaign (`--quick`: short probes, capacity within 10%%, one seed): figures are indicative.\n\n")
	}
	w("Made by: `%s`\n\n", p.Command)
	w("| dimension | %s |\n|---|---|---|---|---|\n", strings.Join(Columns[:4], " | "))
	for _, r := range p.Rows {
		var cells []string
		for _, c := range r.Cells {
			cells = append(cells, cellText(c, p.Res))
		}
		w("| **%s** | %s |\n", r.Name, strings.Join(cells, " | "))
	}
	w("\nWhat each row measures:\n\n")
	for _, r := range p.Rows {
		if r.How != "" {
			w("- **%s**: %s.\n", r.Name, r.How)
		}
	}
	w("\n## Comparable hardware: the D-Streams paper's figures\n\n")
	w("`--hardware %s` was fitted to one figure (marked *fit*); the others are predictions of the model on that profile (this campaign ran on `--hardware %s`).\n\n", Hardware, p.Hardware)
	w("| figure | paper | measured | measured / paper | runs |\n|---|---|---|---|---|\n")
	for _, f := range p.Papers {
		runs := make([]string, len(f.Jobs))
		for i, j := range f.Jobs {
			runs[i] = fmt.Sprintf("[%s](%s)", j, p.Res.link(j))
		}
		fit := ""
		if f.Fitted {
			fit = " (*fit*)"
		}
		if !f.Ok {
			w("| %s%s | %s | not measured | - | %s |\n", f.Figure, fit, num(f.Paper), strings.Join(runs, ", "))
			continue
		}
		w("| %s%s | %s | %s | %.2f | %s |\n", f.Figure, fit, num(f.Paper), num(f.Measured), f.Measured/f.Paper, strings.Join(runs, ", "))
	}
	if len(p.PNGs) > 0 {
		w("\n## Plots\n\n")
		for _, png := range p.PNGs {
			w("![%s](%s)\n\n", strings.TrimSuffix(filepath.Base(png), ".png"), filepath.ToSlash(png))
		}
	}
	w("\n## Runs\n\n")
	w("Each job's folder and the line that repeats it (a latency run's rate is half its setup's grep 100 B capacity).\n\n")
	for _, j := range p.Jobs {
		replay := j.Command()
		if r := p.Res.Runs[j.ID]; r != nil {
			replay = r.Replay
		}
		status := ""
		if f, ok := p.Res.Failed[j.ID]; ok {
			status = " — FAILED: " + f
		}
		w("- [%s](%s)%s: `%s`\n", j.ID, p.Res.link(j.ID), status, replay)
	}
	return b.String()
}

func num(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
