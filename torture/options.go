package torture

import (
	"math/rand/v2"
	"strconv"
	"time"

	"ftbench/engine"
)

// choice is one system option torture draws, unless the user set it: the
// values are the configurations whose recovery paths a campaign must reach
// (docs/torture.md, "Options and coverage"). when restricts it to variants
// or workloads where the option means something.
type choice struct {
	name   string
	values []string
	when   func(variant string, p2p bool) bool
}

func always(string, bool) bool { return true }

// choices is keyed by system, in the order the options are drawn (the
// order is part of the campaign: run i must stay a pure function of the
// campaign seed and i). Why each:
//   - barrier: checkpoints of 200 ms-1 s so that a few-second run has
//     several, both sinks (plain claims at-least-once, 2pc exactly-once), and
//     for aligned-timeout timeouts short enough to switch under the drawn
//     slow and throttle windows, and one (500 ms) long enough that most
//     alignments complete, so crashes also land inside them (with 20-100 ms
//     only, 4 of 200 runs crashed during an alignment); max-concurrent-checkpoints 2 only for the
//     aligned variant (unaligned needs 1).
//   - lineage: batches of 250 ms-1 s and a checkpoint every 2-3 batches (the
//     default, 10 one-second batches, never checkpoints in a short run, so no
//     recovery ever used the cutoff), speculation on and off.
//   - snapshot: checkpoints of 200 ms-1 s on dataflows, snapshots every
//     100-500 ms on bank-p2p.
//   - stormack: ack timeouts of 500 ms-2 s: short enough that a crash's lost
//     trees time out and replay within the run; acking off (--ackers 0,
//     at most once) in a third of the runs, so crashes also land between a
//     spout's offset commit and the emission of its batch.
var choices = map[string][]choice{
	"barrier": {
		{"checkpoint-interval", []string{"200ms", "500ms", "1s"}, always},
		{"sink", []string{"2pc", "2pc", "plain"}, always},
		{"max-concurrent-checkpoints", []string{"1", "2"}, func(v string, _ bool) bool { return v == "aligned" }},
		{"aligned-checkpoint-timeout", []string{"20ms", "50ms", "100ms", "500ms"}, func(v string, _ bool) bool { return v == "aligned-timeout" }},
		// Not drawn: keep every checkpoint so that the post-run check
		// covers them all, as before retention became an option (last, so
		// that the draws above are unchanged).
		{"checkpoints-retained", []string{"64"}, always},
	},
	"lineage": {
		{"batch-interval", []string{"250ms", "500ms", "1s"}, always},
		{"checkpoint-every", []string{"2", "3"}, always},
		{"speculation", []string{"false", "true"}, always},
	},
	"snapshot": {
		{"checkpoint-interval", []string{"200ms", "500ms", "1s"}, func(_ string, p2p bool) bool { return !p2p }},
		{"snapshot-interval", []string{"100ms", "250ms", "500ms"}, func(_ string, p2p bool) bool { return p2p }},
	},
	"stormack": {
		{"ack-timeout", []string{"500ms", "1s", "2s"}, always},
		{"ackers", []string{"workers", "workers", "0"}, always},
	},
}

// drawOptions sets, in opts, every option of choices[system] that applies
// and that neither the user nor the props table set. Every choice consumes
// one draw whether or not it is used, so fixing one option on the command
// line does not change the others.
func drawOptions(rng *rand.Rand, system, variant string, p2p bool, opts map[string]string, declared map[string]string) {
	for _, c := range choices[system] {
		v := c.values[rng.IntN(len(c.values))]
		if _, set := opts[c.name]; set || !c.when(variant, p2p) {
			continue
		}
		if _, ok := declared[c.name]; ok {
			opts[c.name] = v
		}
	}
}

// workloadChoices are the workload options torture draws, unless the user
// set them, keyed by workload: bank-p2p's topology, so that campaigns run
// the snapshot algorithms on channels that are not all pairs (one marker
// or done message per channel, transfers only along them).
var workloadChoices = map[string][]choice{
	"bank-p2p": {{"topology", []string{"full", "ring", "star", "random,degree=2"}, always}},
}

// drawWorkloadOptions sets, in opts, every workload option of
// workloadChoices[workload] the user did not set. A random topology of
// degree 2 needs 3 processes; with fewer the default stays.
func drawWorkloadOptions(rng *rand.Rand, workload string, opts map[string]string) {
	for _, c := range workloadChoices[workload] {
		v := c.values[rng.IntN(len(c.values))]
		if _, set := opts[c.name]; set {
			continue
		}
		if n, err := strconv.Atoi(opts["processes"]); err == nil && n < 3 && v == "random,degree=2" {
			continue
		}
		opts[c.name] = v
	}
}

// checkpointPeriod is the time between a system's checkpoints (or
// snapshots) in the configuration opts, with declared defaults: lineage
// checkpoints every checkpoint-every batches. 0 if it has none.
func checkpointPeriod(opts, declared map[string]string) engine.Time {
	get := func(name string) (string, bool) {
		if v, ok := opts[name]; ok {
			return v, true
		}
		v, ok := declared[name]
		return v, ok
	}
	for _, name := range intervalFlags {
		v, ok := get(name)
		d, err := time.ParseDuration(v)
		if !ok || err != nil || d <= 0 {
			continue
		}
		period := engine.Time(d)
		if name == "batch-interval" {
			if k, ok := get("checkpoint-every"); ok {
				if n, err := strconv.Atoi(k); err == nil && n > 0 {
					period *= engine.Time(n)
				}
			}
		}
		return period
	}
	return 0
}

// minDurationFor is the shortest input that shows a system's checkpoints
// being used: three checkpoint periods and a second, so that crashes in
// 10-70% of the input land both before the first checkpoint and after one.
func minDurationFor(period engine.Time) engine.Time {
	d := 3*period + engine.Second
	step := 500 * engine.Millisecond
	return (d + step - 1) / step * step
}
