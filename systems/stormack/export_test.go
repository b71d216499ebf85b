package stormack

import "ftbench/systems"

// FailTestSystem is stormack with a sink whose every 50th write fails (a
// "database exception"), registered for the end-to-end tests only, so the
// explicit fail path runs through the real runtime.
const FailTestSystem = "stormack-failtest"

func init() { systems.Register(system{name: FailTestSystem, failEvery: 50}) }
