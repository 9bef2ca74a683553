package fingerprint

import "unicode/utf8"

// scanView is the one pass every view gets before the rewrites: it sums
// the letter pairs that the Caesar and reversal detectors judge (see
// cipher.go), and notes the hints that tell which other rewrites could
// apply, so that the ones that cannot cost nothing more. It reads a
// word at a time, a table lookup and two table additions per letter,
// and looks at the bytes between words, which are a fifth of prose, for
// the rest.

// hints are what scanView learns about which rewrites could apply. Each
// is a necessary condition of its rewrite's own, more careful, test.
type hints struct {
	leet      int  // at least the leet characters of the leet words (isLeet)
	spaced    bool // seven separators in a row at every other rune
	hexPairs  bool // minSpaced words of two hex digits in a row (mayHexPairs)
	nonASCII  bool
	nfkc      bool // a rune NFKC may change (nfkcStable)
	innerDots bool // a dot between two words, as in a host name
	invisible bool // an invisible rune (isInvisible)
	lookalike bool // a rune of the confusable table
	tags      bool // a tag character
	selectors bool // a variation selector
	escapes   int  // escape introducers: \ & = % (repairEscapes)
}

// Classes of the bytes of words, one bit each.
const (
	wLower = 1 << iota
	wUpper
	wDigit
	wNotHex
)

// wordClass is the class of each byte that is part of a word (an ASCII
// letter or digit); 0 for the rest.
var wordClass = func() (t [256]uint8) {
	for c := range 256 {
		switch b := byte(c); {
		case 'a' <= b && b <= 'z':
			t[c] = wLower
		case 'A' <= b && b <= 'Z':
			t[c] = wUpper
		case isDigit(b):
			t[c] = wDigit
		}
		if t[c] != 0 && !isHexDigit(byte(c)) {
			t[c] |= wNotHex
		}
	}
	return t
}()

// Classes of the bytes between words.
const (
	gSpacer = 1 << iota
	gLeet
	gEscape
)

var gapClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if b < utf8.RuneSelf && asciiSpacer[b] {
			t[c] |= gSpacer
		}
		if leetLetter[b] != 0 && !isDigit(b) {
			t[c] |= gLeet
		}
		if escapeIntroducer[b] {
			t[c] |= gEscape
		}
	}
	return t
}()

// pairCosts3 holds, indexed by the low five bits of two ASCII letters a
// and b (which are 1–26 in either case), the cost of the pair ab, of the
// pair ba, and of the letter b, a byte each, so that a letter costs one
// load. Row 0 holds the letter's cost only, for the first letter of a
// word.
var pairCosts3 = func() (t [32 * 32]uint32) {
	for a := range 27 {
		for b := range 26 {
			var f, r uint32
			if a > 0 {
				f, r = uint32(englishPair[(a-1)*26+b]), uint32(englishPair[b*26+a-1])
			}
			t[a<<5|(b+1)] = f | r<<8 | uint32(englishLetter[b])<<16
		}
	}
	return t
}()

// scanView appends to spans the blocks of letter pairs of the plain words
// of s (see detectCiphers), and returns them with the hints.
func scanView(spans []pairSpan, s string) ([]pairSpan, hints) {
	var (
		h      hints
		cur    pairSpan
		stride [2]uint32 // separators in a row at every other byte, by parity
		most   uint32
		pairs  int // hex pairs in a row
		gap    int // bytes since the last word
		// The leet symbols of the current token, the digits of its words
		// without letters, and whether it has a digit.
		tokSyms, tokBare int
		tokDigit         bool
	)
	pos := 0 // in runes, for the parity of alternating separators
	for i := 0; i < len(s); {
		if s[i] >= utf8.RuneSelf {
			// A rune beyond ASCII is never part of a word here.
			r, size := utf8.DecodeRuneInString(s[i:])
			h.runeHint(r)
			h.leet += tokenLeets(tokSyms, tokBare, tokDigit)
			tokSyms, tokBare, tokDigit = 0, 0, false
			sp := uint32(b2u8(r == '·' || r == '•'))
			stride[pos&1] = (stride[pos&1] + 1) * sp
			most = max(most, stride[pos&1])
			gap += size
			i += size
			pos++
			continue
		}
		if wordClass[s[i]] == 0 {
			f := gapClass[s[i]]
			h.escapes += int(f&gEscape) >> 2
			// Leet symbols count in a token (a run of letters, digits and
			// leet symbols, where a leet word lies) that has two of them
			// or a digit, as a leet word must (p@$$, w!7h); an e-mail
			// address has one @ and need not.
			if f&gLeet != 0 {
				tokSyms++
			} else if tokSyms|tokBare != 0 || tokDigit {
				h.leet += tokenLeets(tokSyms, tokBare, tokDigit)
				tokSyms, tokBare, tokDigit = 0, 0, false
			}
			sp := uint32(f & gSpacer)
			stride[pos&1] = (stride[pos&1] + 1) * sp
			most = max(most, stride[pos&1])
			gap++
			i++
			pos++
			continue
		}
		if gap == 1 && i >= 2 && s[i-1] == '.' {
			h.innerDots = true
		}
		// A word: its pairs summed, its classes gathered, in one pass.
		start := i
		first := wordClass[s[i]]
		var rest uint8
		var fwd, rev uint32
		uni := pairCosts3[s[i]&31] >> 16
		prev := uint32(s[i]&31) << 5
		for i++; i < len(s); i++ {
			c := s[i]
			k := wordClass[c]
			if k == 0 {
				break
			}
			rest |= k
			low := uint32(c & 31)
			x := pairCosts3[(prev|low)&1023]
			fwd += x & 0xff
			rev += x >> 8 & 0xff
			uni += x >> 16
			prev = low << 5
		}
		// The digits of a word with letters, not in camelCase or random
		// case, may be leet characters (leetWord); words with digits are
		// few, and read again.
		if all := first | rest; all&wDigit != 0 {
			tokDigit = true
			switch {
			case all&(wLower|wUpper) == 0:
				tokBare += i - start
			case (start == 0 || leetEdge[s[start-1]]) && (i == len(s) || leetEdge[s[i]]):
				// Only where a leet word can stand: not between the
				// slashes of base64 or a path.
				h.leet += wordLeets(s[start:i])
			}
		}
		n := i - start
		if n == 1 {
			stride[pos&1] = 0 // the other parity may be the separators
		} else {
			stride[0], stride[1] = 0, 0
		}
		pos += n
		// Hex pairs, as mayHexPairs counts them.
		switch {
		case n == 2 && (first|rest)&wNotHex == 0:
			if gap > 12 {
				pairs = 0
			}
			pairs++
			h.hexPairs = h.hexPairs || pairs >= minSpaced
		default:
			pairs = 0
		}
		gap = 0
		if plainWord(first, rest) && n >= 2 {
			if cur.n == 0 {
				cur.start = start
			}
			cur.fwd, cur.rev, cur.n, cur.end = cur.fwd+int32(fwd), cur.rev+int32(rev), cur.n+int32(n-1), i
			cur.uni, cur.letters = cur.uni+int32(uni), cur.letters+int32(n)
			if cur.n >= pairBlock {
				spans = append(spans, cur)
				cur = pairSpan{}
			}
		}
	}
	if cur.n > 0 {
		spans = append(spans, cur)
	}
	h.leet += tokenLeets(tokSyms, tokBare, tokDigit)
	h.spaced = most >= minSpaced-1
	return spans, h
}

// tokenLeets is how many of a token's leet symbols, and of the digits of
// its words without letters (a@55b is one leet word in three pieces),
// may be leet characters: those of a token with a symbol and a digit or
// two symbols.
func tokenLeets(syms, bare int, digit bool) int {
	if syms >= 2 || syms == 1 && digit {
		return syms + bare
	}
	return 0
}

// leetEdge marks the bytes next to which a piece of a leet word can
// stand: what bounds a leet word, and the leet symbols inside one.
var leetEdge = func() (t [256]bool) {
	for c := range t {
		t[c] = wordBound[c] || leetLetter[c] != 0 && !isDigit(byte(c))
	}
	return t
}()

// wordLeets returns the digits of a word of letters and digits, or 0 if
// an upper-case letter follows a lower-case one in it.
func wordLeets(w string) int {
	digits, lower := 0, false
	for i := 0; i < len(w); i++ {
		switch k := wordClass[w[i]]; {
		case k&wDigit != 0:
			digits++
		case k&wUpper != 0 && lower:
			return 0
		case k&wLower != 0:
			lower = true
		}
	}
	return digits
}

// runeHint notes what a rune beyond ASCII says about the rewrites.
func (h *hints) runeHint(r rune) {
	h.nonASCII = true
	h.nfkc = h.nfkc || !nfkcStable(r)
	if _, ok := lookalike(r); ok {
		h.lookalike = true
		return
	}
	if r < 0xAD {
		return
	}
	h.invisible = h.invisible || isInvisible(r)
	h.tags = h.tags || tagFirst <= r && r <= tagLast
	_, vs := vsByte(r)
	h.selectors = h.selectors || vs
}

// plainWord reports whether a word whose first byte is of class first
// and the others of the classes in rest is plain: letters only, in lower
// case, upper case, or capitalised.
func plainWord(first, rest uint8) bool {
	rest &^= wNotHex
	first &^= wNotHex
	switch {
	case rest&wDigit != 0 || first == wDigit:
		return false
	case first == wLower:
		return rest&wUpper == 0
	}
	return rest&wLower == 0 || rest&wUpper == 0
}
