//go:build ftbench_mutant_no_emitter_meta

package trident

// mutantNoEmitterMeta: see mutant_no_emitter_meta_off.go. Only builds with
// -tags ftbench_mutant_no_emitter_meta have it on.
const mutantNoEmitterMeta = true
