// Package faults parses fault specs (syntax in the README, "What a run
// is") and installs them on a runtime.
//
// A spec is one of
//
//	crash@T:worker=N[,restart=D]
//	crash@T:op=NAME/I[,restart=D]
//	crash@T:master[,restart=D]
//	slow@T1-T2:op=NAME/I[,factor=K]
//	throttle@T1-T2:edge=A->B,rate=R/s
//	reorder@T1-T2:edge=A->B|all[,p=P]
//	pause@T1-T2:worker=N
//	pause@T1-T2:op=NAME/I
//	partition@T1-T2:worker=N
//	partition@T1-T2:op=NAME/I
//	partition@T1-T2:workers=A,B|C,D
//	store-slow@T1-T2[:factor=K]
//	store-down@T1-T2
//
// or a bare kind ("crash", "slow", "throttle", "reorder", "pause",
// "partition", "store-slow", "store-down") that picks defaults
// from the run duration and the workload's first stateful operator. Times are
// simulated time, written as Go durations (10s, 500ms, 1.5s) or as a
// percentage of the run (40%); Parse resolves percentages, so a Spec holds
// absolute times only and Spec.String gives a canonical form that Parse
// accepts back.
//
// Apply resolves operator names against a deployment and installs the specs
// on a Target (the simulator). Faults are part of a run's config, so the same
// specs and seed replay the same run.
package faults

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"ftbench/engine"
)

// Kind is the kind of a fault.
type Kind string

// The fault kinds.
const (
	Crash    Kind = "crash"
	Slow     Kind = "slow"
	Throttle Kind = "throttle"
	Reorder  Kind = "reorder"
	Pause    Kind = "pause"
	// Partition cuts workers off from the master and the other workers
	// (engine/sim's partition.go).
	Partition Kind = "partition"
	// StoreSlow and StoreDown are faults of the checkpoint store (durable
	// storage), not of a worker: it slows down or stops taking writes.
	StoreSlow Kind = "store-slow"
	StoreDown Kind = "store-down"
)

// Defaults used when a spec leaves a parameter out.
const (
	DefaultFactor = 8.0    // slow: CPU cost multiplier
	DefaultP      = 0.2    // reorder: probability
	DefaultRate   = 1000.0 // bare throttle: records per second per channel
	// DefaultStoreFactor is store-slow's: a store ten times slower than
	// usual, as a throttled or overloaded object store is.
	DefaultStoreFactor = 10.0
)

// Spec is one parsed fault. Times are absolute (percentages are resolved by
// Parse).
type Spec struct {
	Kind    Kind
	At, End engine.Time // End is 0 for crash
	Worker  int         // crash, pause or partition by worker; -1 otherwise
	// Master is a crash of the master node (the coordinator, job manager
	// or driver) instead of a worker.
	Master bool
	// Sides are a two-sided partition's workers, NEAR|FAR in canonical
	// form (workers=0,1|2,3): the master stays with NEAR, and so do workers
	// named on neither side. (A string keeps Spec comparable.)
	Sides string
	Op    string // crash/slow/pause target operator ("" when by worker)
	Index int    // instance index within Op
	// From and To name the operators of a throttle or reorder edge; AllEdges
	// selects every channel instead (reorder only).
	From, To string
	AllEdges bool
	Restart  engine.Time // crash: restart delay; -1 = the cost model's default
	Factor   float64     // slow, store-slow
	Rate     float64     // throttle: records per second per channel
	P        float64     // reorder
}

// Defaults is what a spec may be resolved against: the run duration (for
// percentages and bare kinds) and the operators bare kinds target.
type Defaults struct {
	Duration   engine.Time
	StatefulOp string // first stateful operator, e.g. "count"
	UpstreamOp string // the operator feeding StatefulOp, e.g. "split"
}

var kinds = []Kind{Crash, Slow, Throttle, Reorder, Pause, Partition, StoreSlow, StoreDown}

var grammars = map[Kind]string{
	Crash:     "crash@T:worker=N[,restart=D] or crash@T:op=NAME/I[,restart=D] or crash@T:master[,restart=D]",
	Slow:      "slow@T1-T2:op=NAME/I[,factor=K]",
	Throttle:  "throttle@T1-T2:edge=A->B,rate=R/s",
	Reorder:   "reorder@T1-T2:edge=A->B|all[,p=P]",
	Pause:     "pause@T1-T2:worker=N or pause@T1-T2:op=NAME/I",
	Partition: "partition@T1-T2:worker=N, partition@T1-T2:op=NAME/I or partition@T1-T2:workers=A,B|C,D",
	StoreSlow: "store-slow@T1-T2[:factor=K]",
	StoreDown: "store-down@T1-T2",
}

var descriptions = map[Kind]string{
	Crash: "crash     kill a worker (every process on it) at T and restart it after D " +
		"(default: the cost model's restart delay); bare: the worker of the first stateful operator's instance 0 at 40% of the run; " +
		"crash@T:master kills the master node (checkpoint coordinator / job manager, Spark driver, Storm's nimbus) instead",
	Slow: "slow      straggler: multiply one operator instance's CPU cost by K (default 8) during T1-T2; " +
		"bare: the first stateful operator's instance 0 from 30% to 60%",
	Throttle: "throttle  link backpressure: limit every channel from an instance of A to an instance of B " +
		"to R records/s during T1-T2; bare: the edge into the first stateful operator from 30% to 60% at 1000/s",
	Reorder: "reorder   non-FIFO delivery with probability P (default 0.2) on the channels of edge A->B, or all channels, " +
		"during T1-T2; bare: all channels from 25% to 75%",
	Pause: "pause     stop every process on a worker (SIGSTOP, a long GC) during T1-T2, state intact; a pause longer than the " +
		"detection delay is declared a failure; bare: the worker of the first stateful operator's instance 0 from 40% to 50%",
	Partition: "partition cut a worker (or the far side of workers=NEAR|FAR) off from the master and the other workers during T1-T2; " +
		"the stores and the source log stay reachable; the master declares the far side failed after the detection delay and its tasks " +
		"run on as zombies until it heals; bare: the worker of the first stateful operator's instance 0 from 40% to 60%",
	StoreSlow: "store-slow the checkpoint store is K times slower (default 10) for writes issued and reads made during T1-T2; " +
		"bare: from 30% to 60%",
	StoreDown: "store-down the checkpoint store fails every write in progress during T1-T2 (the writer is told); " +
		"bare: from 30% to 60%",
}

var keys = map[Kind][]string{
	Crash:     {"worker", "op", "restart"},
	Slow:      {"op", "factor"},
	Throttle:  {"edge", "rate"},
	Reorder:   {"edge", "p"},
	Pause:     {"worker", "op"},
	Partition: {"worker", "op", "workers"},
	StoreSlow: {"factor"},
	StoreDown: {},
}

// Grammar returns the spec grammar, one line per kind. Times are Go durations
// (10s, 500ms, 1.5s) or percentages of the run (40%).
func Grammar() string {
	lines := make([]string, len(kinds))
	for i, k := range kinds {
		lines[i] = grammars[k]
	}
	return strings.Join(lines, "\n")
}

// Kinds returns one short description per fault kind.
func Kinds() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		// The descriptions start with their kind; align what follows it
		// in a column as wide as the longest kind.
		out[i] = fmt.Sprintf("%-10s %s", k, strings.TrimSpace(strings.TrimPrefix(descriptions[k], string(k))))
	}
	return out
}

func known(k Kind) bool {
	_, ok := grammars[k]
	return ok
}

func kindList() string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// String returns the canonical form of s, which Parse accepts back.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(string(s.Kind))
	b.WriteByte('@')
	b.WriteString(fmtTime(s.At))
	if s.Kind != Crash {
		b.WriteByte('-')
		b.WriteString(fmtTime(s.End))
	}
	b.WriteByte(':')
	switch s.Kind {
	case Crash:
		switch {
		case s.Master:
			b.WriteString("master")
		case s.Op != "":
			fmt.Fprintf(&b, "op=%s/%d", s.Op, s.Index)
		default:
			fmt.Fprintf(&b, "worker=%d", s.Worker)
		}
		if s.Restart >= 0 {
			b.WriteString(",restart=")
			b.WriteString(fmtTime(s.Restart))
		}
	case Pause, Partition:
		switch {
		case s.Op != "":
			fmt.Fprintf(&b, "op=%s/%d", s.Op, s.Index)
		case s.Sides != "":
			fmt.Fprintf(&b, "workers=%s", s.Sides)
		default:
			fmt.Fprintf(&b, "worker=%d", s.Worker)
		}
	case Slow:
		fmt.Fprintf(&b, "op=%s/%d,factor=%s", s.Op, s.Index, fmtFloat(s.Factor))
	case StoreSlow:
		fmt.Fprintf(&b, "factor=%s", fmtFloat(s.Factor))
	case StoreDown:
		return strings.TrimSuffix(b.String(), ":")
	case Throttle:
		fmt.Fprintf(&b, "edge=%s,rate=%s/s", s.edge(), fmtFloat(s.Rate))
	case Reorder:
		fmt.Fprintf(&b, "edge=%s,p=%s", s.edge(), fmtFloat(s.P))
	default:
		fmt.Fprintf(&b, "op=%s/%d,edge=%s", s.Op, s.Index, s.edge())
	}
	return b.String()
}

func (s Spec) edge() string {
	if s.AllEdges {
		return "all"
	}
	return s.From + "->" + s.To
}

func fmtTime(t engine.Time) string { return time.Duration(t).String() }

func fmtFloat(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// ParseAll parses several specs.
func ParseAll(specs []string, d Defaults) ([]Spec, error) {
	out := make([]Spec, 0, len(specs))
	for _, s := range specs {
		sp, err := Parse(s, d)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// Parse parses one fault spec. Errors are one line: what is wrong and the
// grammar of the spec's kind.
func Parse(s string, d Defaults) (Spec, error) {
	src := strings.TrimSpace(s)
	if src == "" {
		return Spec{}, fmt.Errorf("bad fault %q: empty spec; want one of %s, bare or as KIND@TIME:ARGS (see bench list)", s, kindList())
	}
	head, rest, hasAt := strings.Cut(src, "@")
	k := Kind(head)
	if !known(k) {
		what := fmt.Sprintf("unknown kind %q", head)
		switch {
		case head == "":
			what = "missing kind before '@'"
		case head == "drop" || head == "dup":
			what = fmt.Sprintf("kind %q is not supported yet", head)
		}
		return Spec{}, fmt.Errorf("bad fault %q: %s; want one of %s, bare or as KIND@TIME:ARGS (see bench list)", s, what, kindList())
	}
	p := parser{src: s, kind: k, dur: d.Duration}
	var sp Spec
	var msg string
	if !hasAt {
		sp, msg = bare(k, d)
	} else {
		sp, msg = p.parse(rest)
	}
	if msg == "" {
		msg = validate(sp)
	}
	if msg != "" {
		return Spec{}, p.errorf("%s", msg)
	}
	return sp, nil
}

type parser struct {
	src  string
	kind Kind
	dur  engine.Time
}

func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("bad fault %q: %s; want %s", p.src, fmt.Sprintf(format, a...), grammars[p.kind])
}

// bare builds the default spec of kind k.
func bare(k Kind, d Defaults) (Spec, string) {
	if d.Duration <= 0 {
		return Spec{}, fmt.Sprintf("bare %q needs the run duration to pick its times; give them explicitly", string(k))
	}
	at := func(frac float64) engine.Time { return engine.Time(math.Round(float64(d.Duration) * frac)) }
	sp := Spec{Kind: k, Worker: -1, Restart: -1}
	needOp := func(what, op string) string {
		if op == "" {
			return fmt.Sprintf("bare %q needs %s, and the workload names none; give a target explicitly", string(k), what)
		}
		return ""
	}
	switch k {
	case Crash:
		if m := needOp("a stateful operator", d.StatefulOp); m != "" {
			return Spec{}, m
		}
		sp.At, sp.Op = at(0.4), d.StatefulOp
	case Slow:
		if m := needOp("a stateful operator", d.StatefulOp); m != "" {
			return Spec{}, m
		}
		sp.At, sp.End, sp.Op, sp.Factor = at(0.3), at(0.6), d.StatefulOp, DefaultFactor
	case Throttle:
		if m := needOp("a stateful operator", d.StatefulOp); m != "" {
			return Spec{}, m
		}
		if m := needOp(fmt.Sprintf("an operator upstream of %q", d.StatefulOp), d.UpstreamOp); m != "" {
			return Spec{}, m
		}
		sp.At, sp.End, sp.From, sp.To, sp.Rate = at(0.3), at(0.6), d.UpstreamOp, d.StatefulOp, DefaultRate
	case Reorder:
		sp.At, sp.End, sp.AllEdges, sp.P = at(0.25), at(0.75), true, DefaultP
	case Pause:
		if m := needOp("a stateful operator", d.StatefulOp); m != "" {
			return Spec{}, m
		}
		sp.At, sp.End, sp.Op = at(0.4), at(0.5), d.StatefulOp
	case Partition:
		if m := needOp("a stateful operator", d.StatefulOp); m != "" {
			return Spec{}, m
		}
		sp.At, sp.End, sp.Op = at(0.4), at(0.6), d.StatefulOp
	case StoreSlow:
		sp.At, sp.End, sp.Factor = at(0.3), at(0.6), DefaultStoreFactor
	case StoreDown:
		sp.At, sp.End = at(0.3), at(0.6)
	}
	if k != Crash && sp.End <= sp.At {
		return Spec{}, fmt.Sprintf("bare %q: the run (%s) is too short for a window", string(k), fmtTime(d.Duration))
	}
	return sp, ""
}

// parse parses what follows '@'. It returns a problem description or "".
func (p *parser) parse(rest string) (Spec, string) {
	sp := Spec{Kind: p.kind, Worker: -1, Restart: -1}
	if (p.kind == StoreSlow || p.kind == StoreDown) && !strings.Contains(rest, ":") {
		// store-slow@T1-T2,factor=K: the store is the target, so the
		// arguments may follow the window directly.
		rest = strings.Replace(rest, ",", ":", 1)
	}
	times, args, hasColon := strings.Cut(rest, ":")
	times = strings.TrimSpace(times)
	if p.kind == Crash {
		if len(times) > 1 && strings.Contains(times[1:], "-") {
			return sp, fmt.Sprintf("crash takes one time T, not a window %q", times)
		}
		at, msg := p.time("time", times)
		if msg != "" {
			return sp, msg
		}
		sp.At = at
	} else {
		i := -1
		if len(times) > 1 {
			i = strings.Index(times[1:], "-")
		}
		if i < 0 {
			if times == "" {
				return sp, "missing window T1-T2 after '@'"
			}
			return sp, fmt.Sprintf("%s needs a window T1-T2, got %q", p.kind, times)
		}
		t1, t2 := times[:i+1], times[i+2:]
		at, msg := p.time("start time", t1)
		if msg != "" {
			return sp, msg
		}
		end, msg := p.time("end time", t2)
		if msg != "" {
			return sp, msg
		}
		if end <= at {
			return sp, fmt.Sprintf("window %q ends at or before it starts (%s <= %s)", times, fmtTime(end), fmtTime(at))
		}
		sp.At, sp.End = at, end
	}
	switch {
	case p.kind == StoreSlow && (!hasColon || strings.TrimSpace(args) == ""):
		sp.Factor = DefaultStoreFactor
		return sp, ""
	case p.kind == StoreDown && (!hasColon || strings.TrimSpace(args) == ""):
		return sp, ""
	case p.kind == StoreDown:
		return sp, fmt.Sprintf("store-down takes no arguments, got %q", strings.TrimSpace(args))
	case !hasColon || strings.TrimSpace(args) == "":
		return sp, "missing target " + targetHint(p.kind)
	}
	if p.kind == Crash {
		// crash@T:master[,restart=D]: the target is a bare word.
		first, more, comma := strings.Cut(args, ",")
		if strings.TrimSpace(first) == "master" {
			sp.Master = true
			args = more
			if strings.TrimSpace(more) == "" {
				if comma {
					return sp, "empty argument (stray ',')"
				}
				return sp, ""
			}
		}
	}
	if v, ok := strings.CutPrefix(strings.TrimSpace(args), "workers="); ok && p.kind == Partition {
		// The sides hold commas, so workers= is the whole argument list.
		near, far, msg := parseSides(v)
		if msg != "" {
			return sp, msg
		}
		sp.Sides = joinInts(near) + "|" + joinInts(far)
		return sp, ""
	}
	kv, msg := p.args(args)
	if msg != "" {
		return sp, msg
	}
	if _, ok := kv["workers"]; ok {
		return sp, "workers=NEAR|FAR must be the only argument"
	}
	switch p.kind {
	case Crash, Pause, Partition:
		w, hasW := kv["worker"]
		op, hasOp := kv["op"]
		switch {
		case sp.Master && (hasW || hasOp):
			return sp, "give master, worker=N or op=NAME/I, not two of them"
		case sp.Master:
		case hasW && hasOp:
			return sp, "give worker=N or op=NAME/I, not both"
		case hasW:
			n, err := strconv.Atoi(w)
			if err != nil {
				return sp, fmt.Sprintf("worker %q is not a worker number", w)
			}
			if n < 0 {
				return sp, fmt.Sprintf("worker %q is negative", w)
			}
			sp.Worker = n
		case hasOp:
			name, idx, msg := parseInstance(op)
			if msg != "" {
				return sp, msg
			}
			sp.Op, sp.Index = name, idx
		default:
			return sp, "missing target " + targetHint(p.kind)
		}
		if r, ok := kv["restart"]; ok {
			d, msg := p.time("restart", r)
			if msg != "" {
				return sp, msg
			}
			sp.Restart = d
		}
	case StoreSlow:
		if sp.Factor, msg = factor(kv, DefaultStoreFactor); msg != "" {
			return sp, msg
		}
	case Slow:
		op, ok := kv["op"]
		if !ok {
			return sp, "missing target " + targetHint(p.kind)
		}
		name, idx, msg := parseInstance(op)
		if msg != "" {
			return sp, msg
		}
		sp.Op, sp.Index = name, idx
		if sp.Factor, msg = factor(kv, DefaultFactor); msg != "" {
			return sp, msg
		}
	case Throttle:
		e, ok := kv["edge"]
		if !ok {
			return sp, "missing target " + targetHint(p.kind)
		}
		if e == "all" {
			return sp, "throttle needs an edge A->B, not edge=all"
		}
		from, to, msg := parseEdge(e)
		if msg != "" {
			return sp, msg
		}
		sp.From, sp.To = from, to
		r, ok := kv["rate"]
		if !ok {
			return sp, "missing rate=R/s"
		}
		v, msg := parseFloat("rate", strings.TrimSuffix(r, "/s"))
		if msg != "" {
			return sp, fmt.Sprintf("rate %q is not a number of records per second (like 2000/s)", r)
		}
		if v <= 0 {
			return sp, fmt.Sprintf("rate %q must be positive", r)
		}
		sp.Rate = v
	case Reorder:
		e, ok := kv["edge"]
		if !ok {
			return sp, "missing target " + targetHint(p.kind)
		}
		if e == "all" {
			sp.AllEdges = true
		} else {
			from, to, msg := parseEdge(e)
			if msg != "" {
				return sp, msg
			}
			sp.From, sp.To = from, to
		}
		sp.P = DefaultP
		if s, ok := kv["p"]; ok {
			v, msg := parseFloat("p", s)
			if msg != "" {
				return sp, msg
			}
			if !(v > 0 && v <= 1) {
				return sp, fmt.Sprintf("p %q is not in (0,1]", s)
			}
			sp.P = v
		}
	}
	return sp, ""
}

func targetHint(k Kind) string {
	switch k {
	case Crash:
		return "worker=N, op=NAME/I or master"
	case Partition:
		return "worker=N, op=NAME/I or workers=A,B|C,D"
	case Pause:
		return "worker=N or op=NAME/I"
	case Slow:
		return "op=NAME/I"
	case Throttle:
		return "edge=A->B"
	default:
		return "edge=A->B or edge=all"
	}
}

// args splits "k=v,k=v" and checks the keys against the kind's.
func (p *parser) args(s string) (map[string]string, string) {
	allowed := keys[p.kind]
	kv := map[string]string{}
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, "empty argument (stray ',')"
		}
		k, v, ok := strings.Cut(a, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return nil, fmt.Sprintf("argument %q is not key=value", a)
		}
		isAllowed := false
		for _, x := range allowed {
			if x == k {
				isAllowed = true
			}
		}
		if !isAllowed {
			return nil, fmt.Sprintf("unknown key %q (%s takes %s)", k, p.kind, strings.Join(allowed, ", "))
		}
		if _, dup := kv[k]; dup {
			return nil, fmt.Sprintf("duplicate key %q", k)
		}
		if v == "" {
			return nil, fmt.Sprintf("key %q has no value", k)
		}
		kv[k] = v
	}
	return kv, ""
}

// time parses a Go duration or a percentage of the run.
func (p *parser) time(what, s string) (engine.Time, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "missing " + what
	}
	if num, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Sprintf("%s %q is not a duration (like 10s) or a percentage (like 40%%)", what, s)
		}
		if v < 0 {
			return 0, fmt.Sprintf("%s %q is negative", what, s)
		}
		if p.dur <= 0 {
			return 0, fmt.Sprintf("%s %q is a percentage, but the run duration is unknown", what, s)
		}
		t := math.Round(float64(p.dur) * v / 100)
		if t >= math.MaxInt64/2 {
			return 0, fmt.Sprintf("%s %q is too large", what, s)
		}
		return engine.Time(t), ""
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Sprintf("%s %q is not a duration (like 10s) or a percentage (like 40%%)", what, s)
	}
	if d < 0 {
		return 0, fmt.Sprintf("%s %q is negative", what, s)
	}
	return engine.Time(d), ""
}

func parseFloat(what, s string) (float64, string) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Sprintf("%s %q is not a number", what, s)
	}
	return v, ""
}

// parseInstance parses NAME/I.
func parseInstance(s string) (string, int, string) {
	i := strings.LastIndex(s, "/")
	if i < 0 {
		return "", 0, fmt.Sprintf("op %q names no instance (like %q)", s, s+"/0")
	}
	name, idx := s[:i], s[i+1:]
	if name == "" {
		return "", 0, fmt.Sprintf("op %q has no operator name", s)
	}
	if msg := checkName(name); msg != "" {
		return "", 0, msg
	}
	n, err := strconv.Atoi(idx)
	if err != nil {
		return "", 0, fmt.Sprintf("op %q: instance %q is not a number", s, idx)
	}
	if n < 0 {
		return "", 0, fmt.Sprintf("op %q: instance %q is negative", s, idx)
	}
	return name, n, ""
}

// parseEdge parses A->B.
func parseEdge(s string) (string, string, string) {
	a, b, ok := strings.Cut(s, "->")
	if !ok {
		return "", "", fmt.Sprintf("edge %q is not A->B or all", s)
	}
	if a == "" || b == "" {
		return "", "", fmt.Sprintf("edge %q needs an operator on both sides of ->", s)
	}
	if msg := checkName(a); msg != "" {
		return "", "", msg
	}
	if msg := checkName(b); msg != "" {
		return "", "", msg
	}
	return a, b, ""
}

func checkName(s string) string {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == ',' {
			return fmt.Sprintf("operator name %q contains a space or control character", s)
		}
	}
	return ""
}

// validate checks a spec's fields (for specs built by hand and passed to
// Apply). It returns a problem description or "".
func validate(s Spec) string {
	if !known(s.Kind) {
		return fmt.Sprintf("unknown kind %q (kinds: %s)", string(s.Kind), kindList())
	}
	if s.At < 0 {
		return fmt.Sprintf("time %s is negative", fmtTime(s.At))
	}
	if s.Master && s.Kind != Crash {
		return fmt.Sprintf("%s cannot target the master node", s.Kind)
	}
	if s.Kind == Crash {
		switch {
		case s.End != 0:
			return "crash has one time, but End is set"
		case s.Master && (s.Op != "" || s.Worker >= 0):
			return "give master, worker=N or op=NAME/I, not two of them"
		case s.Master && s.Restart == 0:
			// A new leader is told apart from the job's first start by
			// starting after time 0 (checkpoint.Coordinator.Init).
			return "a master crash needs a positive restart delay"
		case s.Master:
		case s.Op != "" && s.Worker >= 0:
			return "give worker=N or op=NAME/I, not both"
		case s.Op == "" && s.Worker < 0:
			return "missing target " + targetHint(s.Kind)
		case s.Op != "" && s.Index < 0:
			return fmt.Sprintf("instance %d is negative", s.Index)
		}
		return ""
	}
	if s.End <= s.At {
		return fmt.Sprintf("window ends at or before it starts (%s <= %s)", fmtTime(s.End), fmtTime(s.At))
	}
	switch s.Kind {
	case StoreSlow:
		if !(s.Factor > 0) || math.IsInf(s.Factor, 0) {
			return fmt.Sprintf("factor %g must be positive", s.Factor)
		}
	case Pause, Partition:
		targets := 0
		for _, set := range []bool{s.Op != "", s.Worker >= 0, s.Sides != ""} {
			if set {
				targets++
			}
		}
		switch {
		case targets > 1:
			return "give one of " + targetHint(s.Kind)
		case targets == 0:
			return "missing target " + targetHint(s.Kind)
		case s.Op != "" && s.Index < 0:
			return fmt.Sprintf("instance %d is negative", s.Index)
		case s.Sides != "":
			if _, _, msg := parseSides(s.Sides); msg != "" {
				return msg
			}
		}
	case Slow:
		switch {
		case s.Op == "":
			return "missing target " + targetHint(s.Kind)
		case s.Index < 0:
			return fmt.Sprintf("instance %d is negative", s.Index)
		case !(s.Factor > 0) || math.IsInf(s.Factor, 0):
			return fmt.Sprintf("factor %g must be positive", s.Factor)
		}
	case Throttle:
		switch {
		case s.AllEdges:
			return "throttle needs an edge A->B, not edge=all"
		case s.From == "" || s.To == "":
			return "missing target " + targetHint(s.Kind)
		case !(s.Rate > 0) || math.IsInf(s.Rate, 0):
			return fmt.Sprintf("rate %g must be positive", s.Rate)
		}
	case Reorder:
		switch {
		case !s.AllEdges && (s.From == "" || s.To == ""):
			return "missing target " + targetHint(s.Kind)
		case !(s.P > 0 && s.P <= 1):
			return fmt.Sprintf("p %g is not in (0,1]", s.P)
		}
	}
	return ""
}

// factor is a spec's optional factor=K (slow, store-slow): positive, def
// when absent.
func factor(kv map[string]string, def float64) (float64, string) {
	f, ok := kv["factor"]
	if !ok {
		return def, ""
	}
	v, msg := parseFloat("factor", f)
	if msg != "" {
		return 0, msg
	}
	if v <= 0 {
		return 0, fmt.Sprintf("factor %q must be positive", f)
	}
	return v, ""
}

// parseSides parses a partition's NEAR|FAR: two lists of worker numbers.
func parseSides(v string) (near, far []int, msg string) {
	a, b, ok := strings.Cut(v, "|")
	if !ok {
		return nil, nil, fmt.Sprintf("workers %q is not NEAR|FAR (like 0,1|2,3)", v)
	}
	for i, side := range []string{a, b} {
		var ws []int
		for _, f := range strings.Split(side, ",") {
			f = strings.TrimSpace(f)
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil, nil, fmt.Sprintf("workers %q: %q is not a worker number", v, f)
			}
			if n < 0 {
				return nil, nil, fmt.Sprintf("workers %q: worker %d is negative", v, n)
			}
			ws = append(ws, n)
		}
		if i == 0 {
			near = ws
		} else {
			far = ws
		}
	}
	return near, far, checkSides(near, far)
}

// checkSides requires two non-empty sides with no worker on both or twice.
func checkSides(near, far []int) string {
	if len(near) == 0 || len(far) == 0 {
		return "a partition needs a worker on each side"
	}
	seen := map[int]bool{}
	for _, w := range append(append([]int(nil), near...), far...) {
		if seen[w] {
			return fmt.Sprintf("worker %d is named twice", w)
		}
		seen[w] = true
	}
	return ""
}

func joinInts(ws []int) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = strconv.Itoa(w)
	}
	return strings.Join(s, ",")
}
