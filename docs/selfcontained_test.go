// Package docs holds the project's documentation; its test keeps the
// documentation self-contained.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside matches references to material that is not in the repository:
// the original design document and the source-material folder beside it.
// The lecture notes are cited by title and section (architecture.md,
// "Sources"), never by path.
var outside = regexp.MustCompile(`DESIGN\.md|\.\./shared|shared/seeds|seeds/0\d\d_`)

// The README, docs/ and every comment in the code stand alone.
func TestNoReferencesOutsideTheRepository(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") && name != ".ci" || name == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".sh", ".sbatch", ".golden":
		case "": // scripts such as .ci/run; not fuzz corpora or binaries
			if !strings.HasPrefix(filepath.ToSlash(path), "../.ci/") && !strings.HasPrefix(filepath.ToSlash(path), "../scripts/") {
				return nil
			}
		default:
			return nil
		}
		if strings.HasSuffix(path, "selfcontained_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d refers to %q, which is not in the repository", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
