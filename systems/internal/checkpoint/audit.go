package checkpoint

import (
	"ftbench/check"
	"ftbench/systems/internal/stream"
)

// StateKVs is a task's keyed state as the post-run consistency check
// (check.CheckSnapshotsFrom) reads it from a checkpoint's cut: the
// systems persist stream.KV, the checker knows nothing of the stream
// machinery.
func StateKVs(kvs []stream.KV) []check.StateKV {
	out := make([]check.StateKV, len(kvs))
	for i, kv := range kvs {
		out[i] = check.StateKV{Key: kv.Key, Val: kv.Val}
	}
	return out
}
