//go:build !ftbench_mutant_no_fencing

package kstreams

// mutantNoFencing is false in every real build. The
// ftbench_mutant_no_fencing tag turns it on: the group coordinator accepts
// a TxnOffsetCommit (or OffsetCommit) whatever the member's generation, so
// a zombie thread (paused or cut off past its session timeout) commits
// offsets and output for tasks that moved (exactly-once broken:
// duplicates).
const mutantNoFencing = false
