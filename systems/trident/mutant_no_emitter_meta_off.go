//go:build !ftbench_mutant_no_emitter_meta

package trident

// mutantNoEmitterMeta is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_no_emitter_meta build tag
// (mutant_no_emitter_meta_on.go) turns it on to make a deliberately broken build:
// the transactional emitter's span of a txid is not there for its replays (as if not persisted): a restarted emitter cuts a replayed txid anew, with more records than the attempt some partitions already applied, and the transactional state skips them for good.
// docs/torture.md lists the mutants and what catches each.
const mutantNoEmitterMeta = false
