//go:build !ftbench_mutant_timeout_commits

package stormack

// mutantTimeoutCommits is false in every real build. The
// ftbench_mutant_timeout_commits build tag (mutant_timeout_commits_on.go)
// turns it on to make a deliberately broken spout that, when trees time
// out, counts their tuples as handled as soon as their replays are queued
// and commits its offset at once ("commit on failure so the partition never
// stalls"). A crash of the spout's worker after that commit is durable and
// before the replays complete — a complete latency, tens of milliseconds —
// loses them. Torture must catch it by aiming at the offset-commit and
// timeout milestones (docs/torture.md, "Mutants").
const mutantTimeoutCommits = false
