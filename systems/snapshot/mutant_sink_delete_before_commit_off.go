//go:build !ftbench_mutant_sink_delete_before_commit

package snapshot

// mutantSinkDeleteBeforeCommit is false in every real build, so the
// compiler removes the branches it guards. The
// ftbench_mutant_sink_delete_before_commit build tag
// (mutant_sink_delete_before_commit_on.go) turns it on to make a
// deliberately broken two-phase-commit sink on dataflows. When checkpoint n
// completes, the correct sink commits each of its transactions and deletes
// the transaction's pre-committed record in one step. The mutant sends the
// output system the commit and the deletion of the record together instead
// of deleting the record once the commit is done: the deletion lands a
// network round trip later (0.2 ms), the commit only mutantCommitLatency
// (1.5 ms) after sink_commit. A crash of the sink's node in the 1.3 ms
// between loses the commit, and the restored sink, finding no record for a
// transaction that checkpoint n lists, takes it for committed: its effects
// are lost (exactly-once broken). A sink that dies before the deletion
// lands (a zombie cancelled just after the commit notice the heal of a
// partition delivered, say) recommits the transaction on restore, as the
// correct one does. Torture catches it by aiming crashes at the
// sink_commit milestone (mutantCommits, sink.go).
//
// Mutants follow one scheme: build tag ftbench_mutant_<name>, files
// mutant_<name>_on.go / _off.go, a const mutant<Name>; docs/torture.md
// lists them.
const mutantSinkDeleteBeforeCommit = false
