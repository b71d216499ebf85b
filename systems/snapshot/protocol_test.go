package snapshot

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"ftbench/engine"
	"ftbench/systems"
	"ftbench/workloads"
)

var update = flag.Bool("update", false, "rewrite golden traces")

// golden compares a trace with testdata/<name>.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("trace differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

// The lecture's worked example (12.3.5): three processes, P1 initiates
// (here P0, P1, P2 stand for the lecture's P1, P2, P3). m1 = B->F is
// inside the cut, m2 = G->D crosses it and must be the one message of
// C21's state (here C10), m3 = I->K is outside. Six markers.
func TestCLLectureExample(t *testing.T) {
	s := newScript(t, CL, 3)
	s.send(0, 1, 10) // m1 (B)
	s.deliver(0, 1, 0)
	s.send(1, 0, 20)   // m2 (G)
	s.initiate(1)      // S1: P0 records, markers on C01 and C02
	s.deliver(0, 2, 0) // step 2: P2's first marker: records S3, markers to P0 and P1
	s.deliver(2, 0, 0) // step 3: P0 closes C20 = <>
	s.deliver(2, 1, 0) // step 4: P1's first marker (from P2, not P0): records S2
	s.deliver(0, 1, 0) // step 5: P1 closes C01 = <>
	s.deliver(1, 0, 0) // m2 arrives at P0 (D) while C10 is recording
	s.deliver(1, 0, 0) // step 6: P0 closes C10 = <m2>
	s.send(2, 1, 30)   // m3 (I), after S3
	s.deliver(1, 2, 0) // step 7: P2 closes C12 = <>
	s.deliver(2, 1, 0) // m3 (K) after S2: in no channel state
	s.drain()          // reports to the initiator
	a := s.audit(1)
	if !a.Consistent || a.ChannelMoney != 20 {
		t.Fatalf("want a consistent snapshot with m2 ($20) in a channel, got %+v", a)
	}
	if got := s.counts[cntMarkers]; got != 6 {
		t.Fatalf("%d markers, want 2E = 6", got)
	}
	golden(t, "cl_lecture", s.trace.String())
}

// nonFIFO runs the lecture's counter-example (12.3.6) on two processes:
// P0 records, then sends $100 on the channel where its marker waits; the
// transfer overtakes the marker. And the other direction: a transfer sent
// before the cut is overtaken by the marker.
func nonFIFO(t *testing.T, variant string, overtakeMarker bool) *script {
	s := newScript(t, variant, 2)
	if overtakeMarker {
		s.initiate(1)
		s.send(0, 1, 100)  // after P0's cut
		s.deliver(0, 1, 1) // the transfer overtakes the marker (or done)
	} else {
		s.send(0, 1, 100) // before P0's cut
		s.initiate(1)
		s.deliver(0, 1, 1) // the marker (or done) overtakes the transfer
	}
	s.drain()
	return s
}

func TestCLBreaksWithoutFIFO(t *testing.T) {
	// Marker overtaken: P1 applies $100 before recording; its send is
	// outside P0's cut: an orphan, money appears.
	a := nonFIFO(t, CL, true).audit(1)
	if a.Consistent || a.Orphans != 1 || a.Imbalance != 100 {
		t.Fatalf("overtaken marker: want one orphan and +100, got %+v", a)
	}
	// Marker overtakes: P1 closes C01 before the $100 sent inside P0's cut
	// arrives: it is recorded nowhere, money vanishes.
	a = nonFIFO(t, CL, false).audit(1)
	if a.Consistent || a.Missing != 1 || a.Imbalance != -100 {
		t.Fatalf("overtaking marker: want one missing message and -100, got %+v", a)
	}
}

func TestLaiYangHoldsWithoutFIFO(t *testing.T) {
	for _, overtake := range []bool{true, false} {
		s := nonFIFO(t, LaiYang, overtake)
		if a := s.audit(1); !a.Consistent {
			t.Fatalf("overtake=%v: %+v\n%s", overtake, a, s.trace.String())
		}
	}
	// The second case, step by step: the red done message makes P1 record
	// first, and the white $100 arriving later is channel state.
	golden(t, "laiyang_nonfifo", nonFIFO(t, LaiYang, false).trace.String())
}

// The lecture's naive scheme (12.2.3): records at arbitrary times, no
// channel state. Case A: money in flight vanishes; case B: an orphan.
func TestNaiveCounterExample(t *testing.T) {
	s := newScript(t, Naive, 2)
	s.send(0, 1, 100)
	s.procs[0].Timer(s.ctxs[0], timerSnapBase+1) // P0 records after sending
	s.procs[1].Timer(s.ctxs[1], timerSnapBase+1) // P1 records before receiving
	s.drain()
	if a := s.audit(1); a.Imbalance != -100 || a.Missing != 1 {
		t.Fatalf("case A: want -100 with one missing message, got %+v", a)
	}
	s = newScript(t, Naive, 2)
	s.procs[0].Timer(s.ctxs[0], timerSnapBase+1) // P0 records before sending
	s.send(0, 1, 100)
	s.deliver(0, 1, 0)
	s.procs[1].Timer(s.ctxs[1], timerSnapBase+1) // P1 records after receiving
	s.drain()
	if a := s.audit(1); a.Imbalance != 100 || a.Orphans != 1 {
		t.Fatalf("case B: want +100 with one orphan, got %+v", a)
	}
	if s.counts[cntMarkers] != 0 {
		t.Fatal("naive sent markers")
	}
}

// Two snapshots in progress at once, started by different processes, are
// told apart by id: their markers interleave and each gets its own channel
// state.
func TestCLConcurrentSnapshots(t *testing.T) {
	s := newScript(t, CL, 3)
	s.send(0, 2, 10)
	s.initiate(1) // P0
	s.send(1, 2, 20)
	s.initiate(2) // P1, before any marker of 1 arrived
	s.send(0, 2, 30)
	s.send(1, 2, 40)
	s.drain()
	for j := int64(1); j <= 2; j++ {
		if a := s.audit(j); !a.Consistent {
			t.Fatalf("snapshot %d: %+v\n%s", j, a, s.trace.String())
		}
	}
	if got := s.counts[cntMarkers]; got != 12 {
		t.Fatalf("%d markers, want 6 per snapshot", got)
	}
	golden(t, "cl_concurrent", s.trace.String())
}

// crossings is what snapshot j's collected reports say crossed its markers.
func (s *script) crossings(j int64) []markerCrossing {
	s.t.Helper()
	v, ok := s.store[snapshotKey(j)]
	if !ok {
		s.t.Fatalf("snapshot %d was not collected", j)
	}
	return markerCrossings(v.(*GlobalSnapshot))
}

// The receivers measure, per snapshot and channel, what crossed that
// snapshot's marker: in the two counter-examples it is the one transfer on
// C01, in the direction that broke the snapshot; a later snapshot taken on
// FIFO-behaving channels has none.
func TestCLMarkerCrossings(t *testing.T) {
	for _, overtake := range []bool{true, false} {
		s := nonFIFO(t, CL, overtake)
		s.initiate(2) // P1 initiates; everything is delivered in order
		s.send(0, 1, 5)
		s.send(1, 0, 7)
		s.drain()
		want := markerCrossing{From: 0, To: 1, Overtaken: 1}
		if overtake {
			want = markerCrossing{From: 0, To: 1, Overtook: 1}
		}
		if got := s.crossings(1); len(got) != 1 || got[0] != want {
			t.Errorf("overtake=%v: snapshot 1 crossings %+v, want [%+v]", overtake, got, want)
		}
		if got := s.crossings(2); len(got) != 0 {
			t.Errorf("overtake=%v: snapshot 2 crossings %+v, want none", overtake, got)
		}
		if a := s.audit(2); !a.Consistent {
			t.Errorf("overtake=%v: snapshot 2 %+v", overtake, a)
		}
	}
}

// A crossing excuses only its own snapshot. Snapshot 1 breaks because a
// transfer overtakes its marker; snapshot 2 is consistent until its
// channel state is dropped after collection (what a bug would do). The
// run has FIFO violations, yet snapshot 2 must count as a safety
// violation, and snapshot 1 alone as an expected break.
func TestCLExcuseIsPerSnapshot(t *testing.T) {
	s := nonFIFO(t, CL, true)
	s.send(0, 1, 30) // in flight across snapshot 2's cut (P1 initiates): its channel state
	s.initiate(2)
	s.drain()
	g2 := s.store[snapshotKey(2)].(*GlobalSnapshot)
	if a := s.audit(2); !a.Consistent || a.ChannelMoney != 30 {
		t.Fatalf("snapshot 2 before tampering: want consistent with $30 in a channel, got %+v", a)
	}
	for _, r := range g2.Reports {
		for q := range r.Chans {
			r.Chans[q] = nil
		}
	}
	m := summarizeScript(s, CL, 2)
	if m["snapshots_inconsistent"] != int64(2) || m["expected_breaks"] != int64(1) || m["unexcused_breaks"] != int64(1) ||
		m["snapshots_with_marker_crossings"] != int64(1) || m["safety_violations"] != int64(1) {
		t.Fatalf("want snapshot 1 excused and snapshot 2 a violation, got %v", m)
	}
	if ex := m["excused_snapshots"].([]map[string]any); len(ex) != 1 || ex[0]["id"] != int64(1) {
		t.Fatalf("excused_snapshots = %v, want snapshot 1 only", m["excused_snapshots"])
	}
	if un := m["unexcused_snapshots"].([]int64); len(un) != 1 || un[0] != 2 {
		t.Fatalf("unexcused_snapshots = %v, want [2]", un)
	}
}

// summarizeScript runs Summarize over snapshots 1..n of a script, as the
// harness would after a run that scheduled n of them.
func summarizeScript(s *script, variant string, n int64) map[string]any {
	var events []engine.Event
	for j := int64(1); j <= n; j++ {
		events = append(events, engine.Event{Kind: "snapshot_completed", ID: j})
	}
	w, err := workloads.New("bank-p2p", 1, map[string]string{"processes": fmt.Sprint(s.n)})
	if err != nil {
		s.t.Fatal(err)
	}
	return summarizeP2P(systems.RunInfo{
		Events: events, Counters: s.counts, Workload: w,
		Store: func(key string) (any, bool) { v, ok := s.store[key]; return v, ok },
		Log:   &workloads.Log{Parts: s.n, Rate: 1, End: engine.Time(n+1) * engine.Second},
		Job:   systems.Job{Variant: variant, Opts: systems.Options{flagSnapshots: fmt.Sprint(n), flagInterval: "1s"}},
	}, w.(workloads.PeerToPeer))
}
