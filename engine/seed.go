package engine

import "math/rand/v2"

// ChildSeed derives an independent seed for a named component (a process,
// the network, the workload, the fault schedule) from the run seed, so that
// adding a component does not shift every other component's random stream.
func ChildSeed(parent uint64, label string) uint64 {
	// FNV-1a over the label, folded with the parent through splitmix64.
	h := uint64(14695981039346656037)
	for i := 0; i < len(label); i++ {
		h ^= uint64(label[i])
		h *= 1099511628211
	}
	return Mix64(parent ^ Mix64(h))
}

// NewRand returns a deterministic RNG for seed.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, Mix64(seed^0x9e3779b97f4a7c15)))
}

// Mix64 is splitmix64's finaliser: a cheap, well-distributed 64-bit hash.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
