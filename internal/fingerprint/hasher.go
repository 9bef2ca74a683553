package fingerprint

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"math/bits"
	"sync"
)

const (
	// K is the k-gram length in normalised bytes.
	K = 24
	// W is the winnowing window, in k-grams. Any run of K+W-1 normalised
	// bytes shared by two texts yields at least one shared print.
	W = 12
)

// mersenne61 is the Rabin–Karp modulus 2^61−1: reduction is a shift, a mask
// and an add, and the modulus is prime so a random base gives a universal
// hash.
const mersenne61 = 1<<61 - 1

// MinKeyLen is the shortest key NewHasher accepts.
const MinKeyLen = 16

// ErrShortKey is returned by NewHasher for keys shorter than MinKeyLen.
var ErrShortKey = errors.New("fingerprint: key shorter than 16 bytes")

// Hasher computes keyed fingerprints and digests. Everything it derives from
// the key is fixed at construction, so one Hasher is safe for concurrent use
// and cheap to share across sessions.
type Hasher struct {
	base        uint64 // Rabin–Karp base B, 2^32 <= B < p−1, derived from the key
	fin         uint64 // xor constant of the output finaliser
	wbase, wfin uint64 // Word's base and finaliser constant, independent of the above
	mask        uint64 // 2^61−1, see hashes

	// B² mod p, shifted left by 3: multiplying by a multiplier pre-shifted
	// by 3 puts x·B² >> 61 in the high word and x·B² mod 2^61 in the top of
	// the low word, so reduction modulo 2^61−1 is a shift and an add
	// instead of five operations.
	base28 uint64

	// Per-byte tables so the rolling step needs one modular multiply per
	// byte. With a_j = c_j − c_{j−K}·B^K and H_j = H_{j−1}·B + a_j, two steps
	// fused give H_j = H_{j−2}·B² + (a_{j−1}·B) + a_j, and both terms on the
	// right come from tables.
	negBK  [256]uint64 // p − c·B^K mod p
	cB     [256]uint64 // c·B mod p
	negBK1 [256]uint64 // p − c·B^(K+1) mod p

	digestPool sync.Pool // of hash.Hash: HMAC under the digest key
	keyedPool  sync.Pool // of hash.Hash: HMAC under the audit key
}

// NewHasher derives a Hasher from the per-install secret. The key never
// leaves the Hasher: it is only used to derive independent subkeys, so the
// fingerprint base, the token digests and the audit hashes cannot be
// related to each other without it.
func NewHasher(key []byte) (*Hasher, error) {
	if len(key) < MinKeyLen {
		return nil, ErrShortKey
	}
	h := &Hasher{}
	h.setBase(deriveBase(key, "weir/fingerprint/v1/base/"))
	h.fin = binary.LittleEndian.Uint64(derive(key, "weir/fingerprint/v1/finaliser"))
	h.wbase = deriveBase(key, "weir/fingerprint/v1/words/base/")
	h.wfin = binary.LittleEndian.Uint64(derive(key, "weir/fingerprint/v1/words/finaliser"))

	dk := derive(key, "weir/fingerprint/v1/digest")
	kk := derive(key, "weir/fingerprint/v1/audit")
	h.digestPool.New = func() any { return hmac.New(sha256.New, dk) }
	h.keyedPool.New = func() any { return hmac.New(sha256.New, kk) }
	return h, nil
}

// setBase sets the Rabin–Karp base and everything Prints derives from it.
// Tests also use it to pick bases that deriveBase never returns.
func (h *Hasher) setBase(b uint64) {
	h.base = b
	h.mask = mersenne61
	h.base28 = mulmod(b, b) << 3
	bk := uint64(1)
	for range K {
		bk = mulmod(bk, b)
	}
	bk1 := mulmod(bk, b)
	for c := range uint64(256) {
		h.negBK[c] = negmod(mulmod(c, bk))
		h.cB[c] = mulmod(c, b)
		h.negBK1[c] = negmod(mulmod(c, bk1))
	}
}

// derive returns HMAC-SHA256(key, label): an independent 32-byte subkey per
// purpose.
func derive(key []byte, label string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// deriveBase picks the Rabin–Karp base from the key. Small bases (and p−1,
// which is −1) make weak polynomials, so they are skipped by re-deriving
// with a counter; the loop ends after one round except with probability
// about 2^−29.
func deriveBase(key []byte, label string) uint64 {
	for i := byte(0); ; i++ {
		d := derive(key, label+string([]byte{i}))
		b := binary.LittleEndian.Uint64(d) & mersenne61
		if b >= 1<<32 && b < mersenne61-1 {
			return b
		}
	}
}

// mulmod returns a·b mod 2^61−1 for a, b < 2^61.
func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	r := (lo & mersenne61) + (lo>>61 | hi<<3)
	r = (r & mersenne61) + (r >> 61)
	if r >= mersenne61 {
		r -= mersenne61
	}
	return r
}

// negmod returns −x mod p for x < p.
func negmod(x uint64) uint64 {
	if x == 0 {
		return 0
	}
	return mersenne61 - x
}

// Word returns a keyed hash of the strings parts, in order, tagged with
// kind: the polynomial hash of the bytes, each part followed by a 0 byte,
// with a secret base of its own, then finalised under its own key. It
// costs a few nanoseconds a byte, where Digest costs a microsecond a call,
// so it can hash every word of a page. It is a keyed universal hash, as
// Prints are, not a MAC: two strings collide with probability about their
// length over 2^61, but whoever holds many (string, hash) pairs could
// solve for its base. Use it where a collision errs the safe way, for
// words whose secrecy matters no more than the fingerprints' does.
func (h *Hasher) Word(kind byte, parts ...string) uint64 {
	x := uint64(kind) + 1
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			// bytes count from 1, so the 0 that ends a part is no byte
			if x = mulmod(x, h.wbase) + uint64(p[i]) + 1; x >= mersenne61 {
				x -= mersenne61
			}
		}
		x = mulmod(x, h.wbase)
	}
	return mix(x ^ h.wfin)
}

// finalise maps a canonical Rabin–Karp value (uniform below 2^61) to a value
// uniform in 64 bits. It is a bijection, so distinct k-gram hashes stay
// distinct; the xor keeps it keyed even for an observer who knows the
// polynomial values.
func (h *Hasher) finalise(x uint64) uint64 { return mix(x ^ h.fin) }

// mix is a bijection of 64-bit values that spreads every input bit over
// the output.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Digest returns the keyed digest of an exact token: the first 8 bytes of
// HMAC-SHA256 under a key derived for digests only.
func (h *Hasher) Digest(token string) uint64 {
	var sum [sha256.Size]byte
	m := h.digestPool.Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(token))
	m.Sum(sum[:0])
	h.digestPool.Put(m)
	return binary.BigEndian.Uint64(sum[:8])
}

// Keyed returns a short keyed hash of s for audit records: 16 hex characters
// of HMAC-SHA256 under a key derived for audit only, so the audit log can
// show that two values were equal without holding either, and a leaked log
// cannot be checked against guessed values.
func (h *Hasher) Keyed(s string) string {
	var sum [sha256.Size]byte
	m := h.keyedPool.Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(s))
	m.Sum(sum[:0])
	h.keyedPool.Put(m)
	return hex.EncodeToString(sum[:8])
}
