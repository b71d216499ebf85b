package barrier

import (
	"testing"

	"ftbench/systems"
)

// A two-valued option takes either value and names both when it gets
// neither.
func TestEither(t *testing.T) {
	for value, want := range map[string]bool{FailoverRegion: true, FailoverFull: false} {
		if got, err := (systems.Options{"failover": value}).Either("failover", FailoverRegion, FailoverFull); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", value, got, err, want)
		}
	}
	_, err := systems.Options{"sink": "exactly"}.Either("sink", Sink2PC, SinkPlain)
	if want := `--sink="exactly": want 2pc or plain`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
