package workloads

import (
	"ftbench/engine"
)

// grep: source -> filter -> sink, the stateless D-Streams throughput
// benchmark. Records have a configurable size (100 B and 1000 B are the
// published points); one in `match-every` records contains the pattern.
type grep struct {
	seed       uint64
	size       int32
	matchEvery uint64
	plan       Plan
}

func init() {
	Register(Factory{
		Name:     "grep",
		Describe: "stateless filter over fixed-size records (source, filter, sink)",
		Options: []Option{
			{Name: "record-size", Default: "100", Usage: "record size in bytes (grep)"},
			{Name: "match-every", Default: "10", Usage: "one in N records matches the pattern (grep)"},
		},
		New: newGrep,
	})
}

func newGrep(seed uint64, opts map[string]string) (Workload, error) {
	size, err := intOption(opts, "record-size", 1, 1<<20)
	if err != nil {
		return nil, err
	}
	every, err := intOption(opts, "match-every", 1, 1<<30)
	if err != nil {
		return nil, err
	}
	g := &grep{seed: engine.ChildSeed(seed, "workload/grep"), size: int32(size), matchEvery: uint64(every)}
	g.plan = Plan{Source: "source", Stages: []Stage{
		{
			Name:  "filter",
			Input: Forward,
			Cost: func(c *engine.CostModel, m engine.Msg) engine.Time {
				return c.RecordCPU + engine.Time(m.Size)*c.ScanPerByte
			},
			Fn: func(m engine.Msg, emit func(engine.Msg)) {
				if g.matches(m.ID.Part, m.ID.Off) {
					m.Key = uint64(m.ID.Part)<<40 | uint64(m.ID.Off)
					m.Val = 1
					emit(m)
				}
			},
		},
		sinkStage(),
	}}
	return g, nil
}

func (g *grep) matches(part int32, off int64) bool {
	return engine.Mix64(g.seed^uint64(part)<<48^uint64(off))%g.matchEvery == 0
}

func (g *grep) Name() string { return "grep" }
func (g *grep) Plan() *Plan  { return &g.plan }

func (g *grep) Record(part int32, off int64) engine.Msg {
	return engine.Msg{ID: engine.EffectID{Part: part, Off: off}, Size: g.size}
}

func (g *grep) CostPerRecord(c *engine.CostModel) map[string]engine.Time {
	sel := 1 / float64(g.matchEvery)
	return map[string]engine.Time{
		"source": c.SourceRecord + c.SendCost(g.size),
		"filter": c.RecordCPU + engine.Time(g.size)*c.ScanPerByte + engine.Time(sel*float64(c.SendCost(g.size))),
		"sink":   engine.Time(sel * float64(c.SinkCPU)),
	}
}
