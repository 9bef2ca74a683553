package flow

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
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

// TestIndexGenerationsLookUpLikeAMap: an index that seals and merges
// generations answers every lookup as a plain map of sets would.
func TestIndexGenerationsLookUpLikeAMap(t *testing.T) {
	defer func(n int) { openCap = n }(openCap)
	openCap = 64
	rapid.Check(t, func(t *rapid.T) {
		var s Session
		want := map[uint64][]int32{}
		n := rapid.IntRange(1, 60).Draw(t, "observations")
		for i := range n {
			tool := rapid.SampledFrom([]string{"a/x", "b/y", "c/z"}).Draw(t, "tool")
			hs := rapid.SliceOfN(rapid.Uint64Range(0, 400), 0, 100).Draw(t, "prints")
			s.Apply(int64(i+1), &Observation{Tool: tool, Labels: Private, Prints: hs})
			src := s.canon[Kind{tool, Private}]
			for _, h := range hs {
				if !slices.Contains(want[h], src) {
					want[h] = append(want[h], src)
				}
			}
		}
		for h := uint64(0); h <= 400; h++ {
			got := s.PrintSources(nil, h)
			slices.Sort(got)
			w := slices.Clone(want[h])
			slices.Sort(w)
			if !slices.Equal(got, w) {
				t.Fatalf("print %d: sources %v, want %v (generations %d)", h, got, w, len(s.prints.gens))
			}
		}
	})
}

// TestEvictionBoundsTheSession: a session of 20,000 results of 100 prints
// each stays within MaxBytes (but for the open part, bounded by openCap),
// keeps the newest prints, and marks the sources of the evicted ones.
func TestEvictionBoundsTheSession(t *testing.T) {
	defer func(n int) { openCap = n }(openCap)
	openCap = 1 << 12
	s := Session{MaxBytes: 1 << 20}
	open := int64(openCap)*mapEntryBytes + filterBits/8 + 100*mapEntryBytes
	x := uint64(1)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	var first, last []uint64
	for i := 1; i <= 20000; i++ {
		hs := make([]uint64, 100)
		for j := range hs {
			hs[j] = next()
		}
		tool := "notes/old"
		if i > 19990 {
			tool = "notes/new"
		}
		s.Apply(int64(i), &Observation{Tool: tool, Labels: Private, Prints: hs})
		if b := s.Bytes(); b > s.MaxBytes+open {
			t.Fatalf("after %d results the indexes take %d bytes, bound %d", i, b, s.MaxBytes+open)
		}
		switch i {
		case 1:
			first = hs
		case 20000:
			last = hs
		}
	}
	if !s.Evicted || !s.Sources[0].Labels.Has(Private|Evicted) {
		t.Fatalf("evicted %v, first source %v", s.Evicted, s.Sources[0].Labels)
	}
	if got := s.PrintSources(nil, first[0]); len(got) != 0 {
		t.Errorf("a print of the first result is still held: %v", got)
	}
	for _, h := range last {
		if got := s.PrintSources(nil, h); len(got) != 1 || s.Sources[got[0]].Tool != "notes/new" {
			t.Fatalf("a print of the last result: sources %v", got)
		}
	}
	// eviction changed labels: the kinds decisions read follow the sources
	want := map[Kind]bool{}
	for i := range s.Sources {
		want[s.KindOf(int32(i))] = true
	}
	got := s.Kinds()
	if len(got) != len(want) || !slices.IsSortedFunc(got, func(a, b Kind) int { return strings.Compare(a.Tool, b.Tool) }) {
		t.Fatalf("kinds %v, the sources have %v", got, want)
	}
	for _, k := range got {
		if !want[k] {
			t.Errorf("kind %v: no source has it (sources have %v)", k, want)
		}
	}
	if !slices.Contains(got, Kind{"notes/old", Private | Evicted}) {
		t.Errorf("kinds %v: no evicted notes/old", got)
	}
}

// TestOpenIndexSpillsClusteredKeys: keys that all want the same slots (not
// keyed hashes: small numbers, whose top bits are zero) spill into the map
// and are still found, through resizes, with every source.
func TestOpenIndexSpillsClusteredKeys(t *testing.T) {
	var x openIndex
	for i := range 5000 {
		x.grow(1)
		x.add(uint64(i), int32(i%3))
		if i%7 == 0 {
			x.add(uint64(i), 5)
		}
	}
	if len(x.spill) == 0 {
		t.Fatal("no key spilled")
	}
	for i := range 5000 {
		got := x.lookup(nil, uint64(i))
		want := []int32{int32(i % 3)}
		if i%7 == 0 {
			want = append(want, 5)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("key %d: sources %v, want %v", i, got, want)
		}
	}
	g := x.sorted()
	if !slices.IsSorted(g.keys) || len(g.keys) != 5000+5000/7+1 {
		t.Fatalf("sealed: %d keys, sorted %v", len(g.keys), slices.IsSorted(g.keys))
	}
}

// BenchmarkJoinLoad is what a proxy joining a long session does before its
// first decision: apply 20,000 stored results of 500 keyed prints each
// (4 KB of private text apiece) to an empty mirror bounded at 64 MiB.
func BenchmarkJoinLoad(b *testing.B) {
	const results, prints = 20000, 500
	x := uint64(0x9e3779b97f4a7c15)
	obs := make([]Observation, results)
	for i := range obs {
		hs := make([]uint64, prints)
		for j := range hs {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			hs[j] = x
		}
		obs[i] = Observation{Tool: "notes/read", Labels: Private, Prints: hs}
	}
	b.ReportAllocs()
	for b.Loop() {
		s := Session{MaxBytes: 64 << 20}
		for i := range obs {
			s.Apply(int64(i+1), &obs[i])
		}
		if !s.Evicted {
			b.Fatal("a 20,000-result session fit in 64 MiB")
		}
	}
}
