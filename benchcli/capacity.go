package benchcli

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"ftbench/capacity"
	"ftbench/engine"
	"ftbench/harness"
	"ftbench/sweep"
)

func capacityCommand() *cli.Command {
	return &cli.Command{
		Name:  "capacity",
		Usage: "find the highest offered rate a system sustains (no faults): double, then bisect to within 2%",
		UsageText: "bench capacity --system S [--latency-bound 1s] [--out DIR] [run flags]\n\n" +
			"A rate is sustained when the source lag grows by less than 1% of the rate per second (run.json overloaded)\n" +
			"and, with --latency-bound, p99 end-to-end latency is within the bound. Probes start at --rate (default: the\n" +
			"workload's default rate) and last --duration (default 6s here), extended to 10 whole commit cycles after\n" +
			"the warm-up, and go no lower than 1000 records a probe. Writes DIR/capacity.json. A --latency-bound below\n" +
			"0.99 of the system's commit cycle (every p99 is above it) is refused (exit 2); a search that finds no\n" +
			"sustained rate exits 4.\n\n" +
			"With --runtime live the machine's other load competes with the probes, so a failed probe is run once\n" +
			"more and is failed only if both attempts fail; each probe records the CPU its process received over\n" +
			"the lag trend's window (share of --workers x --cores), a failed probe under 0.8 of them is flagged\n" +
			"LOW CPU, and the capacity is also given per core-second received (live/sim beside --sim-capacity FILE).",
		Flags: append(setDefaultText(runFlags(), fmt.Sprintf("%gs per probe", capacity.DefaultProbeDuration.Seconds()), "duration"),
			&cli.StringFlag{Name: "latency-bound", Usage: "also require p99 end-to-end latency <= this (e.g. 1s)"},
			&cli.StringFlag{Name: "out", Usage: "folder for capacity.json (default results/capacity-SYSTEM-TIMESTAMP)"},
			&cli.StringFlag{Name: "sim-capacity", Usage: "with --runtime live: the simulator's capacity.json of the same configuration, to report live/sim overall and per core-second received"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench capacity takes no arguments, got %q", c.Args().First())
			}
			cfg, err := configFrom(c)
			if err != nil {
				return err
			}
			if !c.IsSet("duration") {
				cfg.Duration = 0 // capacity.DefaultProbeDuration
			}
			bound, err := latencyBound(c)
			if err != nil {
				return err
			}
			o := capacity.Options{Base: cfg, LatencyBound: bound}
			plan, err := capacity.NewPlan(o)
			if err != nil {
				return runError(err)
			}
			var sim *capacity.Result
			if f := c.String("sim-capacity"); f != "" {
				if sim, err = plan.CheckSimPeer(f); err != nil {
					return runError(err)
				}
			}
			out := c.String("out")
			if out == "" {
				out = filepath.Join("results", "capacity-"+cfg.System+"-"+time.Now().UTC().Format("20060102T150405"))
			}
			if err := checkOut("out", out); err != nil {
				return err
			}
			started := time.Now()
			res, err := findCapacity(c.App.Writer, plan, o)
			if err != nil {
				return runError(err)
			}
			res.Command = commandLine(c)
			if sim != nil {
				res.SetSim(c.String("sim-capacity"), sim)
			}
			path := filepath.Join(out, "capacity.json")
			if err := writeJSON(path, res); err != nil {
				return &exitError{code: harness.ExitInternal, msg: "writing " + path + ": " + err.Error()}
			}
			printCapacity(c.App.Writer, res, time.Since(started))
			fmt.Fprintf(c.App.Writer, "written:  %s\n", path)
			if none := res.NoneFound(); none != "" {
				// Not a usage error: the input was fine, the system sustains
				// no rate a probe can judge under this criterion.
				return &exitError{code: harness.ExitLiveness, msg: none}
			}
			return nil
		},
	}
}

func latencyBound(c *cli.Context) (engine.Time, error) {
	if !c.IsSet("latency-bound") {
		return 0, nil
	}
	return parseDuration("latency-bound", c.String("latency-bound"))
}

// runError maps a harness error to bench's exit codes.
func runError(err error) error {
	if harness.IsInputError(err) {
		return usageErr("%v", err)
	}
	return &exitError{code: harness.ExitInternal, msg: err.Error()}
}

// findCapacity runs one search, printing its plan and a progress line per
// probe.
func findCapacity(w io.Writer, plan *capacity.Plan, o capacity.Options) (*capacity.Result, error) {
	cycle := "continuous output"
	if plan.Cycle > 0 {
		cycle = fmt.Sprintf("commit cycle %v", time.Duration(plan.Cycle))
	}
	var set []string // the options given, so that barrier --sink 2pc and plain read apart
	for _, m := range []map[string]string{plan.Config.SystemOpts, plan.Config.WorkloadOpts} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			set = append(set, k+"="+m[k])
		}
	}
	given := ""
	if len(set) > 0 {
		given = " (" + strings.Join(set, " ") + ")"
	}
	fmt.Fprintf(w, "capacity of %s/%s on %s%s: probes of %v input + %v drain, %s, start %.0f records/s\n",
		plan.Config.System, plan.Variant, plan.Config.Workload, given, time.Duration(plan.Config.Duration),
		time.Duration(plan.Config.Drain), cycle, plan.Config.Rate)
	for _, n := range plan.Notes {
		fmt.Fprintf(w, "note:     %s\n", n)
	}
	i := 0
	return plan.Find(o, func(p capacity.Probe, lo, hi float64, wall time.Duration) {
		i++
		verdict := "sustained"
		if !p.Sustained {
			verdict = "OVERLOADED: " + p.Reason
		}
		bracket := fmt.Sprintf("[%.0f, %.0f)", lo, hi)
		if hi == 0 {
			bracket = fmt.Sprintf("[%.0f, ?)", lo)
		}
		fmt.Fprintf(w, "probe %2d: %.0f records/s  lag %+.0f records/s (%+.2f%% of rate)  p99 %.2f ms  %s  capacity in %s  (%.1fs wall%s)\n",
			i, p.RateRPS, p.LagSlopeRPS, 100*p.LagSlopeRPS/p.RateRPS, p.P99MS, verdict, bracket, wall.Seconds(), liveProbe(p))
	})
}

// liveProbe is what a live probe line adds: the CPU it received, flagged
// when a failed probe got too little of it, and its first attempt when it
// was run again.
func liveProbe(p capacity.Probe) string {
	s := ""
	if p.CPU != nil {
		s = ", " + p.CPU.String()
		if !p.Sustained && p.CPU.Low() {
			s += fmt.Sprintf(" LOW CPU: under %.1f of the cores it assumes, the verdict may be the machine's", capacity.LowCPUShare)
		}
	}
	if f := p.FirstAttempt; f != nil {
		s += "; first attempt OVERLOADED: " + f.Reason
		if f.CPU != nil {
			s += ", " + f.CPU.String()
		}
		if p.Sustained {
			s += ", not confirmed"
		} else {
			s += ", confirmed"
		}
	}
	return s
}

func printCapacity(w io.Writer, r *capacity.Result, wall time.Duration) {
	if r.CapacityRPS == nil {
		fmt.Fprintf(w, "capacity: none: overloaded even at %.0f records/s, the lowest rate a probe judges (%d probes, %.1fs wall)\n", r.OverloadedAtRPS, len(r.Probes), wall.Seconds())
		return
	}
	fmt.Fprintf(w, "capacity: %.0f records/s sustained, %.0f overloaded (%d probes, %.1fs wall)\n",
		*r.CapacityRPS, r.OverloadedAtRPS, len(r.Probes), wall.Seconds())
	if r.CapacityPerCoreS != nil {
		fmt.Fprintf(w, "per core: %.0f records/s per core-second received (%d cores assumed, %d available)\n", *r.CapacityPerCoreS, r.CoresAssumed, r.CoresAvailable)
	}
	if s := r.Sim; s != nil {
		perCore := "-"
		if s.LiveOverSimPerCore != nil {
			perCore = fmt.Sprintf("%.2f", *s.LiveOverSimPerCore)
		}
		fmt.Fprintf(w, "vs sim:   %.0f records/s in the simulator (%.0f per core): live/sim %.2f, per core-second received %s\n",
			s.CapacityRPS, s.PerCoreS, s.LiveOverSim, perCore)
	}
	if r.CostModelBoundRPS != nil {
		fmt.Fprintf(w, "bound:    %.0f records/s for the operator instances on this hardware under the cost model (%.3f of it measured)\n",
			*r.CostModelBoundRPS, *r.CapacityRPS / *r.CostModelBoundRPS)
	}
}

// writeJSON writes v as indented JSON, atomically.
func writeJSON(path string, v any) error {
	b, err := harness.MarshalIndent(v)
	if err != nil {
		return err
	}
	return sweep.WriteFileAtomic(path, b)
}
