package reports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"ftbench/harness"
	"ftbench/sweep"
)

// group is runs of one scenario (same workload, faults, rates, cost model,
// seed ...) that differ only in the system: they share time axes and fault
// bands, one line per run.
type group struct {
	Title  string
	Prefix string // file name prefix; "" when there is one group
	Runs   []*sweep.StoredRun
	Labels []string // per run: system/variant, plus options when needed
	Bands  []band
}

// scenarioKey is what a group's runs share: the resolved configuration
// without the system, its options and the drain (systems may extend it,
// as stormack does by its ack timeout).
func scenarioKey(r *sweep.StoredRun) string {
	res := r.Result
	c := res.Config
	b, _ := json.Marshal([]any{res.Workload, res.Seed, res.Faults, c.DurationS, c.RateRPS, c.Parallelism, c.Workers,
		c.BucketS, c.WorkloadOpts, c.Cost})
	return string(b)
}

// groupRuns splits runs into scenario groups, ordered by seed then by
// first appearance; runs in a group are ordered by system.
func groupRuns(runs []*sweep.StoredRun) []*group {
	byKey := map[string]*group{}
	var groups []*group
	for _, r := range runs {
		k := scenarioKey(r)
		g, ok := byKey[k]
		if !ok {
			g = &group{}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.Runs = append(g.Runs, r)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Runs[0].Result.Seed < groups[j].Runs[0].Result.Seed })
	for i, g := range groups {
		sortRuns(g.Runs)
		g.Labels = runLabels(g.Runs)
		g.Bands = faultBands(g.Runs)
		g.Title = scenarioTitle(g.Runs[0], groups[0].Runs[0])
		if len(groups) > 1 {
			g.Prefix = fmt.Sprintf("g%d-", i+1)
		}
	}
	return groups
}

func sortRuns(runs []*sweep.StoredRun) {
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i].Result, runs[j].Result
		if a.System != b.System {
			oa, ka := systemOrder[a.System]
			ob, kb := systemOrder[b.System]
			switch {
			case ka && kb:
				return oa < ob
			case ka != kb:
				return ka
			}
			return a.System < b.System
		}
		if a.Variant != b.Variant {
			return a.Variant < b.Variant
		}
		return optionsString(a.Config.SystemOpts) < optionsString(b.Config.SystemOpts)
	})
}

// runLabels names runs system/variant, adding the system options where two
// runs of a group would otherwise share a name.
func runLabels(runs []*sweep.StoredRun) []string {
	count := map[string]int{}
	for _, r := range runs {
		count[r.Result.System+"/"+r.Result.Variant]++
	}
	labels := make([]string, len(runs))
	for i, r := range runs {
		l := r.Result.System + "/" + r.Result.Variant
		if count[l] > 1 {
			l += " " + optionsString(r.Result.Config.SystemOpts)
		}
		labels[i] = l
	}
	return labels
}

func optionsString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// hardware is the machines a run had, so a comparison says what it ran on
// (every system of a group runs on the same hardware: the scenario key
// holds the workers and the cost model, which has the cores).
func hardware(c harness.RunConfig) string {
	cores := c.Cores
	if cores == 0 {
		cores, _ = strconv.Atoi(c.Cost["cores"]) // results written before run.json had "cores"
	}
	if cores == 0 {
		return fmt.Sprintf(" on %d workers", c.Workers)
	}
	return fmt.Sprintf(" on %d workers × %d cores", c.Workers, cores)
}

// scenarioTitle describes a run's scenario; for groups after the first it
// adds what differs from the first group.
func scenarioTitle(r, first *sweep.StoredRun) string {
	res, c := r.Result, r.Result.Config
	title := fmt.Sprintf("%s, %.0f records/s, parallelism %d%s, seed %d", res.Workload, c.RateRPS, c.Parallelism, hardware(c), res.Seed)
	if len(res.Faults) > 0 {
		title += ", " + strings.Join(res.Faults, " ")
	}
	var diffs []string
	for k, v := range c.Cost {
		if first.Result.Config.Cost[k] != v {
			diffs = append(diffs, "cost "+k+"="+v)
		}
	}
	for k, v := range c.WorkloadOpts {
		if first.Result.Config.WorkloadOpts[k] != v {
			diffs = append(diffs, k+"="+v)
		}
	}
	if c.DurationS != first.Result.Config.DurationS {
		diffs = append(diffs, fmt.Sprintf("duration %gs", c.DurationS))
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		title += " (" + strings.Join(diffs, ", ") + ")"
	}
	return title
}
