package engine

import (
	"strings"
	"testing"
)

// Operator-qualified overrides change only that operator's model, win over
// global overrides in either order, and leave the run's model alone.
func TestCostFor(t *testing.T) {
	tests := []struct {
		name      string
		overrides []string
		op        string
		want      CostModel // only StateCPU, RecordCPU and SendCPU are compared
	}{
		{"no overrides", nil, "count", CostModel{StateCPU: 4 * Microsecond, RecordCPU: 2 * Microsecond, SendCPU: 500}},
		{"own override", []string{"count.state-cpu=8us"}, "count", CostModel{StateCPU: 8 * Microsecond, RecordCPU: 2 * Microsecond, SendCPU: 500}},
		{"other operator", []string{"count.state-cpu=8us"}, "split", CostModel{StateCPU: 4 * Microsecond, RecordCPU: 2 * Microsecond, SendCPU: 500}},
		{"global after", []string{"count.state-cpu=8us", "state-cpu=6us", "record-cpu=3us"}, "count", CostModel{StateCPU: 8 * Microsecond, RecordCPU: 3 * Microsecond, SendCPU: 500}},
		{"global before", []string{"state-cpu=6us", "count.state-cpu=8us"}, "count", CostModel{StateCPU: 8 * Microsecond, RecordCPU: 2 * Microsecond, SendCPU: 500}},
		{"global seen by others", []string{"state-cpu=6us", "count.state-cpu=8us"}, "split", CostModel{StateCPU: 6 * Microsecond, RecordCPU: 2 * Microsecond, SendCPU: 500}},
		{"last of two wins", []string{"count.state-cpu=8us", "count.state-cpu=1us"}, "count", CostModel{StateCPU: 1 * Microsecond, RecordCPU: 2 * Microsecond, SendCPU: 500}},
		{"several parameters", []string{"count.state-cpu=8us", "count.send-cpu=1us"}, "count", CostModel{StateCPU: 8 * Microsecond, RecordCPU: 2 * Microsecond, SendCPU: Microsecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultCost()
			for _, o := range tc.overrides {
				if err := c.Set(o); err != nil {
					t.Fatal(err)
				}
			}
			m := c.For(tc.op)
			if m.StateCPU != tc.want.StateCPU || m.RecordCPU != tc.want.RecordCPU || m.SendCPU != tc.want.SendCPU {
				t.Errorf("For(%s): state-cpu %v record-cpu %v send-cpu %v, want %v %v %v", tc.op,
					m.StateCPU, m.RecordCPU, m.SendCPU, tc.want.StateCPU, tc.want.RecordCPU, tc.want.SendCPU)
			}
			// For of a per-operator model starts from the run's values
			// again (a fused process asking for another operator's costs).
			if back := m.For("other"); back.StateCPU != c.StateCPU {
				t.Errorf("For(%s).For(other): state-cpu %v, want the run's %v", tc.op, back.StateCPU, c.StateCPU)
			}
			if c.StateCPU == 8*Microsecond {
				t.Error("a per-operator override changed the run's model")
			}
		})
	}
}

func TestCostSetErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"count.net-latency=1ms", "belongs to the cluster"},
		{"count.cores=2", "belongs to the cluster"},
		{"count.warp=1", `unknown parameter "warp"`},
		{".state-cpu=1us", "empty operator name"},
		{"count.state-cpu=fast", `cost count.state-cpu="fast": want a non-negative duration`},
		{"count.state-cpu=-1us", "non-negative duration"},
		{"count.state-cpu", "want name=value"},
		{"net-bandwidth=0", "positive number"},
	}
	for _, tc := range tests {
		c := DefaultCost()
		err := c.Set(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Set(%q) = %v, want one line containing %q", tc.in, err, tc.want)
		}
		if len(c.perOp) != 0 {
			t.Errorf("Set(%q) failed but kept the override", tc.in)
		}
	}
}

func TestCostCheckOpsAndMap(t *testing.T) {
	c := DefaultCost()
	for _, o := range []string{"count.state-cpu=8us", "state-cpu=6us"} {
		if err := c.Set(o); err != nil {
			t.Fatal(err)
		}
	}
	ops := []string{"source", "split", "count", "sink"}
	if err := c.CheckOps("wordcount", ops); err != nil {
		t.Errorf("CheckOps: %v", err)
	}
	err := c.CheckOps("grep", []string{"source", "filter", "sink"})
	if err == nil || !strings.Contains(err.Error(), `workload grep has no operator "count"`) {
		t.Errorf("CheckOps on grep: %v, want no operator count", err)
	}
	m := c.Map()
	if m["count.state-cpu"] != "8µs" || m["state-cpu"] != "6µs" {
		t.Errorf("Map: count.state-cpu %q state-cpu %q, want 8µs and 6µs", m["count.state-cpu"], m["state-cpu"])
	}
	// A copy that adds an override does not write into the original.
	cp := c
	if err := cp.Set("split.record-cpu=9us"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Map()["split.record-cpu"]; ok {
		t.Error("an override set on a copy reached the original")
	}
}
