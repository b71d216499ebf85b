package sweep

import (
	"fmt"
	"sort"
	"strings"

	"ftbench/harness"
)

// ParseConfig parses one configuration of bench compare --config: a system
// (NAME or NAME/VARIANT) followed by run flags that apply to it alone, as
// they would be written on a bench run command line:
//
//	barrier --sink plain --checkpoint-interval 2s
//	barrier/unaligned --fault 'crash@5s:worker=1' --cost restart-delay=2s
//
// The flags become the target's Set, applied like --param values: a run
// option (rate, duration, drain, bucket, parallelism, workers, cores,
// variant, workload), a system or workload option, --fault (repeatable; it
// replaces the shared faults) and --cost NAME=VALUE (repeatable). Values
// are checked when the grid is expanded; names here.
func ParseConfig(s string) (Target, error) {
	bad := func(format string, args ...any) (Target, error) {
		return Target{}, fmt.Errorf("--config %q: %s", s, fmt.Sprintf(format, args...))
	}
	words, err := splitWords(s)
	if err != nil {
		return bad("%v", err)
	}
	if len(words) == 0 {
		return bad("empty; want a system and its run flags, like 'barrier --sink plain'")
	}
	if strings.HasPrefix(words[0], "-") {
		return bad("starts with a flag; the system comes first, like 'barrier --sink plain'")
	}
	ts, err := ParseTargets(words[0])
	if err != nil {
		return bad("%v", err)
	}
	if len(ts) != 1 || strings.Contains(words[0], "*") {
		return bad("names %d systems; a configuration is one system (give --config once per system)", len(ts))
	}
	t := ts[0]
	var faults []string
	given := map[string]bool{}
	for i := 1; i < len(words); i++ {
		w := words[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "-") || name == "" {
			return bad("%q is not a flag (want --NAME VALUE)", w)
		}
		if !hasValue {
			if i+1 >= len(words) {
				return bad("--%s needs a value", name)
			}
			i++
			value = words[i]
		}
		switch name {
		case "system", "variant":
			return bad("the system and its variant are the first word (barrier/unaligned), not --%s", name)
		case "seed", "seeds", "out", "jobs", "resume", "param", "shard", "shard-count", "capacity", "latency-bound", "config":
			return bad("--%s applies to the whole command; give it once, outside --config", name)
		case "fault":
			faults = append(faults, value)
			continue
		case "cost":
			cost, v, ok := strings.Cut(value, "=")
			if !ok || !isCostParam(cost) {
				return bad("--cost %s: want NAME=VALUE with a cost-model parameter (see bench list --costs)", value)
			}
			name, value = costPrefix+cost, v
		default:
			if !isRunFlag(name) {
				return bad("unknown flag --%s (have run options, system and workload options, --fault and --cost)", name)
			}
		}
		if given[name] {
			return bad("--%s given twice", strings.TrimPrefix(name, costPrefix))
		}
		given[name] = true
		t.Set = append(t.Set, KV{name, value})
	}
	if len(faults) > 0 {
		t.Set = append(t.Set, KV{"fault", strings.Join(faults, "+")})
	}
	// The workload first: workload options depend on it.
	sort.SliceStable(t.Set, func(a, b int) bool { return t.Set[a].Name == "workload" && t.Set[b].Name != "workload" })
	return t, nil
}

// isRunFlag reports whether name is a bench run flag a configuration may
// set (besides --fault and --cost).
func isRunFlag(name string) bool {
	for _, h := range harnessParams {
		if name == h && name != "fault" {
			return true
		}
	}
	return isSystemOption(name) || isWorkloadOption(name)
}

// applySet applies a target's own settings to cfg; each must apply to the
// target's system (a configuration naming an option its system lacks is a
// mistake, not a point to leave out of the grid).
func applySet(cfg *harness.Config, t Target) error {
	for _, kv := range t.Set {
		applies, err := Apply(cfg, kv.Name, kv.Value)
		if err != nil {
			return fmt.Errorf("--config %s: %w", t, err)
		}
		if !applies {
			what := "system " + t.System
			if isWorkloadOption(kv.Name) {
				what = "workload " + cfg.Workload
			}
			return fmt.Errorf("--config %s: --%s does not apply to %s", t, kv.Name, what)
		}
	}
	return nil
}

// splitWords splits a configuration into words as a POSIX shell would:
// blanks separate words, single quotes keep everything, double quotes
// keep all but \" and \\, and a backslash outside quotes escapes the next
// character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote")
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
