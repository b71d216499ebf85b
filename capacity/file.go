package capacity

import (
	"encoding/json"
	"fmt"
	"os"
)

// CompareFormat identifies the capacity.json of bench compare --capacity:
// one search per system.
const CompareFormat = "ftbench-capacity-compare/1"

// Comparison is the capacity.json of bench compare --capacity.
type Comparison struct {
	Format  string    `json:"format"`
	Command string    `json:"command,omitempty"`
	Systems []*Result `json:"systems"`
}

// Ratio is a system's capacity divided by none's ("the throughput ceiling":
// what fault tolerance costs), or nil when either is missing.
func (c *Comparison) Ratio(r *Result) *float64 {
	for _, n := range c.Systems {
		if n.System == "none" && n.CapacityRPS != nil && *n.CapacityRPS > 0 && r.CapacityRPS != nil {
			x := *r.CapacityRPS / *n.CapacityRPS
			return &x
		}
	}
	return nil
}

// ReadFile reads a capacity.json of either form (bench capacity's single
// search or bench compare --capacity's list) as a Comparison.
func ReadFile(path string) (*Comparison, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch head.Format {
	case Format:
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &Comparison{Format: CompareFormat, Command: r.Command, Systems: []*Result{&r}}, nil
	case CompareFormat:
		var c Comparison
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &c, nil
	}
	return nil, fmt.Errorf("%s: format %q is not %s or %s", path, head.Format, Format, CompareFormat)
}
