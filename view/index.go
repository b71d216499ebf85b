package view

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"sort"

	"ftbench/sweep"
)

// IndexFile is the report's interactive page, next to summary.md.
const IndexFile = "index.html"

// IndexRun is one run the report covers: its folder name, its run.html
// relative to the report folder ("" when the run was not traced) and its
// one-line title.
type IndexRun struct {
	Name  string `json:"name"`
	Href  string `json:"href"`
	Title string `json:"title"`
}

// Table is one of the report's CSV files as the page shows it: a chart per
// varying column when it has a t_s column, else a table.
type Table struct {
	Name   string     `json:"name"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// WriteIndex writes out/index.html: links to every run's view and the
// report's CSV files (relative to out) drawn interactively, the same data
// the PNGs show. It returns the page's path.
func WriteIndex(out, title string, runs []IndexRun, csvFiles []string) (string, error) {
	tables := []Table{}
	sorted := append([]string(nil), csvFiles...)
	sort.Strings(sorted)
	for _, name := range sorted {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			return "", err
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			return "", err
		}
		if len(recs) == 0 {
			continue
		}
		tables = append(tables, Table{Name: filepath.ToSlash(name), Header: recs[0], Rows: append([][]string{}, recs[1:]...)})
	}
	if runs == nil {
		runs = []IndexRun{}
	}
	b, err := render("index.html.tmpl", indexJS, title, map[string]any{"title": title, "runs": runs, "tables": tables})
	if err != nil {
		return "", err
	}
	path := filepath.Join(out, IndexFile)
	return path, sweep.WriteFileAtomic(path, b)
}
