package sweep

import (
	"strconv"
	"strings"
	"testing"
)

func TestShardFromEnv(t *testing.T) {
	slurm := func(id, lo, hi, count, step string) map[string]string {
		return map[string]string{EnvSlurmTaskID: id, EnvSlurmTaskMin: lo, EnvSlurmTaskMax: hi,
			EnvSlurmTaskCount: count, EnvSlurmTaskStep: step}
	}
	with := func(m map[string]string, k, v string) map[string]string {
		c := map[string]string{k: v}
		for a, b := range m {
			c[a] = b
		}
		return c
	}
	cases := []struct {
		name  string
		env   map[string]string
		count int
		want  Shard
		err   string // a part of the error; "" = none
	}{
		{"slurm first task", slurm("0", "0", "3", "4", "1"), 0, Shard{1, 4}, ""},
		{"slurm offset array", slurm("7", "5", "8", "4", "1"), 0, Shard{3, 4}, ""},
		{"slurm without step", slurm("2", "0", "3", "4", ""), 0, Shard{3, 4}, ""},
		{"slurm count flag agrees", slurm("2", "0", "3", "4", "1"), 4, Shard{3, 4}, ""},
		{"slurm count flag disagrees", slurm("2", "0", "3", "4", "1"), 5, Shard{}, "disagrees"},
		{"slurm step", slurm("4", "0", "12", "4", "4"), 0, Shard{}, "step"},
		{"slurm holes", slurm("3", "1", "8", "3", "1"), 0, Shard{}, "not contiguous"},
		{"slurm id outside", slurm("9", "0", "3", "4", "1"), 0, Shard{}, "outside"},
		{"slurm garbage", slurm("x", "0", "3", "4", "1"), 0, Shard{}, EnvSlurmTaskID},
		{"slurm min missing", slurm("1", "", "3", "4", "1"), 0, Shard{}, EnvSlurmTaskMin},
		{"k8s", map[string]string{EnvK8sIndex: "2"}, 3, Shard{3, 3}, ""},
		{"k8s without count", map[string]string{EnvK8sIndex: "2"}, 0, Shard{}, "--shard-count"},
		{"k8s index too large", map[string]string{EnvK8sIndex: "3"}, 3, Shard{}, "not below"},
		{"k8s garbage", map[string]string{EnvK8sIndex: "-1"}, 3, Shard{}, EnvK8sIndex},
		{"both agree", with(slurm("1", "0", "3", "4", "1"), EnvK8sIndex, "1"), 0, Shard{2, 4}, ""},
		{"both disagree", with(slurm("1", "0", "3", "4", "1"), EnvK8sIndex, "2"), 0, Shard{}, "disagree: shard 2/4 vs 3/4"},
		{"neither", map[string]string{}, 0, Shard{}, "neither a Slurm job array"},
		{"neither with count", map[string]string{}, 4, Shard{}, "neither a Slurm job array"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ShardFromEnv(func(k string) string { return tc.env[k] }, tc.count)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v, want %+v", err, tc.want)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %+v, %v; want an error naming %q", got, err, tc.err)
			case tc.err == "" && got != tc.want:
				t.Fatalf("got %+v, want %+v", got, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("error of several lines: %q", err)
			}
		})
	}
}

// Every task of an array gets its own shard, and together they cover the
// grid: the shard of task ID-MIN is that task's, whatever MIN is.
func TestShardFromEnvCoversTheArray(t *testing.T) {
	seen := map[Shard]bool{}
	for id := 10; id <= 14; id++ {
		env := map[string]string{EnvSlurmTaskID: strconv.Itoa(id), EnvSlurmTaskMin: "10", EnvSlurmTaskMax: "14", EnvSlurmTaskCount: "5", EnvSlurmTaskStep: "1"}
		s, err := ShardFromEnv(func(k string) string { return env[k] }, 0)
		if err != nil || seen[s] || s.N != 5 {
			t.Fatalf("task %d: %+v %v (seen %v)", id, s, err, seen)
		}
		seen[s] = true
	}
	if len(seen) != 5 {
		t.Fatalf("shards %v", seen)
	}
}
