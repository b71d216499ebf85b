package trace

import (
	"bytes"
	"reflect"
	"testing"
)

func TestWriteReadRoundTrip(t *testing.T) {
	h := Header{Format: 1, System: "barrier", Seed: 7, FromNS: 1, ToNS: 9, BucketNS: 2, SamplePerBucket: 3,
		Processes: []Process{{Name: "source/0", Worker: 1, Ops: []string{"source", "split"}}, {Name: "coordinator"}}}
	recs := []Record{
		{Type: TypeMsg, T: 2, From: "source/0", To: "count/0", Recv: 3, Ctrl: true, Kind: "barrier", ID: 1},
		{Type: TypeEvent, T: 4, Proc: "coordinator", Kind: "checkpoint_completed", ID: 1},
		{Type: TypeCount, T: 4, From: "source/0", To: "count/0", Kind: "data", Data: 12},
		{Type: TypeFault, T: 5, End: 8, Kind: "crash", Note: "crash@5ms:worker=1"},
	}
	var buf bytes.Buffer
	if err := Write(&buf, h, recs); err != nil {
		t.Fatal(err)
	}
	h2, recs2, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, h2) || !reflect.DeepEqual(recs, recs2) {
		t.Fatalf("round trip changed the trace:\n%+v\n%+v", h2, recs2)
	}
}

func TestReadRefusesOtherFormats(t *testing.T) {
	if _, _, err := Read(bytes.NewBufferString(`{"format":2}` + "\n")); err == nil {
		t.Fatal("format 2 accepted")
	}
}
