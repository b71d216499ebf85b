package benchcli

import (
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Help reads as written: no flag's usage has backticks (the CLI library
// turns backticked text into the placeholder: --system bench list), every
// flag line shows at most one default, flags a command does not use say so
// instead of showing a default, and system options name their systems.
func TestHelp(t *testing.T) {
	app := newApp(nil, nil)
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			if u := f.(cli.DocGenerationFlag).GetUsage(); strings.Contains(u, "`") {
				t.Errorf("bench %s --%s: usage has a backtick, which becomes the placeholder: %q", cmd.Name, f.Names()[0], u)
			}
		}
		code, stdout, _ := bench(t, cmd.Name, "--help")
		if code != 0 {
			t.Fatalf("bench %s --help: exit %d", cmd.Name, code)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "--") && strings.Count(line, "(default") > 1 {
				t.Errorf("bench %s: a default shown twice: %s", cmd.Name, strings.TrimSpace(line))
			}
		}
	}
	// (Test binaries register mutant systems too, hence the open prefixes.)
	want := map[string][]string{
		"torture":  {"--duration value", "(default: drawn per run)", "--jobs value", "(default: all cores)"},
		"run":      {"--checkpoint-interval value", "(system option of barrier, snapshot", "--max-spout-pending value", "(system option of stormack)"},
		"sweep":    {"--jobs value", "(default: all cores)"},
		"capacity": {"--duration value", "(default: 6s per probe)"},
	}
	for cmd, pairs := range want {
		_, stdout, _ := bench(t, cmd, "--help")
		for i := 0; i < len(pairs); i += 2 {
			line := lineWith(stdout, pairs[i])
			if !strings.Contains(line, pairs[i+1]) {
				t.Errorf("bench %s --help: %s line lacks %q: %q", cmd, pairs[i], pairs[i+1], line)
			}
		}
	}
	// One system's own prefix is dropped: the help names the system once.
	_, stdout, _ := bench(t, "run", "--help")
	if l := lineWith(stdout, "--max-spout-pending value"); strings.Count(l, "stormack") != 1 {
		t.Errorf("--max-spout-pending names stormack more than once: %q", l)
	}
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return l
		}
	}
	return ""
}

func TestVersion(t *testing.T) {
	code, stdout, _ := bench(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "bench version ") || !strings.Contains(stdout, runtime.Version()) {
		t.Fatalf("bench --version: exit %d, %q", code, stdout)
	}
}
