package barrier

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
)

var update = flag.Bool("update", false, "rewrite the golden trace files under testdata")

// runTrace replays the lecture's alignment experiment (code 21.4.2 (c),
// part_c_flink(bar_a=4, bar_b=6, steps=8)) on a real barrier task driven
// step by step: at step s channel A delivers record As (the barrier at step
// 4) and then channel B delivers Bs (the barrier at step 6). It returns the
// rendered trace.
func runTrace(t *testing.T, m mode) string {
	t.Helper()
	par := &params{mode: m, twoPC: true}
	g, a, b, self := traceGraph(par)
	task := newTask(par, g, 0, 0)
	ctx := newFakeCtx(self, a, b)
	task.Handle(ctx, par.coord, deployMsg(-1))
	barrierKind := kindBarrier
	if m == modeUnaligned {
		barrierKind = kindPriority
	}
	const barA, barB, steps = 4, 6, 8
	rows := map[engine.ProcID][]string{a: nil, b: nil}
	names := map[engine.ProcID]string{a: "A", b: "B"}
	var held []string
	for s := 1; s <= steps; s++ {
		for _, ch := range []engine.ProcID{a, b} {
			bar := barA
			if ch == b {
				bar = barB
			}
			if s == bar {
				if barrierKind == kindPriority {
					ctx.overtake(task, ch, barrierMsg(barrierKind, 1))
				} else {
					ctx.enqueue(ch, barrierMsg(barrierKind, 1))
				}
				ctx.drain(task)
				rows[ch] = append(rows[ch], "|")
				continue
			}
			part := int32(0)
			if ch == b {
				part = 1
			}
			ctx.enqueue(ch, record(part, int64(s)))
			ctx.drain(task)
			if len(ctx.queues[ch]) > 0 {
				rows[ch] = append(rows[ch], "x") // held in the paused channel
				held = append(held, fmt.Sprintf("%s%d", names[ch], s))
			} else {
				rows[ch] = append(rows[ch], ".")
			}
		}
	}
	for _, s := range ctx.sent {
		if s.m.Kind == checkpoint.KindAck {
			t.Fatalf("acked checkpoint %d before its snapshot write was durable", s.m.Val)
		}
	}
	ctx.complete(task)

	var out strings.Builder
	fmt.Fprintf(&out, "%s barrier trace (lecture 21.2.7): . processed  | barrier  x held in the paused channel\n", map[mode]string{modeAligned: "aligned", modeUnaligned: "unaligned"}[m])
	out.WriteString("step:")
	for s := 1; s <= steps; s++ {
		fmt.Fprintf(&out, "  %d", s)
	}
	out.WriteString("\n")
	for _, ch := range []engine.ProcID{a, b} {
		fmt.Fprintf(&out, "%s:   ", names[ch])
		for _, r := range rows[ch] {
			fmt.Fprintf(&out, "  %s", r)
		}
		out.WriteString("\n")
	}
	if len(held) == 0 {
		held = []string{"none"}
	}
	fmt.Fprintf(&out, "held during alignment: %s\n", strings.Join(held, " "))
	snap, ok := ctx.store[checkpoint.Key(1, self)].(*snapshot)
	if !ok {
		t.Fatalf("no snapshot of checkpoint 1 stored")
	}
	state := int64(0)
	for _, kv := range snap.Ops[0].State {
		state += kv.Val
	}
	var chans []string
	for _, f := range snap.Channel {
		for _, r := range f.Records {
			chans = append(chans, fmt.Sprintf("%s%d", names[f.From], r.ID.Off))
		}
	}
	if len(chans) == 0 {
		chans = []string{"none"}
	}
	fmt.Fprintf(&out, "snapshot of checkpoint 1: state=%d, channel state: %s (cut = %d records)\n",
		state, strings.Join(chans, " "), state+countRecords(snap))
	out.WriteString("sent to the sink:")
	for _, s := range ctx.sent {
		switch s.m.Kind {
		case kindBarrier:
			out.WriteString(" |")
		case kindPriority:
			out.WriteString(" |>") // overtaking
		case checkpoint.KindAck:
		default:
			fmt.Fprintf(&out, " %s%d", map[int32]string{0: "A", 1: "B"}[s.m.ID.Part], s.m.ID.Off)
		}
	}
	out.WriteString("\n")
	var acks []string
	for _, s := range ctx.sent {
		if s.m.Kind == checkpoint.KindAck {
			acks = append(acks, fmt.Sprintf("ack(%d) to the coordinator after the write was durable", s.m.Val))
		}
	}
	out.WriteString(strings.Join(acks, "\n") + "\n")
	return out.String()
}

func countRecords(s *snapshot) int64 {
	var n int64
	for _, f := range s.Channel {
		n += int64(len(f.Records))
	}
	return n
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Trace -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("trace differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// The lecture's trace: barrier on A at step 4, on B at step 6; A5 and A6 wait
// in the paused channel; the snapshot holds state 8 (A1-A3, B1-B5); the
// barrier goes to the sink before the held records are processed.
func TestAlignedTrace(t *testing.T) {
	got := runTrace(t, modeAligned)
	golden(t, "aligned_trace.golden", got)
	for _, want := range []string{
		"A:     .  .  .  |  x  x  .  .",
		"B:     .  .  .  .  .  |  .  .",
		"held during alignment: A5 A6",
		"state=8, channel state: none",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("trace lacks %q:\n%s", want, got)
		}
	}
}

// The same input with unaligned barriers: nothing is held; the snapshot is
// taken at the first barrier (state 6: A1-A3, B1-B3) and B4, B5, consumed
// before B's barrier, are its channel state: the same cut of 8 records.
func TestUnalignedTrace(t *testing.T) {
	got := runTrace(t, modeUnaligned)
	golden(t, "unaligned_trace.golden", got)
	for _, want := range []string{
		"A:     .  .  .  |  .  .  .  .",
		"state=6, channel state: B4 B5 (cut = 8 records)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("trace lacks %q:\n%s", want, got)
		}
	}
}
