package flow

import (
	"cmp"
	"math/bits"
	"slices"
	"sort"
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
		for _, src := range x.gens[0].srcs {
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
// to the open part, a map; when it holds openCap hashes it is sealed into
// a generation, its hashes sorted in a packed array (12 bytes a hash
// against a map's 25 to 40), and generations of similar size are merged,
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
// 14 MB with the filter).
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
	for n := len(x.gens); n >= 2 && len(x.gens[n-2].keys) <= 2*len(x.gens[n-1].keys) &&
		len(x.gens[n-2].keys)+len(x.gens[n-1].keys) <= genMerge*openCap; n = len(x.gens) {
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
	for _, g := range x.gens {
		n += len(g.keys)
	}
	return n
}

// bytes is what the index takes in memory, about: a map entry with its
// share of empty slots, and the packed arrays and filters.
func (x *hashIndex) bytes() int64 {
	n := x.open.tableBytes()
	for _, g := range x.gens {
		n += int64(len(g.keys))*12 + int64(len(g.bloom))*8
	}
	return n
}

// mapEntryBytes is what one hash takes in a map (the open part's spill),
// on average over its growth (measured with Go 1.26's maps); the table
// itself takes 12 bytes a slot, at most two slots a hash.
const mapEntryBytes = 30

// A generation is a sealed part of an index: its hashes in order, each
// with a source (a hash held by several sources appears once for each),
// behind a filter of two bits a hash in 16.
type generation struct {
	keys  []uint64
	srcs  []int32
	bloom []uint64
	mask  uint64 // bits in bloom − 1
}

func newGeneration(keys []uint64, srcs []int32) generation {
	bits := uint64(64)
	for bits < uint64(16*len(keys)) {
		bits <<= 1
	}
	g := generation{keys: keys, srcs: srcs, bloom: make([]uint64, bits/64), mask: bits - 1}
	for _, h := range keys {
		a, b := h&g.mask, (h>>32)&g.mask
		g.bloom[a/64] |= 1 << (a % 64)
		g.bloom[b/64] |= 1 << (b % 64)
	}
	return g
}

func (g *generation) lookup(dst []int32, h uint64) []int32 {
	if len(g.keys) == 0 {
		return dst
	}
	a, b := h&g.mask, (h>>32)&g.mask
	if g.bloom[a/64]&(1<<(a%64)) == 0 || g.bloom[b/64]&(1<<(b%64)) == 0 {
		return dst
	}
	for i := sort.Search(len(g.keys), func(i int) bool { return g.keys[i] >= h }); i < len(g.keys) && g.keys[i] == h; i++ {
		if !slices.Contains(dst, g.srcs[i]) {
			dst = append(dst, g.srcs[i])
		}
	}
	return dst
}

// merge returns the generation holding a's and b's hashes.
func merge(a, b generation) generation {
	keys := make([]uint64, 0, len(a.keys)+len(b.keys))
	srcs := make([]int32, 0, cap(keys))
	i, j := 0, 0
	for i < len(a.keys) || j < len(b.keys) {
		if j == len(b.keys) || i < len(a.keys) && a.keys[i] <= b.keys[j] {
			keys, srcs = append(keys, a.keys[i]), append(srcs, a.srcs[i])
			i++
		} else {
			keys, srcs = append(keys, b.keys[j]), append(srcs, b.srcs[j])
			j++
		}
	}
	return newGeneration(keys, srcs)
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
	n := len(all)
	for _, m := range x.more {
		n += len(m) - 1
	}
	out, srcs := make([]uint64, 0, n), make([]int32, 0, n)
	for _, e := range all {
		if e.v >= 0 {
			out, srcs = append(out, e.k), append(srcs, e.v)
		} else {
			for _, src := range x.more[-e.v-1] {
				out, srcs = append(out, e.k), append(srcs, src)
			}
		}
	}
	return newGeneration(out, srcs)
}
