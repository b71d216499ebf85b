// Package sweep runs grids of benchmark runs: it expands a grid over run
// parameters, systems and seeds into independent runs, executes them in
// parallel (resumable and shardable), and aggregates the stored results into
// curve files. It also merges shard outputs and compares curves against a
// committed baseline (bench regress). The formats are documented in
// docs/sweeps.md.
package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"ftbench/harness"
	"ftbench/systems"
)

// Manifest is sweep.json: what a results folder is a sweep of. Base is the
// configuration every run starts from (System, Variant and Seed are
// cleared); each run then sets its target, its point's parameters and its
// seed. It is written in ManifestFormat, the base in run.json's keys and
// units (manifest.go), and read in that format or ManifestFormatV1.
type Manifest struct {
	Format  string         `json:"format"`
	Command string         `json:"command,omitempty"`
	Base    harness.Config `json:"base"`
	Targets []Target       `json:"systems"`
	Params  []Param        `json:"params"`
	Seeds   []uint64       `json:"seeds"`
	Shard   *Shard         `json:"shard,omitempty"`
}

// GridID is a digest of everything that defines the grid (not the shard or
// the command line): shards of one sweep share it.
func (m *Manifest) GridID() string {
	b, _ := json.Marshal(struct {
		Base    harness.Config
		Targets []Target
		Params  []Param
		Seeds   []uint64
	}{m.Base, m.Targets, m.Params, m.Seeds})
	return digest(b)
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

// KV is one parameter assignment.
type KV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Point is one system (and variant) at one combination of parameter values.
// A parameter that does not apply to the system (a system option it lacks)
// makes the combination no point at all for that system.
type Point struct {
	Index  int // position in the grid, for sharding
	Target Target
	Params []KV // in the manifest's parameter order
}

// ID names the point: "barrier/aligned checkpoint-interval=2s".
func (p Point) ID() string {
	var b strings.Builder
	b.WriteString(p.Target.String())
	for _, kv := range p.Params {
		b.WriteString(" " + kv.Name + "=" + kv.Value)
	}
	return b.String()
}

// Run is one point at one seed: a full harness configuration.
type Run struct {
	Point  *Point
	Seed   uint64
	Config harness.Config
	// Key identifies the run's configuration; it suffixes the run folder's
	// name, so a resumed sweep recognises finished runs.
	Key string
}

// RunKey digests a configuration. Runs with the same key have identical
// results (the simulator is deterministic).
func RunKey(cfg harness.Config) string {
	b, _ := json.Marshal(cfg)
	return digest(b)
}

// Grid is an expanded manifest.
type Grid struct {
	Points []*Point
	Runs   []*Run // point-major, then seeds in order
	// Skipped names, per parameter value, the systems it does not apply to.
	Skipped []string
}

// Expand builds the grid: every combination of parameter values (the first
// parameter varies slowest) for every target, times every seed. Bad values
// are errors; parameters that do not apply to a system leave those
// combinations out (listed in Skipped).
func (m *Manifest) Expand() (*Grid, error) {
	if len(m.Targets) == 0 {
		return nil, fmt.Errorf("no system to run")
	}
	if len(m.Seeds) == 0 {
		return nil, fmt.Errorf("no seed to run")
	}
	names := map[string]bool{}
	for _, p := range m.Params {
		if names[p.Name] {
			return nil, fmt.Errorf("--param %s given twice", p.Name)
		}
		names[p.Name] = true
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("--param %s has no values", p.Name)
		}
	}
	// Apply "workload" first: workload options depend on it.
	order := make([]int, len(m.Params))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return m.Params[order[a]].Name == "workload" && m.Params[order[b]].Name != "workload"
	})
	combos := [][]string{{}}
	for _, p := range m.Params {
		var next [][]string
		for _, c := range combos {
			for _, v := range p.Values {
				next = append(next, append(append([]string(nil), c...), v))
			}
		}
		combos = next
	}
	g := &Grid{}
	skipped := map[string]map[string]bool{}
	applied := map[string]bool{}
	seen := map[string]bool{}
	for _, combo := range combos {
		for _, t := range m.Targets {
			cfg := m.Base
			cfg.System, cfg.Variant = t.System, t.Variant
			// Base system options apply to the systems that have them.
			cfg.SystemOpts = ownOptions(m.Base.SystemOpts, t.System)
			// A configuration's own settings (compare --config) override
			// the shared ones, and must all apply to its system.
			if err := applySet(&cfg, t); err != nil {
				return nil, err
			}
			ok := true
			for _, i := range order {
				name, value := m.Params[i].Name, combo[i]
				applies, err := Apply(&cfg, name, value)
				if err != nil {
					return nil, err
				}
				if !applies {
					key := name + "=" + value
					if skipped[key] == nil {
						skipped[key] = map[string]bool{}
					}
					skipped[key][t.String()] = true
					ok = false
					break
				}
				applied[name] = true
			}
			if !ok {
				continue
			}
			cfg.WorkloadOpts = workloadOptions(cfg.WorkloadOpts, cfg.Workload)
			pt := &Point{Index: len(g.Points), Target: Target{System: cfg.System, Variant: cfg.Variant, Set: t.Set}}
			for i, p := range m.Params {
				pt.Params = append(pt.Params, KV{p.Name, combo[i]})
			}
			// A swept variant overrides the target's, so two targets of
			// one system can meet at the same point.
			if seen[pt.ID()] {
				continue
			}
			seen[pt.ID()] = true
			g.Points = append(g.Points, pt)
			for _, seed := range m.Seeds {
				c := cfg
				c.Seed = seed
				g.Runs = append(g.Runs, &Run{Point: pt, Seed: seed, Config: c, Key: RunKey(c)})
			}
		}
	}
	for _, p := range m.Params {
		if !applied[p.Name] {
			return nil, fmt.Errorf("--param %s applies to none of the systems %s", p.Name, targetList(m.Targets))
		}
	}
	for _, k := range sortedKeys(skipped) {
		g.Skipped = append(g.Skipped, fmt.Sprintf("%s does not apply to %s", k, strings.Join(sortedKeys(skipped[k]), ", ")))
	}
	if len(g.Points) == 0 {
		return nil, fmt.Errorf("the grid is empty: no system takes every parameter")
	}
	return g, nil
}

func targetList(ts []Target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ownOptions keeps the options that system has.
func ownOptions(opts map[string]string, system string) map[string]string {
	out := map[string]string{}
	sys, err := systems.Lookup(system)
	if err != nil {
		return out
	}
	for _, f := range sys.Flags() {
		if v, ok := opts[f.Name]; ok {
			out[f.Name] = v
		}
	}
	return out
}

// workloadOptions keeps the options that workload has.
func workloadOptions(opts map[string]string, workload string) map[string]string {
	out := map[string]string{}
	for k, v := range opts {
		if workloadHas(workload, k) {
			out[k] = v
		}
	}
	return out
}
