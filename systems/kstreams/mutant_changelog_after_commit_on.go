//go:build ftbench_mutant_changelog_after_commit

package kstreams

const mutantChangelogAfterCommit = true
