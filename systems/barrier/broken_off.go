//go:build !ftbench_broken_sink

package barrier

// brokenEarlyCommit is false in every real build. The ftbench_broken_sink
// build tag (broken_on.go) turns it on to make a deliberately broken barrier
// whose 2PC sink commits at pre-commit, before its checkpoint completes, so
// tests can show that `bench torture` catches and shrinks the bug.
const brokenEarlyCommit = false
