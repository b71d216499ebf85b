package faults

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"ftbench/engine"
	"ftbench/number"
)

// The fault spec syntax, read top-down with one function per part; each
// function's comment gives the production it reads:
//
//	SPEC  = KIND                        bare (times and target from Defaults)
//	      | KIND "@" WHEN [":" ARGS]    Parse, parser.spec
//	KIND  = crash | slow | ...          parseKind
//	WHEN  = TIME                        parser.instant (crash)
//	      | TIME "-" TIME               parser.window (every other kind)
//	TIME  = DURATION | NUMBER "%"       parser.time
//	ARGS  = "master" ["," KEYS]         master (crash)
//	      | "workers=" SIDES            sides (partition)
//	      | KEYS
//	SIDES = N {"," N} "|" N {"," N}     parseSides
//	KEYS  = KEY=VALUE {"," KEY=VALUE}   parser.keyValues; which keys each
//	                                    kind takes and needs: parser.kindKeys
//
// The store kinds take an empty ARGS, and may put ',' for the ':'
// (parser.split). Every part returns what is wrong as a phrase, or "", and
// Parse makes the spec's one error of it.

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
//
//	SPEC = KIND | KIND "@" WHEN [":" ARGS]
func Parse(s string, d Defaults) (Spec, error) {
	head, rest, hasAt := strings.Cut(strings.TrimSpace(s), "@")
	k, what := parseKind(head, hasAt)
	if what != "" {
		return Spec{}, fmt.Errorf("bad fault %q: %s; want one of %s, bare or as KIND@TIME:ARGS (see bench list)", s, what, kindList())
	}
	p := parser{src: s, kind: k, dur: d.Duration}
	var sp Spec
	var msg string
	if hasAt {
		sp, msg = p.spec(rest)
	} else {
		sp, msg = bare(k, d)
	}
	if msg == "" {
		msg = validate(sp)
	}
	if msg != "" {
		return Spec{}, p.errorf("%s", msg)
	}
	return sp, nil
}

// parseKind parses KIND, the spec up to '@' (all of it when bare), or says
// what is wrong with it:
//
//	KIND = crash | slow | throttle | reorder | pause | partition | store-slow | store-down
func parseKind(head string, hasAt bool) (Kind, string) {
	switch k := Kind(head); {
	case known(k):
		return k, ""
	case head == "" && !hasAt:
		return "", "empty spec"
	case head == "":
		return "", "missing kind before '@'"
	case head == "drop" || head == "dup":
		return "", fmt.Sprintf("kind %q is not supported yet", head)
	}
	return "", fmt.Sprintf("unknown kind %q", head)
}

// parser reads what follows the KIND of one spec, src as given (for
// errors), resolving percentages against the run duration dur.
type parser struct {
	src  string
	kind Kind
	dur  engine.Time
}

// errorf is the error of a spec of a known kind: the problem, then the
// kind's grammar.
func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("bad fault %q: %s; want %s", p.src, fmt.Sprintf(format, a...), grammars[p.kind])
}

// bare builds the default spec of kind k, for a spec that is a bare kind:
//
//	SPEC = KIND
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

// spec parses what follows '@':
//
//	WHEN [":" ARGS]
func (p *parser) spec(rest string) (Spec, string) {
	sp := Spec{Kind: p.kind, Worker: -1, Restart: -1}
	when, args := p.split(rest)
	var msg string
	if p.kind == Crash {
		sp.At, msg = p.instant(when)
	} else {
		sp.At, sp.End, msg = p.window(when)
	}
	if msg != "" {
		return sp, msg
	}
	return sp, p.args(&sp, args)
}

// split cuts what follows '@' into WHEN and ARGS at the ':'. The store is a
// store kind's target, so there is none to name, and its arguments may
// follow the window after a ',' instead (store-slow@T1-T2,factor=K) when the
// spec has no ':'.
func (p *parser) split(rest string) (when, args string) {
	sep := ":"
	if (p.kind == StoreSlow || p.kind == StoreDown) && !strings.Contains(rest, ":") {
		sep = ","
	}
	when, args, _ = strings.Cut(rest, sep)
	return strings.TrimSpace(when), args
}

// instant parses a crash's WHEN, one time:
//
//	WHEN = TIME
func (p *parser) instant(s string) (engine.Time, string) {
	if windowDash(s) >= 0 {
		return 0, fmt.Sprintf("crash takes one time T, not a window %q", s)
	}
	return p.time("time", s)
}

// window parses every other kind's WHEN, a window that ends after it starts:
//
//	WHEN = TIME "-" TIME
func (p *parser) window(s string) (at, end engine.Time, msg string) {
	i := windowDash(s)
	if i < 0 {
		if s == "" {
			return 0, 0, "missing window T1-T2 after '@'"
		}
		return 0, 0, fmt.Sprintf("%s needs a window T1-T2, got %q", p.kind, s)
	}
	if at, msg = p.time("start time", s[:i]); msg != "" {
		return 0, 0, msg
	}
	if end, msg = p.time("end time", s[i+1:]); msg != "" {
		return 0, 0, msg
	}
	if end <= at {
		return 0, 0, fmt.Sprintf("window %q ends at or before it starts (%s <= %s)", s, fmtTime(end), fmtTime(at))
	}
	return at, end, ""
}

// ParseWindow parses a window T1-T2 of simulated time as fault specs give
// it (durations, or percentages of a run of duration d), for flags that
// take one (bench run --trace-window). The error names flag.
func ParseWindow(flag, s string, d engine.Time) (from, to engine.Time, err error) {
	p := parser{src: s, kind: Kind(flag), dur: d}
	from, to, msg := p.window(strings.TrimSpace(s))
	if msg != "" {
		return 0, 0, fmt.Errorf("--%s=%q: %s; want FROM-TO in simulated time, like 1s-5s or 10%%-30%%", flag, s, msg)
	}
	return from, to, nil
}

// windowDash is the index of the '-' between T1 and T2 in s, or -1. It is
// the first '-' after s's first character, so that a T1 with a minus sign
// still splits and time refuses it as negative.
func windowDash(s string) int {
	if len(s) <= 1 {
		return -1
	}
	if i := strings.Index(s[1:], "-"); i >= 0 {
		return i + 1
	}
	return -1
}

// time parses one time, a Go duration or a percentage of the run, naming
// it what in errors:
//
//	TIME = DURATION | NUMBER "%"
func (p *parser) time(what, s string) (engine.Time, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "missing " + what
	}
	if num, ok := strings.CutSuffix(s, "%"); ok {
		v, err := number.Float(num)
		if err != nil {
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

// args parses ARGS, what follows the ':' (empty when there is none):
//
//	ARGS = "master" ["," KEYS]   (crash)
//	     | "workers=" SIDES      (partition)
//	     | KEYS
//
// An empty ARGS is no keys at all, which only the store kinds take
// (kindKeys says the others are missing their target).
func (p *parser) args(sp *Spec, s string) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return p.kindKeys(sp, nil)
	case p.kind == StoreDown:
		return fmt.Sprintf("store-down takes no arguments, got %q", s)
	case p.kind == Crash:
		var more bool
		if s, more = master(sp, s); !more {
			return ""
		}
	case p.kind == Partition:
		if v, ok := strings.CutPrefix(s, "workers="); ok {
			return sides(sp, v)
		}
	}
	kv, msg := p.keyValues(s)
	if msg != "" {
		return msg
	}
	return p.kindKeys(sp, kv)
}

// master reads a crash's bare-word target when ARGS starts with it:
//
//	ARGS = "master" ["," KEYS]
//
// It returns the ARGS left, and more false when no ',' follows the word (a
// ',' with nothing after it is left for keyValues to refuse).
func master(sp *Spec, s string) (rest string, more bool) {
	word, rest, comma := strings.Cut(s, ",")
	if strings.TrimSpace(word) != "master" {
		return s, true
	}
	sp.Master = true
	return rest, comma
}

// sides reads a partition's two-sided target, which is all of ARGS since
// its sides hold commas:
//
//	ARGS  = "workers=" SIDES
//	SIDES = N {"," N} "|" N {"," N}
func sides(sp *Spec, v string) string {
	near, far, msg := parseSides(v)
	if msg != "" {
		return msg
	}
	sp.Sides = joinInts(near) + "|" + joinInts(far)
	return ""
}

// keyValues parses KEYS, each KEY one that p's kind takes (keys), given
// once and with a value:
//
//	KEYS = KEY "=" VALUE {"," KEY "=" VALUE}
func (p *parser) keyValues(s string) (map[string]string, string) {
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
		if !slices.Contains(allowed, k) {
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

// kindKeys reads the keys of p's kind from kv (nil when ARGS is empty) into
// sp, and says which a kind needs. Keys come in any order:
//
//	crash       worker=N | op=NAME/I [,restart=D]   (or master: see args)
//	pause       worker=N | op=NAME/I
//	partition   worker=N | op=NAME/I                (or workers=: see args)
//	slow        op=NAME/I [,factor=K]
//	throttle    edge=A->B, rate=R[/s]
//	reorder     edge=A->B|all [,p=P]
//	store-slow  [factor=K]
//	store-down  (no keys)
func (p *parser) kindKeys(sp *Spec, kv map[string]string) string {
	var msg string
	switch p.kind {
	case Crash, Pause, Partition:
		return p.targetNode(sp, kv)
	case Slow:
		if msg = p.targetOp(sp, kv); msg == "" {
			sp.Factor, msg = factor(kv, DefaultFactor)
		}
	case Throttle:
		if msg = p.targetEdge(sp, kv); msg == "" {
			sp.Rate, msg = rate(kv)
		}
	case Reorder:
		if msg = p.targetEdge(sp, kv); msg == "" {
			sp.P, msg = probability(kv)
		}
	case StoreSlow:
		sp.Factor, msg = factor(kv, DefaultStoreFactor)
	}
	return msg
}

// targetNode reads the target of a crash, pause or partition, a worker by
// number or by an operator instance it runs, and a crash's restart delay:
//
//	worker=N | op=NAME/I [,restart=D]
//
// A crash of the master has its target already (master).
func (p *parser) targetNode(sp *Spec, kv map[string]string) string {
	if _, ok := kv["workers"]; ok {
		// args reads workers= only as all of ARGS.
		return "workers=NEAR|FAR must be the only argument"
	}
	w, hasW := kv["worker"]
	_, hasOp := kv["op"]
	switch {
	case sp.Master && (hasW || hasOp):
		return "give master, worker=N or op=NAME/I, not two of them"
	case sp.Master:
	case hasW && hasOp:
		return "give worker=N or op=NAME/I, not both"
	case hasW:
		n, msg := parseWorker(w)
		if msg != "" {
			return msg
		}
		sp.Worker = n
	default:
		if msg := p.targetOp(sp, kv); msg != "" {
			return msg
		}
	}
	var msg string
	sp.Restart, msg = p.restart(kv)
	return msg
}

// targetOp reads the target op=NAME/I, one operator instance.
func (p *parser) targetOp(sp *Spec, kv map[string]string) string {
	op, ok := kv["op"]
	if !ok {
		return "missing target " + targetHint(p.kind)
	}
	name, idx, msg := parseInstance(op)
	if msg != "" {
		return msg
	}
	sp.Op, sp.Index = name, idx
	return ""
}

// targetEdge reads the target edge=A->B, or edge=all (every channel), which
// only reorder takes.
func (p *parser) targetEdge(sp *Spec, kv map[string]string) string {
	e, ok := kv["edge"]
	switch {
	case !ok:
		return "missing target " + targetHint(p.kind)
	case e == "all" && p.kind == Throttle:
		return "throttle needs an edge A->B, not edge=all"
	case e == "all":
		sp.AllEdges = true
		return ""
	}
	from, to, msg := parseEdge(e)
	if msg != "" {
		return msg
	}
	sp.From, sp.To = from, to
	return ""
}

// restart is a crash's optional restart=D; -1 (the cost model's restart
// delay) when absent.
func (p *parser) restart(kv map[string]string) (engine.Time, string) {
	r, ok := kv["restart"]
	if !ok {
		return -1, ""
	}
	return p.time("restart", r)
}

// factor is slow's and store-slow's optional factor=K, a positive
// multiplier; def when absent.
func factor(kv map[string]string, def float64) (float64, string) {
	return optional(kv, "factor", def, func(v float64) bool { return v > 0 }, "must be positive")
}

// rate is a throttle's rate=R[/s], records per second per channel: required
// and positive.
func rate(kv map[string]string) (float64, string) {
	r, ok := kv["rate"]
	if !ok {
		return 0, "missing rate=R/s"
	}
	v, msg := parseFloat("rate", strings.TrimSuffix(r, "/s"))
	if msg != "" {
		return 0, fmt.Sprintf("rate %q is not a number of records per second (like 2000/s)", r)
	}
	if v <= 0 {
		return 0, fmt.Sprintf("rate %q must be positive", r)
	}
	return v, ""
}

// probability is reorder's optional p=P, in (0,1]; DefaultP when absent.
func probability(kv map[string]string) (float64, string) {
	return optional(kv, "p", DefaultP, func(v float64) bool { return v > 0 && v <= 1 }, "is not in (0,1]")
}

// optional is the value of a numeric key that may be left out: def when it
// is, and an error when it is not a number or not inRange (which bad says
// of it).
func optional(kv map[string]string, key string, def float64, inRange func(float64) bool, bad string) (float64, string) {
	s, ok := kv[key]
	if !ok {
		return def, ""
	}
	v, msg := parseFloat(key, s)
	if msg != "" {
		return 0, msg
	}
	if !inRange(v) {
		return 0, fmt.Sprintf("%s %q %s", key, s, bad)
	}
	return v, ""
}

// parseWorker parses worker=N's N.
func parseWorker(s string) (int, string) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Sprintf("worker %q is not a worker number", s)
	}
	if n < 0 {
		return 0, fmt.Sprintf("worker %q is negative", s)
	}
	return n, ""
}

func parseFloat(what, s string) (float64, string) {
	v, err := number.Float(s)
	if err != nil {
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
