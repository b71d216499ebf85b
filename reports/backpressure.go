package reports

import (
	"encoding/json"
	"slices"
	"strings"

	"ftbench/engine"
	"ftbench/sweep"
)

// The x axis of the timing plots (alignment and checkpoint start delay
// against backpressure) is a measured backpressure: the simulator's
// backpressured_time_ms_per_s counters (docs/metrics.md, "Backpressure"),
// else a system's own backpressure key, else — results written before the
// simulator measured it, and live runs — the mean source lag, which is no
// backpressure: it moves with a 2PC sink's commit cycle, so runs at longer
// checkpoint intervals would read as more backpressured.

// bpSource is where a run's backpressure comes from.
type bpSource int

const (
	bpRuntime bpSource = iota // the simulator's counters
	bpSystem                  // a system_metrics key (lookupBackpressure)
	bpLag                     // the mean source lag: the run has neither
)

// runtimeBackpressure prefixes the simulator's counter of an operator's
// backpressure, the mean over its instances, in ms per second of input.
const runtimeBackpressure = engine.BackpressuredCounter

// lagKey names the source-lag fallback in the plots' CSV.
const lagKey = "mean source lag (records)"

// allOperators is the key of a run whose operators were none of them
// backpressured: no one of them is the most.
const allOperators = runtimeBackpressure + "*"

// backpressureOf is run r's backpressure and the key it was read from: for
// the simulator's measure, that of its most backpressured operator (ties
// to the name first in order), or allOperators when every operator's is 0.
// The sender into a keyed exchange, whose full channels hold back the
// barriers of the aligning tasks downstream, is that operator or is
// blocked by it (its source): a sink never is.
func backpressureOf(r *sweep.StoredRun) (float64, string, bpSource) {
	best, bestV, found := "", int64(0), false
	for k, v := range r.Result.Counters {
		if strings.HasPrefix(k, runtimeBackpressure) && (!found || v > bestV || v == bestV && k < best) {
			best, bestV, found = k, v, true
		}
	}
	if found {
		if bestV == 0 {
			best = allOperators
		}
		return float64(bestV), best, bpRuntime
	}
	if v, k, ok := lookupBackpressure.find(r); ok {
		return v, k, bpSystem
	}
	return meanLag(r), lagKey, bpLag
}

// backpressureAxis labels the x axis for the keys the runs' backpressure
// came from (per run), and gives a short name for notes.
func backpressureAxis(keys []string, srcs []bpSource) (label, short string) {
	all := func(s bpSource) bool {
		for _, x := range srcs {
			if x != s {
				return false
			}
		}
		return true
	}
	sameKey := true
	for _, k := range keys {
		sameKey = sameKey && k == keys[0]
	}
	// The operator named on the axis, when every backpressured run has
	// the same most backpressured one.
	op := ""
	for _, k := range keys {
		switch {
		case k == allOperators:
		case op == "":
			op = k
		case op != k:
			op = "several"
		}
	}
	switch {
	case len(keys) == 0:
		return "", ""
	case all(bpRuntime):
		who := "each run's most backpressured operator (named in the CSV)"
		if op != "" && op != "several" {
			who = strings.TrimPrefix(op, runtimeBackpressure) + ", the most backpressured operator"
		}
		return "backpressure of " + who + " (ms/s, Flink's backPressuredTimeMsPerSecond): per second of input, " +
			"the time its instances could not send for a full output channel, mean over them", "backpressure (ms/s)"
	case all(bpLag):
		return "mean source lag while input was appended (records): these runs lack the simulator's backpressure measure " +
			"(results written before it, or live runs)", "mean source lag (records)"
	case all(bpSystem) && sameKey:
		return keys[0], keys[0]
	}
	return "backpressure (mixed measures, see CSV)", "backpressure"
}

// sweptSettings names the parameters a sweep in dir varies, as
// runSettings names them, in its manifest's order; nil when dir holds no
// sweep.
func sweptSettings(dir string) []string {
	m, ok, _ := sweep.ReadManifest(dir)
	if !ok {
		return nil
	}
	var names []string
	for _, p := range m.Params {
		if len(p.Values) < 2 {
			continue
		}
		name := p.Name
		switch {
		case name == "fault":
			name = "faults"
		case name == "cores":
			name = "cost cores"
		case strings.HasPrefix(name, "cost."):
			name = "cost " + strings.TrimPrefix(name, "cost.")
		}
		names = append(names, name)
	}
	return names
}

// runSettings is everything that configures a run but its system and
// variant: its scenario settings, seed included, and its system options.
func runSettings(r *sweep.StoredRun) map[string]string {
	s := scenarioSettings(r)
	for k, v := range r.Result.Config.SystemOpts {
		s[k] = v
	}
	return s
}

// configLines splits the runs of one system/variant into the lines a plot
// may draw: a line joins only runs of one configuration — the same
// settings but for one parameter, the one it follows. That parameter is
// the first of swept (a sweep's parameters) the runs differ in, else the
// only setting they differ in; runs that differ in several settings
// outside a sweep, or only in their seed, get no line. It returns the
// parameter and, per run, its line (-1: a point only; a configuration of
// a single run is one).
func configLines(runs []*sweep.StoredRun, swept []string) (param string, line []int) {
	settings := make([]map[string]string, len(runs))
	for i, r := range runs {
		settings[i] = runSettings(r)
	}
	varying := varyingSettings(settings)
	for _, s := range swept {
		if slices.Contains(varying, s) {
			param = s
			break
		}
	}
	if param == "" && len(varying) == 1 {
		param = varying[0]
	}
	line = make([]int, len(runs))
	for i := range line {
		line[i] = -1
	}
	if param == "" {
		return "", line
	}
	byConfig := map[string][]int{}
	var order []string
	for i, s := range settings {
		rest := map[string]string{}
		for k, v := range s {
			if k != param {
				rest[k] = v
			}
		}
		b, _ := json.Marshal(rest) // a map marshals in key order
		k := string(b)
		if _, ok := byConfig[k]; !ok {
			order = append(order, k)
		}
		byConfig[k] = append(byConfig[k], i)
	}
	n := 0
	for _, k := range order {
		if members := byConfig[k]; len(members) > 1 {
			for _, i := range members {
				line[i] = n
			}
			n++
		}
	}
	if n == 0 {
		return "", line
	}
	return param, line
}
