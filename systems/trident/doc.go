// Package trident is Storm Trident's exactly-once processing (doc TBD).
package trident
