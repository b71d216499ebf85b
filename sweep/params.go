package sweep

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/number"
	"ftbench/systems"
	"ftbench/workloads"
)

// Param is one swept run parameter and its values, in the order given.
type Param struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// costPrefix names cost-model parameters: cost.restart-delay=1s,2s.
const costPrefix = "cost."

// harnessParams are the run parameters that are fields of harness.Config.
var harnessParams = []string{"rate", "duration", "drain", "bucket", "parallelism", "workers", "cores", "slots", "variant", "workload", "fault"}

// ParseParam parses NAME=V1,V2,... . Values of `fault` and `topology` are
// separated by ';' (fault specs and random,degree=K contain commas); a fault value may join several specs with
// '+', and `none` means no fault. Names are checked here; values are
// checked when the grid is expanded.
func ParseParam(s string) (Param, error) {
	name, vals, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Param{}, fmt.Errorf("--param %q: want NAME=V1,V2,... (for example checkpoint-interval=1s,2s,5s)", s)
	}
	canon, err := canonicalName(name)
	if err != nil {
		return Param{}, err
	}
	sep := paramSep(canon)
	p := Param{Name: canon}
	seen := map[string]bool{}
	for _, v := range strings.Split(vals, sep) {
		v = strings.TrimSpace(v)
		if v == "" {
			return Param{}, fmt.Errorf("--param %q: empty value", s)
		}
		if seen[v] {
			return Param{}, fmt.Errorf("--param %q: value %q given twice", s, v)
		}
		seen[v] = true
		p.Values = append(p.Values, v)
	}
	return p, nil
}

// canonicalName resolves a parameter name: a harness field, a system
// option, a workload option, or a cost parameter (cost.NAME, or NAME alone
// when no other parameter has that name).
// paramSep is the separator of a parameter's values: ';' for those whose
// values may hold commas.
func paramSep(canon string) string {
	if canon == "fault" || canon == "topology" {
		return ";"
	}
	return ","
}

func canonicalName(name string) (string, error) {
	switch name {
	case "seed", "seeds":
		return "", fmt.Errorf("--param %s: seeds are swept with --seeds (like --seeds 1-5)", name)
	case "system":
		return "", fmt.Errorf("--param system: systems are listed with --system (like --system none,stormack or all)")
	}
	for _, h := range harnessParams {
		if name == h {
			return name, nil
		}
	}
	if isSystemOption(name) || isWorkloadOption(name) {
		return name, nil
	}
	cost := strings.TrimPrefix(name, costPrefix)
	if isCostParam(cost) {
		return costPrefix + cost, nil
	}
	// Quoted: a name may hold a newline or control character, and the
	// error must stay one line (found by FuzzParseParam).
	return "", fmt.Errorf("--param %q: unknown run parameter (have %s)", name, strings.Join(KnownParams(), ", "))
}

// KnownParams lists every parameter name a sweep accepts.
func KnownParams() []string {
	names := append([]string(nil), harnessParams...)
	for _, f := range systems.AllFlags() {
		names = append(names, f.Name)
	}
	seen := map[string]bool{}
	for _, w := range workloads.Names() {
		fac, _ := workloads.Lookup(w)
		for _, o := range fac.Options {
			if !seen[o.Name] {
				seen[o.Name] = true
				names = append(names, o.Name)
			}
		}
	}
	cm := engine.DefaultCost()
	for _, p := range cm.Params() {
		names = append(names, costPrefix+p.Name)
	}
	return names
}

func isSystemOption(name string) bool {
	for _, f := range systems.AllFlags() {
		if f.Name == name {
			return true
		}
	}
	return false
}

func isWorkloadOption(name string) bool {
	for _, w := range workloads.Names() {
		if workloadHas(w, name) {
			return true
		}
	}
	return false
}

func workloadHas(workload, option string) bool {
	fac, ok := workloads.Lookup(workload)
	if !ok {
		return false
	}
	for _, o := range fac.Options {
		if o.Name == option {
			return true
		}
	}
	return false
}

func isCostParam(name string) bool {
	cm := engine.DefaultCost()
	// An operator-qualified name (count.state-cpu) names a per-operator
	// parameter; whether the operator exists the run checks.
	op, param, qualified := strings.Cut(name, ".")
	for _, p := range cm.Params() {
		if p.Name == name || (qualified && op != "" && p.PerOp && p.Name == param) {
			return true
		}
	}
	return false
}

// Apply sets parameter name to value on cfg, whose System (and Variant) are
// already set. It returns applies=false, and leaves cfg alone, when the
// parameter is an option the system or workload does not have, or a variant
// the system lacks: such points are left out of the grid, not failed.
func Apply(cfg *harness.Config, name, value string) (applies bool, err error) {
	bad := func(want string) error {
		return fmt.Errorf("--param %s=%s: want %s", name, value, want)
	}
	switch name {
	case "rate":
		f, err := number.Float(value)
		if err != nil || f <= 0 {
			return false, bad("a positive number of records per second")
		}
		cfg.Rate = f
	case "duration", "drain", "bucket":
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return false, bad("a positive duration such as 500ms or 2s")
		}
		switch name {
		case "duration":
			cfg.Duration = engine.Time(d)
		case "drain":
			cfg.Drain = engine.Time(d)
		default:
			cfg.Bucket = engine.Time(d)
		}
	case "parallelism", "workers":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 256 {
			return false, bad("an integer from 1 to 256")
		}
		if name == "parallelism" {
			cfg.Parallelism = n
		} else {
			cfg.Workers = n
		}
	case "cores":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 1024 {
			return false, bad("an integer from 1 to 1024")
		}
		cfg.Cores = n
	case "slots":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 65536 {
			return false, bad("an integer from 1 to 65536")
		}
		cfg.Slots = n
	case "variant":
		sys, err := systems.Lookup(cfg.System)
		if err != nil {
			return false, err
		}
		if _, err := systems.ResolveVariant(sys, value); err != nil {
			return false, nil
		}
		cfg.Variant = value
	case "workload":
		if _, ok := workloads.Lookup(value); !ok {
			return false, fmt.Errorf("--param workload=%s: unknown workload (have %s)", value, strings.Join(workloads.Names(), ", "))
		}
		cfg.Workload = value
	case "fault":
		cfg.Faults = nil
		if value != "none" {
			for _, f := range strings.Split(value, "+") {
				if f = strings.TrimSpace(f); f == "" {
					return false, bad("fault specs joined by '+', or none")
				}
				cfg.Faults = append(cfg.Faults, f)
			}
		}
	default:
		if cost, ok := strings.CutPrefix(name, costPrefix); ok {
			cm := engine.DefaultCost()
			if err := cm.Set(cost + "=" + value); err != nil {
				return false, fmt.Errorf("--param %s=%s: %w", name, value, err)
			}
			var kept []string
			for _, o := range cfg.CostOverride {
				if n, _, _ := strings.Cut(o, "="); n != cost {
					kept = append(kept, o)
				}
			}
			cfg.CostOverride = append(kept, cost+"="+value)
			return true, nil
		}
		if isSystemOption(name) {
			sys, err := systems.Lookup(cfg.System)
			if err != nil {
				return false, err
			}
			for _, f := range sys.Flags() {
				if f.Name == name {
					cfg.SystemOpts = cloneMap(cfg.SystemOpts)
					cfg.SystemOpts[name] = value
					return true, nil
				}
			}
			return false, nil
		}
		if isWorkloadOption(name) {
			if !workloadHas(cfg.Workload, name) {
				return false, nil
			}
			cfg.WorkloadOpts = cloneMap(cfg.WorkloadOpts)
			cfg.WorkloadOpts[name] = value
			return true, nil
		}
		return false, fmt.Errorf("--param %s: unknown run parameter", name)
	}
	return true, nil
}

func cloneMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Target is one system and variant to run, and with bench compare
// --config the run settings of that configuration (Set: parameters applied
// as --param values are, before the swept ones, to this target only).
type Target struct {
	System  string `json:"system"`
	Variant string `json:"variant"`
	Set     []KV   `json:"set,omitempty"`
}

// String names the target: "barrier/aligned", "barrier/aligned sink=plain".
func (t Target) String() string {
	s := t.System + "/" + t.Variant
	for _, kv := range t.Set {
		s += " " + kv.Name + "=" + kv.Value
	}
	return s
}

// ParseTargets parses a --system list: NAME (default variant), NAME/VARIANT,
// NAME/* (every variant), all (every registered system, default variant) and
// all/* (every variant of every system). Duplicates are dropped.
func ParseTargets(list string) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	add := func(t Target) {
		if !seen[t.String()] {
			seen[t.String()] = true
			out = append(out, t)
		}
	}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, variant, hasVariant := strings.Cut(item, "/")
		names := []string{name}
		if name == "all" {
			names = systems.Names()
		}
		for _, n := range names {
			sys, err := systems.Lookup(n)
			if err != nil {
				return nil, err
			}
			switch {
			case hasVariant && variant == "*":
				for _, v := range sys.Variants() {
					add(Target{System: n, Variant: v})
				}
			case hasVariant && name != "all":
				v, err := systems.ResolveVariant(sys, variant)
				if err != nil {
					return nil, err
				}
				add(Target{System: n, Variant: v})
			case hasVariant:
				return nil, fmt.Errorf("--system %s: use all or all/* (a variant name belongs to one system)", item)
			default:
				v, _ := systems.ResolveVariant(sys, "")
				add(Target{System: n, Variant: v})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--system %q: no system given (have %s, or all)", list, strings.Join(systems.Names(), ", "))
	}
	return out, nil
}

// MaxSeeds bounds --seeds, so that a typo like 1-100000 fails fast.
const MaxSeeds = 10000

// ParseSeeds parses a seed list such as 1-5, 1,3,7 or 1-3,10; the result is
// sorted and free of duplicates.
func ParseSeeds(s string) ([]uint64, error) {
	bad := func() error {
		return fmt.Errorf("--seeds %q: want seeds or ranges such as 1-5 or 1,3,7", s)
	}
	set := map[uint64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, bad()
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, bad()
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, bad()
			}
		}
		if b-a >= MaxSeeds {
			return nil, fmt.Errorf("--seeds %q: more than %d seeds", s, MaxSeeds)
		}
		for x := a; ; x++ {
			set[x] = true
			if len(set) > MaxSeeds {
				return nil, fmt.Errorf("--seeds %q: more than %d seeds", s, MaxSeeds)
			}
			if x == b {
				break
			}
		}
	}
	seeds := make([]uint64, 0, len(set))
	for x := range set {
		seeds = append(seeds, x)
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	return seeds, nil
}

// FormatSeeds writes seeds compactly: 1-5,8.
func FormatSeeds(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, strconv.FormatUint(seeds[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Shard selects every N-th point, starting at point I-1 (I is 1-based).
type Shard struct {
	I int `json:"i"`
	N int `json:"n"`
}

// ParseShard parses I/N with 1 <= I <= N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, like 2/4", s)
	}
	return Shard{I: i, N: n}, nil
}

// Has reports whether point index idx (0-based) belongs to the shard.
func (s Shard) Has(idx int) bool { return s.N <= 1 || idx%s.N == s.I-1 }
