package torture

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"ftbench/harness"
	"ftbench/sweep"
)

// SummaryFormat identifies summary.json.
const SummaryFormat = "ftbench-torture-summary/1"

// Summary is summary.json: the part of a campaign's report that is a pure
// function of the campaign (no wall time, jobs, folders or shards), so a
// campaign merged from shards has a byte-identical summary to the same
// campaign run in one piece.
type Summary struct {
	Format     string `json:"format"`
	CampaignID string `json:"campaign_id"`
	System     string `json:"system"`
	Variant    string `json:"variant"`
	Workload   string `json:"workload"`
	Seed       uint64 `json:"seed"`
	Claim      string `json:"claimed_guarantee"`
	// Runs is the campaign's size, Finished the runs with an outcome and
	// Missing the others (a shard that never ran or did not finish).
	Runs     int           `json:"runs"`
	Finished int           `json:"finished"`
	Missing  []int         `json:"missing"`
	Counts   map[Class]int `json:"counts"`
	// Failures are the runs that need attention, in run order, with the
	// line that replays each.
	Failures []Failure `json:"failures"`
	Shrunk   []*Shrunk `json:"shrunk"` // without their folders
	Coverage Coverage  `json:"coverage"`
	ExitCode int       `json:"exit_code"`
}

// Failure is a run that broke the claim, did not recover, could not run,
// or whose check timed out.
type Failure struct {
	Index    int      `json:"index"`
	Seed     uint64   `json:"seed"`
	Class    Class    `json:"class"`
	Problem  string   `json:"problem,omitempty"`
	Faults   []string `json:"faults"`
	Observer string   `json:"observer,omitempty"`
	Replay   string   `json:"replay"`
}

// Coverage is what the campaign exercised: faults drawn per kind, runs with
// at least one fault of each kind, and the observer's results.
type Coverage struct {
	Faults   map[string]int `json:"faults"`
	RunsWith map[string]int `json:"runs_with"`
	Observer map[string]int `json:"observer"`
	// Paths counts, for every protocol path of the fixed list, the runs
	// that could take it and the runs that did (coverage.go).
	Paths []PathCoverage `json:"paths"`
}

// Summarize extracts a report's summary.
func Summarize(rep *Report) *Summary {
	s := &Summary{Format: SummaryFormat, CampaignID: rep.CampaignID, System: rep.System, Variant: rep.Variant,
		Workload: rep.Workload, Seed: rep.Seed, Claim: rep.Claim, Runs: rep.CampaignRuns, Finished: len(rep.Runs),
		Missing: append([]int{}, rep.Missing...), Counts: rep.Counts, Failures: []Failure{}, Shrunk: []*Shrunk{},
		Coverage: Coverage{Faults: map[string]int{}, RunsWith: map[string]int{}, Observer: map[string]int{}},
		ExitCode: rep.ExitCode()}
	for _, r := range rep.Runs {
		switch r.Class {
		case Broken, Liveness, Undrained, Unknown, Errored:
			s.Failures = append(s.Failures, Failure{Index: r.Index, Seed: r.Seed, Class: r.Class, Problem: r.Problem,
				Faults: r.Faults, Observer: r.Observer, Replay: r.Replay})
		}
		kinds := map[string]bool{}
		for _, f := range r.Faults {
			kind, _, _ := strings.Cut(f, "@")
			s.Coverage.Faults[kind]++
			kinds[kind] = true
		}
		for k := range kinds {
			s.Coverage.RunsWith[k]++
		}
		if r.Observer != "" {
			s.Coverage.Observer[r.Observer]++
		}
	}
	s.Coverage.Paths = pathTable(rep.Runs)
	for _, sh := range rep.Shrunk {
		c := *sh
		c.Dir = ""
		s.Shrunk = append(s.Shrunk, &c)
	}
	return s
}

// IsCampaign reports whether dir holds a torture campaign (torture.json).
func IsCampaign(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ReportFile))
	return err == nil
}

// ReadReport reads dir/torture.json.
func ReadReport(dir string) (*Report, error) {
	path := filepath.Join(dir, ReportFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil || rep.Format != ReportFormat || rep.CampaignRuns < 1 {
		return nil, fmt.Errorf("%s: not a %s file (written by an older bench, or damaged)", path, ReportFormat)
	}
	return &rep, nil
}

// Merge joins the folders of a sharded campaign (bench torture --shard)
// into out: every run folder is copied (hard-linked where possible), the
// runs are put back in campaign order, the shrunk schedules are the
// campaign's lowest broken runs' (each shard shrank its own lowest, which
// include them; shrinking is a pure function of the run), and out gets
// torture.json and summary.json. Runs of the campaign that no shard holds
// are listed as missing. Folders of different campaigns are refused
// (*harness.InputError), naming them, and so is an out that
// sweep.CheckMergeOut refuses.
func Merge(out string, shards []string) (*Report, error) {
	if len(shards) == 0 {
		return nil, &harness.InputError{Err: errors.New("bench merge: name the shard folders to merge")}
	}
	var reps []*Report
	var first string
	for _, dir := range shards {
		if !IsCampaign(dir) {
			return nil, &harness.InputError{Err: fmt.Errorf("%s: not a torture campaign folder (no %s)", dir, ReportFile)}
		}
		rep, err := ReadReport(dir)
		if err != nil {
			return nil, &harness.InputError{Err: err}
		}
		if len(reps) > 0 && rep.CampaignID != reps[0].CampaignID {
			return nil, &harness.InputError{Err: fmt.Errorf("%s is a shard of a different campaign than %s (campaign %s vs %s)",
				dir, first, rep.CampaignID, reps[0].CampaignID)}
		}
		if len(reps) == 0 {
			first = dir
		}
		reps = append(reps, rep)
	}
	old, err := ReadReport(out)
	if err := sweep.CheckMergeOut(out, shards, err == nil && old.Shard == nil && old.CampaignID == reps[0].CampaignID); err != nil {
		return nil, &harness.InputError{Err: err}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	m := *reps[0]
	m.Shard, m.Missing, m.Runs, m.Shrunk, m.Counts, m.WallS, m.Jobs = nil, nil, nil, []*Shrunk{}, map[Class]int{}, 0, 0
	byIndex := map[int]*Run{}
	var shrunk []*Shrunk
	for k, rep := range reps {
		dir := shards[k]
		m.WallS = max(m.WallS, rep.WallS) // the shards ran side by side
		m.Jobs += rep.Jobs
		for _, r := range rep.Runs {
			if _, dup := byIndex[r.Index]; dup {
				continue // the same run in two shards: the same result
			}
			if r.Dir != "" {
				if err := copyInto(r.Dir, dir, out); err != nil {
					return nil, err
				}
				r.Dir = filepath.Join(out, filepath.Base(r.Dir))
			}
			byIndex[r.Index] = r
		}
		for _, s := range rep.Shrunk {
			if s.Dir != "" {
				root := filepath.Join(out, "shrunk")
				if filepath.Base(filepath.Dir(s.Dir)) != "shrunk" {
					root = out // a run that did not shrink keeps its own folder
				}
				if err := copyInto(s.Dir, dir, root); err != nil {
					return nil, err
				}
				s.Dir = filepath.Join(root, filepath.Base(s.Dir))
			}
			shrunk = append(shrunk, s)
		}
	}
	for i := range m.CampaignRuns {
		r, ok := byIndex[i]
		if !ok {
			m.Missing = append(m.Missing, i)
			continue
		}
		m.Runs = append(m.Runs, r)
		m.Counts[r.Class]++
	}
	if m.Runs == nil {
		m.Runs = []*Run{}
	}
	// A shard saw only some of the campaign's drawn variants and claims
	// (shards written before runs named their variant keep the first's).
	m.Claim = campaignClaim(m.Runs)
	if v := campaignVariant(m.Runs); v != "" {
		m.Variant = v
	}
	// The campaign shrinks its ShrinkRuns lowest broken runs.
	slices.SortStableFunc(shrunk, func(a, b *Shrunk) int { return a.Run - b.Run })
	for _, s := range shrunk {
		if len(m.Shrunk) < m.ShrinkRuns && (len(m.Shrunk) == 0 || m.Shrunk[len(m.Shrunk)-1].Run != s.Run) {
			m.Shrunk = append(m.Shrunk, s)
		}
	}
	if err := writeReport(out, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// copyInto copies run folder src, as a shard recorded it, into root. It is
// looked up under the shard's folder (runs at its top, shrunk runs under
// shrunk/), not at the recorded path: a merge job may run in another
// working directory than the shards, or the folder may have moved.
func copyInto(src, shardDir, root string) error {
	path := filepath.Join(shardDir, filepath.Base(src))
	if filepath.Base(filepath.Dir(src)) == "shrunk" {
		path = filepath.Join(shardDir, "shrunk", filepath.Base(src))
	}
	if _, err := os.Stat(filepath.Join(root, filepath.Base(src))); err == nil {
		return nil // merged before
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := sweep.CopyRunDir(path, root); err != nil {
		return fmt.Errorf("copying %s: %w", path, err)
	}
	return nil
}
