package sweep

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Collect aggregates the runs stored in dir for manifest m's whole grid.
// Unreadable results are returned as problems (and left out).
func Collect(dir string, m *Manifest) (*Curve, []Problem, error) {
	g, err := m.Expand()
	if err != nil {
		return nil, nil, &InputError{fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)}
	}
	st, err := Scan(dir)
	if err != nil {
		return nil, nil, err
	}
	runs, failed := st.byKey()
	var outs []*RunOutcome
	for _, r := range g.Runs {
		ro := &RunOutcome{Run: r}
		if sr, ok := runs[r.Key]; ok {
			ro.Dir, ro.Result = sr.Dir, sr.Result
		} else if f, ok := failed[r.Key]; ok {
			ro.Dir, ro.Failed = f.Dir, f
		}
		outs = append(outs, ro)
	}
	whole := Shard{I: 1, N: 1}
	return Aggregate(m, g, whole, outs), st.Problems, nil
}

// Merge joins shard folders of one sweep into out: it copies (hard-links
// where it can) every run folder of the grid, writes a manifest without a
// shard, and aggregates the whole grid into out's curve files. Shards of
// different sweeps are refused, naming the folder, and so is an out that
// CheckMergeOut refuses.
func Merge(out string, shards []string, notice func(string)) (*Curve, error) {
	if notice == nil {
		notice = func(string) {}
	}
	if len(shards) == 0 {
		return nil, &InputError{fmt.Errorf("bench merge: name the shard folders to merge")}
	}
	var m *Manifest
	var first string
	for _, dir := range shards {
		sm, ok, err := ReadManifest(dir)
		if err != nil {
			return nil, &InputError{err}
		}
		if !ok {
			return nil, &InputError{fmt.Errorf("%s: not a sweep folder (no %s)", dir, ManifestFile)}
		}
		if m == nil {
			m, first = sm, dir
			continue
		}
		if sm.GridID() != m.GridID() {
			return nil, &InputError{fmt.Errorf("%s is a shard of a different sweep than %s (grid %s vs %s)", dir, first, sm.GridID(), m.GridID())}
		}
	}
	om, ok, err := ReadManifest(out)
	if err := CheckMergeOut(out, shards, err == nil && ok && om.Shard == nil && om.GridID() == m.GridID()); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	g, err := m.Expand()
	if err != nil {
		return nil, &InputError{fmt.Errorf("%s: %w", filepath.Join(first, ManifestFile), err)}
	}
	inGrid := map[string]bool{}
	for _, r := range g.Runs {
		inGrid[r.Key] = true
	}
	for _, dir := range shards {
		st, err := Scan(dir)
		if err != nil {
			return nil, err
		}
		for _, p := range st.Problems {
			notice("skipping corrupt results " + p.String())
		}
		var dirs []string
		for _, r := range st.Runs {
			if inGrid[r.Key] {
				dirs = append(dirs, r.Dir)
			}
		}
		for _, f := range st.Failed {
			if inGrid[f.Key] {
				dirs = append(dirs, f.Dir)
			}
		}
		for _, src := range dirs {
			dst := filepath.Join(out, filepath.Base(src))
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			if err := CopyRunDir(src, out); err != nil {
				return nil, fmt.Errorf("copying %s: %w", src, err)
			}
		}
	}
	mm := *m
	mm.Shard = nil
	if err := WriteFileAtomic(filepath.Join(out, ManifestFile), marshal(&mm)); err != nil {
		return nil, err
	}
	c, problems, err := Collect(out, &mm)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		notice("skipping corrupt results " + p.String())
	}
	if err := WriteCurve(out, c); err != nil {
		return nil, err
	}
	return c, nil
}

// CheckMergeOut refuses a merge's out folder before anything is written:
// one that CheckOutsideInputs refuses, or a non-empty folder that does not
// hold a previous merge of the same shards (holdsMerge: the same grid or
// campaign, without a shard), as Execute refuses a non-empty --out. A merge
// writes run folders, a manifest or report and curves or a summary into
// out, which would mix with, or replace, whatever else is there; merging
// again into its own earlier merge (a Slurm merge job re-run once more
// shards finished) only adds the runs it lacks.
func CheckMergeOut(out string, shards []string, holdsMerge bool) error {
	if err := CheckOutsideInputs(out, shards); err != nil {
		return err
	}
	if !holdsMerge && nonEmpty(out) {
		return &InputError{fmt.Errorf("%s is not empty and holds no merge of these shards; choose a new --out (a merge writes only into a new or empty folder, or into its own earlier merge)", out)}
	}
	return nil
}

// CheckOutsideInputs refuses an out folder that is one of the shard
// folders or inside one (symbolic links followed): a merge never writes
// into its inputs, since the shard would then hold the merged manifest,
// curve and other shards' runs, and no longer be the shard it was.
func CheckOutsideInputs(out string, shards []string) error {
	o := realPath(out)
	for _, dir := range shards {
		rel, err := filepath.Rel(realPath(dir), o)
		switch {
		case err != nil:
		case rel == ".":
			return &InputError{fmt.Errorf("--out %s is the input shard folder %s: a merge never writes into its inputs; choose a new folder", out, dir)}
		case rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)):
			return &InputError{fmt.Errorf("--out %s is inside the input shard folder %s: a merge never writes into its inputs; choose a folder outside it", out, dir)}
		}
	}
	return nil
}

// realPath is path made absolute with its symbolic links resolved as far
// as it exists; the rest (folders a merge would create) is kept as given.
// Two names of one folder (a link, "a/../a") are then one path.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for at := abs; ; {
		if r, err := filepath.EvalSymlinks(at); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(at)
		if parent == at {
			return abs
		}
		rest = filepath.Join(filepath.Base(at), rest)
		at = parent
	}
}

// CopyRunDir copies the files of run folder src into root/<base(src)>,
// hard-linking where it can, atomically (temporary folder, then rename).
// Merges (of sweeps and of torture campaigns) use it.
func CopyRunDir(src, root string) error {
	tmp, err := os.MkdirTemp(root, ".tmp-"+filepath.Base(src)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		s, d := filepath.Join(src, e.Name()), filepath.Join(tmp, e.Name())
		if os.Link(s, d) == nil {
			continue
		}
		if err := copyFile(s, d); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(root, filepath.Base(src)))
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
