package sweep

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Environment variables a cluster scheduler sets for one task of an array.
// Slurm sets all five for a job array task; a Kubernetes Indexed Job sets
// only the index, so its count comes from a flag.
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
)

// ShardFromEnv is --shard auto: the shard of this task of a Slurm job array
// (task ID − MIN of COUNT) or of a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX of count, count given by the caller's flag; 0 =
// not given). Both may be set (a Kubernetes pod launched by Slurm is
// unusual but harmless) only if they agree. getenv is os.Getenv in
// production and a map in tests.
//
// Slurm arrays with a step (--array=0-15:4) or with holes (--array=1,3,8)
// are refused: task IDs would not map onto 0..COUNT-1, so two tasks could
// run the same shard while another shard never runs, and the merged result
// would silently miss points.
func ShardFromEnv(getenv func(string) string, count int) (Shard, error) {
	slurm, hasSlurm, err := slurmShard(getenv)
	if err != nil {
		return Shard{}, err
	}
	if hasSlurm && count > 0 && count != slurm.N {
		return Shard{}, fmt.Errorf("--shard auto: --shard-count %d disagrees with the Slurm array's %s=%d", count, EnvSlurmTaskCount, slurm.N)
	}
	kcount := count
	if kcount <= 0 && hasSlurm {
		kcount = slurm.N // so that the index is still checked against the array
	}
	k8s, hasK8s, err := k8sShard(getenv, kcount)
	if err != nil {
		return Shard{}, err
	}
	switch {
	case hasSlurm && hasK8s && slurm != k8s:
		return Shard{}, fmt.Errorf("--shard auto: the Slurm array and the Kubernetes index disagree: shard %d/%d vs %d/%d",
			slurm.I, slurm.N, k8s.I, k8s.N)
	case hasSlurm:
		return slurm, nil
	case hasK8s:
		return k8s, nil
	}
	return Shard{}, fmt.Errorf("--shard auto: neither a Slurm job array (%s) nor a Kubernetes Indexed Job (%s) is set; give --shard I/N",
		EnvSlurmTaskID, EnvK8sIndex)
}

func slurmShard(getenv func(string) string) (Shard, bool, error) {
	if getenv(EnvSlurmTaskID) == "" {
		return Shard{}, false, nil
	}
	num := func(name string) (int, error) {
		v := getenv(name)
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--shard auto: %s=%q is not a task number (is this a Slurm job array task?)", name, v)
		}
		return n, nil
	}
	var id, lo, hi, count int
	for _, f := range []struct {
		name string
		dst  *int
	}{{EnvSlurmTaskID, &id}, {EnvSlurmTaskMin, &lo}, {EnvSlurmTaskMax, &hi}, {EnvSlurmTaskCount, &count}} {
		n, err := num(f.name)
		if err != nil {
			return Shard{}, false, err
		}
		*f.dst = n
	}
	if step := getenv(EnvSlurmTaskStep); step != "" && step != "1" {
		return Shard{}, false, fmt.Errorf("--shard auto: the Slurm array has step %s=%s; use a contiguous array like --array=0-%d",
			EnvSlurmTaskStep, step, max(count, 1)-1)
	}
	if hi-lo+1 != count {
		return Shard{}, false, fmt.Errorf("--shard auto: the Slurm array is not contiguous (%s=%d, %s=%d, %s=%d); use --array=%d-%d",
			EnvSlurmTaskMin, lo, EnvSlurmTaskMax, hi, EnvSlurmTaskCount, count, lo, lo+count-1)
	}
	if id < lo || id > hi {
		return Shard{}, false, fmt.Errorf("--shard auto: %s=%d is outside the array %d-%d", EnvSlurmTaskID, id, lo, hi)
	}
	return Shard{I: id - lo + 1, N: count}, true, nil
}

func k8sShard(getenv func(string) string, count int) (Shard, bool, error) {
	v := getenv(EnvK8sIndex)
	if v == "" {
		return Shard{}, false, nil
	}
	idx, err := strconv.Atoi(v)
	if err != nil || idx < 0 {
		return Shard{}, false, fmt.Errorf("--shard auto: %s=%q is not a completion index", EnvK8sIndex, v)
	}
	if count <= 0 {
		return Shard{}, false, fmt.Errorf("--shard auto: %s is set but not the number of shards; give --shard-count (the Job's completions)", EnvK8sIndex)
	}
	if idx >= count {
		return Shard{}, false, fmt.Errorf("--shard auto: %s=%d is not below --shard-count %d", EnvK8sIndex, idx, count)
	}
	return Shard{I: idx + 1, N: count}, true, nil
}

// ShardDir is the folder shard s writes under a results folder shared by
// every shard (--shard auto): one folder per shard, so tasks writing to a
// shared file system never touch the same files, and `bench merge --out
// DIR/merged DIR/shard-*` joins them.
func ShardDir(out string, s Shard) string {
	return filepath.Join(out, fmt.Sprintf("shard-%d-of-%d", s.I, s.N))
}
