package benchcli

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// snapshot is every file, folder and link under root with its content (a
// link's target), so a test can require a folder to be untouched byte for
// byte, hidden temporary files included.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			files[rel] = "link " + target
			return err
		case d.IsDir():
			files[rel] = "folder"
		default:
			b, err := os.ReadFile(path)
			files[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// bench merge never writes into its inputs, refuses a non-empty --out that
// is not a previous merge of the same shards, and names shards of different
// sweeps or campaigns as such (not as "both shard 1/2"). Each refusal is one
// line, exit 2, every input folder unchanged byte for byte and a new --out
// not created.
func TestMergeRefusals(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"sweep", "--system", "none", "--duration", "1s", "--drain", "1s", "--jobs", "1"}
	sweepShard := func(name, param, shard string) string {
		d := filepath.Join(dir, name)
		if code, o, e := bench(t, append(grid, "--param", param, "--shard", shard, "--out", d)...); code != 0 {
			t.Fatalf("sweep %s: exit %d\n%s\n%s", name, code, o, e)
		}
		return d
	}
	a1 := sweepShard("a1", "rate=1000,2000", "1/2")
	a2 := sweepShard("a2", "rate=1000,2000", "2/2")
	b1 := sweepShard("b1", "rate=3000,4000", "1/2")
	b2 := sweepShard("b2", "rate=3000,4000", "2/2")
	t1 := tortureShard(t, dir)
	merged := filepath.Join(dir, "merged")
	if code, o, e := bench(t, "merge", "--out", merged, a1, a2); code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, o, e)
	}
	stray := filepath.Join(dir, "stray")
	if err := os.MkdirAll(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stray, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link-to-a1")
	if err := os.Symlink(a1, link); err != nil {
		t.Fatal(err)
	}
	inputs := []string{a1, a2, b1, b2, t1, merged, stray}
	before := map[string]map[string]string{}
	for _, d := range inputs {
		before[d] = snapshot(t, d)
	}
	rows := []struct {
		name string
		args []string
		want string
	}{
		{"out is an input", []string{"--out", a1, a1, a2}, "--out " + a1 + " is the input shard folder " + a1},
		{"out is the second input", []string{"--out", a2, a1, a2}, "is the input shard folder " + a2},
		{"out inside an input", []string{"--out", filepath.Join(a1, "merged"), a1, a2}, "is inside the input shard folder " + a1},
		{"out a link to an input", []string{"--out", link, a1, a2}, "is the input shard folder " + a1},
		{"out inside a link to an input", []string{"--out", filepath.Join(link, "m"), a1, a2}, "is inside the input shard folder " + a1},
		{"out is the torture input", []string{"--out", t1, t1}, "is the input shard folder " + t1},
		{"out holds other files", []string{"--out", stray, a1, a2}, stray + " is not empty and holds no merge of these shards"},
		{"out holds another sweep's merge", []string{"--out", merged, b1, b2}, merged + " is not empty and holds no merge of these shards"},
		{"out holds a shard, not a merge", []string{"--out", b1, a1, a2}, b1 + " is not empty and holds no merge of these shards"},
		{"out holds a sweep, merging a campaign", []string{"--allow-partial", "--out", merged, t1}, merged + " is not empty and holds no merge of these shards"},
		{"two grids, shards 1/2 and 2/2", []string{"--out", filepath.Join(dir, "m1"), a1, b2}, "different sweeps: " + b2 + " is of grid"},
		{"two grids, both shard 1/2", []string{"--out", filepath.Join(dir, "m2"), a1, b1}, "different sweeps: " + b1 + " is of grid"},
		{"a sweep and a campaign", []string{"--out", filepath.Join(dir, "m3"), a1, t1}, "different campaigns/sweeps: " + t1 + " is a torture campaign"},
		{"a campaign and a sweep", []string{"--out", filepath.Join(dir, "m4"), t1, a2}, "different campaigns/sweeps: " + a2 + " is a sweep"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.args[slices.Index(tc.args, "--out")+1]
			_, existed := os.Lstat(out)
			requireUsageError(t, tc.want, append([]string{"merge"}, tc.args...)...)
			for _, d := range inputs {
				if after := snapshot(t, d); !reflect.DeepEqual(before[d], after) {
					t.Fatalf("%s changed:\nbefore %v\nafter  %v", d, slices.Sorted(maps.Keys(before[d])), slices.Sorted(maps.Keys(after)))
				}
			}
			if _, err := os.Lstat(out); existed != nil && err == nil {
				t.Fatalf("%s was created", out)
			}
		})
	}
	// A previous merge of the same shards is merged into again.
	if code, o, e := bench(t, "merge", "--out", merged, a1, a2); code != 0 || !strings.Contains(o, "2 points, 0 missing") {
		t.Fatalf("merging again into %s: exit %d\n%s\n%s", merged, code, o, e)
	}
}
