package storm

import "ftbench/workloads"

// FusePlan fuses a keyed stage that directly feeds the sink into the sink:
// in plain Storm, a bolt that updates an external store (a word count
// writing to Redis); in Trident, persistentAggregate. The keyed stage's
// name and instances are kept, so fault specs such as
// crash@...:op=count/0 still name it. Other stages run as bolts. fused is
// nil when no stage is fused.
func FusePlan(p *workloads.Plan) (compiled *workloads.Plan, sinkStage, fused *workloads.Stage) {
	n := len(p.Stages)
	last := &p.Stages[n-1]
	if n >= 2 && p.Stages[n-2].Keyed() && last.Sink && last.Input == workloads.Forward {
		stages := append([]workloads.Stage(nil), p.Stages[:n-1]...)
		return &workloads.Plan{Source: p.Source, Stages: stages}, last, &p.Stages[n-2]
	}
	return p, last, nil
}
