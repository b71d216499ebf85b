package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// formatParam writes p back in the --param grammar ParseParam reads:
// NAME=V1,V2 (values of fault and topology separated by ';', since fault
// specs and random,degree=K hold commas).
func formatParam(p Param) string {
	return p.Name + "=" + strings.Join(p.Values, paramSep(p.Name))
}

// FuzzParseParam checks the --param grammar: ParseParam never panics, its
// errors are one line (the CLI prints them as one), and whatever it accepts
// is well formed (a canonical name, at least one value, values trimmed,
// non-empty, distinct and free of the separator) and round-trips: written
// back as NAME=V1,V2 it parses to the same Param.
func FuzzParseParam(f *testing.F) {
	for _, s := range []string{
		"checkpoint-interval=1s,2s,5s", "rate=1000,2000", "cost.restart-delay=1s,2s", "restart-delay=1s",
		"sink=2pc,plain", "fault=crash@1s:worker=1,restart=200ms;crash@2s;none", " rate = 1 , 2 ",
		"rate=a=b", "vocabulary=10", "topology=ring;random,degree=2", "warp=1", "seed=1", "rate=1,,2", "rate=1,1", "=1", "rate",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseParam(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseParam(%q): error has a newline: %q", in, err)
			}
			return
		}
		if len(p.Values) == 0 {
			t.Fatalf("ParseParam(%q) accepted no values: %+v", in, p)
		}
		if c, err := canonicalName(p.Name); err != nil || c != p.Name {
			t.Fatalf("ParseParam(%q): name %q is not canonical (%q, %v)", in, p.Name, c, err)
		}
		sep := paramSep(p.Name)
		seen := map[string]bool{}
		for _, v := range p.Values {
			if v == "" || v != strings.TrimSpace(v) || strings.Contains(v, sep) || seen[v] {
				t.Fatalf("ParseParam(%q): bad value %q in %q", in, v, p.Values)
			}
			seen[v] = true
		}
		s := formatParam(p)
		back, err := ParseParam(s)
		if err != nil {
			t.Fatalf("ParseParam(%q) = %+v, but its form %q fails: %v", in, p, s, err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Fatalf("round trip of %q via %q: %+v != %+v", in, s, back, p)
		}
	})
}

// FuzzReadBaseline checks the baseline reader bench regress uses: it never
// panics, and a baseline it accepts writes back (WriteBaseline) to a file it
// reads as the same baseline, whose bytes are then stable: reading and
// writing is a fixed point, so --update never drifts.
func FuzzReadBaseline(f *testing.F) {
	// A small real baseline; testdata/fuzz adds hand-made edge cases. (The
	// committed CI baselines, 50-180 kB, stall the mutator: go test -fuzz
	// made 11 executions a minute with them as seeds.)
	bl, err := NewBaseline(handCurve(), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(marshal(bl))
	// One folder for the whole run, its files overwritten by each input: a
	// temporary folder per input made fuzzing (and minimising) crawl.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(dir, "in.json")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		b1, err := ReadBaseline(path)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ReadBaseline: error has a newline: %q", err)
			}
			return
		}
		// What WriteBaseline writes is marshal's bytes; written without
		// its fsync, which made each input take milliseconds.
		w1 := marshal(b1)
		out := filepath.Join(dir, "out.json")
		if err := os.WriteFile(out, w1, 0o644); err != nil {
			t.Fatal(err)
		}
		b2, err := ReadBaseline(out)
		if err != nil {
			t.Fatalf("a baseline read from %q writes back unreadable: %v", in, err)
		}
		if !reflect.DeepEqual(b1, b2) {
			t.Fatalf("baseline changed by writing and reading back:\n%+v\n%+v", b1, b2)
		}
		if w2 := marshal(b2); !bytes.Equal(w1, w2) {
			t.Fatalf("writing a baseline is not stable:\n%s\n%s", w1, w2)
		}
	})
}
