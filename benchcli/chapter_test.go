package benchcli

import (
	"fmt"
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
		{"bad shard", []string{"chapter", "--quick", "--shard", "3/2", "--out", dir}, `shard`},
		{"run with unknown profile", []string{"run", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
		{"capacity with unknown profile", []string{"capacity", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
		{"sweep with unknown profile", []string{"sweep", "--system", "none", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
		{"compare with unknown profile", []string{"compare", "--system", "none", "--hardware", "nope", "--out", dir}, `unknown hardware profile "nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { requireUsageError(t, tc.want, tc.args...) })
	}
}

// Shards partition the campaign: every job in exactly one, each setup's
// jobs together (a latency run beside the search it halves).
func TestChapterShards(t *testing.T) {
	all, err := chapter.Jobs(chapter.Quick)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 3} {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			for _, j := range chapter.Shard(all, i, n) {
				seen[j.ID]++
				if j.HalfOf != "" && !strings.HasPrefix(j.HalfOf, j.Setup.ID+".") {
					t.Errorf("%s halves %s of another setup", j.ID, j.HalfOf)
				}
			}
			code, stdout, stderr := bench(t, "chapter", "--quick", "--list", "--shard", fmt.Sprintf("%d/%d", i, n))
			if want := strings.Join(chapter.CommandLines(chapter.Shard(all, i, n)), "\n"); code != 0 || strings.TrimSpace(stdout) != want {
				t.Errorf("--shard %d/%d --list: exit %d %s, printed\n%s\nwant\n%s", i, n, code, stderr, stdout, want)
			}
		}
		for _, j := range all {
			if seen[j.ID] != 1 {
				t.Errorf("%d shards: %s in %d of them", n, j.ID, seen[j.ID])
			}
		}
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
