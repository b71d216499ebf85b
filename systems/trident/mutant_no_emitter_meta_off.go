//go:build !ftbench_mutant_no_emitter_meta

package trident

// mutantNoEmitterMeta is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_no_emitter_meta build tag
// (mutant_no_emitter_meta_on.go) turns it on to make a deliberately broken build:
// the transactional emitter does not persist a batch's span before emitting it, so a restarted emitter cuts a replayed txid anew and the transactional state skips or double-applies records.
// docs/torture.md lists the mutants and what catches each.
const mutantNoEmitterMeta = false
