package torture

import (
	"cmp"
	"path/filepath"
	"slices"
	"sync"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
)

// DefaultShrinkBudget bounds the runs one shrink executes.
const DefaultShrinkBudget = 100

// Shrunk is the smallest schedule found that still breaks the claim.
type Shrunk struct {
	Run             int      `json:"run"`
	Faults          []string `json:"faults"`
	FaultsBefore    int      `json:"faults_before"`
	DurationS       float64  `json:"duration_s"`
	DurationBeforeS float64  `json:"duration_before_s"`
	Tries           int      `json:"tries"`
	Problem         string   `json:"problem"`
	Replay          string   `json:"replay"`
	Dir             string   `json:"dir,omitempty"`
}

// shrink reduces broken run r greedily, delta-debugging style: it tries
// candidates that drop one fault, cut the input short after the last fault,
// move one fault earlier, or halve one window, keeping the seed, and
// restarts from the first candidate that still breaks the claim (exit 3).
// Every candidate is strictly smaller, so it ends; the budget bounds it.
// Candidates run in parallel in batches; the first failing one in candidate
// order wins, so the result does not depend on the number of jobs.
func shrink(r *Run, opt Options) *Shrunk {
	budget := opt.ShrinkBudget
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	cur := r.Config
	s := &Shrunk{Run: r.Index, FaultsBefore: len(cur.Faults), DurationBeforeS: cur.Duration.Seconds(), Problem: r.Problem}
	var best *harness.Outcome
	for s.Tries < budget {
		cands := candidates(cur)
		found := false
		for lo := 0; lo < len(cands) && !found && s.Tries < budget; {
			hi := min(lo+opt.Jobs, len(cands), lo+budget-s.Tries)
			outs := make([]*harness.Outcome, hi-lo)
			var wg sync.WaitGroup
			for i := lo; i < hi; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if out, err := harness.Execute(cands[i]); err == nil {
						outs[i-lo] = out
					}
				}()
			}
			wg.Wait()
			// Tries counts the candidates up to the first failing one, as
			// if they ran one at a time: the rest of the batch ran only to
			// use the cores. So tries, and where the budget runs out, do
			// not depend on the jobs, and a campaign's shards (with other
			// jobs) shrink a run exactly as the unsharded campaign does.
			tried := hi - lo
			for i, out := range outs {
				if out != nil && out.Result.ExitCode == harness.ExitSafety {
					cur, best, found, tried = cands[lo+i], out, true, i+1
					break
				}
			}
			s.Tries += tried
			lo = hi
		}
		if !found {
			break
		}
	}
	s.Faults, s.DurationS, s.Replay = cur.Faults, cur.Duration.Seconds(), cur.ReplayCommand()
	if best != nil {
		if len(best.Result.Problems) > 0 {
			s.Problem = best.Result.Problems[0]
		}
		if opt.Out != "" {
			if dir, err := harness.Write(filepath.Join(opt.Out, "shrunk"), harness.NewRunID(cur, opt.Now()), best); err == nil {
				s.Dir = dir
			}
		}
	} else {
		s.Dir = r.Dir
	}
	return s
}

// candidates are the one-step reductions of cfg's schedule, most
// aggressive first.
func candidates(cfg harness.Config) []harness.Config {
	var specs []faults.Spec
	for _, f := range cfg.Faults {
		sp, err := faults.Parse(f, faults.Defaults{Duration: cfg.Duration})
		if err != nil {
			return nil // only canonical specs are shrunk
		}
		specs = append(specs, sp)
	}
	var out []harness.Config
	with := func(d engine.Time, ss []faults.Spec) {
		c := cfg
		c.Duration = d
		c.Faults = nil
		sorted := slices.Clone(ss)
		slices.SortStableFunc(sorted, func(a, b faults.Spec) int { return cmp.Compare(a.At, b.At) })
		for _, s := range sorted {
			if s.End > d {
				s.End = d // a shorter run keeps its windows within its input
			}
			c.Faults = append(c.Faults, s.String())
		}
		out = append(out, c)
	}
	for i := range specs {
		with(cfg.Duration, slices.Delete(slices.Clone(specs), i, i+1))
	}
	var last engine.Time
	for _, s := range specs {
		last = max(last, s.At)
	}
	step := 100 * engine.Millisecond
	roundUp := func(t engine.Time) engine.Time { return (t + step - 1) / step * step }
	d1 := roundUp(max(last+step, 5*step))
	for _, d := range []engine.Time{d1, roundUp((d1 + cfg.Duration) / 2)} {
		if d < cfg.Duration {
			with(d, specs)
		}
	}
	ms := engine.Millisecond
	for i, s := range specs {
		if at := s.At / 2 / ms * ms; at < s.At {
			e := slices.Clone(specs)
			if s.End > 0 {
				e[i].End -= s.At - at
			}
			e[i].At = at
			with(cfg.Duration, e)
		}
		if s.End > 0 && s.End-s.At > step {
			e := slices.Clone(specs)
			e[i].End = s.At + (s.End-s.At)/2/ms*ms
			with(cfg.Duration, e)
		}
	}
	return out
}
