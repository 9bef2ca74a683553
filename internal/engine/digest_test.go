package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func TestSizesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var in Sizes
		for range rapid.IntRange(0, 40).Draw(t, "n") {
			in = append(in, Sized{Hash(rapid.Uint64().Draw(t, "d")), rapid.IntRange(0, 1<<20).Draw(t, "len")})
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out Sizes
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if len(in) == 0 && len(out) == 0 {
			return
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("wrote %v, read %v", in, out)
		}
	})
}

func TestSizesReads(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Sizes
		bad  bool
	}{
		{in: `[{"d":"00000000000000ff","n":3}]`, want: Sizes{{0xff, 3}}}, // the earlier form
		{in: `"/wAAAAAAAAAD"`, want: Sizes{{0xff, 3}}},
		{in: `""`, want: nil},
		{in: `"/wAAAAAAAA"`, bad: true},   // a hash cut short
		{in: `"/wAAAAAAAACA"`, bad: true}, // a length cut short
		{in: `"not base64!"`, bad: true},
		{in: `7`, bad: true},
	} {
		var got Sizes
		err := json.Unmarshal([]byte(tc.in), &got)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: read as %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// The wire form a recording stores is the digest's own JSON, and reads
// back to the same digest.
func TestPropertyDigestWire(t *testing.T) {
	h := hasher(t)
	rapid.Check(t, func(t *rapid.T) {
		c := drawCall(t)
		dg := DigestArgs(h, c.Args)
		w := dg.Wire()
		direct, err := json.Marshal(dg)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if string(direct) != string(wire) {
			t.Fatalf("digest JSON\n  %s\nwire JSON\n  %s", direct, wire)
		}
		var w2 DigestWire
		if err := json.Unmarshal(wire, &w2); err != nil {
			t.Fatal(err)
		}
		back, err := w2.Digest()
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON ArgDigest
		if err := json.Unmarshal(direct, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, &viaJSON) {
			t.Fatalf("read back from the wire:\n  %+v\nfrom the digest's JSON:\n  %+v", back, &viaJSON)
		}
	})
}
