package check

import (
	"fmt"
	"slices"
)

// Snapshot consistency (lecture 12.2.3, 12.3.4): a global snapshot of
// message-passing processes is the recorded state of every process plus the
// recorded state of every channel. It is consistent when it is a state the
// system could have been in: no message is received inside the cut but sent
// outside it (an orphan), every message sent inside the cut and received
// outside it is in its channel's recorded state, and nothing else is. For
// money-moving processes it must then also conserve money: recorded
// balances plus money recorded in the channels equal the total.
//
// The checker needs the ground truth of each channel at the two cuts, not
// the algorithm's opinion of it: messages on a channel are numbered 0, 1, 2,
// ... in sending order; the sender's cut says how many it had sent, the
// receiver's cut which numbers it had received.

// Received is the set of message numbers a process had received on one
// channel at its cut: every number below Contig, plus Extra (ascending, all
// above Contig), which is empty on a FIFO channel.
type Received struct {
	Contig int64
	Extra  []int64
}

// Has reports whether message seq had been received.
func (r *Received) Has(seq int64) bool {
	if seq < r.Contig {
		return true
	}
	_, ok := slices.BinarySearch(r.Extra, seq)
	return ok
}

// Add marks seq received and reports whether it arrived in sending order
// (every earlier message had arrived, and no later one).
func (r *Received) Add(seq int64) (inOrder bool) {
	inOrder = seq == r.Contig && len(r.Extra) == 0
	switch {
	case seq < r.Contig:
		return false // a duplicate; channels here never duplicate
	case seq == r.Contig:
		r.Contig++
		// Absorb the run of out-of-order arrivals that is now contiguous.
		i := 0
		for i < len(r.Extra) && r.Extra[i] == r.Contig {
			r.Contig++
			i++
		}
		if i > 0 {
			r.Extra = append(r.Extra[:0], r.Extra[i:]...)
		}
	default:
		i, found := slices.BinarySearch(r.Extra, seq)
		if !found {
			r.Extra = slices.Insert(r.Extra, i, seq)
		}
	}
	return inOrder
}

// Max is the highest number received, -1 if none.
func (r *Received) Max() int64 {
	if n := len(r.Extra); n > 0 {
		return r.Extra[n-1]
	}
	return r.Contig - 1
}

// Clone copies r (a cut keeps its own copy while the channel moves on).
func (r *Received) Clone() Received {
	return Received{Contig: r.Contig, Extra: slices.Clone(r.Extra)}
}

// countFrom is how many received numbers are >= from.
func (r *Received) countFrom(from int64) int64 {
	n := max(0, r.Contig-from)
	i, _ := slices.BinarySearch(r.Extra, from)
	return n + int64(len(r.Extra)-i)
}

// Crossing counts, at the instant a control message that was sent after
// message sent-1 (and before message sent) arrives, the messages that crossed
// it: Overtook are received numbers >= sent (sent after it, received before
// it), Overtaken are numbers < sent not yet received (sent before it,
// received after it). On a FIFO channel both are zero. r is the receiver's
// ground truth for the channel at that instant.
func (r *Received) Crossing(sent int64) (overtook, overtaken int64) {
	overtook = r.countFrom(sent)
	below := min(r.Contig, sent)
	for _, e := range r.Extra {
		if e < sent {
			below++
		}
	}
	return overtook, sent - below
}

// Recorded is one message in a channel's recorded state.
type Recorded struct {
	Seq    int64
	Amount int64
}

// ChannelCut is one channel From -> To as the snapshot saw it.
type ChannelCut struct {
	From, To int
	// Sent is how many messages From had sent on the channel at its cut
	// (numbers 0 .. Sent-1 are inside the cut).
	Sent int64
	// Received is what To had received on the channel at its cut.
	Received Received
	// Recorded is the channel state the algorithm recorded.
	Recorded []Recorded
}

// GlobalSnapshot is a collected global snapshot of money-moving processes.
type GlobalSnapshot struct {
	Balances []int64 // recorded balance of each process
	Channels []ChannelCut
	Total    int64 // money in the system
}

// Audit is the verdict on one global snapshot.
type Audit struct {
	Consistent bool
	// Imbalance is recorded money minus the total: positive when money
	// appeared (orphans), negative when it vanished (in-flight money not
	// recorded). Zero is conservation.
	Imbalance int64
	// Orphans are messages received inside the receiver's cut but sent
	// outside the sender's.
	Orphans int64
	// LateRecorded are channel-state messages sent outside the sender's cut.
	LateRecorded int64
	// Missing are messages sent inside the sender's cut, received outside
	// the receiver's, and not recorded in the channel state.
	Missing int64
	// DoubleCounted are recorded messages the receiver had already received
	// inside its cut.
	DoubleCounted int64
	// ChannelMoney is the money recorded in channel states.
	ChannelMoney int64
	// Examples describe up to MaxExamples problems, first channels first.
	Examples []string
}

// AuditSnapshot checks one global snapshot for conservation, orphans, late
// channel-state messages and missing in-flight messages.
func AuditSnapshot(g *GlobalSnapshot) Audit {
	var a Audit
	note := func(format string, args ...any) {
		if len(a.Examples) < MaxExamples {
			a.Examples = append(a.Examples, fmt.Sprintf(format, args...))
		}
	}
	money := int64(0)
	for _, b := range g.Balances {
		money += b
	}
	for i := range g.Channels {
		c := &g.Channels[i]
		if n := c.Received.countFrom(c.Sent); n > 0 {
			a.Orphans += n
			note("channel %d->%d: %d messages received inside %d's cut were sent after %d's cut (message %d and later)", c.From, c.To, n, c.To, c.From, c.Sent)
		}
		inside := min(c.Received.Contig, c.Sent) // received numbers below Sent
		for _, e := range c.Received.Extra {
			if e < c.Sent {
				inside++
			}
		}
		recordedInside := int64(0)
		for _, r := range c.Recorded {
			a.ChannelMoney += r.Amount
			switch {
			case r.Seq >= c.Sent:
				a.LateRecorded++
				note("channel %d->%d: recorded message %d was sent after %d's cut (it had sent %d)", c.From, c.To, r.Seq, c.From, c.Sent)
			case c.Received.Has(r.Seq):
				a.DoubleCounted++
				note("channel %d->%d: recorded message %d had already been received inside %d's cut", c.From, c.To, r.Seq, c.To)
			default:
				recordedInside++
			}
		}
		if miss := c.Sent - inside - recordedInside; miss > 0 {
			a.Missing += miss
			note("channel %d->%d: %d messages sent inside %d's cut are neither received inside %d's cut nor recorded", c.From, c.To, miss, c.From, c.To)
		}
	}
	a.Imbalance = money + a.ChannelMoney - g.Total
	if a.Imbalance != 0 {
		note("recorded balances %d + channel money %d = %d, want %d (%+d)", money, a.ChannelMoney, money+a.ChannelMoney, g.Total, a.Imbalance)
	}
	a.Consistent = a.Imbalance == 0 && a.Orphans == 0 && a.LateRecorded == 0 && a.Missing == 0 && a.DoubleCounted == 0
	if mutantAuditIgnoreChannelState {
		// The mutant judges process states only.
		a.Consistent = a.Orphans == 0 && a.DoubleCounted == 0
	}
	return a
}
