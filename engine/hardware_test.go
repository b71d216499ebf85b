package engine

import (
	"math"
	"strings"
	"testing"
)

// A profile's overrides are valid --cost values that scale every
// per-operator CPU cost by CPUScale and leave the cluster's other
// parameters as its Fixed values or the defaults say.
func TestHardwareOverrides(t *testing.T) {
	for _, h := range HardwareProfiles() {
		c, d := DefaultCost(), DefaultCost()
		for _, o := range h.Overrides() {
			if err := c.Set(o); err != nil {
				t.Fatalf("%s: %v", h.Name, err)
			}
		}
		fixed := map[string]bool{}
		for _, f := range h.Fixed {
			name, _, _ := strings.Cut(f, "=")
			fixed[name] = true
		}
		got, def := c.Params(), d.Params()
		for i, p := range got {
			switch {
			case p.PerOp && p.time != nil:
				want := float64(*def[i].time) * h.CPUScale
				if math.Abs(float64(*p.time)-want) > 1 {
					t.Errorf("%s: %s = %v, want %v x %g", h.Name, p.Name, *p.time, *def[i].time, h.CPUScale)
				}
			case !fixed[p.Name] && p.Value() != def[i].Value():
				t.Errorf("%s: %s changed to %s, not a value the profile lists", h.Name, p.Name, p.Value())
			}
		}
	}
}

func TestHardwareLookup(t *testing.T) {
	if _, err := Hardware("dstreams-2013"); err != nil {
		t.Fatal(err)
	}
	if _, err := Hardware("cray-1"); err == nil || !strings.Contains(err.Error(), "dstreams-2013") {
		t.Errorf("an unknown profile: %v, want an error naming the known ones", err)
	}
}
