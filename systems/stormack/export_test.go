package stormack

import "ftbench/systems"

// FailTestSystem is stormack with a sink whose every 50th write fails (a
// "database exception"), registered for the end-to-end tests only, so the
// explicit fail path runs through the real runtime.
const FailTestSystem = "stormack-failtest"

func init() { systems.Register(system{name: FailTestSystem, failEvery: 50}) }

// PeriodicCommitTestSystem is stormack whose unacked spout (--ackers 0)
// emits every batch at once and commits its position periodically, as the
// acking spout does, registered for the end-to-end tests only: a crash then
// re-emits what was sent since the last commit.
const PeriodicCommitTestSystem = "stormack-periodic-commit"

func init() { systems.Register(system{name: PeriodicCommitTestSystem, periodicCommit: true}) }
