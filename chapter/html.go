package chapter

import (
	buf "bytes"
	"fmt"
	"html/template"
	"path/filepath"
)

// HTMLFile is the chapter's page beside chapter.md.
const HTMLFile = "chapter.html"

// HTML is chapter.html: the same table, paper figures, plots and runs as
// chapter.md, as one self-contained page (no script, no request: it opens
// from file://), with each crash run that was traced linked to its run
// explorer page (views: job ID -> run.html relative to the page), so a
// reader goes from a cell to the protocol acting in that run.
func HTML(p Page, views map[string]string) ([]byte, error) {
	type link struct{ Name, Href, View string }
	type entry struct {
		Setup, Text, Mark, Why string
		Links                  []link
	}
	type cell struct {
		Claim   string
		Entries []entry
	}
	type row struct {
		Name, How string
		Cells     []cell
	}
	links := func(jobs []string) []link {
		var ls []link
		for _, j := range jobs {
			ls = append(ls, link{Name: j, Href: p.Res.link(j), View: views[j]})
		}
		return ls
	}
	var rows []row
	for _, r := range p.Rows {
		rr := row{Name: r.Name, How: r.How}
		for _, c := range r.Cells {
			cc := cell{Claim: c.Claim}
			for _, e := range c.Entries {
				mark := map[Mark]string{Agrees: "agrees", Disagrees: "disagrees", NotMeasured: "not-measured"}[e.Mark]
				cc.Entries = append(cc.Entries, entry{Setup: e.Setup, Text: e.Text, Mark: mark, Why: e.Why, Links: links(e.Jobs)})
			}
			rr.Cells = append(rr.Cells, cc)
		}
		rows = append(rows, rr)
	}
	type paper struct {
		Figure, Paper, Measured, Ratio string
		Fitted                         bool
		Links                          []link
	}
	var papers []paper
	for _, f := range p.Papers {
		pp := paper{Figure: f.Figure, Paper: num(f.Paper), Measured: "not measured", Ratio: "-", Fitted: f.Fitted, Links: links(f.Jobs)}
		if f.Ok {
			pp.Measured, pp.Ratio = num(f.Measured), fmt.Sprintf("%.2f", f.Measured/f.Paper)
		}
		papers = append(papers, pp)
	}
	type run struct {
		ID, Href, View, Failed, Replay string
	}
	var runs []run
	for _, j := range p.Jobs {
		r := run{ID: j.ID, Href: p.Res.link(j.ID), View: views[j.ID], Replay: j.Command(), Failed: p.Res.Failed[j.ID]}
		if res := p.Res.Runs[j.ID]; res != nil {
			r.Replay = res.Replay
		}
		runs = append(runs, r)
	}
	var pngs []string
	for _, png := range p.PNGs {
		pngs = append(pngs, filepath.ToSlash(png))
	}
	var b buf.Buffer
	err := chapterPage.Execute(&b, map[string]any{
		"Command": p.Command, "Quick": p.Quick, "Hardware": p.Hardware, "Fitted": Hardware,
		"Columns": Columns[:4], "Rows": rows, "Papers": papers, "PNGs": pngs, "Runs": runs,
	})
	return b.Bytes(), err
}

var chapterPage = template.Must(template.New(HTMLFile).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'self' file: data:">
<title>The chapter's comparison table, measured</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.4em .5em;vertical-align:top;text-align:left}
th{background:#f3f3f3}
td.dim{font-weight:bold;white-space:nowrap}
.claim{font-style:italic;color:#555;margin-bottom:.3em}
.entry{margin:.25em 0}
.agrees::after{content:" \2713";color:#080}
.disagrees{background:#fde8e8}
.why{color:#a00}
.not-measured{color:#777}
a.view{font-weight:bold;color:#0a5}
code{font-size:12px;word-break:break-all}
img{max-width:48%;margin:.5em}
</style></head><body>
<h1>The chapter's comparison table, measured</h1>
<p>Seed 004's comparison table of Storm (+Trident), Spark Streaming (D-Streams), Flink and Kafka Streams, each cell's claim
translated from the seed and, below it, what ftbench measured for each configuration on the same workloads, hardware model
(<code>--hardware {{.Hardware}}</code>) and faults. A tick marks a figure that agrees with the claim, a red cell one that
does not (with why); a figure without a mark answers a claim no number can break. Each figure links its run folder;
<b>view</b> opens the run explorer of a traced crash run. How each cell is measured: docs/chapter.md.</p>
{{if .Quick}}<p>This is the <b>quick</b> campaign (short probes, capacity within 10%, one seed): figures are indicative.</p>{{end}}
<p>Made by: <code>{{.Command}}</code></p>
<table id="chapter">
<tr><th>dimension</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td class="dim" title="{{.How}}">{{.Name}}</td>
{{range .Cells}}<td><div class="claim">seed: “{{.Claim}}”</div>
{{range .Entries}}<div class="entry {{.Mark}}"><b>{{.Setup}}:</b> {{if eq .Mark "not-measured"}}not measured: {{.Why}}{{else}}{{.Text}}{{end}}{{if eq .Mark "disagrees"}} <span class="why">disagrees: {{.Why}}</span>{{end}}
{{range .Links}} <a href="{{.Href}}">{{.Name}}</a>{{if .View}} <a class="view" href="{{.View}}">view</a>{{end}}{{end}}</div>
{{end}}</td>{{end}}</tr>
{{end}}</table>
<h2>Comparable hardware: the D-Streams paper's figures</h2>
<p><code>--hardware {{.Fitted}}</code> was fitted to one figure (marked fit); the others are predictions.</p>
<table id="papers"><tr><th>figure</th><th>paper</th><th>measured</th><th>measured / paper</th><th>runs</th></tr>
{{range .Papers}}<tr><td>{{.Figure}}{{if .Fitted}} (fit){{end}}</td><td>{{.Paper}}</td><td>{{.Measured}}</td><td>{{.Ratio}}</td><td>{{range .Links}}<a href="{{.Href}}">{{.Name}}</a> {{end}}</td></tr>
{{end}}</table>
{{if .PNGs}}<h2>Plots</h2>{{range .PNGs}}<img src="{{.}}" alt="{{.}}">{{end}}{{end}}
<h2 id="runs">Runs</h2>
<ul>{{range .Runs}}<li><a href="{{.Href}}">{{.ID}}</a>{{if .View}} <a class="view" href="{{.View}}">view</a>{{end}}{{if .Failed}} — FAILED: {{.Failed}}{{end}}: <code>{{.Replay}}</code></li>
{{end}}</ul>
</body></html>
`))
