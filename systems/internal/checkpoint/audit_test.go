package checkpoint

import (
	"slices"
	"testing"

	"ftbench/check"
	"ftbench/systems/internal/stream"
)

func TestStateKVs(t *testing.T) {
	got := StateKVs([]stream.KV{{Key: 3, Val: -1}, {Key: 7, Val: 2}})
	if want := []check.StateKV{{Key: 3, Val: -1}, {Key: 7, Val: 2}}; !slices.Equal(got, want) {
		t.Fatalf("StateKVs %v, want %v", got, want)
	}
}
