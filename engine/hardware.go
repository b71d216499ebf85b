package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HardwareProfile is a named set of cost-model values that models one
// published testbed, selected with --hardware NAME. It is applied as
// --cost overrides placed before the user's own, so a --cost given on the
// command line still wins and a run's replay line (which spells the
// overrides out) repeats it without the profile's name. Invariant: the
// profile changes only the parameters it lists; with no profile the cost
// model is DefaultCost, unchanged.
type HardwareProfile struct {
	Name string
	Doc  string
	// CPUScale multiplies every per-record and per-byte CPU cost of
	// DefaultCost (the PerOp parameters): the one parameter fitted to the
	// profile's published figure (Fit).
	CPUScale float64
	// Fixed are the values taken from the testbed's description (cores)
	// or assumed for it (links), not fitted.
	Fixed []string
	// Fit names the published figure CPUScale was fitted to and how.
	Fit string
}

// hardwareProfiles is every named profile, in `bench list --hardware` order.
var hardwareProfiles = []HardwareProfile{
	{
		Name: "dstreams-2013",
		Doc: "the D-Streams paper's testbed (Zaharia et al., SOSP 2013 / UCB/EECS-2012-259, section 6): " +
			"EC2 nodes of 4 cores, on a 1 Gbit/s network (assumed, not fitted)",
		CPUScale: dstreamsCPUScale,
		Fixed:    []string{"cores=4", "net-bandwidth=125000000"},
		Fit: "CPU scale fitted so that lineage (Spark Streaming, 500 ms batches) sustains the paper's 670 000 grep " +
			"records/s of 100 B on one node (bench capacity --workers 1 --parallelism 4 --latency-bound 1s)",
	},
}

// dstreamsCPUScale is the fit of dstreams-2013 (docs/chapter.md,
// "Comparable hardware"): today's defaults give lineage 1 040 510
// records/s on the fitted configuration, so the CPU costs are scaled by
// 1 040 510 / 670 000 = 1.553 (a grep probe is CPU-bound, so capacity
// scales as its inverse).
const dstreamsCPUScale = 1.553

// HardwareProfiles lists the named profiles.
func HardwareProfiles() []HardwareProfile { return hardwareProfiles }

// HardwareNames lists the profiles' names.
func HardwareNames() []string {
	var names []string
	for _, p := range hardwareProfiles {
		names = append(names, p.Name)
	}
	return names
}

// Hardware finds a profile by name; an unknown name is an error naming
// the known ones.
func Hardware(name string) (HardwareProfile, error) {
	for _, p := range hardwareProfiles {
		if p.Name == name {
			return p, nil
		}
	}
	return HardwareProfile{}, fmt.Errorf("unknown hardware profile %q (have %s)", name, strings.Join(HardwareNames(), ", "))
}

// Overrides are the profile as --cost name=value overrides: the fixed
// values, then every per-operator CPU cost of DefaultCost times CPUScale
// (rounded to the nanosecond).
func (h HardwareProfile) Overrides() []string {
	out := append([]string(nil), h.Fixed...)
	c := DefaultCost()
	for _, p := range c.Params() {
		if !p.PerOp || p.time == nil {
			continue
		}
		scaled := time.Duration(float64(*p.time)*h.CPUScale + 0.5)
		out = append(out, p.Name+"="+strconv.FormatInt(int64(scaled), 10)+"ns")
	}
	return out
}
