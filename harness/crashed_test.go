package harness

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// A crash aimed at an operator instance takes down its whole worker, and
// run.json says which processes went: wordcount places instance i of every
// task on worker i mod 4, so the chained count→sink/1 shares worker 1 with
// source→split/1 (unchained: count/1 with source/1, split/1 and sink/1). A
// second crash at the same instant on another worker is told apart, and a
// slow fault has no crash record.
func TestCrashedNamesTheWorkersProcesses(t *testing.T) {
	r := runCfg(t, short("none", "crash@2s:op=count/1", "crash@2s:worker=3", "slow@1s-2s:op=split/0"))
	want := []string{"1 source→split/1 count→sink/1", "3 source→split/3 count→sink/3", ""}
	unchained := short("none", "crash@2s:op=count/1")
	unchained.SystemOpts = map[string]string{"chaining": "false"}
	if c := runCfg(t, unchained).Recoveries[0].Crashed; c == nil || strings.Join(c.Processes, " ") != "source/1 split/1 count/1 sink/1" {
		t.Errorf("unchained crash of count/1 took down %v, want source/1 split/1 count/1 sink/1", c)
	}
	if len(r.Recoveries) != len(want) {
		t.Fatalf("%d recoveries, want %d", len(r.Recoveries), len(want))
	}
	for i, rec := range r.Recoveries {
		got := ""
		if c := rec.Crashed; c != nil {
			got = strings.Join(append([]string{strconv.Itoa(c.Worker)}, c.Processes...), " ")
		}
		if got != want[i] {
			t.Errorf("%s took down %q, want %q", rec.Fault, got, want[i])
		}
	}
	// A crash of a worker already down would take nothing: the run is
	// refused before it starts, naming both crashes (faults/overlap.go),
	// rather than listing a fault it never injects.
	_, err := Execute(short("none", "crash@2s:worker=1,restart=2s", "crash@3s:worker=1"))
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), `"crash@3s:worker=1" overlaps "crash@2s:worker=1,restart=2s"`) {
		t.Errorf("second crash of a down worker: %v, want an input error naming both crashes", err)
	}
	// Once the worker is back, it can crash again.
	r = runCfg(t, short("none", "crash@2s:worker=1,restart=500ms", "crash@3s:worker=1"))
	if c := r.Recoveries[1].Crashed; c == nil || c.Worker != 1 {
		t.Errorf("second crash after the restart took down %v, want worker 1", c)
	}
}

// A crash aimed at an operator instance is resolved by operator and index,
// as faults.Apply resolves it, so it is named for systems whose processes
// are not called after the operator (lineage's executors).
func TestCrashedNamesLineageExecutors(t *testing.T) {
	r := runCfg(t, short("lineage", "crash@2s:op=count/0"))
	c := r.Recoveries[0].Crashed
	if c == nil || len(c.Processes) == 0 || !strings.HasPrefix(c.Processes[0], "executor/") {
		t.Fatalf("crash@2s:op=count/0 on lineage took down %+v, want its worker's executors", c)
	}
}
