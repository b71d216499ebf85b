//go:build ftbench_mutant_delivery_skip_partition

package check_test

import "testing"

// TestMutantDeliverySkipPartitionCaught runs only in the mutant build (go
// test -tags ftbench_mutant_delivery_skip_partition ./check -run Mutant):
// the corpus must hold a bad history the mutant checker accepts, or the
// corpus would not catch a checker that ignores a partition.
func TestMutantDeliverySkipPartitionCaught(t *testing.T) {
	if a, n := acceptedByDelivery(t); a == 0 {
		t.Fatalf("the mutant delivery checker rejects all %d bad histories: the corpus does not catch it", n)
	}
}
