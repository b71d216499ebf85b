package workloads

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"ftbench/engine"
)

// Topology kinds (--topology).
const (
	TopologyFull   = "full"
	TopologyRing   = "ring"
	TopologyStar   = "star"
	TopologyRandom = "random"
)

// Topology is the one-way channels of a peer-to-peer workload: Out[p] are
// the processes p has a channel to, In[p] those that have a channel to p,
// both ascending. It is always strongly connected, the snapshot
// algorithms' system model (a marker, colour or vector time must reach
// every process): full has every ordered pair, N(N-1) channels; ring is
// the one-way cycle p -> p+1 mod N, N channels (every channel lacks its
// reverse); star joins process 0 both ways to every other, 2(N-1)
// channels; random,degree=K gives every process K out-channels: a cycle
// through all processes in an order drawn from the seed, plus K-1 further
// out-neighbours each, drawn from the seed, so it is strongly connected by
// construction and the same seed gives the same graph.
type Topology struct {
	Kind    string
	Degree  int // random: out-channels per process
	Out, In [][]int
}

// Channels is the number of one-way channels.
func (t *Topology) Channels() int {
	n := 0
	for _, o := range t.Out {
		n += len(o)
	}
	return n
}

// Has reports whether the channel from -> to exists.
func (t *Topology) Has(from, to int) bool {
	_, ok := slices.BinarySearch(t.Out[from], to)
	return ok
}

// String is the topology as --topology spells it.
func (t *Topology) String() string {
	if t.Kind == TopologyRandom {
		return fmt.Sprintf("random,degree=%d", t.Degree)
	}
	return t.Kind
}

// ParseTopology builds topology spec over n processes; random draws from
// seed. A spec it cannot build is an error naming the problem.
func ParseTopology(spec string, n int, seed uint64) (*Topology, error) {
	kind, rest, hasArgs := strings.Cut(strings.TrimSpace(spec), ",")
	t := &Topology{Kind: kind, Out: make([][]int, n)}
	if kind != TopologyRandom && hasArgs {
		return nil, fmt.Errorf("--topology=%q: %s takes no parameters", spec, kind)
	}
	switch kind {
	case TopologyFull:
		for p := range t.Out {
			for q := 0; q < n; q++ {
				if q != p {
					t.Out[p] = append(t.Out[p], q)
				}
			}
		}
	case TopologyRing:
		for p := range t.Out {
			t.Out[p] = []int{(p + 1) % n}
		}
	case TopologyStar:
		for q := 1; q < n; q++ {
			t.Out[0] = append(t.Out[0], q)
			t.Out[q] = []int{0}
		}
	case TopologyRandom:
		k, err := parseDegree(spec, rest, n)
		if err != nil {
			return nil, err
		}
		t.Degree = k
		t.random(engine.NewRand(seed), k)
	default:
		return nil, fmt.Errorf("--topology=%q: want full, ring, star or random,degree=K", spec)
	}
	t.index()
	if !t.StronglyConnected() {
		// Unreachable for the kinds above; kept so that a new kind cannot
		// hand the snapshot algorithms a graph they do not model.
		return nil, fmt.Errorf("--topology=%q: not strongly connected over %d processes", spec, n)
	}
	return t, nil
}

func parseDegree(spec, args string, n int) (int, error) {
	v, ok := strings.CutPrefix(strings.TrimSpace(args), "degree=")
	k, err := strconv.Atoi(v)
	if !ok || err != nil || k < 1 || k > n-1 {
		return 0, fmt.Errorf("--topology=%q: want random,degree=K with K from 1 to %d (processes - 1)", spec, n-1)
	}
	return k, nil
}

// random draws a cycle through every process in a random order (so the
// graph is strongly connected) and then k-1 more distinct out-neighbours
// per process.
func (t *Topology) random(rng interface{ Perm(int) []int }, k int) {
	n := len(t.Out)
	order := rng.Perm(n)
	for i, p := range order {
		t.Out[p] = []int{order[(i+1)%n]}
	}
	for p := range t.Out {
		for _, q := range rng.Perm(n) {
			if len(t.Out[p]) == k {
				break
			}
			if q != p && !slices.Contains(t.Out[p], q) {
				t.Out[p] = append(t.Out[p], q)
			}
		}
		slices.Sort(t.Out[p])
	}
}

// index fills In from Out.
func (t *Topology) index() {
	t.In = make([][]int, len(t.Out))
	for p, out := range t.Out {
		for _, q := range out {
			t.In[q] = append(t.In[q], p)
		}
	}
}

// StronglyConnected reports whether every process reaches every other:
// process 0 reaches all along Out, and all reach 0 (0 reaches all along In).
func (t *Topology) StronglyConnected() bool {
	return reachesAll(t.Out) && reachesAll(t.In)
}

func reachesAll(adj [][]int) bool {
	seen := make([]bool, len(adj))
	stack := []int{0}
	seen[0] = true
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, q := range adj[p] {
			if !seen[q] {
				seen[q] = true
				stack = append(stack, q)
			}
		}
	}
	return !slices.Contains(seen, false)
}
