// Package storm is the part of Apache Storm's runtime that stormack (plain
// Storm's at-least-once acking) and trident (Trident's transactional
// batches, which Storm tracks through the same acker trees) share: tuple
// message ids and their wire size (Storm's MessageId), the bolt's
// OutputCollector with anchoring (BoltOutputCollectorImpl), the ack stream
// and its costs, and the acker task with its rotating map (Acker,
// RotatingMap). The protocol is described in systems/stormack's package
// documentation; the types here keep its invariants:
//
//   - an acker entry's checksum is the XOR of the ids of the tree's tuples
//     created and not yet acked, so it is zero exactly when every tuple of
//     the tree was acked (up to a 2^-64 collision);
//   - a tuple is acked or failed exactly once (Collector panics otherwise);
//   - ack-stream messages bypass backpressure (control messages) but pay
//     their send CPU, bytes and buffers.
//
// The package imports nothing but engine: it is below the protocols.
package storm
