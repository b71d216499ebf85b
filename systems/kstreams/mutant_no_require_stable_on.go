//go:build ftbench_mutant_no_require_stable

package kstreams

const mutantNoRequireStable = true
