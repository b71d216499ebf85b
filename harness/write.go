package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"ftbench/systems"
)

// NewRunID names a run folder: time first so folders sort by age, then
// what ran, as TIME-SYSTEM-VARIANT-WORKLOAD-sSEED with the variant resolved
// (barrier-aligned, never barrier-default), so that run, torture, compare
// and sweep name the same run alike. It is not part of run.json's
// reproducible keys (only of host).
func NewRunID(cfg Config, now time.Time) string {
	variant := cfg.Variant
	if sys, err := systems.Lookup(cfg.System); err == nil {
		if v, err := systems.ResolveVariant(sys, variant); err == nil {
			variant = v
		}
	}
	if variant == "" {
		variant = "default"
	}
	return fmt.Sprintf("%s-%s-%s-%s-s%d", now.UTC().Format("20060102T150405.000000"), cfg.System, variant, cfg.Workload, cfg.Seed)
}

// MarshalResult encodes run.json deterministically (sorted map keys, fixed indentation).
func MarshalResult(res *Result) ([]byte, error) { return MarshalIndent(res) }

// MarshalIndent encodes v as indented JSON ending in a newline, like
// json.MarshalIndent but without escaping <, > and &: results files hold
// replay lines with fault specs (throttle@1s-2s:edge=split->count) that a
// reader copies into a shell, so they must read as typed.
func MarshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write stores an outcome as root/<runID>/{run.json,timeseries.csv,events.jsonl}
// and points root/latest at it. The folder is assembled under a temporary
// name and renamed into place, so a reader never sees a partial run.
func Write(root, runID string, out *Outcome) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("results folder %s: %w", root, err)
	}
	out.Result.Host.RunID = runID
	out.Result.Host.StartedAt = runID[:len("20060102T150405.000000")]
	tmp, err := os.MkdirTemp(root, ".tmp-"+runID+"-")
	if err != nil {
		return "", fmt.Errorf("results folder %s: %w", root, err)
	}
	defer os.RemoveAll(tmp) // no-op after the rename
	js, err := MarshalResult(out.Result)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "run.json"), js, 0o644); err != nil {
		return "", err
	}
	var csv bytes.Buffer
	if err := out.Series.WriteCSV(&csv); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "timeseries.csv"), csv.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := writeEvents(filepath.Join(tmp, "events.jsonl"), out); err != nil {
		return "", err
	}
	for name, b := range out.Files {
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(name)), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(root, runID)
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("results folder %s: %w", dir, err)
	}
	if err := pointLatest(root, runID); err != nil {
		return dir, err
	}
	return dir, nil
}

func writeEvents(path string, out *Outcome) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range out.Events {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pointLatest atomically replaces the root/latest symlink.
func pointLatest(root, runID string) error {
	tmp := filepath.Join(root, ".latest-"+runID)
	_ = os.Remove(tmp)
	if err := os.Symlink(runID, tmp); err != nil {
		return fmt.Errorf("results/latest: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(root, "latest")); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("results/latest: %w", err)
	}
	return nil
}
