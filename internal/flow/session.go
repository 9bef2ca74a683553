package flow

import (
	"cmp"
	"math/bits"
	"slices"
)

// An Observation is what one tool result leaves in a session: where it came
// from, its labels, and keyed hashes of its content. It never holds text.
// Observations are the deltas the engine returns, the rows the store
// persists, and what every proxy's mirror applies.
type Observation struct {
	// Tool names the source as "server/tool".
	Tool string
	// Labels are the tool's labels when the result was read.
	Labels Labels
	// At is when the result was read, in Unix milliseconds.
	At int64
	// Prints are the keyed winnowed fingerprints of the result's text, in
	// the order they were computed (repeats possible in repetitive text).
	Prints []uint64
	// Digests are keyed digests of the short high-entropy tokens in the
	// result (API keys, passwords, account numbers), sorted and unique.
	Digests []uint64
	// Idents are keyed digests of the identifiers in the result (URLs,
	// e-mail addresses, IBAN-like ids, long hex or base64 values), sorted
	// and unique. They attribute a sink argument to the result it was
	// copied from, for dataflow rules: "the recipient came from an
	// untrusted page".
	Idents []uint64
}

// A Source is one observed result, as the session remembers it.
type Source struct {
	// Seq is the store's sequence number for the observation.
	Seq    int64
	Tool   string
	Labels Labels
	At     int64
}

// Session is the in-memory mirror of one client session's flow state. Proxies
// of the same client each hold a mirror and keep it current by applying the
// store's rows in sequence order. A Session is not safe for concurrent use.
type Session struct {
	// Legs are the trifecta legs held: Private and/or Untrusted.
	Legs Labels
	// Sources lists every observation applied, in sequence order. Change
	// their labels with Relabel.
	Sources []Source
	// Watermark is the highest sequence number applied.
	Watermark int64
	// Evicted reports that fingerprints were evicted to keep within
	// MaxBytes; the sources they came from carry the Evicted label.
	Evicted bool

	// MaxBytes bounds the memory the indexes below take (0: no bound).
	// Past it the oldest part of the largest index is evicted, and the
	// sources it pointed at are marked Evicted: DESIGN rule 3, eviction
	// widens taint and never narrows it.
	MaxBytes int64

	prints  hashIndex
	digests hashIndex
	idents  hashIndex
	// canon maps a (tool, labels) pair to the first source with them. The
	// indexes point hashes at it, so reading the same tool again and again
	// does not grow them: decisions only care which tools a hash came from.
	canon map[Kind]int32
	// kinds counts the sources of each tool and labels now (eviction
	// changes a source's labels): a long session has thousands of
	// sources of a few kinds, and what a decision makes of a source
	// follows from its kind.
	kinds map[Kind]int32
}

// A Kind is a tool and labels that sources have.
type Kind struct {
	Tool   string
	Labels Labels
}

// KindOf is the kind of source i.
func (s *Session) KindOf(i int32) Kind { return Kind{s.Sources[i].Tool, s.Sources[i].Labels} }

// Kinds returns the kinds the session's sources have, sorted by tool and
// then labels: a decision reads these, not thousands of sources.
func (s *Session) Kinds() []Kind {
	out := make([]Kind, 0, len(s.kinds))
	for k := range s.kinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Labels, b.Labels))
	})
	return out
}

// Relabel gives source i labels l. Change a source's labels only so:
// Kinds follows.
func (s *Session) Relabel(i int32, l Labels) {
	k := s.KindOf(i)
	if k.Labels == l {
		return
	}
	if s.kinds[k]--; s.kinds[k] == 0 {
		delete(s.kinds, k)
	}
	s.Sources[i].Labels = l
	s.kinds[Kind{k.Tool, l}]++
}

// Apply adds an observation stored under seq. Rows at or below the watermark
// were applied already and are ignored, so a mirror can re-read rows safely.
func (s *Session) Apply(seq int64, o *Observation) {
	if seq <= s.Watermark {
		return
	}
	s.Watermark = seq
	idx := int32(len(s.Sources))
	s.Sources = append(s.Sources, Source{Seq: seq, Tool: o.Tool, Labels: o.Labels, At: o.At})
	s.Legs |= o.Labels & Legs
	if s.canon == nil {
		s.canon = make(map[Kind]int32)
		s.kinds = make(map[Kind]int32)
	}
	k := Kind{o.Tool, o.Labels}
	s.kinds[k]++
	if c, ok := s.canon[k]; ok {
		idx = c
	} else {
		s.canon[k] = idx
	}
	sealed := s.prints.addAll(o.Prints, idx)
	sealed = s.digests.addAll(o.Digests, idx) || sealed
	sealed = s.idents.addAll(o.Idents, idx) || sealed
	if sealed && s.MaxBytes > 0 {
		s.evict()
	}
}

// Bytes is how much memory the session's indexes take, about.
func (s *Session) Bytes() int64 { return s.prints.bytes() + s.digests.bytes() + s.idents.bytes() }

// evict drops the oldest sealed part of the largest index until the
// indexes fit in MaxBytes, or none has a sealed part left, and marks the
// sources that part pointed at Evicted.
func (s *Session) evict() {
	for s.Bytes() > s.MaxBytes {
		x := &s.prints
		for _, y := range []*hashIndex{&s.digests, &s.idents} {
			if len(y.gens) > 0 && (len(x.gens) == 0 || y.bytes() > x.bytes()) {
				x = y
			}
		}
		if len(x.gens) == 0 {
			return // only the open parts are left: they are sealed, and evicted, when full
		}
		for _, src := range x.gens[0].srcTab {
			s.Relabel(src, s.Sources[src].Labels|Evicted)
		}
		s.Evicted = true
		x.gens[0] = generation{}
		x.gens = x.gens[1:]
	}
}

// PrintSources appends to dst the indexes into Sources of observations
// that hold fingerprint h: one per distinct tool and labels (the first such
// observation), which is all a decision needs.
func (s *Session) PrintSources(dst []int32, h uint64) []int32 { return s.prints.lookup(dst, h) }

// IdentSources is PrintSources for identifier digests.
func (s *Session) IdentSources(dst []int32, h uint64) []int32 { return s.idents.lookup(dst, h) }

// DigestSources is PrintSources for digests.
func (s *Session) DigestSources(dst []int32, h uint64) []int32 { return s.digests.lookup(dst, h) }

// PrintCount is the number of fingerprints held (a fingerprint held by
// several sources, or in several parts of the index, counts once each).
func (s *Session) PrintCount() int { return s.prints.len() }

// hashIndex maps a hash to the observations that hold it. New hashes go
// to the open part, a packed table; when it holds openCap hashes it is
// sealed into a generation, its hashes sorted and packed (about 6 bytes a
// hash, against the table's 12 a slot), and generations of similar size are merged,
// so that there are few of them and the oldest is the largest. Eviction
// drops the oldest generation whole.
type hashIndex struct {
	open openIndex
	gens []generation // oldest first
}

// openCap is how many hashes the open part of an index holds before it is
// sealed: 2^17, about 4 MB as a map, a few hundred results of 4 KB.
var openCap = 1 << 17

// genMerge bounds a generation at that many open parts (8: 2^20 hashes,
// about 6.5 MB).
const genMerge = 8

// addAll adds hashes of source src, and reports whether the open part
// was sealed.
func (x *hashIndex) addAll(hs []uint64, src int32) bool {
	if len(hs) == 0 {
		return false
	}
	x.open.grow(len(hs))
	for _, h := range hs {
		x.open.add(h, src)
	}
	if x.open.len() < openCap {
		return false
	}
	x.seal()
	return true
}

// seal turns the open part into the newest generation, and merges the
// newest generations while the older of the last two is at most twice
// the size of the newer, up to genMerge open parts' worth: a merge copies
// both, so an unbounded one would hold twice the largest generation for
// a moment and copy every hash again at each doubling; and eviction
// drops the oldest generation whole, so smaller ones evict in steps of
// at most about 1/8 of a 64 MiB bound rather than half of it.
func (x *hashIndex) seal() {
	g := x.open.sorted()
	// An index that filled its open part once is a long session's, or a
	// joining proxy's loading one: the next open part starts at full
	// size rather than doubling its way there.
	x.open = openIndex{}
	x.open.grow(openCap)
	x.gens = append(x.gens, g)
	for n := len(x.gens); n >= 2 && x.gens[n-2].len() <= 2*x.gens[n-1].len() &&
		x.gens[n-2].len()+x.gens[n-1].len() <= genMerge*openCap; n = len(x.gens) {
		x.gens[n-2] = merge(x.gens[n-2], x.gens[n-1])
		x.gens[n-1] = generation{}
		x.gens = x.gens[:n-1]
	}
}

func (x *hashIndex) lookup(dst []int32, h uint64) []int32 {
	dst = x.open.lookup(dst, h)
	for i := range x.gens {
		dst = x.gens[i].lookup(dst, h)
	}
	return dst
}

func (x *hashIndex) len() int {
	n := x.open.len()
	for i := range x.gens {
		n += x.gens[i].len()
	}
	return n
}

// bytes is what the index takes in memory, about: a map entry with its
// share of empty slots, and the packed arrays and filters.
func (x *hashIndex) bytes() int64 {
	n := x.open.tableBytes()
	for i := range x.gens {
		n += x.gens[i].bytes()
	}
	return n
}

// mapEntryBytes is what one hash takes in a map (the open part's spill),
// on average over its growth (measured with Go 1.26's maps); the table
// itself takes 12 bytes a slot, at most two slots a hash.
const mapEntryBytes = 30

// A generation is a sealed part of an index: its hashes in order, each
// with a source (a hash held by several sources appears once for each),
// packed in about 6 bytes a hash, exactly. A hash's top 16 bits are its
// bucket, whose hashes are entries off[b] to off[b+1]; an entry keeps the
// rest, bits 32–47 in mid and 0–31 in low, so a lookup reads a bucket's
// bounds and searches a few entries. The sources are the generation's few
// distinct ones (srcTab: sources are canonical per tool and labels, see
// Session.canon) and, per entry, its source's index in srcTab in the
// fewest bits that hold one: none when the generation has one source.
type generation struct {
	off     []uint32 // 1<<16 + 1 bucket bounds
	low     []uint32
	mid     []uint16
	srcTab  []int32  // the distinct sources, sorted
	packed  []uint64 // per entry, srcBits bits: its source's index in srcTab
	srcBits uint     // 0, 1, 2, 4, 8, 16 or 32: a power of two, so no index straddles a word
}

const bucketBits = 16

func (g *generation) len() int { return len(g.low) }

func (g *generation) bytes() int64 {
	return int64(len(g.off))*4 + int64(len(g.low))*6 + int64(len(g.packed))*8 + int64(len(g.srcTab))*4
}

// src is the source of entry i.
func (g *generation) src(i int) int32 {
	if g.srcBits == 0 {
		return g.srcTab[0]
	}
	w := uint(i) * g.srcBits
	return g.srcTab[g.packed[w/64]>>(w%64)&(1<<g.srcBits-1)]
}

func (g *generation) lookup(dst []int32, h uint64) []int32 {
	if len(g.low) == 0 {
		return dst
	}
	b := h >> (64 - bucketBits)
	lo, hi := int(g.off[b]), int(g.off[b+1])
	m, l := uint16(h>>32), uint32(h)
	// the first entry of the bucket not below h: buckets hold a few
	// entries, but keys that are not keyed hashes may crowd one
	for n := hi - lo; n > 0; {
		half := n / 2
		if k := lo + half; g.mid[k] < m || g.mid[k] == m && g.low[k] < l {
			lo, n = k+1, n-half-1
		} else {
			n = half
		}
	}
	for i := lo; i < hi && g.mid[i] == m && g.low[i] == l; i++ {
		if src := g.src(i); !slices.Contains(dst, src) {
			dst = append(dst, src)
		}
	}
	return dst
}

// genIter walks a generation's entries in order.
type genIter struct {
	g    *generation
	i, b int // the next entry, and its bucket
}

func (it *genIter) more() bool { return it.i < len(it.g.low) }

// next returns the next entry's hash and source; more must be true.
func (it *genIter) next() (uint64, int32) {
	g := it.g
	for int(g.off[it.b+1]) <= it.i {
		it.b++
	}
	h := uint64(it.b)<<(64-bucketBits) | uint64(g.mid[it.i])<<32 | uint64(g.low[it.i])
	src := g.src(it.i)
	it.i++
	return h, src
}

// genBuilder packs the entries of a generation, given in order.
type genBuilder struct {
	g generation
	b int // buckets below b are bounded
}

// newGenBuilder makes room for n entries whose sources are among tab
// (sorted, distinct, not empty).
func newGenBuilder(n int, tab []int32) *genBuilder {
	w := uint(0)
	for len(tab) > 1 && uint64(len(tab)-1)>>w != 0 {
		w = max(2*w, 1)
	}
	g := generation{off: make([]uint32, 1<<bucketBits+1), low: make([]uint32, 0, n), mid: make([]uint16, 0, n), srcTab: tab, srcBits: w}
	if w > 0 {
		g.packed = make([]uint64, (uint(n)*w+63)/64)
	}
	return &genBuilder{g: g}
}

func (gb *genBuilder) add(h uint64, src int32) {
	g := &gb.g
	i := len(g.low)
	for b := int(h >> (64 - bucketBits)); gb.b <= b; gb.b++ {
		g.off[gb.b] = uint32(i)
	}
	g.low, g.mid = append(g.low, uint32(h)), append(g.mid, uint16(h>>32))
	if g.srcBits > 0 {
		k, _ := slices.BinarySearch(g.srcTab, src)
		w := uint(i) * g.srcBits
		g.packed[w/64] |= uint64(k) << (w % 64)
	}
}

func (gb *genBuilder) done() generation {
	for ; gb.b <= 1<<bucketBits; gb.b++ {
		gb.g.off[gb.b] = uint32(len(gb.g.low))
	}
	return gb.g
}

// newGeneration packs hashes in order with their sources.
func newGeneration(keys []uint64, srcs []int32) generation {
	if len(keys) == 0 {
		return generation{}
	}
	var tab srcSet
	for _, src := range srcs {
		tab.add(src)
	}
	gb := newGenBuilder(len(keys), tab.sorted())
	for i, h := range keys {
		gb.add(h, srcs[i])
	}
	return gb.done()
}

// srcSet gathers distinct sources: indexes into a session's Sources, so a
// bitmap over them is small and takes no sort.
type srcSet struct{ bits []uint64 }

func (s *srcSet) add(src int32) {
	w := int(src) / 64
	if w >= len(s.bits) {
		s.bits = append(s.bits, make([]uint64, w+1-len(s.bits))...)
	}
	s.bits[w] |= 1 << (uint(src) % 64)
}

// sorted returns the sources added, in order.
func (s *srcSet) sorted() []int32 {
	var out []int32
	for w, x := range s.bits {
		for ; x != 0; x &= x - 1 {
			out = append(out, int32(w*64+bits.TrailingZeros64(x)))
		}
	}
	return out
}

// merge returns the generation holding a's and b's entries.
func merge(a, b generation) generation {
	if a.len() == 0 || b.len() == 0 {
		if a.len() == 0 {
			return b
		}
		return a
	}
	var tab srcSet
	for _, src := range a.srcTab {
		tab.add(src)
	}
	for _, src := range b.srcTab {
		tab.add(src)
	}
	gb := newGenBuilder(a.len()+b.len(), tab.sorted())
	ia, ib := genIter{g: &a}, genIter{g: &b}
	ha, sa := ia.next()
	hb, sb := ib.next()
	for okA, okB := true, true; okA || okB; {
		if !okB || okA && ha <= hb {
			gb.add(ha, sa)
			if okA = ia.more(); okA {
				ha, sa = ia.next()
			}
		} else {
			gb.add(hb, sb)
			if okB = ib.more(); okB {
				hb, sb = ib.next()
			}
		}
	}
	return gb.done()
}

// openIndex is the open part of a hashIndex: a table of packed keys and
// values with linear probing, each hash placed from its top bits, so that
// the table in slot order is the hashes almost in order and sealing it is
// a scan and an insertion sort, not a sort of a map's keys (a joining
// proxy seals dozens of these while it loads a long session). Almost
// every hash has exactly one source, so the common case is one slot; the
// rare hash shared by several sources spills into more. Fingerprints are
// keyed hashes, uniform in their top bits; a run of keys that is not
// (a probe longer than maxProbe) goes to a map instead, so no input makes
// the table slow.
type openIndex struct {
	// keys and vals are the table (len a power of two, plus probeSlack
	// slots so that a probe never wraps); a zero key marks an empty slot,
	// and the hash 0 itself is kept in zero.
	keys []uint64
	vals []int32
	n    int // keys in the table
	// shift places a hash: its home slot is h >> shift.
	shift uint
	// spill holds the keys whose probe ran past maxProbe.
	spill   map[uint64]int32
	zero    int32
	hasZero bool
	// A value is a source index (>= 0), or -(i+1) where more[i] lists all
	// the hash's sources.
	more [][]int32
	// seen is a one-bit-per-slot filter over the hashes held: a lookup of a
	// hash whose bit is clear — almost every lookup of a benign argument —
	// never touches the table, which does not fit in a cache.
	seen []uint64
}

// filterBits sizes the filter: 2^21 bits (256 KB) keeps false hits under
// 10% up to about 200k hashes, a few megabytes of private text.
const filterBits = 1 << 21

const (
	minSlots   = 1 << 8
	probeSlack = 128
	maxProbe   = 64
)

// grow makes room for n more hashes, sparing the table its rehashing when a
// large result arrives.
func (x *openIndex) grow(n int) {
	if x.seen == nil && n > 0 {
		x.seen = make([]uint64, filterBits/64)
	}
	want := min(x.n+n, openCap)
	slots := max(len(x.keys)-probeSlack, 0)
	if 2*want <= slots {
		return
	}
	size := minSlots
	for size < 2*want {
		size <<= 1
	}
	x.resize(size)
}

// resize moves the table to size slots (a power of two).
func (x *openIndex) resize(size int) {
	oldK, oldV := x.keys, x.vals
	x.keys, x.vals = make([]uint64, size+probeSlack), make([]int32, size+probeSlack)
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
	x.n = 0
	for i, h := range oldK {
		if h != 0 {
			x.put(h, oldV[i])
		}
	}
}

// slot returns the slot of h, or of the empty slot where it belongs, or -1
// when its probe is longer than maxProbe.
func (x *openIndex) slot(h uint64) int {
	i := int(h >> x.shift)
	for end := min(i+maxProbe, len(x.keys)); i < end; i++ {
		if k := x.keys[i]; k == h || k == 0 {
			return i
		}
	}
	return -1
}

// put stores a value for a hash the table does not hold.
func (x *openIndex) put(h uint64, v int32) {
	if i := x.slot(h); i >= 0 {
		x.keys[i], x.vals[i] = h, v
		x.n++
		return
	}
	if x.spill == nil {
		x.spill = map[uint64]int32{}
	}
	x.spill[h] = v
}

// ref returns where h's value is, if it is held.
func (x *openIndex) ref(h uint64) (*int32, bool) {
	if h == 0 {
		return &x.zero, x.hasZero
	}
	if len(x.keys) > 0 {
		if i := x.slot(h); i >= 0 && x.keys[i] == h {
			return &x.vals[i], true
		}
	}
	// A spilled key stays spilled, even once a resize has made room.
	if v, ok := x.spill[h]; ok {
		return &v, true // spill values are read through get, never set through this
	}
	return nil, false
}

func (x *openIndex) set(h uint64, v int32) {
	switch {
	case h == 0:
		x.zero, x.hasZero = v, true
		return
	case x.spill != nil:
		if _, ok := x.spill[h]; ok {
			x.spill[h] = v
			return
		}
	}
	if len(x.keys) > 0 {
		if i := x.slot(h); i >= 0 && x.keys[i] == h {
			x.vals[i] = v
			return
		}
	}
	if 2*(x.n+1) > len(x.keys)-probeSlack {
		x.resize(max(minSlots, 2*(len(x.keys)-probeSlack)))
	}
	x.put(h, v)
}

func (x *openIndex) add(h uint64, src int32) {
	if x.seen == nil {
		x.seen = make([]uint64, filterBits/64)
	}
	b := h & (filterBits - 1)
	x.seen[b/64] |= 1 << (b % 64)
	if h != 0 && x.spill == nil {
		// The common case in one probe: a new hash, into an empty slot.
		if 2*(x.n+1) > len(x.keys)-probeSlack {
			x.resize(max(minSlots, 2*(len(x.keys)-probeSlack)))
		}
		if i := x.slot(h); i >= 0 && x.keys[i] == 0 {
			x.keys[i], x.vals[i] = h, src
			x.n++
			return
		}
	}
	p, ok := x.ref(h)
	switch {
	case !ok:
		x.set(h, src)
	case *p >= 0:
		if *p != src {
			x.more = append(x.more, []int32{*p, src})
			x.set(h, -int32(len(x.more)))
		}
	default:
		list := x.more[-*p-1]
		if !slices.Contains(list, src) {
			x.more[-*p-1] = append(list, src)
		}
	}
}

func (x *openIndex) lookup(dst []int32, h uint64) []int32 {
	if x.seen == nil {
		return dst
	}
	if b := h & (filterBits - 1); x.seen[b/64]&(1<<(b%64)) == 0 {
		return dst
	}
	p, ok := x.ref(h)
	switch {
	case !ok:
		return dst
	case *p >= 0:
		if !slices.Contains(dst, *p) {
			dst = append(dst, *p)
		}
		return dst
	default:
		for _, src := range x.more[-*p-1] {
			if !slices.Contains(dst, src) {
				dst = append(dst, src)
			}
		}
		return dst
	}
}

func (x *openIndex) len() int { return x.n + len(x.spill) + b2i(x.hasZero) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tableBytes is what the table and the spill map take.
func (x *openIndex) tableBytes() int64 {
	return int64(len(x.keys))*12 + int64(len(x.spill))*mapEntryBytes + int64(len(x.seen))*8
}

// sorted returns the open part's hashes as a generation.
func (x *openIndex) sorted() generation {
	type kv struct {
		k uint64
		v int32
	}
	all := make([]kv, 0, x.len())
	if x.hasZero {
		all = append(all, kv{0, x.zero})
	}
	// The table in slot order is in order but for the keys a probe moved
	// past a larger one: an insertion sort has little to do.
	for i, h := range x.keys {
		if h == 0 {
			continue
		}
		all = append(all, kv{h, x.vals[i]})
		for j := len(all) - 1; j > 0 && all[j-1].k > all[j].k; j-- {
			all[j-1], all[j] = all[j], all[j-1]
		}
	}
	if len(x.spill) > 0 {
		for h, v := range x.spill {
			all = append(all, kv{h, v})
		}
		slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(a.k, b.k) })
	}
	if len(all) == 0 {
		return generation{}
	}
	n := len(all)
	var tab srcSet
	for _, e := range all {
		if e.v >= 0 {
			tab.add(e.v)
		}
	}
	for _, m := range x.more {
		n += len(m) - 1
		for _, src := range m {
			tab.add(src)
		}
	}
	gb := newGenBuilder(n, tab.sorted())
	for _, e := range all {
		if e.v >= 0 {
			gb.add(e.k, e.v)
		} else {
			for _, src := range x.more[-e.v-1] {
				gb.add(e.k, src)
			}
		}
	}
	return gb.done()
}
