package harness

import "ftbench/engine"

// Taps: the test sinks' bugs (drain_test.go, observe_test.go) as
// interceptors of a process's commits, so that each bug says only what it
// does to a commit and to its own timer, and tapped does the wrapping.

// tap is a bug tapped into a process: commit gets each commit the process
// makes, with the process's own context to commit through (or not). The
// timers a tap sets have ids the system never uses; timer handles them and
// reports true, and every other timer goes on to the process.
type tap interface {
	commit(ctx engine.Ctx, x engine.Commit)
	timer(ctx engine.Ctx, id int64) bool
}

// starter is a tap that acts when its process starts, before the process
// does.
type starter interface {
	start(ctx engine.Ctx)
}

// tapped is a process whose commits go through t.
type tapped struct {
	engine.Process
	t tap
}

// tapCtx is the context the tapped process sees: its commits go to the tap.
type tapCtx struct {
	engine.Ctx
	t tap
}

func (c tapCtx) Commit(x engine.Commit) { c.t.commit(c.Ctx, x) }

func (p *tapped) Init(ctx engine.Ctx) {
	if s, ok := p.t.(starter); ok {
		s.start(ctx)
	}
	p.Process.Init(tapCtx{ctx, p.t})
}

func (p *tapped) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	p.Process.Handle(tapCtx{ctx, p.t}, from, m)
}

func (p *tapped) Timer(ctx engine.Ctx, id int64) {
	if !p.t.timer(ctx, id) {
		p.Process.Timer(tapCtx{ctx, p.t}, id)
	}
}
