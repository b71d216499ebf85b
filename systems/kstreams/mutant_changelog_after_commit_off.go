//go:build !ftbench_mutant_changelog_after_commit

package kstreams

// mutantChangelogAfterCommit is false in every real build. The
// ftbench_mutant_changelog_after_commit tag turns it on: a thread sends
// its flushed cache to the changelog after the transaction that commits
// the offsets, so a crash in between restores a store that misses those
// updates (exactly-once broken: wrong final values).
const mutantChangelogAfterCommit = false
