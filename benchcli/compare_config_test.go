package benchcli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compare --config puts exactly-once and at-least-once configurations of
// one system beside other systems: each row, delivery series and
// summary.md line is one configuration, named by what differs.
func TestCompareConfigs(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "compare", "--config", "barrier --sink 2pc", "--config", "barrier --sink plain",
		"--config", "none", "--fault", "crash@1s:op=count/0", "--duration", "2s", "--rate", "4000", "--jobs", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"barrier/aligned sink=2pc ", "barrier/aligned sink=plain ", "none/default ",
		"exactly-once, monotonic", "at-least-once, non-monotonic"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	if code, out, errs := bench(t, "report", dir); code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errs)
	}
	del, err := os.ReadFile(filepath.Join(dir, "report", "delivery.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sink=2pc,exactly-once,exactly-once,true,0,0,0", "sink=plain,at-least-once,"} {
		if !strings.Contains(string(del), want) {
			t.Errorf("delivery.csv lacks %q:\n%s", want, del)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report", "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- **barrier/aligned sink=2pc**: 0 duplicated and 0 lost", "- **barrier/aligned sink=plain**: ",
		"claimed at-least-once, non-monotonic: held", "Offered rate: 4000 records/s (given by --rate)."} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}

// A configuration's run flags override the shared ones for its runs only.
// (Runs at other rates, faults or costs are other scenarios: bench report
// draws them as groups of their own.)
func TestCompareConfigOverrides(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "compare", "--config", "none --rate 3000 --duration 1s", "--config", "none",
		"--duration", "2s", "--rate", "4000", "--jobs", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rates := map[float64]float64{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Config map[string]any `json:"config"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		cfg := m.Config
		rates[cfg["rate_rps"].(float64)] = cfg["duration_s"].(float64)
	}
	if len(rates) != 2 || rates[3000] != 1 || rates[4000] != 2 {
		t.Errorf("rate -> duration %v, want 3000 -> 1s and 4000 -> 2s", rates)
	}
	if !strings.Contains(stdout, "none/default rate=3000 duration=1s ") {
		t.Errorf("compare output does not name the configuration:\n%s", stdout)
	}
}

func TestCompareConfigBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "barrier", "--system", "none"}, "--system or --config"},
		{[]string{"--config", "stormack --sink plain"}, "--sink does not apply to system stormack"},
		{[]string{"--config", "none", "--config", "stormack", "--sink", "plain"}, "--sink does not apply to any of the systems none/default, stormack/default"},
		{[]string{"--config", "barrier --frob 1"}, "unknown flag --frob"},
		{[]string{"--config", "barrier --checkpoint-interval soon"}, "checkpoint-interval"},
	} {
		requireUsageError(t, tc.want, append(append([]string{"compare"}, tc.args...), "--out", t.TempDir())...)
	}
}
