package flow

import (
	"slices"
	"testing"
)

func TestApplyIndexesSourcesByTool(t *testing.T) {
	var s Session
	s.Apply(1, &Observation{Tool: "notes/read", Labels: Private, Prints: []uint64{1, 2}, Digests: []uint64{9}})
	s.Apply(2, &Observation{Tool: "web/fetch", Labels: Untrusted})
	s.Apply(3, &Observation{Tool: "files/read", Labels: Private, Prints: []uint64{2, 3}})
	s.Apply(3, &Observation{Tool: "ignored/replay", Labels: Private, Prints: []uint64{4}}) // at the watermark: ignored
	for range 1000 {
		// The same tool read again and again adds no index entries.
		s.Apply(s.Watermark+1, &Observation{Tool: "notes/read", Labels: Private, Prints: []uint64{1, 2}})
	}
	if s.Legs != Private|Untrusted {
		t.Errorf("legs %s", s.Legs)
	}
	if len(s.Sources) != 1003 || s.Watermark != 1003 {
		t.Errorf("%d sources, watermark %d", len(s.Sources), s.Watermark)
	}
	tests := []struct {
		h    uint64
		want []int32
	}{{1, []int32{0}}, {2, []int32{0, 2}}, {3, []int32{2}}, {4, nil}}
	for _, tt := range tests {
		if got := s.PrintSources(nil, tt.h); !slices.Equal(got, tt.want) {
			t.Errorf("print %d: sources %v, want %v", tt.h, got, tt.want)
		}
	}
	if got := s.DigestSources(nil, 9); !slices.Equal(got, []int32{0}) {
		t.Errorf("digest sources %v", got)
	}
	if s.PrintCount() != 3 {
		t.Errorf("PrintCount %d", s.PrintCount())
	}
}

func TestLabelsAndVerdicts(t *testing.T) {
	if got := (Private | Sink).String(); got != "private,sink" {
		t.Errorf("String %q", got)
	}
	if Labels(0).String() != "none" {
		t.Error("empty labels")
	}
	for _, n := range []string{"private", "untrusted", "sink"} {
		l, err := ParseLabel(n)
		if err != nil || l.String() != n {
			t.Errorf("ParseLabel(%q) = %v, %v", n, l, err)
		}
	}
	if _, err := ParseLabel("secret"); err == nil {
		t.Error("unknown label parsed")
	}
	for v := Allow; v <= Block; v++ {
		p, err := ParseVerdict(v.String())
		if err != nil || p != v {
			t.Errorf("verdict %v round trip: %v %v", v, p, err)
		}
	}
	if Max(Warn, Block) != Block || !Escalate.Stops() || Warn.Stops() {
		t.Error("verdict order")
	}
}
