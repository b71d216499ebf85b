package benchcli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/harness"
	// The tests run every system, as the binary does (cmd/bench links them
	// in the same way).
	_ "ftbench/systems/all"
)

func bench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(append([]string{"bench"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// Bad input gets one line naming the problem and exit code 2, never a panic.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown system", []string{"run", "--system", "nope"}, `unknown system "nope"`},
		{"bad fault time", []string{"run", "--fault", "crash@abc"}, `crash@abc`},
		{"unknown fault kind", []string{"run", "--fault", "explode@1s"}, `explode`},
		{"negative rate", []string{"run", "--rate", "-5"}, `--rate`},
		{"zero duration", []string{"run", "--duration", "0"}, `--duration`},
		{"bad duration", []string{"run", "--duration", "soon"}, `--duration`},
		{"unknown workload", []string{"run", "--workload", "nope"}, `unknown workload "nope"`},
		{"unknown variant", []string{"run", "--variant", "fast"}, `no variant "fast"`},
		{"unknown flag", []string{"run", "--frobnicate"}, `frobnicate`},
		{"bad parallelism", []string{"run", "--parallelism", "0"}, `--parallelism`},
		{"bad cost", []string{"run", "--cost", "net-latency=fast"}, `net-latency`},
		{"unknown cost", []string{"run", "--cost", "warp=1"}, `warp`},
		{"bad record size", []string{"run", "--workload", "grep", "--record-size", "-1"}, `record-size`},
		{"fault on missing op", []string{"run", "--fault", "crash@1s:op=nope/0"}, `nope`},
		{"fault on missing worker", []string{"run", "--fault", "crash@1s:worker=9"}, `worker`},
		{"bad seed", []string{"run", "--seed", "x"}, `--seed`},
		{"unknown runtime", []string{"run", "--runtime", "fast"}, `--runtime "fast"`},
		{"work without live", []string{"run", "--work", "none"}, `--work applies to --runtime live only`},
		{"bad work", []string{"run", "--runtime", "live", "--work", "wall"}, `--work "wall"`},
		{"network fault live", []string{"run", "--runtime", "live", "--fault", "reorder"}, `not supported with --runtime live`},
		{"slow live without work", []string{"run", "--runtime", "live", "--work", "none", "--fault", "slow"}, `not supported with --runtime live`},
		{"kstreams probing below Kafka's minimum", []string{"run", "--system", "kstreams", "--probing-rebalance-interval", "59s"}, `--probing-rebalance-interval="59s": want at least 60s`},
		{"kstreams bad probing interval", []string{"run", "--system", "kstreams", "--probing-rebalance-interval", "soon"}, `--probing-rebalance-interval`},
		{"kstreams no warm-up replicas", []string{"run", "--system", "kstreams", "--max-warmup-replicas", "0"}, `--max-warmup-replicas="0": want an integer from 1`},
		{"unknown command", []string{"frob"}, `frob`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--out", dir)
			if tc.args[0] == "frob" {
				args = tc.args
			}
			requireUsageError(t, tc.want, args...)
		})
	}
}

// requireUsageError runs bench with args and requires exit code 2 with one
// line on stderr naming want, and no stack trace.
func requireUsageError(t *testing.T, want string, args ...string) {
	t.Helper()
	code, _, stderr := bench(t, args...)
	if code != harness.ExitUsage {
		t.Fatalf("exit code %d, want 2; stderr: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("want one line naming %q, got:\n%s", want, stderr)
	}
	if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
		t.Fatalf("stack trace reached the user:\n%s", stderr)
	}
}

func readResult(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "latest", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRunWritesResults(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "run", "--system", "none", "--duration", "4s", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"run.json", "timeseries.csv", "events.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, "latest", f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	m := readResult(t, dir)
	if m["verdict"] != "exactly-once" || m["claim_held"] != true {
		t.Fatalf("no-fault run: verdict %v claim_held %v", m["verdict"], m["claim_held"])
	}
	if !strings.Contains(stdout, "verdict:") {
		t.Fatalf("summary lacks a verdict line:\n%s", stdout)
	}
}

func TestList(t *testing.T) {
	code, stdout, _ := bench(t, "list", "--costs")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"system   none", "at-most-once", "workload wordcount", "workload grep", "fault    crash", "cost     net-latency"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
}
