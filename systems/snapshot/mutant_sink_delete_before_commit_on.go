//go:build ftbench_mutant_sink_delete_before_commit

package snapshot

// mutantSinkDeleteBeforeCommit: see mutant_sink_delete_before_commit_off.go.
// Only builds with the ftbench_mutant_sink_delete_before_commit tag use this.
const mutantSinkDeleteBeforeCommit = true
