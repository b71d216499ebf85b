package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckOutsideInputs compares folders, not spellings: another name of a
// shard (a link, "..", a trailing slash) is the shard, a folder whose name
// merely starts with the shard's is not inside it.
func TestCheckOutsideInputs(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "a1")
	if err := os.MkdirAll(filepath.Join(shard, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shard, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out, want string // want "" = accepted
	}{
		{shard, "is the input shard folder"},
		{shard + "/", "is the input shard folder"},
		{filepath.Join(dir, "x", "..", "a1"), "is the input shard folder"},
		{filepath.Join(dir, "link"), "is the input shard folder"},
		{filepath.Join(shard, "run"), "is inside the input shard folder"},
		{filepath.Join(shard, "new", "deeper"), "is inside the input shard folder"},
		{filepath.Join(dir, "link", "new"), "is inside the input shard folder"},
		{filepath.Join(dir, "a1-merged"), ""},
		{filepath.Join(dir, "a1..x"), ""},
		{dir, ""},
	} {
		err := CheckOutsideInputs(tc.out, []string{filepath.Join(dir, "other"), shard})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("--out %s: refused: %v", tc.out, err)
		case tc.want != "" && (err == nil || !IsInputError(err) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("--out %s: got %v, want an input error saying %q", tc.out, err, tc.want)
		}
	}
}
