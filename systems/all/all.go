// Package all links every system and workload into a binary.
package all

import (
	_ "ftbench/systems/none"
)
