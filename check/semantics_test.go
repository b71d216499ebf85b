package check

import (
	"slices"
	"testing"
)

func TestVerdict(t *testing.T) {
	tests := []struct {
		dups, lost int64
		want       Guarantee
	}{
		{0, 0, ExactlyOnce},
		{3, 0, AtLeastOnce},
		{0, 2, AtMostOnce},
		{1, 1, None},
	}
	for _, tt := range tests {
		if got := Verdict(tt.dups, tt.lost); got != tt.want {
			t.Errorf("Verdict(%d, %d) = %q, want %q", tt.dups, tt.lost, got, tt.want)
		}
	}
}

func TestGuaranteeStrings(t *testing.T) {
	// The strings are run.json values; renaming one breaks stored results.
	got := []Guarantee{AtMostOnce, AtLeastOnce, ExactlyOnce, None}
	want := []Guarantee{"at-most-once", "at-least-once", "exactly-once", "none"}
	if !slices.Equal(got, want) {
		t.Errorf("guarantees = %q, want %q", got, want)
	}
}

func TestClaimHeld(t *testing.T) {
	tests := []struct {
		claim                 Guarantee
		dups, lost, wrongKeys int64
		want                  bool
	}{
		{ExactlyOnce, 0, 0, 0, true},
		{ExactlyOnce, 1, 0, 0, false},
		{ExactlyOnce, 0, 1, 0, false},
		{ExactlyOnce, 0, 0, 1, false},
		{AtLeastOnce, 5, 0, 3, true},
		{AtLeastOnce, 0, 1, 0, false},
		{AtMostOnce, 0, 5, 3, true},
		{AtMostOnce, 1, 0, 0, false},
		{None, 9, 9, 9, true},
		{"exactly_once", 0, 0, 0, false}, // unknown claim never holds
		{"", 0, 0, 0, false},
	}
	for _, tt := range tests {
		if got := ClaimHeld(tt.claim, tt.dups, tt.lost, tt.wrongKeys); got != tt.want {
			t.Errorf("ClaimHeld(%q, %d, %d, %d) = %v, want %v", tt.claim, tt.dups, tt.lost, tt.wrongKeys, got, tt.want)
		}
	}
}

func TestWrongKeys(t *testing.T) {
	many := func(n int, f func(k uint64) int64) map[uint64]int64 {
		m := make(map[uint64]int64, n)
		for k := uint64(0); k < uint64(n); k++ {
			m[k*7%uint64(n)] = f(k * 7 % uint64(n)) // scatter insertion order
		}
		return m
	}
	tests := []struct {
		name      string
		got, want map[uint64]int64
		wrong     int64
		examples  []KeyDiff
	}{
		{"both empty", nil, nil, 0, nil},
		{"equal", map[uint64]int64{1: 5, 2: 0}, map[uint64]int64{1: 5, 2: 0}, 0, nil},
		{"zero vs missing is not wrong", map[uint64]int64{1: 0}, map[uint64]int64{2: 0}, 0, nil},
		{"differs", map[uint64]int64{1: 5}, map[uint64]int64{1: 6}, 1, []KeyDiff{{1, 5, 6}}},
		{"missing from got", map[uint64]int64{}, map[uint64]int64{9: 4}, 1, []KeyDiff{{9, 0, 4}}},
		{"missing from want", map[uint64]int64{9: 4}, nil, 1, []KeyDiff{{9, 4, 0}}},
		{
			"examples are the 5 smallest keys, sorted",
			many(1000, func(k uint64) int64 { return int64(k) + 1 }),
			many(1000, func(k uint64) int64 {
				if k%3 == 0 {
					return int64(k) // wrong for every third key
				}
				return int64(k) + 1
			}),
			334,
			[]KeyDiff{{0, 1, 0}, {3, 4, 3}, {6, 7, 6}, {9, 10, 9}, {12, 13, 12}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrong, ex := WrongKeys(tt.got, tt.want)
			if wrong != tt.wrong || !slices.Equal(ex, tt.examples) {
				t.Errorf("WrongKeys = %d %v, want %d %v", wrong, ex, tt.wrong, tt.examples)
			}
		})
	}
}
