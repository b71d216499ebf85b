package kstreams

import (
	"fmt"

	"ftbench/workloads"
)

// subTopology is one of the pieces Kafka Streams' TopologyBuilder cuts a
// topology into: the stages between two repartition topics. A stage whose
// input is not Forward (a KeyBy: wordcount's count, bank's debit and
// credit) reads a repartition topic written by the previous sub-topology,
// so it starts a new sub-topology; Forward stages stay in their
// predecessor's. Sub-topology 0 reads the source topic.
type subTopology struct {
	stages []int // plan stage indexes, in order
	// store is the stage whose state lives in this sub-topology's state
	// store (its changelog topic is <store>-changelog), -1 for none.
	store int
	// sink: the last stage is the sink (it writes the output topic);
	// otherwise the last stage's output goes to the repartition topic read
	// by the next sub-topology, partitioned by out.
	sink bool
	out  workloads.Partitioning
}

// splitTopology cuts plan into sub-topologies. At most one keyed stage per
// sub-topology: every keyed stage of the DAG workloads reads a shuffle, so
// it heads its own.
func splitTopology(plan *workloads.Plan) ([]subTopology, error) {
	subs := []subTopology{{store: -1}}
	for i := range plan.Stages {
		st := &plan.Stages[i]
		if i > 0 && st.Input != workloads.Forward {
			subs[len(subs)-1].out = st.Input
			subs = append(subs, subTopology{store: -1})
		} else if i == 0 && st.Input != workloads.Forward {
			// The source topic is not partitioned by the stage's key:
			// sub-topology 0 only repartitions it.
			subs[0].out = st.Input
			subs = append(subs, subTopology{store: -1})
		}
		cur := &subs[len(subs)-1]
		if st.Keyed() {
			if cur.store >= 0 {
				return nil, fmt.Errorf("kstreams: sub-topology %d would hold two keyed stages (%s, %s)", len(subs)-1, plan.Stages[cur.store].Name, st.Name)
			}
			cur.store = i
		}
		cur.stages = append(cur.stages, i)
		cur.sink = st.Sink
	}
	if !subs[len(subs)-1].sink {
		return nil, fmt.Errorf("kstreams: workload's plan does not end in a sink")
	}
	return subs, nil
}

// taskID is Kafka Streams' TaskId: (sub-topology, partition), numbered
// sub*parts + partition.
type taskID int

func (p *params) task(sub, part int) taskID { return taskID(sub*p.parts + part) }
func (p *params) subOf(t taskID) int        { return int(t) / p.parts }
func (p *params) partOf(t taskID) int       { return int(t) % p.parts }
func (p *params) nTasks() int               { return len(p.subs) * p.parts }

// taskName is how Kafka Streams prints a TaskId: "1_3".
func (p *params) taskName(t taskID) string { return fmt.Sprintf("%d_%d", p.subOf(t), p.partOf(t)) }

// stateful reports whether task t has a state store (and a changelog).
func (p *params) stateful(t taskID) bool { return p.subs[p.subOf(t)].store >= 0 }
