// Package torture runs randomized fault campaigns, the way TigerBeetle's
// VOPR and Jepsen do: one campaign seed draws, for every run, its workload
// parameters and a schedule of several faults (crashes of random workers at
// random times — some aimed just after a checkpoint trigger, some while an
// earlier crash is being recovered from —, slow and throttle windows, and
// reorder windows for systems that do not rely on FIFO channels). Every
// check is on: delivery, the oracle, the system's own safety checks
// (snapshot consistency) and, with Observe, porcupine. A run that breaks
// the system's claim is reported with the `bench run` line that replays it,
// and shrunk: faults removed, moved earlier, and the input cut short while
// the run still breaks the claim.
//
// Runs are independent and execute in parallel; each is deterministic, so
// a campaign's results do not depend on the number of jobs.
package torture

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/harness"
	"ftbench/sweep"
)

// Class is a run's outcome.
type Class string

// Classes, in the summary's column order.
const (
	Passed Class = "passed"
	// Expected: the claim held, but the run lost or duplicated effects as
	// the claim allows (none's losses, stormack's duplicates).
	Expected Class = "expected"
	Broken   Class = "claim-broken"
	Liveness Class = "liveness"
	// Undrained: the run stopped with effects pending while the runtime
	// still saw work (harness: Result.Undrained). Neither a pass nor a
	// broken claim: the schedule needs a longer drain to be judged.
	Undrained Class = "undrained"
	// Unknown: the checker timed out on the model the claim requires.
	Unknown Class = "porcupine-unknown"
	Errored Class = "error"
)

// Classes lists every class in summary order.
var Classes = []Class{Passed, Broken, Expected, Liveness, Undrained, Unknown, Errored}

// Options configure a campaign.
type Options struct {
	// Base holds the system, variant, workload, options and seed (the
	// campaign seed); its duration, rate, parallelism and workers are used
	// only where Fixed says the user set them.
	Base   harness.Config
	Fixed  Fixed
	Runs   int
	Jobs   int // parallel runs; 0 = GOMAXPROCS
	Shrink int // broken runs to shrink, lowest index first
	// ShrinkBudget bounds the runs one shrink executes; 0 = DefaultShrinkBudget.
	ShrinkBudget int
	Out          string // results root; "" writes nothing
	Now          func() time.Time
	// NoAim leaves every drawn schedule as drawn: no fault is aimed at
	// the system's milestones (aim.go).
	NoAim bool
	// Stop ends the campaign at the first broken run: no new runs start,
	// the ones running finish. Every run before the first broken one has
	// run, so which run that is does not depend on the number of jobs.
	Stop bool
	// Progress, if set, is called after each run, one call at a time.
	Progress func(done, broken int)
	// Shard selects the runs i with i mod N = I-1 (zero value: every run).
	// Run i is a pure function of the campaign seed and i, so shards run
	// anywhere, in any order, and Merge joins them into the unsharded
	// campaign's summary.
	Shard sweep.Shard
}

// ReportFormat identifies torture.json.
const ReportFormat = "ftbench-torture/1"

// Run is one run of a campaign.
type Run struct {
	Index  int      `json:"index"`
	Seed   uint64   `json:"seed"`
	Class  Class    `json:"class"`
	Faults []string `json:"faults"`
	// Aimed says which of Faults were re-timed just after a protocol
	// milestone (aim.go), and which milestone.
	Aimed      []string `json:"aimed,omitempty"`
	Problem    string   `json:"problem,omitempty"`
	Duplicates int64    `json:"duplicates"`
	Lost       int64    `json:"lost"`
	WrongKeys  int64    `json:"wrong_keys"`
	Observer   string   `json:"observer,omitempty"`
	Replay     string   `json:"replay"`
	Dir        string   `json:"dir,omitempty"`
	// Claim is the guarantee the run's configuration claims (drawn options
	// such as barrier's sink change it).
	Claim string `json:"claim,omitempty"`
	// Variant is the variant the run ran, drawn unless the user gave one.
	Variant string `json:"variant,omitempty"`
	// Paths holds every protocol path the run's configuration can take,
	// true if its events show it took it (coverage.go).
	Paths map[string]bool `json:"paths,omitempty"`

	Config harness.Config  `json:"-"`
	Result *harness.Result `json:"-"`
}

// Report is a finished campaign (or shard of one); torture.json in the
// results folder. Wall time, jobs and folders are the machine's; summary.json
// (Summary) is the part that is a pure function of the campaign.
type Report struct {
	Format string `json:"format"`
	// CampaignID digests what defines the campaign (base configuration,
	// fixed parameters, runs, shrink settings): equal for all its shards.
	CampaignID string `json:"campaign_id"`
	// CampaignRuns is the campaign's size; Runs holds this shard's runs.
	CampaignRuns int          `json:"campaign_runs"`
	Shard        *sweep.Shard `json:"shard,omitempty"`
	// ShrinkRuns is how many broken runs the campaign shrinks (--shrink).
	ShrinkRuns int `json:"shrink_runs"`
	// Missing are runs of the campaign without a result in a merged
	// campaign (a shard that did not finish).
	Missing  []int         `json:"missing,omitempty"`
	System   string        `json:"system"`
	Variant  string        `json:"variant"`
	Workload string        `json:"workload"`
	Seed     uint64        `json:"seed"`
	Claim    string        `json:"claimed_guarantee"`
	Counts   map[Class]int `json:"counts"`
	Runs     []*Run        `json:"runs"`
	Shrunk   []*Shrunk     `json:"shrunk"`
	WallS    float64       `json:"wall_s"`
	Jobs     int           `json:"jobs"`
}

// RunSeed is the seed of run i of a campaign: independent streams per run.
func RunSeed(campaign uint64, i int) uint64 {
	return engine.ChildSeed(campaign, "torture/run/"+strconv.Itoa(i))
}

// Campaign runs the campaign. An error is returned only for bad input (an
// *harness.InputError) or a results folder that cannot be written; a run
// that fails to execute is a run of class Errored.
func Campaign(opt Options) (*Report, error) {
	start := time.Now()
	if opt.Jobs <= 0 {
		opt.Jobs = runtime.GOMAXPROCS(0)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Runs < 1 {
		return nil, &harness.InputError{Err: fmt.Errorf("--runs must be at least 1, got %d", opt.Runs)}
	}
	shard := opt.Shard
	if shard.N == 0 {
		shard = sweep.Shard{I: 1, N: 1}
	}
	if opt.Stop && shard.N > 1 {
		// Which runs start after the first broken one would depend on the
		// other shards' progress.
		return nil, &harness.InputError{Err: fmt.Errorf("--stop cannot be combined with --shard: a shard does not know where the others stopped")}
	}
	var indices []int
	for i := range opt.Runs {
		if shard.Has(i) {
			indices = append(indices, i)
		}
	}
	// Draw run 0 first: it validates the base configuration (unknown system,
	// variant, option) once, as bad input rather than as N errored runs.
	if _, err := draw(opt.Base, opt.Fixed, RunSeed(opt.Base.Seed, 0)); err != nil {
		return nil, err
	}
	if opt.Out != "" {
		if err := os.MkdirAll(opt.Out, 0o755); err != nil {
			return nil, fmt.Errorf("results folder: %w", err)
		}
	}
	rep := &Report{Format: ReportFormat, CampaignID: CampaignID(opt), CampaignRuns: opt.Runs, ShrinkRuns: opt.Shrink,
		Workload: opt.Base.Workload, Seed: opt.Base.Seed, Counts: map[Class]int{}, Jobs: opt.Jobs,
		System: opt.Base.System, Runs: make([]*Run, len(indices)), Shrunk: []*Shrunk{}}
	if shard.N > 1 {
		rep.Shard = &shard
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	broken, done, nBroken := false, 0, 0
	next := make(chan int)
	for range opt.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pos := range next {
				r := execute(opt, indices[pos])
				mu.Lock()
				rep.Runs[pos] = r
				broken = broken || r.Class == Broken
				done++
				if r.Class == Broken {
					nBroken++
				}
				if opt.Progress != nil {
					opt.Progress(done, nBroken)
				}
				mu.Unlock()
			}
		}()
	}
	started := 0
	for ; started < len(indices); started++ {
		mu.Lock()
		stop := opt.Stop && broken
		mu.Unlock()
		if stop {
			break
		}
		next <- started
	}
	close(next)
	wg.Wait()
	rep.Runs = rep.Runs[:started]
	for _, r := range rep.Runs {
		rep.Counts[r.Class]++
	}
	rep.Claim, rep.Variant = campaignClaim(rep.Runs), campaignVariant(rep.Runs)
	for _, r := range rep.Runs {
		if r.Class == Broken && len(rep.Shrunk) < opt.Shrink {
			s := shrink(r, opt)
			rep.Shrunk = append(rep.Shrunk, s)
		}
	}
	rep.WallS = time.Since(start).Seconds()
	if opt.Out != "" {
		if err := writeReport(opt.Out, rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// CampaignID digests everything that decides the campaign's runs and
// shrinks, and nothing about how it executes (jobs, folder, shard).
func CampaignID(opt Options) string {
	budget := opt.ShrinkBudget
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	b, _ := json.Marshal(struct {
		Base                       harness.Config
		Fixed                      Fixed
		Runs, Shrink, ShrinkBudget int
		NoAim                      bool `json:",omitempty"` // campaigns from before aiming keep their id
	}{opt.Base, opt.Fixed, opt.Runs, opt.Shrink, budget, opt.NoAim})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

// Results files of a campaign folder.
const (
	ReportFile  = "torture.json"
	SummaryFile = "summary.json"
)

// writeReport writes torture.json and summary.json, each atomically, so a
// reader (a merge job on a shared file system) never sees half a file.
func writeReport(out string, rep *Report) error {
	// Unescaped: replay lines must read as typed (edge=split->count).
	b, err := harness.MarshalIndent(rep)
	if err != nil {
		return err
	}
	if err := sweep.WriteFileAtomic(filepath.Join(out, ReportFile), b); err != nil {
		return fmt.Errorf("writing %s: %w", ReportFile, err)
	}
	b, err = harness.MarshalIndent(Summarize(rep))
	if err != nil {
		return err
	}
	if err := sweep.WriteFileAtomic(filepath.Join(out, SummaryFile), b); err != nil {
		return fmt.Errorf("writing %s: %w", SummaryFile, err)
	}
	return nil
}

// execute draws, runs, classifies and stores run i.
func execute(opt Options, i int) *Run {
	seed := RunSeed(opt.Base.Seed, i)
	r := &Run{Index: i, Seed: seed, Faults: []string{}}
	cfg, err := draw(opt.Base, opt.Fixed, seed)
	r.Config = cfg
	if err != nil {
		r.Class, r.Problem = Errored, "drawing the schedule: "+err.Error()
		return r
	}
	if !opt.NoAim {
		cfg, r.Aimed = aim(cfg, seed)
		r.Config = cfg
	}
	r.Faults, r.Replay = cfg.Faults, cfg.ReplayCommand()
	out, err := harness.Execute(cfg)
	if err != nil {
		r.Class, r.Problem = Errored, firstLine(err.Error())
		return r
	}
	res := out.Result
	r.Result = res
	r.Claim, r.Variant = res.ClaimedGuarantee, res.Variant
	r.Paths = runPaths(opt.Base, cfg, out)
	r.Class = classify(res)
	r.Duplicates, r.Lost, r.WrongKeys = res.Duplicates, res.Lost, res.WrongKeys
	if res.Observer != nil {
		r.Observer = res.Observer.Result
	}
	if len(res.Problems) > 0 {
		r.Problem = res.Problems[0]
	}
	if opt.Out != "" {
		dir, err := harness.Write(opt.Out, harness.NewRunID(cfg, opt.Now()), out)
		if err != nil {
			r.Class, r.Problem = Errored, "writing results: "+err.Error()
		}
		r.Dir = dir
	}
	return r
}

// classify names a run's outcome from its run.json.
func classify(r *harness.Result) Class {
	switch {
	case r.ExitCode == harness.ExitSafety:
		return Broken
	case r.Observer != nil && r.Observer.Result == check.LinUnknown:
		return Unknown
	case r.Undrained():
		return Undrained
	case r.ExitCode == harness.ExitLiveness:
		return Liveness
	case r.ExitCode != harness.ExitOK:
		return Errored
	case r.Duplicates > 0 || r.Lost > 0 || r.WrongKeys > 0:
		return Expected
	}
	return Passed
}

// campaignClaim names the claims of a campaign's runs: one claim, or, when
// drawn options change it (barrier's plain sink claims at-least-once, its
// 2pc sink exactly-once), the distinct claims in order, joined by " | ".
// Each run is judged by its own claim.
func campaignClaim(runs []*Run) string { return distinct(runs, func(r *Run) string { return r.Claim }) }

// campaignVariant names the variants of a campaign's runs: the user's, or,
// when torture drew them, the distinct variants in order, joined by " | ".
func campaignVariant(runs []*Run) string {
	return distinct(runs, func(r *Run) string { return r.Variant })
}

// distinct joins the runs' distinct non-empty values of f, sorted, by " | ".
func distinct(runs []*Run, f func(*Run) string) string {
	var vs []string
	for _, r := range runs {
		if v := f(r); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return strings.Join(vs, " | ")
}

// ExitCode is the campaign's exit code: 3 if any claim broke, else 1 if a
// run could not execute or is missing from a merged campaign, else 4 if a
// run did not recover or stopped undrained, else 0.
func (r *Report) ExitCode() int {
	switch {
	case r.Counts[Broken] > 0:
		return harness.ExitSafety
	case r.Counts[Errored] > 0 || len(r.Missing) > 0:
		return harness.ExitInternal
	case r.Counts[Liveness] > 0 || r.Counts[Undrained] > 0:
		return harness.ExitLiveness
	}
	return harness.ExitOK
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
