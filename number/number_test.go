package number

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestFloat(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1.5", 1.5, true},
		{"-2", -2, true},
		{"1e3", 1000, true},
		{"0", 0, true},
		{"NaN", 0, false},
		{"nan", 0, false},
		{"Inf", 0, false},
		{"+Inf", 0, false},
		{"-inf", 0, false},
		{"Infinity", 0, false},
		{"1e400", 0, false}, // out of range: strconv's error
		{"", 0, false},
		{"ten", 0, false},
	} {
		got, err := Float(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Float(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// ownData lists the files that call strconv.ParseFloat on data ftbench
// wrote itself (its CSVs and curve files), never on what a user typed.
var ownData = map[string]bool{
	"reports/curves.go": true,
	"reports/groups.go": true,
	"sweep/store.go":    true,
	"sweep/curve.go":    true,
}

// Every number a user types goes through Float: no other non-test code
// calls strconv.ParseFloat.
func TestOneParser(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "results" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "number/") || ownData[rel] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && sel.Sel.Name == "ParseFloat" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "strconv" {
					t.Errorf("%s calls strconv.ParseFloat: parse what users type with number.Float, which refuses NaN and Inf", rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
