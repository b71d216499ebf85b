//go:build !ftbench_mutant_offsets_outside_txn

package kstreams

// mutantOffsetsOutsideTxn is false in every real build. The
// ftbench_mutant_offsets_outside_txn tag turns it on: the group
// coordinator commits a thread's consumed offsets when its TxnOffsetCommit
// arrives, not with the transaction's commit marker, so a crash before
// the commit loses the transaction's records (exactly-once broken: lost
// effects). docs/torture.md lists the mutants.
const mutantOffsetsOutsideTxn = false
