package live

import (
	"strings"
	"testing"
)

// Which fault kinds a live run takes: crash and slow; the kinds not built
// or tried live yet say so (source-down: the harness would put it on the
// source log as in a simulated run, but no live run has been checked with
// it), and the link faults say why they cannot be.
func TestSupported(t *testing.T) {
	tests := []struct {
		kind, want string // want: a phrase of the refusal, "" when supported
	}{
		{"crash", ""},
		{"slow", ""},
		{"pause", "not implemented by the live runtime yet"},
		{"store-down", "not implemented by the live runtime yet"},
		{"source-down", "not implemented by the live runtime yet"},
		{"reorder", "simulated network's links"},
	}
	for _, tt := range tests {
		got := Supported(tt.kind, WorkModel)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("Supported(%q) = %q, want %q", tt.kind, got, tt.want)
		}
	}
}
