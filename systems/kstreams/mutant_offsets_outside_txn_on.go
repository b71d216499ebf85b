//go:build ftbench_mutant_offsets_outside_txn

package kstreams

const mutantOffsetsOutsideTxn = true
