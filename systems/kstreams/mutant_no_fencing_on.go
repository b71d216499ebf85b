//go:build ftbench_mutant_no_fencing

package kstreams

const mutantNoFencing = true
