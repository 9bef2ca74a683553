package flow

import "slices"

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
	// Sources lists every observation applied, in sequence order.
	Sources []Source
	// Watermark is the highest sequence number applied.
	Watermark int64

	prints  hashIndex
	digests hashIndex
	idents  hashIndex
	// canon maps a (tool, labels) pair to the first source with them. The
	// indexes point hashes at it, so reading the same tool again and again
	// does not grow them: decisions only care which tools a hash came from.
	canon map[sourceKey]int32
}

type sourceKey struct {
	tool   string
	labels Labels
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
		s.canon = make(map[sourceKey]int32)
	}
	k := sourceKey{o.Tool, o.Labels}
	if c, ok := s.canon[k]; ok {
		idx = c
	} else {
		s.canon[k] = idx
	}
	s.prints.grow(len(o.Prints))
	s.digests.grow(len(o.Digests))
	s.idents.grow(len(o.Idents))
	for _, h := range o.Prints {
		s.prints.add(h, idx)
	}
	for _, h := range o.Digests {
		s.digests.add(h, idx)
	}
	for _, h := range o.Idents {
		s.idents.add(h, idx)
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

// PrintCount is the number of distinct fingerprints held.
func (s *Session) PrintCount() int { return s.prints.len() }

// hashIndex maps a hash to the observations that hold it. Almost every hash
// has exactly one source, so the common case is one map entry of 12 bytes;
// the rare hash shared by several sources spills into more.
type hashIndex struct {
	// first maps a hash to a source index (>= 0), or to -(i+1) where more[i]
	// lists all its sources.
	first map[uint64]int32
	more  [][]int32
	// seen is a one-bit-per-slot filter over the hashes held: a lookup of a
	// hash whose bit is clear — almost every lookup of a benign argument —
	// never touches the map, whose random accesses miss the cache.
	seen []uint64
}

// filterBits sizes the filter: 2^21 bits (256 KB) keeps false hits under
// 10% up to about 200k hashes, a few megabytes of private text.
const filterBits = 1 << 21

// grow makes room for n more hashes, sparing the map its rehashing when a
// large result arrives.
func (x *hashIndex) grow(n int) {
	if x.first == nil {
		x.first = make(map[uint64]int32, n)
	}
	if x.seen == nil && n > 0 {
		x.seen = make([]uint64, filterBits/64)
	}
}

func (x *hashIndex) add(h uint64, src int32) {
	if x.seen == nil {
		x.seen = make([]uint64, filterBits/64)
	}
	b := h & (filterBits - 1)
	x.seen[b/64] |= 1 << (b % 64)
	v, ok := x.first[h]
	switch {
	case !ok:
		x.first[h] = src
	case v >= 0:
		if v != src {
			x.more = append(x.more, []int32{v, src})
			x.first[h] = -int32(len(x.more))
		}
	default:
		list := x.more[-v-1]
		if !slices.Contains(list, src) {
			x.more[-v-1] = append(list, src)
		}
	}
}

func (x *hashIndex) lookup(dst []int32, h uint64) []int32 {
	if x.seen == nil {
		return dst
	}
	if b := h & (filterBits - 1); x.seen[b/64]&(1<<(b%64)) == 0 {
		return dst
	}
	v, ok := x.first[h]
	switch {
	case !ok:
		return dst
	case v >= 0:
		return append(dst, v)
	default:
		return append(dst, x.more[-v-1]...)
	}
}

func (x *hashIndex) len() int { return len(x.first) }
