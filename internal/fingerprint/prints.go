package fingerprint

import (
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"
)

// blk is how many normalised bytes Prints handles per block. A block's
// normalised bytes and k-gram hashes (about 50 KB) stay in L1/L2 cache, and
// the scratch space is fixed whatever the input size.
const blk = 2048

// blkMax bounds the normalised bytes of one block: fill stops at blk, but
// the rune that crosses it is written whole.
const blkMax = blk + utf8.UTFMax

// scratch is the reusable working memory of one Prints call.
type scratch struct {
	// norm holds K+1 bytes carried from the previous block (zeros at the
	// start of a text, which makes the first K−1 partial hashes harmless
	// prefixes of the first real one), then the block's normalised bytes.
	// utf8.UTFMax spare bytes let the last rune of a block be written whole.
	norm [K + 1 + blkMax]byte
	// hs holds the last W−1 k-gram hashes of the previous block, then the
	// block's k-gram hashes; suf the blockwise suffix minima of hs.
	hs  [W - 1 + blkMax]uint64
	suf [W - 1 + blkMax]uint64
	// out collects the window minima of a block before they are finalised;
	// its length is a power of two so the store needs no bounds check.
	out [2 * blk]uint64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Prints appends to dst the winnowed fingerprints of text and returns the
// extended slice.
//
// The text is normalised (see Normalize), every K-byte k-gram of the
// normalised text is hashed with a Rabin–Karp polynomial modulo 2^61−1
// whose base is derived from the key, and of every window of W consecutive
// k-gram hashes the minimum is kept (winnowing, Schleimer et al. 2003). Any
// run of at least K+W−1 normalised bytes that two texts share therefore
// yields at least one print they share, whatever surrounds it. Minima are
// taken over the polynomial values, which are already keyed and uniform
// below 2^61; only the kept minima go through the keyed 64-bit finaliser,
// so the finaliser costs one call per print, not one per byte.
//
// A value is appended each time the window minimum changes, so dst may get
// the same value more than once (a k-gram that recurs); the set of appended
// values is exactly the set of window minima. Texts shorter than K
// normalised bytes yield nothing. Texts with at least one but fewer than W
// k-grams are treated as one short window and yield its minimum: a short
// private value is still attributable, and the guarantee above is not
// weakened because it only speaks of runs of K+W−1 bytes.
func (h *Hasher) Prints(dst []uint64, text string) []uint64 {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	w := winnower{prev: noMin}
	var st rolling
	clear(sc.norm[:K+1])
	total := 0 // normalised bytes seen before the current block
	for i := 0; i < len(text); {
		var n int
		n, i = fill((*[blkMax]byte)(sc.norm[K+1:]), text, i)
		if n == 0 {
			break
		}
		h.roll(&st, sc.norm[:K+1+n], sc.hs[w.carry:w.carry+n])
		// The first K−1 positions of a text end no complete k-gram.
		skip := max(0, min(n, K-1-total))
		if skip > 0 {
			copy(sc.hs[w.carry:], sc.hs[w.carry+skip:w.carry+n])
		}
		total += n
		dst = w.block(h, dst, sc, n-skip)
		copy(sc.norm[:K+1], sc.norm[n:K+1+n])
	}
	if w.seen > 0 && w.seen < W {
		dst = append(dst, h.finalise(slices.Min(sc.hs[:w.carry])))
	}
	return dst
}

// noMin is a sentinel window minimum: canonical hashes are below 2^61−1, so
// it never equals one.
const noMin = ^uint64(0)

// fill normalises text from i into dst until the block is full or the text
// ends; it returns the bytes written and where to resume.
func fill(dst *[blkMax]byte, text string, i int) (n, next int) {
	for i < len(text) && n < blk {
		c := text[i]
		if c < utf8.RuneSelf {
			v := asciiNorm[c]
			dst[n&(blk-1)] = v
			if v != 0 {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r, ok := normRune(r); ok {
			n += utf8.EncodeRune(dst[n:], r)
		}
	}
	return n, i
}

// rolling is the Rabin–Karp state between blocks: the two previous hashes
// (lazily reduced, below 2^61+8) and the table term of the previous byte.
type rolling struct {
	h0, h1, bp uint64
}

// roll hashes every position of norm after its K+1 carried bytes and writes
// the canonical hash of the k-gram ending there to out. Two interleaved
// chains (even and odd positions, each stepping by B²) halve the length of
// the dependency chain through the multiplier, which is what bounds a plain
// rolling hash.
func (h *Hasher) roll(st *rolling, norm []byte, out []uint64) {
	const p = mersenne61
	b2 := h.base2
	h0, h1, bp := st.h0, st.h1, st.bp
	x := K + 1
	j := 0
	for ; x+1 < len(norm) && j+1 < len(out); x, j = x+2, j+2 {
		c0, k0 := norm[x], norm[x-K]
		c1, k1 := norm[x+1], norm[x+1-K]
		a0 := uint64(c0) + h.negBK[k0]
		b0 := h.cB[c0] + h.negBK1[k0]
		a1 := uint64(c1) + h.negBK[k1]
		b1 := h.cB[c1] + h.negBK1[k1]

		hi, lo := bits.Mul64(h0, b2)
		s := (lo & p) + (lo>>61 | hi<<3) + bp + a0
		n0 := (s & p) + (s >> 61)
		hi, lo = bits.Mul64(h1, b2)
		s = (lo & p) + (lo>>61 | hi<<3) + b0 + a1
		n1 := (s & p) + (s >> 61)

		v0, v1 := n0, n1
		if v0 >= p {
			v0 -= p
		}
		if v1 >= p {
			v1 -= p
		}
		out[j], out[j+1] = v0, v1
		h0, h1, bp = n0, n1, b1
	}
	if x < len(norm) && j < len(out) {
		// Odd tail: one plain rolling step H = H_prev·B + a.
		c, k := norm[x], norm[x-K]
		a := uint64(c) + h.negBK[k]
		hi, lo := bits.Mul64(h1, h.base)
		s := (lo & p) + (lo>>61 | hi<<3) + a
		n := (s & p) + (s >> 61)
		v := n
		if v >= p {
			v -= p
		}
		out[j] = v
		h0, h1, bp = h1, n, h.cB[c]+h.negBK1[k]
	}
	st.h0, st.h1, st.bp = h0, h1, bp
}

// winnower is the sliding-window minimum state between blocks.
type winnower struct {
	carry int    // hashes carried in scratch.hs from earlier blocks (< W)
	seen  int    // k-gram hashes seen so far, capped at W
	prev  uint64 // minimum of the last window, noMin before the first
}

// block takes the m new hashes in sc.hs[w.carry:], appends the finalised
// minimum of every window that ends in them whenever it differs from the
// previous window's, and carries the last W−1 hashes over.
//
// Window minima use van Herk/Gil-Werman: split the hashes into aligned
// blocks of W; a window spans the tail of one block and the head of the
// next, so its minimum is the minimum of a suffix minimum and a prefix
// minimum. That is three comparisons per hash with no branches that depend
// on the data, where a deque or a rescanning minimum mispredicts often.
func (w *winnower) block(h *Hasher, dst []uint64, sc *scratch, m int) []uint64 {
	n := w.carry + m
	if n == 0 {
		return dst
	}
	hs := sc.hs[:n]
	suf := sc.suf[:n]
	w.seen = min(W, w.seen+m)
	if n >= W {
		// Suffix minima within aligned blocks of W.
		for end := n; end > 0; {
			start := (end - 1) / W * W
			mn := hs[end-1]
			for i := end - 1; i >= start; i-- {
				mn = min(mn, hs[i])
				suf[i] = mn
			}
			end = start
		}
		out := &sc.out
		k := 0
		prev := w.prev
		var pm uint64
		for e := range hs {
			v := hs[e]
			if e%W == 0 {
				pm = v
			} else {
				pm = min(pm, v)
			}
			if e >= W-1 {
				mn := min(suf[e-(W-1)], pm)
				out[k&(len(out)-1)] = mn
				if mn != prev {
					k++
				}
				prev = mn
			}
		}
		w.prev = prev
		for _, v := range out[:k] {
			dst = append(dst, h.finalise(v))
		}
	}
	c := min(n, W-1)
	copy(sc.hs[:c], hs[n-c:])
	w.carry = c
	return dst
}

// SortUnique sorts s in place, removes duplicates, and returns the shortened
// slice.
func SortUnique(s []uint64) []uint64 {
	slices.Sort(s)
	return slices.Compact(s)
}
