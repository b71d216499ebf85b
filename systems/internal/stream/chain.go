package stream

import (
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/workloads"
)

// ChainingFlags are the options of a system that chains operators as
// Flink does (barrier, none): pipeline.operator-chaining and object reuse.
func ChainingFlags() []systems.Flag {
	return []systems.Flag{
		{Name: "chaining", Default: "true", Usage: "true: chain forward-connected operators of equal parallelism into one task, as Flink does by default (pipeline.operator-chaining); false: one task per operator (disableOperatorChaining())"},
		{Name: "object-reuse", Default: "false", Usage: "true: chained operators pass records by reference (Flink's enableObjectReuse()); false: each chained hop copies the record through its serializer, Flink's default"},
	}
}

// Chain is the operators one task runs in its one thread: Flink's
// OperatorChain. The task's head (a source's reader, or a task's input)
// hands each record to the first link; every link hands its outputs to the
// next by a method call — through the serializer's copy first
// (CopyingChainingOutput: object reuse is off by default, so a downstream
// operator never sees an object its upstream may still change), or by
// reference with object reuse (ChainingOutput) — and the last link's
// outputs go to the network (Router). Without chaining a task's chain is
// its one operator.
//
// Invariant: a record crosses no channel between two links, so nothing
// (no barrier, no other record) comes between them; at most one link is a
// sink, the last.
type Chain struct {
	Links  []*Link
	Router *Router // the last link's network output; nil after a sink
	Reuse  bool    // object reuse: chained hops pass records by reference
	ctx    engine.Ctx
}

// Link is one chained operator: a stream Operator, or a sink (Write).
type Link struct {
	Stage *workloads.Stage
	Op    *Operator // nil for a sink
	// Write makes a sink record's effect visible, charging costs.
	Write func(ctx engine.Ctx, m engine.Msg, costs *engine.CostModel)
	// head: the link runs on its process's cost model (a task's first
	// operator, whose name is the process's CostOp); every other link
	// resolves its own operator's model on first use.
	head  bool
	costs *engine.CostModel
}

// NewChain builds the links of stages first..last of g for instance self;
// a task's first link is its head (headed), a source's links all follow
// its reader. sink returns the write of a sink stage.
func NewChain(g *Graph, first, last, self int, headed, reuse bool,
	sink func(st *workloads.Stage) func(engine.Ctx, engine.Msg, *engine.CostModel)) *Chain {
	c := &Chain{Router: g.Router(last, self), Reuse: reuse}
	for s := first; s <= last; s++ {
		l := &Link{Stage: &g.Plan.Stages[s], head: headed && s == first}
		if l.Stage.Sink {
			l.Write = sink(l.Stage)
		} else {
			k := len(c.Links)
			l.Op = NewOperator(l.Stage, func(m engine.Msg) { c.hop(k+1, m) })
		}
		c.Links = append(c.Links, l)
	}
	return c
}

// Process runs a record the task received through the first link.
func (c *Chain) Process(ctx engine.Ctx, m engine.Msg) {
	c.ctx = ctx
	c.Links[0].process(ctx, m, c.Links[0].Model(ctx))
}

// Emitter returns what a source hands each record it reads to: the first
// link, through a chained hop. Set the handling Ctx with Bind first.
func (c *Chain) Emitter() func(engine.Msg) { return func(m engine.Msg) { c.hop(0, m) } }

// Bind sets the Ctx the links' outputs are sent with (a source's poll).
func (c *Chain) Bind(ctx engine.Ctx) { c.ctx = ctx }

// hop hands an output to link k (past the last: the network). A chained
// hop copies the record through its serializer unless objects are reused:
// the receiving operator pays a pass over the record's bytes at its
// serde-per-byte, as a network send pays its serialisation (without the
// send's per-message cost, header and wire).
func (c *Chain) hop(k int, m engine.Msg) {
	if k == len(c.Links) {
		c.Router.Route(c.ctx, m)
		return
	}
	l := c.Links[k]
	costs := l.Model(c.ctx)
	if !c.Reuse {
		c.ctx.Work(engine.Time(m.Size) * costs.SerdePerByte)
	}
	l.process(c.ctx, m, costs)
}

func (l *Link) process(ctx engine.Ctx, m engine.Msg, costs *engine.CostModel) {
	if l.Op == nil {
		l.Write(ctx, m, costs)
		return
	}
	l.Op.Process(ctx, m)
}

// Model is the cost model the link charges, resolved once per incarnation.
func (l *Link) Model(ctx engine.Ctx) *engine.CostModel {
	if l.head {
		return ctx.Cost()
	}
	if l.costs == nil {
		l.costs = ctx.Cost().For(l.Stage.Name)
		if l.Op != nil {
			l.Op.Costs = l.costs
		}
	}
	return l.costs
}
