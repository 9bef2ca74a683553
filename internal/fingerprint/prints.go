package fingerprint

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"
)

// blk is how many normalised bytes Prints handles per block. A block's
// normalised bytes and k-gram hashes (about 20 KB) stay in L1 cache, and
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
	norm [K + 1 + blkMax]byte
	// hs holds up to W−1 hashes carried from the previous block, ending at
	// index W−1, then the block's k-gram hashes from index W−1 on, so the
	// windows of a block are one contiguous slice.
	hs [W - 1 + blkMax]uint64
	// out collects a block's window minima before they are finalised; its
	// length is a power of two so the store needs no bounds check, and
	// leaves room for the 256-entry window blockMins writes through.
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
//
// The work is done a block at a time in pooled scratch space, in three
// tight passes (normalise, hash, window minima) that each keep their live
// values in registers; one fused loop would spill.
func (h *Hasher) Prints(dst []uint64, text string) []uint64 {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	clear(sc.norm[:K+1])
	var (
		h0, h1, bp uint64  // hash chain state, see hashes
		prev       = noMin // minimum of the last window
		carry      int     // hashes carried in sc.hs before index W−1
		seen       int     // k-grams so far, capped at W
		total      int     // normalised bytes before this block
	)
	for i := 0; i < len(text); {
		var n int
		n, i = fill((*[blkMax]byte)(sc.norm[K+1:]), text, i)
		if n == 0 {
			break
		}
		h0, h1, bp = h.hashes(sc, n, h0, h1, bp)

		// The first K−1 positions of a text end no complete k-gram, and
		// nothing is carried until one does.
		lo := W - 1 - carry
		if skip := K - 1 - total; skip > 0 {
			lo = W - 1 + min(skip, n)
		}
		total += n
		win := sc.hs[lo : W-1+n]
		seen = min(W, seen+len(win)-carry)
		if len(win) >= W {
			var k int
			k, prev = windowMins(&sc.out, win, prev)
			for _, v := range sc.out[:k] {
				dst = append(dst, h.finalise(v))
			}
		}
		carry = min(len(win), W-1)
		copy(sc.hs[W-1-carry:W-1], win[len(win)-carry:])
		copy(sc.norm[:K+1], sc.norm[n:K+1+n])
	}
	if seen > 0 && seen < W {
		dst = append(dst, h.finalise(slices.Min(sc.hs[W-1-carry:W-1])))
	}
	return dst
}

// noMin is a sentinel window minimum: canonical hashes are below 2^61−1, so
// it never equals one.
const noMin = ^uint64(0)

// fill normalises text from i into dst until the block is full or the text
// ends; it returns the bytes written and where to resume.
//
// ASCII text goes sixteen bytes at a time: each byte is written whether or
// not it is kept and the write offset advances only past kept ones, so
// there is no branch on the data. The offset grows by at most one per byte,
// which the compiler can see (see put), so the writes through the 16-byte
// window need no bounds checks either.
func fill(dst *[blkMax]byte, text string, i int) (n, next int) {
	const high = 0x8080808080808080
	// Converted once: the compiler does not copy a []byte it can see is
	// only read, and converting per chunk would test each for emptiness.
	tb := []byte(text)
	for n < blk {
		// As uints the bounds also tell the compiler that n is not
		// negative, so slicing d below needs no check.
		for uint(i)+16 <= uint(len(tb)) && uint(n) <= blk-16 {
			t := (*[16]byte)(tb[i : i+16])
			if (binary.LittleEndian.Uint64(t[:8])|binary.LittleEndian.Uint64(t[8:]))&high != 0 {
				break
			}
			d := (*[16]byte)(dst[n : n+16])
			o := put(d, 0, t[0])
			o = put(d, o, t[1])
			o = put(d, o, t[2])
			o = put(d, o, t[3])
			o = put(d, o, t[4])
			o = put(d, o, t[5])
			o = put(d, o, t[6])
			o = put(d, o, t[7])
			o = put(d, o, t[8])
			o = put(d, o, t[9])
			o = put(d, o, t[10])
			o = put(d, o, t[11])
			o = put(d, o, t[12])
			o = put(d, o, t[13])
			o = put(d, o, t[14])
			o = put(d, o, t[15])
			n += int(o)
			i += 16
		}
		// One rune, or one ASCII byte near the end of the text or the
		// block.
		if i >= len(text) || n >= blk {
			break
		}
		if c := text[i]; c < utf8.RuneSelf {
			if v := asciiNorm[c]; v != 0 {
				dst[n] = v
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

// put writes the normalised form of ASCII byte c at d[o] and returns the
// next write offset. The compiler does not unroll loops, so fill calls it
// sixteen times in a row. The keep bit is a bool turned into 0 or 1, which
// lets the compiler bound o by the number of calls: the sixteen writes need
// neither bounds checks nor the zero extension a byte offset would.
func put(d *[16]byte, o uint, c byte) uint {
	d[o] = fillNorm[c]
	return o + b2u(fillKeep[c])
}

// b2u is 1 for true and 0 for false.
func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// fillNorm and fillKeep are asciiNorm and whether it keeps the byte, as
// full 256-entry tables, so indexing by a byte needs no mask or bounds
// check.
var fillNorm, fillKeep = func() (norm [256]byte, keep [256]bool) {
	for c, v := range asciiNorm {
		norm[c] = v
		keep[c] = v != 0
	}
	return norm, keep
}()

// The k-gram hash ending at normalised position j is the polynomial
//
//	H_j = c_{j−K+1}·B^(K−1) + … + c_j  (mod p)
//
// rolled as H_j = H_{j−1}·B + a_j with a_j = c_j − c_{j−K}·B^K. A plain
// rolling hash is bound by the latency of one multiply and reduction per
// byte, each waiting for the last. Unrolling once gives
//
//	H_j = H_{j−2}·B² + t_j,  t_j = a_j + a_{j−1}·B
//
// which is two independent chains (even and odd j) that the CPU overlaps,
// and t_j comes from per-byte tables with no multiply at all.

// hashes sets sc.hs[W−1:W−1+n] to the canonical H_j of the n positions of
// sc.norm after its K+1 carried bytes. The state is h0 = H_{j−2} and
// h1 = H_{j−1} for the first position, lazily reduced (below 2^61+8), and
// bp = a_{j−1}·B; it returns the state for the position after the last.
// Stored values are canonical (below p), so equal k-grams always give
// equal values.
//
// Each t_j (below 3p+256) is summed from the tables where it is used
// rather than stored by a pass of its own: that saves a store and a load
// per byte and a loop, for one more register.
func (h *Hasher) hashes(sc *scratch, n int, h0, h1, bp uint64) (uint64, uint64, uint64) {
	// The modulus comes from the Hasher rather than a constant so that
	// the compiler keeps it in a register instead of re-materialising the
	// 64-bit immediate for every mask.
	b28, p := h.base28, h.mask
	// Slicing the scratch arrays lets the compiler address all three from
	// sc with constant offsets, and the loop bound below then proves every
	// index in range.
	out := sc.hs[W-1 : W-1+n]
	cur := sc.norm[K+1 : K+1+n]
	old := sc.norm[1 : 1+n] // c_{j−K}, leaving the k-gram
	j := 0
	for j < len(cur)-3 {
		// Each byte is loaded after the previous store, which keeps the
		// compiler from hoisting all eight loads and spilling them.
		c0, k0 := cur[j], old[j]
		c1, k1 := cur[j+1], old[j+1]
		x0 := step(h0, b28, bp+uint64(c0)+h.negBK[k0], p)
		out[j] = x0
		x1 := step(h1, b28, h.cB[c0]+h.negBK1[k0]+uint64(c1)+h.negBK[k1], p)
		out[j+1] = x1
		c2, k2 := cur[j+2], old[j+2]
		h0 = step(x0, b28, h.cB[c1]+h.negBK1[k1]+uint64(c2)+h.negBK[k2], p)
		out[j+2] = h0
		c3, k3 := cur[j+3], old[j+3]
		h1 = step(x1, b28, h.cB[c2]+h.negBK1[k2]+uint64(c3)+h.negBK[k3], p)
		out[j+3] = h1
		bp = h.cB[c3] + h.negBK1[k3]
		j += 4
		// The stored values are reduced only below 2^61+8, and are p or
		// more about once in 2^58 k-grams, so instead of canon's four
		// operations per value one test covers two (x|y is at least x and
		// at least y, and reaches p by chance once in 2^25) and puts the
		// rare block right.
		if x0|x1 >= p || h0|h1 >= p {
			for i := j - 4; i < j; i++ {
				out[i] = canon(out[i], p)
			}
		}
	}
	for ; j < len(out); j++ {
		c, k := cur[j], old[j]
		h0, h1 = h1, step(h0, b28, bp+uint64(c)+h.negBK[k], p)
		out[j] = canon(h1, p)
		bp = h.cB[c] + h.negBK1[k]
	}
	return h0, h1, bp
}

// step returns x·B² + t reduced to below 2^61+8, for x below 2^61+8 and
// t below 3p+256; b28 is B²·8, see Hasher, and p is 2^61−1.
func step(x, b28, t, p uint64) uint64 {
	hi, lo := bits.Mul64(x, b28)
	s := hi + lo>>3 + t
	return s&p + s>>61
}

// canon returns x mod p for x below 2p, p = 2^61−1: x+1 reaches bit 61
// exactly when x >= p, and then adding 1 and dropping bit 61 subtracts p.
func canon(x, p uint64) uint64 {
	return (x + (x+1)>>61) & p
}

// windowMins writes to out the minimum of every window of W consecutive
// values of hs (len(hs) >= W) each time it differs from the previous
// window's, starting from prev, and returns how many it wrote and the last
// window's minimum.
//
// Window minima use van Herk/Gil-Werman: split the hashes into aligned
// blocks of W; a window that starts inside one block ends inside the next,
// so its minimum is the smaller of a suffix minimum of the first block and
// a prefix minimum of the second. That is three comparisons per hash and no
// branch that depends on the data, where a deque or a rescanning minimum
// mispredicts on every new minimum. The block loops are unrolled by hand
// because the compiler does not unroll.
func windowMins(out *[2 * blk]uint64, hs []uint64, prev uint64) (int, uint64) {
	var suf [W + 1]uint64
	suffixMins(&suf, (*[W]uint64)(hs[:W]))
	// The window that is block 0 exactly; every later window ends in the
	// block after the one it starts in.
	k := emit(out, 0, prev, suf[0])
	prev = suf[0]
	b := len(hs) - len(hs)%W
	k, prev = blockMins(out, k, prev, &suf, hs[W:b])
	pm := noMin
	for r, v := range hs[b:] {
		pm = min(pm, v)
		mn := min(suf[(r+1)%(W+1)], pm)
		k = emit(out, k, prev, mn)
		prev = mn
	}
	return k, prev
}

// suffixMins and blockMins are unrolled for W = 12; this fails to compile
// if W changes.
const _ = uint(W-12) + uint(12-W)

// suffixMins sets suf[r] to the minimum of cur[r:] and suf[W] to noMin,
// the empty suffix of a window that starts on a block boundary.
func suffixMins(suf *[W + 1]uint64, cur *[W]uint64) {
	m := cur[11]
	suf[12] = noMin
	suf[11] = m
	m = min(m, cur[10])
	suf[10] = m
	m = min(m, cur[9])
	suf[9] = m
	m = min(m, cur[8])
	suf[8] = m
	m = min(m, cur[7])
	suf[7] = m
	m = min(m, cur[6])
	suf[6] = m
	m = min(m, cur[5])
	suf[5] = m
	m = min(m, cur[4])
	suf[4] = m
	m = min(m, cur[3])
	suf[3] = m
	m = min(m, cur[2])
	suf[2] = m
	m = min(m, cur[1])
	suf[1] = m
	m = min(m, cur[0])
	suf[0] = m
}

// blockMins emits the minima of the windows that end in each block of W
// in blocks (len(blocks) a multiple of W), given the suffix minima of the block
// before it in suf, and leaves the last block's suffix minima in suf. Window
// r of a block is the suffix of the previous block from r+1 and the prefix
// of the block up to r. The loop over blocks is here rather than in
// windowMins so that k, prev and the slices stay in registers across
// blocks instead of being spilled around a call.
func blockMins(out *[2 * blk]uint64, k int, prev uint64, suf *[W + 1]uint64, blocks []uint64) (int, uint64) {
	for len(blocks) >= W {
		// Within a block the write offset is a byte into a 256-entry
		// window, see emit8.
		out := (*[256]uint64)(out[k : k+256])
		next := (*[W]uint64)(blocks)
		var k8 uint8
		pm := next[0]
		m := min(suf[1], pm)
		k8 = emit8(out, k8, prev, m)
		pm = min(pm, next[1])
		m1 := min(suf[2], pm)
		k8 = emit8(out, k8, m, m1)
		pm = min(pm, next[2])
		m = min(suf[3], pm)
		k8 = emit8(out, k8, m1, m)
		pm = min(pm, next[3])
		m1 = min(suf[4], pm)
		k8 = emit8(out, k8, m, m1)
		pm = min(pm, next[4])
		m = min(suf[5], pm)
		k8 = emit8(out, k8, m1, m)
		pm = min(pm, next[5])
		m1 = min(suf[6], pm)
		k8 = emit8(out, k8, m, m1)
		pm = min(pm, next[6])
		m = min(suf[7], pm)
		k8 = emit8(out, k8, m1, m)
		pm = min(pm, next[7])
		m1 = min(suf[8], pm)
		k8 = emit8(out, k8, m, m1)
		pm = min(pm, next[8])
		m = min(suf[9], pm)
		k8 = emit8(out, k8, m1, m)
		pm = min(pm, next[9])
		m1 = min(suf[10], pm)
		k8 = emit8(out, k8, m, m1)
		pm = min(pm, next[10])
		m = min(suf[11], pm)
		k8 = emit8(out, k8, m1, m)
		pm = min(pm, next[11])
		// The window aligned with the block: the empty suffix is noMin.
		k8 = emit8(out, k8, m, pm)
		k += int(k8)
		prev = pm
		// suffixMins(suf, next), by hand: the call does not inline.
		// suf[W] stays noMin, and suf[0], the whole block's minimum, is
		// not read again.
		m = next[11]
		suf[11] = m
		m = min(m, next[10])
		suf[10] = m
		m = min(m, next[9])
		suf[9] = m
		m = min(m, next[8])
		suf[8] = m
		m = min(m, next[7])
		suf[7] = m
		m = min(m, next[6])
		suf[6] = m
		m = min(m, next[5])
		suf[5] = m
		m = min(m, next[4])
		suf[4] = m
		m = min(m, next[3])
		suf[3] = m
		m = min(m, next[2])
		suf[2] = m
		m = min(m, next[1])
		suf[1] = m
		blocks = blocks[W:]
	}
	return k, prev
}

// emit8 is emit for blockMins, whose offset into a 256-entry window is a
// byte: indexing needs no mask and the increment is a byte add.
func emit8(out *[256]uint64, k uint8, prev, m uint64) uint8 {
	out[k] = m
	var inc uint8
	if m != prev {
		inc = 1
	}
	return k + inc
}

// emit stores window minimum m and keeps it (advances k) if it differs
// from the previous window's; the store is unconditional so there is no
// branch to mispredict.
func emit(out *[2 * blk]uint64, k int, prev, m uint64) int {
	out[k&(len(out)-1)] = m
	if m != prev {
		k++
	}
	return k
}

// SortUnique sorts s in place, removes duplicates, and returns the shortened
// slice. Long slices of hashes (a page's words and identifiers, tens of
// thousands of them, observed before the page is forwarded) are sorted by
// radix, in time linear in their length; short ones by comparison.
func SortUnique(s []uint64) []uint64 {
	if len(s) < radixMin {
		slices.Sort(s)
	} else {
		radixSort(s)
	}
	return slices.Compact(s)
}

// radixMin is the length from which radixSort beats slices.Sort on
// uniform hashes (measured: BenchmarkSortUnique).
const radixMin = 1 << 13

// radixBits is the digit of radixSort: six passes over 64-bit keys, with
// counts that fit in the first-level cache.
const radixBits = 11

// radixSort sorts s by least significant digit first, through one scratch
// slice of its length.
func radixSort(s []uint64) {
	const buckets = 1 << radixBits
	src, dst := s, make([]uint64, len(s))
	var count [buckets]int
	for shift := uint(0); shift < 64; shift += radixBits {
		clear(count[:])
		for _, v := range src {
			count[(v>>shift)&(buckets-1)]++
		}
		if count[(src[0]>>shift)&(buckets-1)] == len(src) {
			continue // every key has this digit: the pass would move nothing
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, v := range src {
			d := (v >> shift) & (buckets - 1)
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}
