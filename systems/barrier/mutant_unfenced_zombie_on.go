//go:build ftbench_mutant_unfenced_zombie

package barrier

// mutantUnfencedZombie: see mutant_unfenced_zombie_off.go. Only builds with
// -tags ftbench_mutant_unfenced_zombie compile this.
const mutantUnfencedZombie = true
