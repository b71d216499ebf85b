package check

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"ftbench/engine"
)

// Linearizability results, as run.json spells them.
const (
	LinOK      = "ok"
	LinIllegal = "illegal"
	// LinUnknown means the checker ran out of time: never a pass.
	LinUnknown = "unknown"
)

// Defaults of a linearizability check.
const (
	DefaultTimeout = 2 * time.Minute
	// DefaultSegmentOps is how many operations a key's history collects
	// before it is cut at the next quiescent instant. Porcupine's memo table
	// costs O(n^2/64) words per partition, so one partition per hot key of a
	// long run (hundreds of thousands of commits) would not fit in memory;
	// at a quiescent instant the model state is known exactly (every
	// operation before it must be linearized before every one after it, and
	// the state after a set of operations does not depend on their order),
	// so each segment is checked alone from that state.
	DefaultSegmentOps = 1024
	maxVisualized     = 3
	// timeScale maps one simulated nanosecond to porcupine ticks: a read
	// called at t starts at tick 4t and one returning at t ends at 4t+3,
	// an apply at t spans 4t+1 to 4t+2, so a read is concurrent with the
	// applies at its call and return instants. Applies of one key never
	// share an instant (one apply folds an instant's commits), so no finer
	// clock is needed.
	timeScale = 4
)

// Options tune a check.
type Options struct {
	Timeout    time.Duration // for the whole check; 0 = DefaultTimeout
	Jobs       int           // segments checked in parallel; 0 = GOMAXPROCS
	SegmentOps int           // 0 = DefaultSegmentOps
}

// Report is the outcome of checking a history against one model.
type Report struct {
	Claim    Claim
	Result   string // LinOK, LinIllegal or LinUnknown
	Keys     int
	Segments int
	Ops      int
	Illegal  int // segments with no linearization
	// Unchecked counts segments the checker gave up on at the timeout.
	Unchecked int
	First     *Violation // the earliest illegal segment's first rejected operation
	failing   []segment  // the earliest illegal segments, for Visualize
	ops       []Op
	want      map[uint64]Expect
}

// Violation locates the first illegal segment.
type Violation struct {
	Key   uint64  `json:"key"`
	FromS float64 `json:"from_s"` // the segment's time span
	ToS   float64 `json:"to_s"`
	// Op is the first operation, in time order, that the model rejects,
	// AtS its call time and State the model state before it.
	Op    string  `json:"op"`
	AtS   float64 `json:"at_s"`
	State string  `json:"state"`
}

// segment is a run of one key's operations, led by the state before them.
type segment struct {
	key   uint64
	start State
	idx   []int32 // into the history, sorted by (Call, Return), commit order on ties
}

// Check checks a history against claim c's model. want holds each key's
// expected effects, for its final reads (a key missing from want expects
// none). Operations are grouped by key; a key with no operations is not
// checked. Each key's applies must not overlap one another (an apply folds
// commits no read overlaps, or one instant's).
func Check(ops []Op, want map[uint64]Expect, c Claim, opt Options) (*Report, error) {
	switch c.Guarantee {
	case ExactlyOnce, AtLeastOnce, AtMostOnce, None:
	default:
		return nil, fmt.Errorf("check: no porcupine model for claim %q", c)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Jobs <= 0 {
		opt.Jobs = runtime.GOMAXPROCS(0)
	}
	if opt.SegmentOps <= 0 {
		opt.SegmentOps = DefaultSegmentOps
	}
	deadline := time.Now().Add(opt.Timeout)
	segs, keys := segments(ops, opt.SegmentOps)
	rep := &Report{Claim: c, Keys: keys, Segments: len(segs), Ops: len(ops), ops: ops, want: want}
	results := make([]string, len(segs))
	mdl := Model(c)
	mdl.Partition = nil // one segment per call
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < opt.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []porcupine.Operation
			for i := range next {
				left := time.Until(deadline)
				if left < time.Millisecond {
					results[i] = LinUnknown
					continue
				}
				buf = segs[i].operations(ops, want, 0, buf[:0])
				switch porcupine.CheckOperationsTimeout(mdl, buf, left) {
				case porcupine.Ok:
					results[i] = LinOK
				case porcupine.Illegal:
					results[i] = LinIllegal
				default:
					results[i] = LinUnknown
				}
			}
		}()
	}
	for i := range segs {
		next <- i
	}
	close(next)
	wg.Wait()

	type failure struct {
		seg segment
		v   *Violation
	}
	var failing []failure
	for i, r := range results {
		switch r {
		case LinIllegal:
			rep.Illegal++
			failing = append(failing, failure{segs[i], segs[i].violation(c, ops, want)})
		case LinUnknown:
			rep.Unchecked++
		}
	}
	switch {
	case rep.Illegal > 0:
		rep.Result = LinIllegal
	case rep.Unchecked > 0:
		rep.Result = LinUnknown
	default:
		rep.Result = LinOK
	}
	// Earliest first: the first anomaly in time is the one to debug.
	slices.SortStableFunc(failing, func(a, b failure) int { return cmp.Compare(a.v.AtS, b.v.AtS) })
	for i, f := range failing {
		if i == 0 {
			rep.First = f.v
		}
		if i < maxVisualized {
			rep.failing = append(rep.failing, f.seg)
		}
	}
	return rep, nil
}

// segments groups ops by key (keys ascending), orders each key's operations
// by time and cuts them into segments at quiescent instants once a segment
// holds segOps operations. There the state is the fold of every operation
// before (applies never overlap, so their order is known). It returns the
// segments and the number of keys.
func segments(ops []Op, segOps int) ([]segment, int) {
	byKey := map[uint64][]int32{}
	for i := range ops {
		byKey[ops[i].Key] = append(byKey[ops[i].Key], int32(i))
	}
	keys := make([]uint64, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var segs []segment
	for _, k := range keys {
		idx := byKey[k]
		slices.SortStableFunc(idx, func(a, b int32) int {
			if c := cmp.Compare(ops[a].Call, ops[b].Call); c != 0 {
				return c
			}
			return cmp.Compare(ops[a].Return, ops[b].Return)
		})
		st := State{Started: true}
		begin, start := 0, st
		var maxRet engine.Time
		for i, j := range idx {
			op := &ops[j]
			if i-begin >= segOps && op.Call > maxRet {
				segs = append(segs, segment{key: k, start: start, idx: idx[begin:i]})
				begin, start = i, st
			}
			st = st.after(op)
			maxRet = max(maxRet, op.Return)
		}
		segs = append(segs, segment{key: k, start: start, idx: idx[begin:]})
	}
	return segs, len(keys)
}

// ticks maps an operation to porcupine's clock (see timeScale).
func ticks(op *Op) (call, ret int64) {
	if op.Kind == OpApply {
		return int64(op.Call)*timeScale + 1, int64(op.Return)*timeScale + 2
	}
	return int64(op.Call) * timeScale, int64(op.Return)*timeScale + timeScale - 1
}

// input is op's porcupine input: the op itself, or a final read with its
// key's expectation.
func input(op *Op, want map[uint64]Expect) any {
	if op.Kind == OpFinal {
		return &finalRead{op: op, want: want[op.Key]}
	}
	return op
}

// operations appends the segment as porcupine operations, led by its
// start operation, with segment number seg as metadata.
func (s *segment) operations(ops []Op, want map[uint64]Expect, seg int, buf []porcupine.Operation) []porcupine.Operation {
	buf = append(buf, porcupine.Operation{Input: &segmentStart{key: s.key, state: s.start}, Metadata: seg})
	for _, j := range s.idx {
		op := &ops[j]
		call, ret := ticks(op)
		client := 0
		if op.Kind != OpApply {
			client = 1 // the reader
		}
		buf = append(buf, porcupine.Operation{ClientId: client, Input: input(op, want), Call: call, Return: ret, Metadata: seg})
	}
	if first := len(buf) - len(s.idx); len(s.idx) > 0 {
		buf[first-1].Call, buf[first-1].Return = buf[first].Call-2, buf[first].Call-1
	}
	return buf
}

// violation replays the segment in the order things happened — applies at
// their commits, reads at the instant they were served, reads before the
// commits of that instant (a read sees the commits strictly before it) —
// and names the first operation the model rejects.
func (s *segment) violation(c Claim, ops []Op, want map[uint64]Expect) *Violation {
	st := s.start
	v := &Violation{Key: s.key, FromS: ops[s.idx[0]].Call.Seconds()}
	for _, j := range s.idx {
		v.ToS = max(v.ToS, ops[j].Return.Seconds())
	}
	point := func(op *Op) (engine.Time, int) {
		if op.Kind == OpRead {
			return op.Born, 0
		}
		return op.Call, 1
	}
	happened := slices.Clone(s.idx)
	slices.SortStableFunc(happened, func(a, b int32) int {
		ta, ka := point(&ops[a])
		tb, kb := point(&ops[b])
		if c := cmp.Compare(ta, tb); c != 0 {
			return c
		}
		return cmp.Compare(ka, kb)
	})
	for _, j := range happened {
		in := input(&ops[j], want)
		ok, ns := step(c, st, in)
		if !ok {
			v.Op, v.AtS, v.State = describe(in), ops[j].Call.Seconds(), st.describe()
			return v
		}
		st = ns
	}
	v.Op, v.AtS = "none in time order; the operations overlap in a way no order explains", v.ToS
	return v
}

// Annotation is a span of simulated time shown above the visualized
// history, such as a fault window.
type Annotation struct {
	Start, End  engine.Time
	Description string
	Details     string
}

// Visualize writes porcupine's HTML view of the report's earliest illegal
// segments (up to three) with the annotations. It writes nothing and
// returns false if the history was not found illegal.
func (r *Report) Visualize(w io.Writer, notes []Annotation) (bool, error) {
	if len(r.failing) == 0 {
		return false, nil
	}
	var hist []porcupine.Operation
	for i := range r.failing {
		hist = r.failing[i].operations(r.ops, r.want, i+1, hist)
	}
	mdl := Model(r.Claim)
	_, info := porcupine.CheckOperationsVerbose(mdl, hist, time.Minute)
	anns := make([]porcupine.Annotation, 0, len(notes))
	for _, n := range notes {
		anns = append(anns, porcupine.Annotation{
			Tag: "faults", Start: int64(n.Start) * timeScale, End: int64(n.End)*timeScale + timeScale - 1,
			Description: n.Description, Details: n.Details, BackgroundColor: "#f8d7a9",
		})
	}
	info.AddAnnotations(anns)
	return true, porcupine.Visualize(mdl, info, w)
}
