package lineage

import (
	"fmt"
	"reflect"
	"testing"

	"ftbench/engine"
	"ftbench/workloads"
)

// The lecture's stage split (21.3.2): srcRDD -flatMap-> words -map-> pairs is
// one pipelined stage; reduceByKey is a wide dependency, so counts (and the
// map to the output) form the next stage after the shuffle.
func TestStageSplit(t *testing.T) {
	for _, tc := range []struct {
		workload string
		want     [][]string
		keyed    []bool
	}{
		{"wordcount", [][]string{{"source", "split"}, {"count", "sink"}}, []bool{false, true}},
		{"grep", [][]string{{"source", "filter", "sink"}}, []bool{false}},
		{"bank", [][]string{{"source"}, {"debit"}, {"credit", "sink"}}, []bool{false, true, true}},
	} {
		w, err := workloads.New(tc.workload, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		stages, err := splitStages(w.Plan())
		if err != nil {
			t.Fatal(err)
		}
		e := &env{plan: w.Plan(), stages: stages}
		var got [][]string
		var keyed []bool
		for s := range stages {
			got = append(got, e.names(s))
			keyed = append(keyed, stages[s].keyed)
		}
		if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(keyed, tc.keyed) {
			t.Errorf("%s: stages %v keyed %v, want %v keyed %v", tc.workload, got, keyed, tc.want, tc.keyed)
		}
		if !stages[len(stages)-1].sink {
			t.Errorf("%s: the last stage is not the result stage", tc.workload)
		}
		for s := 0; s+1 < len(stages); s++ {
			if stages[s].out != workloads.Hash {
				t.Errorf("%s: stage %d ends in %v, want a hash shuffle", tc.workload, s, stages[s].out)
			}
		}
	}
}

// A lost narrow-dependency partition (a map output of stage 0, source ->
// split) is recomputed from its own source partition only: each
// recomputation reads exactly the lost partition's offset range of its
// batch, never another partition's, and nothing else of stage 0 is redone.
func TestLostNarrowPartitionRecomputesOnlyItsSource(t *testing.T) {
	r := newSimRun(t, runOpts{par: 4, workers: 4, rate: 8000, dur: 8 * engine.Second,
		opts:   map[string]string{optCkpt: "100"},
		faults: []string{"crash@5.5s:worker=2,restart=100ms"}})
	r.sim.Run(5500*engine.Millisecond - 1)
	d := r.driver
	type key struct {
		part int
		j    int64
	}
	lost := map[key]bool{}
	for j := d.ckpt + 1; j <= d.last; j++ {
		if os := d.outs[0][j]; os != nil {
			for q, loc := range os.loc {
				if loc == 2 {
					lost[key{q, j}] = true
				}
			}
		}
	}
	if len(lost) < 4 {
		t.Fatalf("executor 2 holds only %d map outputs before the crash", len(lost))
	}
	r.run(30 * engine.Second)
	r.checkExactlyOnce(t)
	seen := map[key]bool{}
	for _, ev := range r.eventsOf("recomputed") {
		var s, exec int
		var from, to int64
		if _, err := fmt.Sscanf(ev.Note, "stage=%d from=%d to=%d exec=%d", &s, &from, &to, &exec); err != nil {
			t.Fatal(err)
		}
		if s != 0 {
			continue
		}
		part := int(ev.ID)
		if from != to {
			t.Errorf("a stateless map output was recomputed over batches %d-%d", from, to)
		}
		k := key{part, from}
		if !lost[k] || seen[k] {
			t.Errorf("recomputed source partition %d of batch %d, which was not lost (or twice)", part, from)
		}
		seen[k] = true
		b := d.batches[from]
		if want := b.hi[part] - b.lo[part]; ev.Value != want {
			t.Errorf("partition %d batch %d: recomputation read %d records, its own source range holds %d", part, from, ev.Value, want)
		}
	}
	if len(seen) != len(lost) {
		t.Errorf("recomputed %d of the %d lost map outputs", len(seen), len(lost))
	}
}
