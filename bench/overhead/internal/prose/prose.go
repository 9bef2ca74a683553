// Package prose makes the deterministic English-like ASCII text the
// overhead benchmark's tool results carry: ordinary sentences, so Weir's
// result detectors do the work they would do on a real page, and nothing in
// it looks like an injection, a secret or hidden markup.
package prose

import (
	"strings"
	"sync"
)

var words = strings.Fields(`the of and to in is was for on that with as by at from it an are
were be this which or had not but what all when we there can more if no out so up about
into than them only some could time these two may then first any like now such make over
even most after also did many before must through back years where much way well down
should because each just those people how too little state good very world still own see
work long get here between both life being under never day same another know while last
might great old year off come since against go came right used take three report meeting
river garden window morning budget project station market letter summer quarter team`)

var (
	once sync.Once
	text string
)

// Max is the longest text Text returns.
const Max = 4 << 20

// Text returns the first n bytes (n ≤ Max) of one fixed text. Every byte is
// printable ASCII other than '"' and '\\', so the text is its own JSON string
// body.
func Text(n int) string {
	once.Do(func() { text = generate(Max) })
	return text[:n]
}

// Seeded returns n bytes of text of the same kind, different for every
// seed: the long-session run feeds a proxy thousands of results whose
// fingerprints must not repeat, as a real session's reads would not. Seed
// 0 is Text's text.
func Seeded(seed uint64, n int) string {
	if seed == 0 {
		return Text(n)
	}
	return generateFrom(seed, n)
}

func generate(n int) string { return generateFrom(0, n) }

func generateFrom(seed uint64, n int) string {
	var b strings.Builder
	b.Grow(n + 64)
	// xorshift64* must not start at zero; a seed is mixed in by a
	// multiply so that nearby seeds give unrelated streams.
	x := uint64(0x9e3779b97f4a7c15) ^ (seed * 0xbf58476d1ce4e5b9)
	if x == 0 {
		x = 1
	}
	next := func(m int) int { // xorshift64*: fixed, fast, no dependency on math/rand's algorithm
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		return int((x * 0x2545f4914f6cdd1d >> 33) % uint64(m))
	}
	for b.Len() < n {
		l := 6 + next(14)
		for i := range l {
			w := words[next(len(words))]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(". ")
	}
	return b.String()[:n]
}
