//go:build ftbench_mutant_no_replay

package lineage

// mutantNoReplay: see mutant_no_replay_off.go. Only builds with
// -tags ftbench_mutant_no_replay compile this.
const mutantNoReplay = true
