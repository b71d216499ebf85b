//go:build !ftbench_mutant_delivery_skip_partition

package check

// mutantDeliverySkipPartition is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_delivery_skip_partition build tag
// (mutant_delivery_skip_partition_on.go) turns it on to make a deliberately broken build:
// the delivery checker ignores the last source partition: neither its duplicates nor its losses are counted.
// docs/torture.md lists the mutants and what catches each.
const mutantDeliverySkipPartition = false
