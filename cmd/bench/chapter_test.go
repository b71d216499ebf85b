package main

import (
	"strings"
	"testing"

	"ftbench/chapter"
)

// Bad input to bench chapter and to --hardware anywhere is one line and
// exit 2, before any run.
func TestChapterBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown profile", []string{"chapter", "--quick", "--hardware", "cray-1", "--out", dir}, `unknown hardware profile "cray-1"`},
		{"no jobs", []string{"chapter", "--quick", "--jobs", "0", "--out", dir}, `--jobs must be at least 1`},
		{"an argument", []string{"chapter", "extra"}, `takes no arguments`},
		{"empty out", []string{"chapter", "--quick", "--out", " "}, `--out is empty`},
		{"run with unknown profile", []string{"run", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
		{"capacity with unknown profile", []string{"capacity", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
		{"sweep with unknown profile", []string{"sweep", "--system", "none", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
		{"compare with unknown profile", []string{"compare", "--system", "none", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { requireUsageError(t, tc.want, tc.args...) })
	}
}

// --list prints the campaign's commands, one a job, and runs nothing.
func TestChapterList(t *testing.T) {
	code, stdout, stderr := bench(t, "chapter", "--quick", "--list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, err := chapter.Commands(chapter.Quick)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(stdout); got != strings.Join(want, "\n") {
		t.Errorf("bench chapter --quick --list printed\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
