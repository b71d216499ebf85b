package faults

import (
	"strings"
	"testing"

	"ftbench/engine"
)

const (
	ms = engine.Millisecond
	s  = engine.Second
)

var defs = Defaults{Duration: 20 * s, StatefulOp: "count", UpstreamOp: "split"}

func TestParseGood(t *testing.T) {
	tests := []goodSpec{
		{"crash@10s:worker=2", Spec{Kind: Crash, At: 10 * s, Worker: 2, Restart: -1}},
		{"crash@10s:worker=2,restart=500ms", Spec{Kind: Crash, At: 10 * s, Worker: 2, Restart: 500 * ms}},
		{"crash@0s:worker=0,restart=0s", Spec{Kind: Crash, At: 0, Worker: 0, Restart: 0}},
		{"crash@8s:op=count/1", Spec{Kind: Crash, At: 8 * s, Worker: -1, Op: "count", Index: 1, Restart: -1}},
		{"crash@1.5s:op=count/0,restart=2s", Spec{Kind: Crash, At: 1500 * ms, Worker: -1, Op: "count", Restart: 2 * s}},
		{"  crash@10s: worker = 2 , restart=1s ", Spec{Kind: Crash, At: 10 * s, Worker: 2, Restart: s}},
		{"crash@10s:restart=1s,op=a/b/3", Spec{Kind: Crash, At: 10 * s, Worker: -1, Op: "a/b", Index: 3, Restart: s}},
		{"crash@10s:master", Spec{Kind: Crash, At: 10 * s, Worker: -1, Master: true, Restart: -1}},
		{"crash@10s: master , restart=2s", Spec{Kind: Crash, At: 10 * s, Worker: -1, Master: true, Restart: 2 * s}},
		{"slow@5s-20s:op=count/0,factor=8", Spec{Kind: Slow, At: 5 * s, End: 20 * s, Worker: -1, Op: "count", Restart: -1, Factor: 8}},
		{"slow@5s-20s:op=count/0", Spec{Kind: Slow, At: 5 * s, End: 20 * s, Worker: -1, Op: "count", Restart: -1, Factor: 8}},
		{"slow@0s-1m:op=count/2,factor=0.5", Spec{Kind: Slow, At: 0, End: 60 * s, Worker: -1, Op: "count", Index: 2, Restart: -1, Factor: 0.5}},
		{"throttle@5s-20s:edge=split->count,rate=2000/s", Spec{Kind: Throttle, At: 5 * s, End: 20 * s, Worker: -1, From: "split", To: "count", Restart: -1, Rate: 2000}},
		{"throttle@5s-20s:rate=2000,edge=split->count", Spec{Kind: Throttle, At: 5 * s, End: 20 * s, Worker: -1, From: "split", To: "count", Restart: -1, Rate: 2000}},
		{"throttle@5s-20s:edge=a-->b,rate=1.5", Spec{Kind: Throttle, At: 5 * s, End: 20 * s, Worker: -1, From: "a-", To: "b", Restart: -1, Rate: 1.5}},
		{"reorder@5s-15s:edge=all,p=0.2", Spec{Kind: Reorder, At: 5 * s, End: 15 * s, Worker: -1, AllEdges: true, Restart: -1, P: 0.2}},
		{"reorder@5s-15s:edge=all", Spec{Kind: Reorder, At: 5 * s, End: 15 * s, Worker: -1, AllEdges: true, Restart: -1, P: 0.2}},
		{"reorder@5s-15s:edge=split->count,p=1", Spec{Kind: Reorder, At: 5 * s, End: 15 * s, Worker: -1, From: "split", To: "count", Restart: -1, P: 1}},
		// percentages of the 20s run
		{"crash@40%:worker=1", Spec{Kind: Crash, At: 8 * s, Worker: 1, Restart: -1}},
		{"crash@12.5%:worker=1,restart=5%", Spec{Kind: Crash, At: 2500 * ms, Worker: 1, Restart: s}},
		{"slow@30%-60%:op=count/0", Spec{Kind: Slow, At: 6 * s, End: 12 * s, Worker: -1, Op: "count", Restart: -1, Factor: 8}},
		{"reorder@10%-15s:edge=all", Spec{Kind: Reorder, At: 2 * s, End: 15 * s, Worker: -1, AllEdges: true, Restart: -1, P: 0.2}},
		{"slow@50%-150%:op=count/0", Spec{Kind: Slow, At: 10 * s, End: 30 * s, Worker: -1, Op: "count", Restart: -1, Factor: 8}},
		{"reorder@0%-100%:edge=all", Spec{Kind: Reorder, At: 0, End: 20 * s, Worker: -1, AllEdges: true, Restart: -1, P: 0.2}},
		{"pause@5s-7s:worker=1", Spec{Kind: Pause, At: 5 * s, End: 7 * s, Worker: 1, Restart: -1}},
		{"pause@40%-50%:op=count/2", Spec{Kind: Pause, At: 8 * s, End: 10 * s, Worker: -1, Op: "count", Index: 2, Restart: -1}},
		{"partition@5s-7s:worker=1", Spec{Kind: Partition, At: 5 * s, End: 7 * s, Worker: 1, Restart: -1}},
		{"partition@5s-7s:op=sink/0", Spec{Kind: Partition, At: 5 * s, End: 7 * s, Worker: -1, Op: "sink", Restart: -1}},
		{"partition@5s-7s:workers= 0, 1 |2,3", Spec{Kind: Partition, At: 5 * s, End: 7 * s, Worker: -1, Sides: "0,1|2,3", Restart: -1}},
		{"store-slow@5s-7s", Spec{Kind: StoreSlow, At: 5 * s, End: 7 * s, Worker: -1, Restart: -1, Factor: 10}},
		{"store-slow@5s-7s:factor=3", Spec{Kind: StoreSlow, At: 5 * s, End: 7 * s, Worker: -1, Restart: -1, Factor: 3}},
		{"store-slow@5s-7s,factor=3", Spec{Kind: StoreSlow, At: 5 * s, End: 7 * s, Worker: -1, Restart: -1, Factor: 3}},
		{"store-down@5s-8s", Spec{Kind: StoreDown, At: 5 * s, End: 8 * s, Worker: -1, Restart: -1}},
		{"source-down@5s-9s:partition=1", Spec{Kind: SourceDown, At: 5 * s, End: 9 * s, Worker: -1, Restart: -1, Part: 1}},
		{"source-down@25%-50%: partition = 0 ", Spec{Kind: SourceDown, At: 5 * s, End: 10 * s, Worker: -1, Restart: -1}},
	}
	parsesTo(t, defs, tests)
}

// goodSpec is a spec and the Spec it parses to.
type goodSpec struct {
	in   string
	want Spec
}

// parsesTo checks that each spec in tests parses under d to its Spec, and
// that the Spec round-trips through String.
func parsesTo(t *testing.T, d Defaults, tests []goodSpec) {
	t.Helper()
	for _, tt := range tests {
		got, err := Parse(tt.in, d)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		roundTrip(t, got)
	}
}

func roundTrip(t *testing.T, sp Spec) {
	t.Helper()
	str := sp.String()
	back, err := Parse(str, defs)
	if err != nil {
		t.Errorf("Parse(%q) (String of %+v): %v", str, sp, err)
		return
	}
	if back != sp {
		t.Errorf("round trip of %q: got %+v, want %+v", str, back, sp)
	}
	if again := back.String(); again != str {
		t.Errorf("String not canonical: %q then %q", str, again)
	}
	// Percentages are resolved, so the canonical form needs no run duration.
	if _, err := Parse(str, Defaults{}); err != nil {
		t.Errorf("Parse(%q) without defaults: %v", str, err)
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"crash@40%:op=count/0", "crash@8s:op=count/0"},
		{"crash@10s:worker=2,restart=500ms", "crash@10s:worker=2,restart=500ms"},
		{"crash@50%:master", "crash@10s:master"},
		{"crash@10s:master,restart=2s", "crash@10s:master,restart=2s"},
		{"slow@5s-20s:op=count/0", "slow@5s-20s:op=count/0,factor=8"},
		{"throttle@5s-90s:edge=split->count,rate=2000", "throttle@5s-1m30s:edge=split->count,rate=2000/s"},
		{"throttle@5s-6s:edge=a->b,rate=2e6/s", "throttle@5s-6s:edge=a->b,rate=2000000/s"},
		{"reorder@25%-75%:edge=all", "reorder@5s-15s:edge=all,p=0.2"},
		{"crash", "crash@8s:op=count/0"},
		{"slow", "slow@6s-12s:op=count/0,factor=8"},
		{"throttle", "throttle@6s-12s:edge=split->count,rate=1000/s"},
		{"reorder", "reorder@5s-15s:edge=all,p=0.2"},
		{"pause", "pause@8s-10s:op=count/0"},
		{"partition", "partition@8s-12s:op=count/0"},
		{"partition@1s-2s:workers=2|0,1", "partition@1s-2s:workers=2|0,1"},
		{"store-slow", "store-slow@6s-12s:factor=10"},
		{"store-down", "store-down@6s-12s"},
		{"store-slow@1s-2s,factor=2", "store-slow@1s-2s:factor=2"},
		{"pause@1s-1.5s:worker=0", "pause@1s-1.5s:worker=0"},
		{"source-down", "source-down@6s-12s:partition=0"},
		{"source-down@5s-90s:partition=3", "source-down@5s-1m30s:partition=3"},
	}
	for _, tt := range tests {
		sp, err := Parse(tt.in, defs)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := sp.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
	// String of odd values still round-trips.
	for _, sp := range []Spec{
		{Kind: Slow, At: 1, End: 2, Worker: -1, Op: "x", Restart: -1, Factor: 1e-300},
		{Kind: Throttle, At: 0, End: 1, Worker: -1, From: "a", To: "b", Restart: -1, Rate: 1e300},
		{Kind: Reorder, At: 3, End: 7777777, Worker: -1, From: "a", To: "b", Restart: -1, P: 1.0 / 3},
		{Kind: Crash, At: 123456789, Worker: 7, Restart: 987654321},
		{Kind: SourceDown, At: 1, End: 2, Worker: -1, Restart: -1, Part: 12},
	} {
		roundTrip(t, sp)
	}
	// String of an invalid spec does not panic.
	_ = Spec{}.String()
	_ = Spec{Kind: "bogus"}.String()
}

func TestBareDefaults(t *testing.T) {
	d := Defaults{Duration: 100 * s, StatefulOp: "count", UpstreamOp: "split"}
	tests := []goodSpec{
		{"crash", Spec{Kind: Crash, At: 40 * s, Worker: -1, Op: "count", Index: 0, Restart: -1}},
		{"slow", Spec{Kind: Slow, At: 30 * s, End: 60 * s, Worker: -1, Op: "count", Restart: -1, Factor: 8}},
		{"throttle", Spec{Kind: Throttle, At: 30 * s, End: 60 * s, Worker: -1, From: "split", To: "count", Restart: -1, Rate: 1000}},
		{"reorder", Spec{Kind: Reorder, At: 25 * s, End: 75 * s, Worker: -1, AllEdges: true, Restart: -1, P: 0.2}},
		{" reorder ", Spec{Kind: Reorder, At: 25 * s, End: 75 * s, Worker: -1, AllEdges: true, Restart: -1, P: 0.2}},
		{"pause", Spec{Kind: Pause, At: 40 * s, End: 50 * s, Worker: -1, Op: "count", Restart: -1}},
		{"source-down", Spec{Kind: SourceDown, At: 30 * s, End: 60 * s, Worker: -1, Restart: -1}},
	}
	parsesTo(t, d, tests)
	// reorder needs no operators.
	if _, err := Parse("reorder", Defaults{Duration: s}); err != nil {
		t.Errorf("bare reorder without operators: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		d    Defaults
		want []string // substrings the message must contain
	}{
		// kinds
		{"", defs, []string{"empty spec", "crash, slow, throttle, reorder"}},
		{"   ", defs, []string{"empty spec"}},
		{"boom@1s:worker=1", defs, []string{`unknown kind "boom"`, "crash, slow, throttle, reorder, pause, partition, store-slow, store-down, source-down"}},
		// source-down: a window and one partition number
		{"source-down@5s:partition=1", defs, []string{`source-down needs a window T1-T2, got "5s"`}},
		{"source-down@9s-5s:partition=1", defs, []string{"ends at or before it starts"}},
		{"source-down@5s-5s:partition=1", defs, []string{"ends at or before it starts"}},
		{"source-down@5s-9s", defs, []string{"missing target partition=K"}},
		{"source-down@5s-9s:partition=x", defs, []string{`partition "x" is not a partition number`}},
		{"source-down@5s-9s:partition=-1", defs, []string{`partition "-1" is negative`}},
		{"source-down@5s-9s:partition=", defs, []string{`key "partition" has no value`}},
		{"source-down@5s-9s:worker=1", defs, []string{`unknown key "worker" (source-down takes partition)`}},
		{"source-down@5s-9s:partition=1,partition=2", defs, []string{`duplicate key "partition"`}},
		{"pause@1s:worker=1", defs, []string{`pause needs a window T1-T2, got "1s"`}},
		{"pause@1s-2s", defs, []string{"missing target worker=N or op=NAME/I"}},
		{"pause@1s-2s:worker=1,op=count/0", defs, []string{"not both"}},
		{"pause@1s-2s:worker=1,restart=1s", defs, []string{`unknown key "restart" (pause takes worker, op)`}},
		{"pause@1s-2s:worker=x", defs, []string{`worker "x" is not a worker number`}},
		{"partition@1s:worker=1", defs, []string{`partition needs a window T1-T2, got "1s"`}},
		{"partition@1s-2s", defs, []string{"missing target worker=N, op=NAME/I or workers=A,B|C,D"}},
		{"partition@1s-2s:workers=0,1", defs, []string{`workers "0,1" is not NEAR|FAR`}},
		{"partition@1s-2s:workers=0,1|1,2", defs, []string{"worker 1 is named twice"}},
		{"partition@1s-2s:workers=0|", defs, []string{`"" is not a worker number`}},
		{"partition@1s-2s:workers=0|x", defs, []string{`"x" is not a worker number`}},
		{"partition@1s-2s:worker=1,workers=0|1", defs, []string{"workers=NEAR|FAR must be the only argument"}},
		{"partition@1s-2s:worker=1,restart=1s", defs, []string{`unknown key "restart" (partition takes worker, op, workers)`}},
		{"store-down@1s-2s:factor=2", defs, []string{`store-down takes no arguments, got "factor=2"`}},
		{"store-down@1s", defs, []string{`store-down needs a window T1-T2`}},
		{"store-slow@1s-2s:factor=0", defs, []string{`factor "0" must be positive`}},
		{"store-slow@1s-2s:op=count/0", defs, []string{`unknown key "op" (store-slow takes factor)`}},
		{"boom", defs, []string{`unknown kind "boom"`, "crash, slow, throttle, reorder"}},
		{"Crash", defs, []string{`unknown kind "Crash"`}},
		{"@1s:worker=1", defs, []string{"missing kind"}},
		{"drop@1s-2s:edge=all", defs, []string{`"drop" is not supported yet`}},
		// times
		{"crash@abc", defs, []string{`time "abc" is not a duration (like 10s) or a percentage (like 40%)`}},
		{"crash@abc:worker=1", defs, []string{`time "abc" is not a duration`}},
		{"crash@", defs, []string{"missing time"}},
		{"crash@:worker=1", defs, []string{"missing time"}},
		{"crash@10:worker=1", defs, []string{`time "10" is not a duration`}},
		{"crash@-1s:worker=1", defs, []string{`time "-1s" is negative`}},
		{"crash@-5%:worker=1", defs, []string{`time "-5%" is negative`}},
		{"crash@x%:worker=1", defs, []string{`time "x%" is not a duration`}},
		{"crash@%:worker=1", defs, []string{`time "%" is not a duration`}},
		{"crash@NaN%:worker=1", defs, []string{`time "NaN%" is not a duration`}},
		{"crash@Inf%:worker=1", defs, []string{`time "Inf%" is not a duration`}},
		{"crash@1e300%:worker=1", defs, []string{`time "1e300%" is too large`}},
		{"crash@40%:worker=1", Defaults{}, []string{`time "40%" is a percentage, but the run duration is unknown`}},
		{"crash@1s-2s:worker=1", defs, []string{`crash takes one time T, not a window "1s-2s"`}},
		{"crash@99999999999h:worker=1", defs, []string{`time "99999999999h" is not a duration`}},
		{"slow@5s:op=count/0", defs, []string{`slow needs a window T1-T2, got "5s"`}},
		{"slow@:op=count/0", defs, []string{"missing window"}},
		{"slow@5s-:op=count/0", defs, []string{"missing end time"}},
		{"slow@-5s-10s:op=count/0", defs, []string{`start time "-5s" is negative`}},
		{"slow@5s--10s:op=count/0", defs, []string{`end time "-10s" is negative`}},
		{"slow@5s-x:op=count/0", defs, []string{`end time "x" is not a duration`}},
		{"slow@y-5s:op=count/0", defs, []string{`start time "y" is not a duration`}},
		{"slow@10s-5s:op=count/0", defs, []string{`window "10s-5s" ends at or before it starts`}},
		{"slow@5s-5s:op=count/0", defs, []string{`window "5s-5s" ends at or before it starts`}},
		{"reorder@50%-40%:edge=all", defs, []string{`window "50%-40%" ends at or before it starts`}},
		// targets
		{"crash@1s", defs, []string{"missing target worker=N, op=NAME/I or master"}},
		{"crash@1s:", defs, []string{"missing target"}},
		{"crash@1s:restart=1s", defs, []string{"missing target worker=N, op=NAME/I or master"}},
		{"crash@1s:master,worker=1", defs, []string{"give master, worker=N or op=NAME/I, not two of them"}},
		{"crash@1s:master,", defs, []string{"empty argument (stray ',')"}},
		{"crash@1s:master,restart=0s", defs, []string{"a master crash needs a positive restart delay"}},
		{"crash@1s:masters", defs, []string{`argument "masters" is not key=value`}},
		{"pause@1s-2s:master", defs, []string{`argument "master" is not key=value`}},
		{"crash@1s:worker=1,op=count/0", defs, []string{"not both"}},
		{"crash@1s:worker=x", defs, []string{`worker "x" is not a worker number`}},
		{"crash@1s:worker=-1", defs, []string{`worker "-1" is negative`}},
		{"crash@1s:worker=99999999999999999999", defs, []string{`worker "99999999999999999999" is not a worker number`}},
		{"crash@1s:op=count", defs, []string{`op "count" names no instance (like "count/0")`}},
		{"crash@1s:op=/0", defs, []string{`op "/0" has no operator name`}},
		{"crash@1s:op=count/x", defs, []string{`op "count/x": instance "x" is not a number`}},
		{"crash@1s:op=count/-1", defs, []string{`instance "-1" is negative`}},
		{"crash@1s:op=co unt/0", defs, []string{`operator name "co unt"`}},
		{"crash@1s:worker=1,restart=-1s", defs, []string{`restart "-1s" is negative`}},
		{"crash@1s:worker=1,restart=soon", defs, []string{`restart "soon" is not a duration`}},
		{"slow@1s-2s", defs, []string{"missing target op=NAME/I"}},
		{"slow@1s-2s:factor=2", defs, []string{"missing target op=NAME/I"}},
		{"slow@1s-2s:op=count/0,factor=0", defs, []string{`factor "0" must be positive`}},
		{"slow@1s-2s:op=count/0,factor=-2", defs, []string{`factor "-2" must be positive`}},
		{"slow@1s-2s:op=count/0,factor=x", defs, []string{`factor "x" is not a number`}},
		{"slow@1s-2s:op=count/0,factor=NaN", defs, []string{`factor "NaN" is not a number`}},
		{"slow@1s-2s:op=count/0,factor=+Inf", defs, []string{`factor "+Inf" is not a number`}},
		{"throttle@1s-2s:rate=5/s", defs, []string{"missing target edge=A->B"}},
		{"throttle@1s-2s:edge=split->count", defs, []string{"missing rate=R/s"}},
		{"throttle@1s-2s:edge=all,rate=5", defs, []string{"throttle needs an edge A->B, not edge=all"}},
		{"throttle@1s-2s:edge=split,rate=5", defs, []string{`edge "split" is not A->B or all`}},
		{"throttle@1s-2s:edge=->count,rate=5", defs, []string{`edge "->count" needs an operator on both sides`}},
		{"throttle@1s-2s:edge=split->,rate=5", defs, []string{`edge "split->" needs an operator on both sides`}},
		{"throttle@1s-2s:edge=split->count,rate=0", defs, []string{`rate "0" must be positive`}},
		{"throttle@1s-2s:edge=split->count,rate=-5/s", defs, []string{`rate "-5/s" must be positive`}},
		{"throttle@1s-2s:edge=split->count,rate=5/m", defs, []string{`rate "5/m" is not a number of records per second`}},
		{"throttle@1s-2s:edge=split->count,rate=/s", defs, []string{`rate "/s" is not a number`}},
		{"reorder@1s-2s", defs, []string{"missing target edge=A->B or edge=all"}},
		{"reorder@1s-2s:p=0.5", defs, []string{"missing target edge=A->B or edge=all"}},
		{"reorder@1s-2s:edge=all,p=0", defs, []string{`p "0" is not in (0,1]`}},
		{"reorder@1s-2s:edge=all,p=1.5", defs, []string{`p "1.5" is not in (0,1]`}},
		{"reorder@1s-2s:edge=all,p=-0.1", defs, []string{`p "-0.1" is not in (0,1]`}},
		{"reorder@1s-2s:edge=all,p=half", defs, []string{`p "half" is not a number`}},
		// keys and garbage
		{"crash@1s:worker=1,colour=red", defs, []string{`unknown key "colour" (crash takes worker, op, restart)`}},
		{"slow@1s-2s:op=count/0,p=0.5", defs, []string{`unknown key "p" (slow takes op, factor)`}},
		{"throttle@1s-2s:edge=a->b,rate=1,factor=2", defs, []string{`unknown key "factor"`}},
		{"reorder@1s-2s:edge=all,rate=2", defs, []string{`unknown key "rate"`}},
		{"crash@1s:worker=1,worker=2", defs, []string{`duplicate key "worker"`}},
		{"reorder@1s-2s:edge=all,p=0.1,p=0.1", defs, []string{`duplicate key "p"`}},
		{"crash@1s:worker=1,,restart=1s", defs, []string{"empty argument"}},
		{"crash@1s:worker=1,", defs, []string{"empty argument"}},
		{"crash@1s:worker", defs, []string{`argument "worker" is not key=value`}},
		{"crash@1s:worker=", defs, []string{`key "worker" has no value`}},
		{"crash@1s:=1", defs, []string{`unknown key ""`}},
		{"crash@@1s:worker=1", defs, []string{`time "@1s" is not a duration`}},
		{"crash@1s:worker=1\nslow", defs, []string{`worker "1\nslow" is not a worker number`}},
		// bare kinds without what they need
		{"crash", Defaults{StatefulOp: "count"}, []string{`bare "crash" needs the run duration`}},
		{"crash", Defaults{Duration: s}, []string{`bare "crash" needs a stateful operator`}},
		{"slow", Defaults{Duration: s}, []string{`bare "slow" needs a stateful operator`}},
		{"throttle", Defaults{Duration: s, StatefulOp: "count"}, []string{`bare "throttle" needs an operator upstream of "count"`}},
		{"slow", Defaults{Duration: 2, StatefulOp: "count"}, []string{`bare "slow": the run (2ns) is too short`}},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in, tt.d)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", tt.in)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q): error has a newline: %q", tt.in, msg)
		}
		if !strings.HasPrefix(msg, "bad fault ") {
			t.Errorf("Parse(%q): error %q does not start with 'bad fault'", tt.in, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("Parse(%q): error %q does not contain %q", tt.in, msg, w)
			}
		}
		// Errors about a known kind carry that kind's grammar.
		kind, _, _ := strings.Cut(strings.TrimSpace(tt.in), "@")
		if g, ok := grammars[Kind(kind)]; ok && !strings.Contains(msg, "; want "+g) {
			t.Errorf("Parse(%q): error %q lacks the grammar %q", tt.in, msg, g)
		}
	}
}

func TestGrammarAndKinds(t *testing.T) {
	g := Grammar()
	lines := strings.Split(g, "\n")
	if len(lines) != 9 {
		t.Fatalf("Grammar has %d lines, want 9:\n%s", len(lines), g)
	}
	for i, k := range []string{"crash@", "slow@", "throttle@", "reorder@", "pause@", "partition@", "store-slow@", "store-down@", "source-down@"} {
		if !strings.HasPrefix(lines[i], k) {
			t.Errorf("Grammar line %d = %q, want prefix %q", i, lines[i], k)
		}
	}
	ks := Kinds()
	if len(ks) != 9 {
		t.Fatalf("Kinds() has %d entries, want 9", len(ks))
	}
	for i, k := range []string{"crash", "slow", "throttle", "reorder", "pause", "partition", "store-slow", "store-down", "source-down"} {
		if !strings.HasPrefix(ks[i], k+" ") || strings.Contains(ks[i], "\n") {
			t.Errorf("Kinds()[%d] = %q", i, ks[i])
		}
		// The descriptions start in one column, past the longest kind.
		if col := len("source-down") + 1; len(ks[i]) <= col || ks[i][col-1] != ' ' || ks[i][col] == ' ' {
			t.Errorf("Kinds()[%d] = %q: description does not start at column %d", i, ks[i], col)
		}
	}
}

func TestParseAll(t *testing.T) {
	got, err := ParseAll([]string{"crash", "reorder@1s-2s:edge=all"}, defs)
	if err != nil || len(got) != 2 || got[0].Kind != Crash || got[1].Kind != Reorder {
		t.Fatalf("ParseAll = %+v, %v", got, err)
	}
	if _, err := ParseAll([]string{"crash", "nope"}, defs); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("ParseAll with a bad spec: %v", err)
	}
}

// FuzzParse checks that Parse never panics, that its errors are one line, and
// that whatever it accepts round-trips through String to the same Spec.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"crash", "slow", "throttle", "reorder", "crash@10s:worker=2,restart=500ms",
		"crash@40%:op=count/1", "slow@5s-20s:op=count/0,factor=8",
		"throttle@5s-20s:edge=split->count,rate=2000/s", "reorder@5s-15s:edge=all,p=0.2",
		"reorder@1%-2%:edge=a-->b,p=1e-5", "crash@1s:op=a/b/0", "slow@0s-1ns:op=x/0,factor=1e300",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sp, err := Parse(in, defs)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("Parse(%q): error has a newline: %q", in, err)
			}
			return
		}
		str := sp.String()
		back, err := Parse(str, defs)
		if err != nil {
			t.Fatalf("Parse(%q) ok as %+v, but its String %q fails: %v", in, sp, str, err)
		}
		if back != sp {
			t.Fatalf("round trip of %q via %q: %+v != %+v", in, str, back, sp)
		}
		// The canonical form is a fixed point of String, and holds
		// absolute times only: it means the same spec in a run of any
		// duration (a stored run.json is re-read by reports and replays).
		if again := back.String(); again != str {
			t.Fatalf("String is not canonical: %q -> %q -> %q", in, str, again)
		}
		other, err := Parse(str, Defaults{Duration: 3 * defs.Duration})
		if err != nil || other != sp {
			t.Fatalf("canonical %q depends on the run duration: %+v, %v", str, other, err)
		}
	})
}
