package docs

import (
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layers is the package layering, lowest first (docs/contributing.md,
// "Layers"; TestContributingShowsTheLayerTable keeps the page's table equal
// to this one). A package imports only packages of layers below its own:
// never one above it, nor one of its own layer, so two systems never import
// each other. A pattern "a/*" is a's children that are not named on their
// own. A new package must be given a layer here; a new systems/<name>
// falls into "protocols" by itself.
var layers = []struct{ name, pkgs string }{
	{"leaves", "number, systems/internal/summary, trace"},
	{"foundation", "engine, keyed"},
	{"runtime-neutral channel rules", "engine/flow"},
	{"runtimes and models", "engine/sim, engine/live, faults, metrics, workloads"},
	{"checkers", "check"},
	{"system registry", "systems"},
	{"shared dataflow machinery", "systems/internal/stream, systems/internal/storm"},
	{"shared checkpoints", "systems/internal/checkpoint"},
	{"protocols", "systems/*"},
	{"the set of systems", "systems/all"},
	{"one run", "harness"},
	{"grids and searches", "sweep, capacity"},
	{"campaigns and reports", "torture, reports, chapter, view"},
	{"command line", "benchcli"},
	{"binaries", "cmd/*"},
}

// rules forbid imports the layer order alone would allow. Patterns: "a"
// exactly, "a/..." a and every package below it, "..." every package,
// "layer:NAME" a layer of the table.
var rules = []struct{ importer, imported, unless, why string }{
	{"...", "engine/sim", "harness", "only the harness picks a runtime; systems see it through engine.Ctx"},
	{"...", "engine/live", "harness", "only the harness picks a runtime; systems see it through engine.Ctx"},
	{"systems/...", "faults", "", "a system sees a fault only as what the runtime does to its processes"},
	{"...", "layer:protocols", "systems/all", "a protocol is reached through the registry (systems.Lookup); only systems/all links them in"},
	{"...", "systems/all", "cmd/...", "libraries stay generic over the registry; binaries (and tests) choose the systems"},
}

// deterministic are the packages whose code runs inside the simulation's
// processes: it talks to the world only through engine.Ctx (systems) or is
// a pure function of seed and position (workloads, keyed).
var deterministic = []string{"systems/...", "workloads", "keyed"}

// nondeterministic maps the standard packages deterministic code may not
// import (a "/..." key covers the packages below it too) to the reason.
var nondeterministic = map[string]string{
	"os/...":      "files and the environment",
	"io/ioutil":   "files",
	"io/fs":       "files",
	"net/...":     "the network",
	"syscall":     "the operating system",
	"sync/...":    "goroutines: a process runs one handler at a time",
	"runtime/...": "the Go scheduler",
	"math/rand":   "a global random source: use ctx.Rand() or engine.Mix64 of a child seed",
	"crypto/rand": "a random source outside the run seed: use ctx.Rand()",
	"log/...":     "output outside ctx.Record",
}

// forbiddenCalls are package-level functions deterministic code may not
// use, though their package is allowed for its types and pure functions.
var forbiddenCalls = map[string]struct {
	names []string // empty: every name but those in allow
	allow []string
	why   string
}{
	"time": {names: []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"},
		why: "the wall clock: use ctx.Now() and ctx.After"},
	"math/rand/v2": {allow: []string{"Rand", "Source", "New", "NewPCG", "PCG", "NewChaCha8", "ChaCha8", "NewZipf", "Zipf"},
		why: "the global random source: use ctx.Rand()"},
	"fmt": {names: []string{"Print", "Printf", "Println"}, why: "standard output: record events with ctx.Record"},
}

// goFile is one non-test Go file of the module.
type goFile struct {
	pkg    string // import path less the module prefix, e.g. "systems/barrier"
	ast    *ast.File
	mutant bool // built only with an ftbench_mutant_* tag
}

// moduleFiles parses every non-test .go file under the repository root, in
// every build (mutant files too), and returns them with the module path.
func moduleFiles(t *testing.T) (string, *token.FileSet, []goFile) {
	t.Helper()
	const root = ".."
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod names no module")
	}
	fset := token.NewFileSet()
	var files []goFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		gf := goFile{pkg: filepath.ToSlash(filepath.Dir(rel)), ast: f}
		if expr := buildConstraint(f); expr != nil {
			if !expr.Eval(func(tag string) bool { return tag != "ignore" }) {
				return nil // //go:build ignore: never part of a package
			}
			// With every other tag set, a file that needs no mutant tag
			// is in the normal build.
			gf.mutant = !expr.Eval(func(tag string) bool { return !strings.HasPrefix(tag, "ftbench_mutant_") })
		}
		files = append(files, gf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(m[1]), fset, files
}

func buildConstraint(f *ast.File) constraint.Expr {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) {
				if expr, err := constraint.Parse(c.Text); err == nil {
					return expr
				}
			}
		}
	}
	return nil
}

// layerOf returns pkg's layer (-1: in no layer); a package named on its own
// wins over a pattern.
func layerOf(pkg string) int {
	pattern := -1
	for i, l := range layers {
		for q := range strings.SplitSeq(l.pkgs, ", ") {
			if q == pkg {
				return i
			}
			if dir, ok := strings.CutSuffix(q, "/*"); ok && pattern < 0 && filepath.ToSlash(filepath.Dir(pkg)) == dir {
				pattern = i
			}
		}
	}
	return pattern
}

// matches reports whether pkg matches a pattern of rules or deterministic.
func matches(pattern, pkg string) bool {
	switch {
	case pattern == "...":
		return true
	case strings.HasPrefix(pattern, "layer:"):
		l := layerOf(pkg)
		return l >= 0 && layers[l].name == strings.TrimPrefix(pattern, "layer:")
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pattern == pkg
}

func describe(l int) string { return fmt.Sprintf("layer %d (%s)", l, layers[l].name) }

// No package imports one of its own layer or above, nor one the rules
// forbid; the error names the file, the import and the layers. Every
// protocol is linked into the binaries by systems/all.
func TestLayering(t *testing.T) {
	module, fset, files := moduleFiles(t)
	seen := map[string]bool{}
	linked := map[string]bool{} // what systems/all imports
	for _, f := range files {
		if !seen[f.pkg] {
			seen[f.pkg] = true
			if layerOf(f.pkg) < 0 {
				t.Errorf("package %s is in no layer: give it one in docs/layering_test.go's layers and docs/contributing.md's table", f.pkg)
			}
		}
		if f.pkg == "systems/all" {
			for _, imp := range f.ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				linked[strings.TrimPrefix(path, module+"/")] = true
			}
		}
		from := layerOf(f.pkg)
		for _, imp := range f.ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			where := fmt.Sprintf("%s: %s imports %s", fset.Position(imp.Pos()), f.pkg, dep)
			switch to := layerOf(dep); {
			case from < 0 || to < 0:
			case to == from:
				t.Errorf("%s, of its own %s: a package imports only from the layers below its own", where, describe(to))
			case to > from:
				t.Errorf("%s, of %s, above its own %s", where, describe(to), describe(from))
			}
			for _, r := range rules {
				if matches(r.importer, f.pkg) && matches(r.imported, dep) && (r.unless == "" || !matches(r.unless, f.pkg)) {
					t.Errorf("%s: %s", where, r.why)
				}
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(seen)) {
		if matches("layer:protocols", pkg) && !linked[pkg] {
			t.Errorf("systems/all does not import %s: no binary links it in, so no command can run it", pkg)
		}
	}
}

// Code that runs inside the simulation imports nothing that reaches the
// world outside engine.Ctx, starts no goroutine and calls no wall-clock or
// global-random function. Mutant-only files are exempt: they never run in a
// measured build (snapshot's cl mutant collects rejected snapshots for the
// checkers' corpus under a mutex). Map iteration order is not checked here.
func TestDeterminism(t *testing.T) {
	_, fset, files := moduleFiles(t)
	for _, f := range files {
		if f.mutant || !slices.ContainsFunc(deterministic, func(p string) bool { return matches(p, f.pkg) }) {
			continue
		}
		local := map[string]string{} // name in this file -> import path
		for _, imp := range f.ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for q, why := range nondeterministic {
				if matches(q, path) {
					t.Errorf("%s: %s imports %s: %s", fset.Position(imp.Pos()), f.pkg, path, why)
				}
			}
			name := filepath.Base(path)
			if path == "math/rand/v2" {
				name = "rand"
			}
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = path
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: %s starts a goroutine: a process runs one handler at a time", fset.Position(n.Pos()), f.pkg)
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Obj == nil && (id.Name == "print" || id.Name == "println") {
					t.Errorf("%s: %s calls %s: record events with ctx.Record", fset.Position(n.Pos()), f.pkg, id.Name)
				}
			case *ast.SelectorExpr:
				id, ok := n.X.(*ast.Ident)
				if !ok || id.Obj != nil { // a local variable, not a package
					return true
				}
				c, ok := forbiddenCalls[local[id.Name]]
				if ok && (slices.Contains(c.names, n.Sel.Name) || len(c.names) == 0 && !slices.Contains(c.allow, n.Sel.Name)) {
					t.Errorf("%s: %s uses %s.%s: %s", fset.Position(n.Pos()), f.pkg, local[id.Name], n.Sel.Name, c.why)
				}
			}
			return true
		})
	}
}

// The table in docs/contributing.md is the one this test enforces.
func TestContributingShowsTheLayerTable(t *testing.T) {
	b, err := os.ReadFile("contributing.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, l := range layers {
		var pkgs []string
		for q := range strings.SplitSeq(l.pkgs, ", ") {
			pkgs = append(pkgs, "`"+q+"`")
		}
		want = append(want, fmt.Sprintf("| %d | %s | %s |", i, l.name, strings.Join(pkgs, ", ")))
	}
	got := regexp.MustCompile(`(?m)^\| \d+ \|.*\|$`).FindAllString(string(b), -1)
	if !slices.Equal(got, want) {
		t.Errorf("docs/contributing.md's layer table is\n%s\nwant (docs/layering_test.go's layers)\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
