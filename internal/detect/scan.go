package detect

import "unicode/utf8"

// Byte-level skipping. Most of a typical text is plain ASCII prose that no
// byte-driven detector looks at twice: these helpers find the next byte a
// detector cares about with a table lookup per byte, or eight bytes at a
// time for the next non-ASCII byte, so the detectors' per-byte logic runs
// only where it can matter.

// byteSet is a set of bytes, as a table.
type byteSet [256]bool

func newByteSet(bs string) *byteSet {
	var t byteSet
	for i := 0; i < len(bs); i++ {
		t[bs[i]] = true
	}
	return &t
}

// next returns the index of the first byte of s at or after i in the set,
// or len(s).
func (t *byteSet) next(s string, i int) int {
	for ; i+4 <= len(s); i += 4 {
		if t[s[i]] {
			return i
		}
		if t[s[i+1]] {
			return i + 1
		}
		if t[s[i+2]] {
			return i + 2
		}
		if t[s[i+3]] {
			return i + 3
		}
	}
	for ; i < len(s); i++ {
		if t[s[i]] {
			return i
		}
	}
	return len(s)
}

// nextIn is next for a byte slice.
func (t *byteSet) nextIn(s []byte, i int) int {
	for ; i+4 <= len(s); i += 4 {
		if t[s[i]] {
			return i
		}
		if t[s[i+1]] {
			return i + 1
		}
		if t[s[i+2]] {
			return i + 2
		}
		if t[s[i+3]] {
			return i + 3
		}
	}
	for ; i < len(s); i++ {
		if t[s[i]] {
			return i
		}
	}
	return len(s)
}

// nextNonASCII returns the index of the first byte of s at or after i that
// is not ASCII, or len(s).
func nextNonASCII(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// load8 returns the eight bytes of s at i (i+8 <= len(s)), the first in
// the low byte.
func load8(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// printable8 reports whether all eight bytes of x are printable ASCII
// (0x20 to 0x7E): no byte is below 0x20 (the borrow test is exact when no
// byte has its high bit set, and one that has is caught by the second
// test), and none reaches 0x7F.
func printable8(x uint64) bool {
	return (x-0x2020202020202020)&^x&0x8080808080808080|(x+0x0101010101010101|x)&0x8080808080808080 == 0
}
