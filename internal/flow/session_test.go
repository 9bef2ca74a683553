package flow

import (
	"cmp"
	"maps"
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
	keys, _ := entries(&g)
	if !slices.IsSorted(keys) || len(keys) != 5000+5000/7+1 {
		t.Fatalf("sealed: %d keys, sorted %v", len(keys), slices.IsSorted(keys))
	}
}

// entries lists a generation's hashes and sources, in order.
func entries(g *generation) (keys []uint64, srcs []int32) {
	for it := (genIter{g: g}); it.more(); {
		h, src := it.next()
		keys, srcs = append(keys, h), append(srcs, src)
	}
	return keys, srcs
}

// TestGenerationPacksExactly: a packed generation, built or merged, gives
// back every hash and source it was given, in order, and finds each one
// and nothing else, whatever the hashes (keyed ones, or ones that differ
// only in the bits one part of an entry keeps: the bucket, mid or low) and
// however many distinct sources it has (none, one bit, ..., 32 bits).
func TestGenerationPacksExactly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		draw := func(label string) ([]uint64, []int32) {
			nsrc := rapid.SampledFrom([]int{1, 2, 3, 5, 17, 300, 70000}).Draw(t, label+" sources")
			base := rapid.Uint64().Draw(t, label+" base")
			n := rapid.IntRange(0, 300).Draw(t, label+" n")
			keys := make([]uint64, n)
			srcs := make([]int32, n)
			for i := range keys {
				switch rapid.IntRange(0, 3).Draw(t, "kind") {
				case 0:
					keys[i] = rapid.Uint64().Draw(t, "key")
				case 1: // differs from base in the bucket only
					keys[i] = base&(1<<48-1) | rapid.Uint64Range(0, 1<<16-1).Draw(t, "bucket")<<48
				case 2: // in mid only
					keys[i] = base&^(0xffff<<32) | rapid.Uint64Range(0, 1<<16-1).Draw(t, "mid")<<32
				default: // small: all in bucket 0
					keys[i] = rapid.Uint64Range(0, 40).Draw(t, "small")
				}
				srcs[i] = int32(rapid.IntRange(0, nsrc-1).Draw(t, "src"))
			}
			// in order, as sealing gives them; a hash with several sources
			// has each once
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(srcs[a], srcs[b])) })
			var k []uint64
			var s []int32
			for j, i := range idx {
				if j > 0 && keys[i] == k[len(k)-1] && srcs[i] == s[len(s)-1] {
					continue
				}
				k, s = append(k, keys[i]), append(s, srcs[i])
			}
			return k, s
		}
		ka, sa := draw("a")
		kb, sb := draw("b")
		a, b := newGeneration(ka, sa), newGeneration(kb, sb)
		for _, c := range []struct {
			g      generation
			keys   []uint64
			srcs   []int32
			merged bool
		}{{a, ka, sa, false}, {b, kb, sb, false}, {merge(a, b), nil, nil, true}} {
			keys, srcs := c.keys, c.srcs
			if c.merged { // both, in order, a's first among equals
				want := map[uint64][]int32{}
				for i, h := range ka {
					want[h] = append(want[h], sa[i])
				}
				for i, h := range kb {
					want[h] = append(want[h], sb[i])
				}
				keys, srcs = nil, nil
				ks := slices.Sorted(maps.Keys(want))
				for _, h := range ks {
					for _, src := range want[h] {
						keys, srcs = append(keys, h), append(srcs, src)
					}
				}
			}
			gotK, gotS := entries(&c.g)
			if !slices.Equal(gotK, keys) || !slices.Equal(gotS, srcs) {
				t.Fatalf("entries:\n got %x %v\nwant %x %v", gotK, gotS, keys, srcs)
			}
			want := map[uint64][]int32{}
			for i, h := range keys {
				if !slices.Contains(want[h], srcs[i]) {
					want[h] = append(want[h], srcs[i])
				}
			}
			probe := slices.Clone(keys)
			for _, h := range keys {
				probe = append(probe, h+1, h-1, h^1<<63, h^1<<40, h^1<<20)
			}
			for _, h := range probe {
				got := c.g.lookup(nil, h)
				if w := want[h]; !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
					t.Fatalf("lookup %x: %v, want %v", h, got, w)
				}
			}
		}
	})
}

// TestGenerationSizes: a generation of 2^20 keyed hashes takes about 6.25
// bytes a hash with one source (6.75 with six), and one with more distinct sources than
// 16 bits index (as many as there are hashes: 32 bits each, more than a
// table of int32 would take) still finds each hash's own.
func TestGenerationSizes(t *testing.T) {
	x := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	for _, c := range []struct {
		n, sources int
		maxBytes   float64 // a hash
	}{{1 << 20, 1, 6.3}, {1 << 20, 6, 6.8}, {70000, 70000, 18}} {
		keys, srcs := make([]uint64, c.n), make([]int32, c.n)
		for i := range keys {
			keys[i] = next()
		}
		slices.Sort(keys)
		for i := range srcs {
			srcs[i] = int32((i * 7919) % c.sources)
		}
		g := newGeneration(keys, srcs)
		if per := float64(g.bytes()) / float64(c.n); per > c.maxBytes {
			t.Errorf("%d hashes of %d sources: %.2f bytes a hash, want at most %.1f", c.n, c.sources, per, c.maxBytes)
		}
		for i := 0; i < c.n; i += 97 {
			if got := g.lookup(nil, keys[i]); !slices.Equal(got, []int32{srcs[i]}) {
				t.Fatalf("%d sources: hash %d: %v, want [%d]", c.sources, i, got, srcs[i])
			}
		}
	}
}

// BenchmarkJoinLoad is what a proxy joining a long session does before its
// first decision: apply 20,000 stored results of 500 keyed prints each
// (4 KB of private text apiece) to an empty mirror bounded at 32 MiB, as
// the presets bound it.
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
		s := Session{MaxBytes: 32 << 20}
		for i := range obs {
			s.Apply(int64(i+1), &obs[i])
		}
		if !s.Evicted {
			b.Fatal("a 20,000-result session fit in 32 MiB")
		}
	}
}
