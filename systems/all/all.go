// Package all links every system into a binary.
package all

import (
	_ "ftbench/systems/barrier"
	_ "ftbench/systems/kstreams"
	_ "ftbench/systems/lineage"
	_ "ftbench/systems/none"
	_ "ftbench/systems/snapshot"
	_ "ftbench/systems/stormack"
	_ "ftbench/systems/trident"
)
