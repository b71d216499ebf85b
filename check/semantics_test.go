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

// Each claim breaks on the properties it promises, and says which.
func TestClaimBroken(t *testing.T) {
	for _, tt := range []struct {
		claim     Claim
		dups, lst int64
		f         Finals
		want      []string
	}{
		{Claim{Guarantee: ExactlyOnce}, 0, 0, Finals{}, nil},
		{Claim{Guarantee: ExactlyOnce}, 0, 0, Finals{Wrong: 3, Stale: 3}, []string{"3 keys with a wrong final value (3 stale, 0 ahead of the oracle)"}},
		{Claim{Guarantee: ExactlyOnce}, 2, 1, Finals{}, []string{"2 effects duplicated", "1 effects lost"}},
		{Claim{Guarantee: AtLeastOnce}, 5, 0, Finals{Wrong: 4, Ahead: 4}, nil},
		{Claim{Guarantee: AtLeastOnce}, 5, 0, Finals{Wrong: 4, Stale: 1, Ahead: 3}, []string{"1 keys with a stale final value (behind the oracle: an update a reader never sees)"}},
		{Claim{Guarantee: AtLeastOnce, MayEndStale: true}, 5, 0, Finals{Wrong: 4, Stale: 1, Ahead: 3}, nil},
		{Claim{Guarantee: AtLeastOnce, MayEndStale: true}, 0, 7, Finals{}, []string{"7 effects lost"}},
		{Claim{Guarantee: AtMostOnce}, 0, 9, Finals{Wrong: 2, Stale: 2}, nil},
		{Claim{Guarantee: AtMostOnce}, 1, 0, Finals{}, []string{"1 effects duplicated"}},
		{Claim{Guarantee: None}, 1, 1, Finals{Wrong: 1, Stale: 1}, nil},
		{Claim{Guarantee: "exactly-twice"}, 0, 0, Finals{}, []string{`an unknown claim "exactly-twice"`}},
	} {
		got := tt.claim.Broken(tt.dups, tt.lst, tt.f)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%+v.Broken(%d, %d, %+v) = %q, want %q", tt.claim, tt.dups, tt.lst, tt.f, got, tt.want)
		}
		if held := tt.claim.Held(tt.dups, tt.lst, tt.f, true); held != (len(tt.want) == 0) {
			t.Errorf("%+v.Held = %v, want %v", tt.claim, held, len(tt.want) == 0)
		}
	}
}

// CompareFinals splits the wrong keys by direction.
func TestCompareFinals(t *testing.T) {
	got := map[uint64]int64{1: 5, 2: 7, 3: 2, 4: 9}
	want := map[uint64]int64{1: 5, 2: 6, 3: 4, 5: 1}
	f, ex := CompareFinals(got, want)
	if f != (Finals{Wrong: 4, Stale: 2, Ahead: 2}) || len(ex) != 4 {
		t.Errorf("CompareFinals = %+v, %v; want 4 wrong: keys 3 and 5 stale, 2 and 4 ahead", f, ex)
	}
}
