package docs

import "testing"

// kstreams.md's options table is kstreams' options: each with its
// default, every option once, and the default variant.
func TestKstreamsOptionsTable(t *testing.T) { optionsTable(t, "kstreams") }
