package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"ftbench/engine"
	"ftbench/systems"
	_ "ftbench/systems/all"
)

// The README is the front door: short, and everything in it that could go
// stale is either checked here or lives in a doc that says how it was
// measured.
const maxReadmeLines = 300

// pages is every markdown page the links are checked in: the README and
// docs/*.md, keyed by their path from the repository root.
func pages(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	out["README.md"] = string(b)
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		out["docs/"+d] = string(b)
	}
	return out
}

func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, want at most %d: move detail into docs/ and link it", n, maxReadmeLines)
	}
}

// The two set-up commands of the README, exactly.
func TestReadmeSetUpCommands(t *testing.T) {
	readme := pages(t)["README.md"]
	for _, cmd := range []string{
		"    go run ./cmd/bench run --system barrier --fault crash\n",
		"    go test ./...\n",
	} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md lacks the set-up command %q", strings.TrimSpace(cmd))
		}
	}
}

var (
	fence    = regexp.MustCompile("(?ms)^ {0,3}```.*?^ {0,3}```[^\n]*$")
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	link     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#* *$`)
)

// prose is a page without its fenced code blocks and code spans, where a
// link cannot be.
func prose(page string) string {
	page = fence.ReplaceAllString(page, "")
	return codeSpan.ReplaceAllString(page, "")
}

// slug is GitHub's anchor for a heading: the rendered text lowercased,
// punctuation and symbols dropped, each space turned into '-'.
func slug(h string) string {
	h = strings.NewReplacer("`", "", "*", "").Replace(h)
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists a page's heading anchors, duplicates numbered as GitHub
// numbers them (name, name-1, name-2, ...).
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(page, ""), -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"run.json keys":                                                     "runjson-keys",
		"Drained, quiescent, undrained":                                     "drained-quiescent-undrained",
		"The runtime (engine/sim) in one page":                              "the-runtime-enginesim-in-one-page",
		"Regression checks (`bench regress`)":                               "regression-checks-bench-regress",
		"2. Recovery grows with the checkpoint interval":                    "2-recovery-grows-with-the-checkpoint-interval",
		"3. Parallel recovery vs upstream backup: t_par ≈ λ/(N(1-λ)), t_up": "3-parallel-recovery-vs-upstream-backup-t_par--λn1-λ-t_up",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// Every relative link in the README and docs/ names a file that exists,
// and every #anchor a heading of its page.
func TestLinksResolve(t *testing.T) {
	all := pages(t)
	heads := map[string]map[string]bool{}
	for name, page := range all {
		heads[name] = anchors(page)
	}
	checked := 0
	for name, page := range all {
		for _, m := range link.FindAllStringSubmatch(prose(page), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := name
			if file != "" {
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), file)))
				if _, err := os.Stat(filepath.Join("..", dest)); err != nil {
					t.Errorf("%s links %q: %s does not exist", name, target, dest)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			h, ok := heads[dest]
			if !ok {
				t.Errorf("%s links %q: anchors are only checked in README.md and docs/*.md", name, target)
				continue
			}
			if !h[anchor] {
				t.Errorf("%s links %q: %s has no heading with anchor #%s", name, target, dest, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: is the link pattern still right?", checked)
	}
}

// The cost table of docs/cost-model.md is engine.DefaultCost: the same
// parameters in the same order, the same defaults, the same per-operator
// marks.
func TestCostModelTable(t *testing.T) {
	b, err := os.ReadFile("cost-model.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| ([^|]+) \\| ([^|]+) \\|$")
	rows := row.FindAllStringSubmatch(string(b), -1)
	c := engine.DefaultCost()
	params := c.Params()
	if len(rows) != len(params) {
		t.Fatalf("cost-model.md's table has %d parameters, engine.DefaultCost %d", len(rows), len(params))
	}
	for i, p := range params {
		name, def, meaning := rows[i][1], strings.TrimSpace(rows[i][2]), strings.TrimSpace(rows[i][3])
		if name != p.Name {
			t.Errorf("row %d: %s, want %s (the order of engine.CostModel.Params)", i+1, name, p.Name)
			continue
		}
		if def != p.Value() {
			t.Errorf("%s: the table says %s, engine.DefaultCost %s", name, def, p.Value())
		}
		if op := strings.HasPrefix(meaning, "*op*"); op != p.PerOp {
			t.Errorf("%s: marked per operator %v in the table, %v in the engine", name, op, p.PerOp)
		}
	}
}

// The README's systems table names every registered system with its
// variants, and each variant's claim at the default options.
func TestReadmeSystemsTable(t *testing.T) {
	readme := pages(t)["README.md"]
	row := regexp.MustCompile("(?m)^\\| `([a-z]+)` \\| ([^|]+) \\| ([^|]+) \\|")
	cells := map[string][2]string{}
	for _, m := range row.FindAllStringSubmatch(readme, -1) {
		cells[m[1]] = [2]string{strings.TrimSpace(m[2]), strings.TrimSpace(m[3])}
	}
	for _, name := range systems.Names() {
		s, err := systems.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := cells[name]
		if !ok {
			t.Errorf("the README's systems table has no row for %s", name)
			continue
		}
		var want []string
		for _, v := range s.Variants() {
			if v == "default" {
				want = append(want, v)
			} else {
				want = append(want, "`"+v+"`")
			}
		}
		if got := strings.Join(want, ", "); c[0] != got {
			t.Errorf("%s: variants %q in the README, %q in the code", name, c[0], got)
		}
		opts := systems.Options{}
		for _, f := range s.Flags() {
			opts[f.Name] = f.Default
		}
		for _, v := range s.Variants() {
			if claim := s.Claim(v, opts).String(); !strings.Contains(c[1], claim) {
				t.Errorf("%s/%s claims %q, which the README's row (%q) does not say", name, v, claim, c[1])
			}
		}
	}
	if len(cells) != len(systems.Names()) {
		t.Errorf("the README's systems table has %d rows, the registry %d systems", len(cells), len(systems.Names()))
	}
}

// Every line label bench run can print (a string literal starting with
// "label: " in its summary code) is explained in the README.
func TestReadmeExplainsEveryOutputLine(t *testing.T) {
	readme := pages(t)["README.md"]
	label := regexp.MustCompile(`"\s*([a-z]+):\s`)
	found := 0
	for _, f := range []string{"../benchcli/run.go", "../benchcli/observe.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range label.FindAllStringSubmatch(string(b), -1) {
			found++
			if !strings.Contains(readme, "`"+m[1]+":") {
				t.Errorf("bench run prints a %q line (%s) that the README does not explain", m[1]+":", f)
			}
		}
	}
	if found < 10 {
		t.Errorf("found %d output labels in benchcli: is the pattern still right?", found)
	}
}
