package reports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

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
	Labels []string // per run: what differs between the runs (runLabels)
	// Colors and Marks index each run's colour and marker (seriesKeys);
	// Shared is set when runs share colours and differ by marker and dash.
	Colors, Marks []int
	Shared        bool
	Bands         []band
}

// scenarioKey is what a group's runs share: the resolved configuration
// without the system, its options and the drain (systems may extend it,
// as stormack does by its ack timeout), that is its scenario settings.
func scenarioKey(r *sweep.StoredRun) string {
	b, _ := json.Marshal(scenarioSettings(r)) // a map marshals in key order
	return string(b)
}

// scenarioSettings names a run's scenario settings: workload, seed,
// faults, duration, rate, parallelism, workers, slots, bucket, its
// workload options by their names and its cost model as "cost NAME".
func scenarioSettings(r *sweep.StoredRun) map[string]string {
	res, c := r.Result, r.Result.Config
	s := map[string]string{
		"workload":    res.Workload,
		"seed":        strconv.FormatUint(res.Seed, 10),
		"faults":      strings.Join(res.Faults, " "),
		"duration":    strconv.FormatFloat(c.DurationS, 'g', -1, 64) + "s",
		"rate":        strconv.FormatFloat(c.RateRPS, 'f', -1, 64),
		"parallelism": strconv.Itoa(c.Parallelism),
		"workers":     strconv.Itoa(c.Workers),
		"slots":       strconv.Itoa(c.Slots),
		"bucket":      strconv.FormatFloat(c.BucketS, 'g', -1, 64) + "s",
	}
	for k, v := range c.WorkloadOpts {
		s[k] = v
	}
	for k, v := range c.Cost {
		s["cost "+k] = v
	}
	return s
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
		g.Colors, g.Marks, g.Shared = seriesKeys(g.Runs)
		g.Bands = faultBands(g.Runs)
		g.Title = scenarioTitle(g.Runs, groups[0].Runs[0])
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
		return lessOptions(a.Config.SystemOpts, b.Config.SystemOpts)
	})
}

// runLabels names each run of a group by what differs between the runs
// only: system/variant when the systems differ (the variant alone when only
// it does), then every system option whose value is not the same in all
// runs, as NAME=VALUE. Options every run shares (most are defaults) would
// only push the distinguishing part out of view; commonLabel names them.
func runLabels(runs []*sweep.StoredRun) []string {
	systemsDiffer, variantsDiffer := false, false
	for _, r := range runs[1:] {
		systemsDiffer = systemsDiffer || r.Result.System != runs[0].Result.System
		variantsDiffer = variantsDiffer || r.Result.Variant != runs[0].Result.Variant
	}
	keys := differingOptions(runs)
	labels := make([]string, len(runs))
	for i, r := range runs {
		var parts []string
		switch {
		case systemsDiffer:
			parts = append(parts, r.Result.System+"/"+r.Result.Variant)
		case variantsDiffer:
			parts = append(parts, r.Result.Variant)
		}
		for _, k := range keys {
			if v, ok := r.Result.Config.SystemOpts[k]; ok {
				parts = append(parts, k+"="+v)
			}
		}
		if len(parts) == 0 {
			parts = []string{r.Result.System + "/" + r.Result.Variant}
		}
		labels[i] = strings.Join(parts, " ")
	}
	return labels
}

// differingOptions lists, sorted, the system options whose values are not
// the same in every run of one system (options of different systems
// differ by nature: the system's name tells them apart).
func differingOptions(runs []*sweep.StoredRun) []string {
	set := map[string]bool{}
	for _, a := range runs {
		for _, b := range runs {
			if a.Result.System != b.Result.System {
				continue
			}
			for k, v := range a.Result.Config.SystemOpts {
				if w, ok := b.Result.Config.SystemOpts[k]; !ok || v != w {
					set[k] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// commonLabel is what the runs of a group share and their labels leave
// out: the system (and variant) when all runs have it. It goes into the
// title; shared options are in each run's run.json.
func commonLabel(runs []*sweep.StoredRun) string {
	sys, variant := runs[0].Result.System, runs[0].Result.Variant
	for _, r := range runs[1:] {
		if r.Result.System != sys {
			return ""
		}
		if r.Result.Variant != variant {
			variant = ""
		}
	}
	if variant == "" {
		return sys
	}
	return sys + "/" + variant
}

// configLabel is commonLabel with the system options every run of the
// group was given alike, so that a title says what configuration its
// runs share: "barrier/aligned (failover=full, sink=plain)". Those are the
// options on the runs' bench run line (setOptions): drawn by a torture
// campaign, swept, or typed. "" when the runs are of several systems.
func configLabel(runs []*sweep.StoredRun) string {
	common := commonLabel(runs)
	if common == "" {
		return ""
	}
	shared := setOptions(runs[0])
	for _, r := range runs[1:] {
		opts := setOptions(r)
		for k, v := range shared {
			if w, ok := opts[k]; !ok || w != v {
				delete(shared, k)
			}
		}
	}
	if len(shared) == 0 {
		return common
	}
	names := make([]string, 0, len(shared))
	for k := range shared {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		names[i] = k + "=" + shared[k]
	}
	return common + " (" + strings.Join(names, ", ") + ")"
}

// setOptions are the system options run r was given (drawn, swept or
// typed), read off its replay line, with their values from run.json:
// system_options holds every option, the defaults no one set included.
func setOptions(r *sweep.StoredRun) map[string]string {
	set := map[string]string{}
	for _, word := range strings.Fields(r.Result.Replay) {
		if name, ok := strings.CutPrefix(word, "--"); ok {
			if v, ok := r.Result.Config.SystemOpts[name]; ok {
				set[name] = v
			}
		}
	}
	return set
}

// lessOptions orders option sets by the first option (by name) whose
// values differ, comparing values as durations or numbers when both are
// (so 500ms comes before 1s, and 10 after 9), else as text.
func lessOptions(a, b map[string]string) bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if x, y := a[k], b[k]; x != y {
			return lessValue(x, y)
		}
	}
	return false
}

func lessValue(x, y string) bool {
	if dx, err := time.ParseDuration(x); err == nil {
		if dy, err := time.ParseDuration(y); err == nil {
			return dx < dy
		}
	}
	if fx, err := strconv.ParseFloat(x, 64); err == nil {
		if fy, err := strconv.ParseFloat(y, 64); err == nil {
			return fx < fy
		}
	}
	return x < y
}

// seriesKeys gives each run of a group a colour and a marker index. When
// the runs differ in both system/variant and options (a sweep of several
// variants over a parameter), the colour follows the option values and the
// marker and dash the system/variant, so that each dimension reads at a
// glance and every run still has its own pair; otherwise each run has its
// own colour and marker.
func seriesKeys(runs []*sweep.StoredRun) (colors, marks []int, shared bool) {
	keys := differingOptions(runs)
	sysIdx, optIdx := map[string]int{}, map[string]int{}
	var sysOrder, optOrder []string
	for _, r := range runs {
		sv := r.Result.System + "/" + r.Result.Variant
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+r.Result.Config.SystemOpts[k])
		}
		ov := strings.Join(parts, " ")
		if _, ok := sysIdx[sv]; !ok {
			sysIdx[sv] = len(sysOrder)
			sysOrder = append(sysOrder, sv)
		}
		if _, ok := optIdx[ov]; !ok {
			optOrder = append(optOrder, ov)
		}
		optIdx[ov] = 0
	}
	// Option values in their natural order (500ms before 1s).
	sort.SliceStable(optOrder, func(i, j int) bool {
		return lessOptionString(optOrder[i], optOrder[j])
	})
	for i, o := range optOrder {
		optIdx[o] = i
	}
	// The option dimension exists only where every run has the options
	// (barrier's variants over checkpoint intervals); runs of systems
	// without them (compare --config 'barrier --sink plain' beside
	// stormack and none) would all share the colour of "no value".
	everyRunHas := true
	for _, r := range runs {
		for _, k := range keys {
			_, ok := r.Result.Config.SystemOpts[k]
			everyRunHas = everyRunHas && ok
		}
	}
	twoD := everyRunHas && len(sysOrder) > 1 && len(optOrder) > 1 && len(optOrder) <= len(palette)
	for i, r := range runs {
		if !twoD {
			colors, marks = append(colors, i), append(marks, i)
			continue
		}
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+r.Result.Config.SystemOpts[k])
		}
		colors = append(colors, optIdx[strings.Join(parts, " ")])
		marks = append(marks, sysIdx[r.Result.System+"/"+r.Result.Variant])
	}
	return colors, marks, twoD
}

// lessOptionString compares "k=v k=v" strings value by value.
func lessOptionString(a, b string) bool {
	pa, pb := strings.Fields(a), strings.Fields(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			_, va, _ := strings.Cut(pa[i], "=")
			_, vb, _ := strings.Cut(pb[i], "=")
			return lessValue(va, vb)
		}
	}
	return len(pa) < len(pb)
}

// hardware is the machines a run had, so a comparison says what it ran on
// (every system of a group runs on the same hardware: the scenario key
// holds the workers, their slots and the cost model, which has the cores).
func hardware(c harness.RunConfig) string {
	cores := c.Cores
	if cores == 0 {
		cores, _ = strconv.Atoi(c.Cost["cores"]) // results written before run.json had "cores"
	}
	h := fmt.Sprintf(" on %d workers", c.Workers)
	if cores > 0 {
		h += fmt.Sprintf(" × %d cores", cores)
	}
	if c.Slots > 0 { // --slots given: spare slots for re-placement
		h += fmt.Sprintf(", %d slots each", c.Slots)
	}
	return h
}

// scenarioTitle describes a run's scenario; for groups after the first it
// adds what differs from the first group.
func scenarioTitle(runs []*sweep.StoredRun, first *sweep.StoredRun) string {
	r := runs[0]
	res, c := r.Result, r.Result.Config
	title := ""
	if common := configLabel(runs); common != "" {
		title = common + ", "
	}
	title += fmt.Sprintf("%s, %.0f records/s, parallelism %d%s, seed %d", res.Workload, c.RateRPS, c.Parallelism, hardware(c), res.Seed)
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

// scenarioDiffs names what tells runs of different scenarios apart: for
// each scenario setting (scenarioSettings) but the seed whose value is not
// the same in every run, its name (sorted, in names) and, per run,
// "name=value" (in labels). Both are empty when every run has one scenario.
// A plot that puts runs of several scenarios on one axis (alignment against
// backpressure) labels its points with them, or two runs of one system at
// different rates would read alike.
func scenarioDiffs(runs []*sweep.StoredRun) (names []string, labels [][]string) {
	all := make([]map[string]string, len(runs))
	for i, r := range runs {
		all[i] = scenarioSettings(r)
	}
	// Seeds are replicates: labelled alike, so that points on top of each
	// other get one label.
	names = varyingSettings(all)
	labels = make([][]string, len(runs))
	for i, s := range all {
		for _, k := range names {
			if v, ok := s[k]; ok && v != "" {
				labels[i] = append(labels[i], k+"="+v)
			}
		}
	}
	return names, labels
}

// varyingSettings names, sorted, the settings but the seed whose value (or
// presence) is not the same in every one of all.
func varyingSettings(all []map[string]string) []string {
	seen := map[string]bool{}
	for _, s := range all {
		for k := range s {
			seen[k] = true
		}
	}
	delete(seen, "seed")
	var names []string
	for k := range seen {
		v0, ok0 := all[0][k]
		for _, s := range all[1:] {
			if v, ok := s[k]; ok != ok0 || v != v0 {
				names = append(names, k)
				break
			}
		}
	}
	sort.Strings(names)
	return names
}
