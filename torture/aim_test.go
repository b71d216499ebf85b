package torture

import (
	"reflect"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
)

// An aimed fault lands where it was aimed: in the run it is part of, a
// crash, pause or partition starts within aimWindow after an event of the
// milestone the aim names (the first aimed fault, or the follow-up, is
// exact: the run is its dry run up to then). And aiming is a pure function
// of the configuration and seed.
func TestAimedFaultsLandJustAfterTheirMilestone(t *testing.T) {
	for _, sys := range []string{"barrier", "lineage", "stormack", "snapshot"} {
		t.Run(sys, func(t *testing.T) {
			checked := 0
			for i := 0; checked < 3 && i < 40; i++ {
				seed := RunSeed(5, i)
				cfg, err := draw(base(sys), Fixed{}, seed)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Observe = false
				aimed, notes := aim(cfg, seed)
				if len(notes) == 0 {
					continue
				}
				again, notes2 := aim(cfg, seed)
				if !reflect.DeepEqual(aimed, again) || !reflect.DeepEqual(notes, notes2) {
					t.Fatalf("run %d: aiming twice gave %v and %v", i, aimed.Faults, again.Faults)
				}
				out, err := harness.Execute(aimed)
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				// The earliest aimed fault's milestone, from its note:
				// "<fault>: <d> after <kind> <id> of <proc> (...)".
				kind := strings.Fields(strings.SplitN(notes[0], " after ", 2)[1])[0]
				hit := pathsHit(aimed, out.Events, nil)
				if !hit[milestoneRow(kind)] {
					t.Errorf("run %d: %s aimed after %s, but no fault started within %v after one: %v",
						i, sys, kind, aimWindow, notes)
				}
				checked++
			}
			if checked == 0 {
				t.Fatalf("no run of 40 was aimed")
			}
		})
	}
}

// --aim=false leaves the drawn schedule alone; aiming moves or adds
// faults only at whole milliseconds, inside the run's input.
func TestAimKeepsTheDrawnScheduleReadable(t *testing.T) {
	moved := 0
	for i := range 30 {
		seed := RunSeed(9, i)
		cfg, err := draw(base("barrier"), Fixed{}, seed)
		if err != nil {
			t.Fatal(err)
		}
		aimed, notes := aim(cfg, seed)
		if len(notes) == 0 {
			if !reflect.DeepEqual(aimed.Faults, cfg.Faults) {
				t.Fatalf("run %d: no aim noted, but the faults changed: %v -> %v", i, cfg.Faults, aimed.Faults)
			}
			continue
		}
		moved++
		for _, f := range aimed.Faults {
			sp, err := faults.Parse(f, faults.Defaults{Duration: aimed.Duration})
			if err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			if sp.At%engine.Millisecond != 0 || sp.At >= aimed.Duration {
				t.Errorf("run %d: fault %q does not start at a whole millisecond of the input", i, f)
			}
		}
		if len(aimed.Faults) < len(cfg.Faults) || len(aimed.Faults) > len(cfg.Faults)+1 {
			t.Errorf("run %d: %d faults drawn, %d after aiming", i, len(cfg.Faults), len(aimed.Faults))
		}
		if aimed.Duration != cfg.Duration || aimed.Seed != cfg.Seed {
			t.Errorf("run %d: aiming changed the run itself", i)
		}
	}
	if moved == 0 {
		t.Fatal("no run of 30 was aimed")
	}
}
