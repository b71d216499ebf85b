//go:build ftbench_mutant_delivery_skip_partition

package check

// mutantDeliverySkipPartition: see mutant_delivery_skip_partition_off.go. Only builds with
// -tags ftbench_mutant_delivery_skip_partition compile this.
const mutantDeliverySkipPartition = true
