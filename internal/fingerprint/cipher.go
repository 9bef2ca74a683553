package fingerprint

import "unicode/utf8"

// Caesar shifts (ROT13 among them) and reversal keep every letter of a
// text and only move it, so the text's prints are lost but its letters
// still read as English under the right inverse. Trying all 25 shifts and
// both directions on every view would multiply the views by 51; instead a
// view is read once (scanView), letter pair by letter pair, against a
// table of how often each pair occurs in English (englishPair), forwards
// and backwards, and against English letter frequencies (englishLetter).
// Stretches that do not read as English forwards are then judged:
// reversal by reading them backwards (the sums are there already), a
// shift, if their letters are not as frequent as English ones already,
// by ranking the 25 shifts by single-letter frequencies (cheap, and the
// right shift is almost always among the first three) and reading only
// the best three, forwards and backwards. A shift or reversal is
// reported only when it turns the stretch into text that reads as
// English and reads clearly better than the stretch did; see
// detectCiphers for how stretches are chosen.
//
// Only plain words count: maximal runs of ASCII letters and digits that
// hold no digit, in lower case, upper case or capitalised. Caesar shifts
// and reversal keep words plain, while base64, hex, base32, identifiers
// in camelCase and random keys are not, so encoded data costs one pass
// and is never judged. The statistics are of English; text in other
// languages that use the Latin alphabet mostly reads well enough not to
// be judged, and a shift or reversal of it is found only if it happens to
// read as English.

// Cipher detection parameters, in the cost units of englishPair (1/10
// bit per letter pair).
const (
	pairBlock  = 8  // letter pairs a block reaches before it ends with its word
	pairWindow = 2  // blocks per window: 16 pairs, about 20 letters
	minPairs   = 16 // a stretch with fewer pairs is too short to judge

	// A window is judged when its pairs cost more than suspectCost on
	// average (English costs about 75, a Caesar shift of it 120 to 150),
	// or when it reads better backwards than forwards by revLead.
	suspectCost = 100
	revLead     = 5
	// A transform is reported when the stretch then costs at most
	// englishCost on average, and it gains at least shiftGain over the
	// stretch as it is. A reversal, whose text shares its letters and
	// many of its pairs with the original, needs to gain revGain on a
	// stretch of minPairs pairs, and less on a longer one, whose average
	// varies less: revGain·√(minPairs/n).
	englishCost = 92
	shiftGain   = 20
	revGain     = 10
	// shortlist is how many shifts are read pair by pair.
	shortlist = 3
	// minDistinct is the fewest distinct letters in a stretch that is
	// judged: English of 20 letters has a dozen, and text that repeats a
	// few letters (escape sequences, tables) can be shifted into a few
	// common pairs.
	minDistinct = 9
	// shiftedLetters is the average letter cost below which a stretch is
	// not searched for a shift: its letters are as frequent as English
	// ones already (English costs 38 to 46, a shift of it 46 to 66, and
	// the languages of Europe mostly below 48), and no shift makes such
	// a distribution more English.
	shiftedLetters = 46
	// windowShiftCost is the least average pair cost of a window judged
	// on its own to be searched for a shift: nine in ten windows of a
	// Caesar shift of English cost more, and most windows of the
	// languages of Europe that are not English less. Windows are judged
	// on their own only inside a run that failed as a whole, which text
	// in another language is, from end to end.
	windowShiftCost = 110
)

// A pairSpan sums the costs of the letter pairs of consecutive plain
// words, pairBlock or a few more (fewer only at the end of a view).
type pairSpan struct {
	start, end int   // the bytes of the view they lie in
	fwd, rev   int32 // summed costs of the pairs read forwards and backwards
	n          int32 // pairs
	uni        int32 // summed costs of the letters (englishLetter)
	letters    int32
}

// A cipher is a way to read a view's letters: shifted by shift (added to
// each letter, modulo 26) and, if reversed, backwards.
type cipher struct {
	shift    uint8
	reversed bool
}

// detectCiphers calls fn with every shift or reversal under which some
// stretch of s, s[start:end], reads as English and did not before; a
// cipher may be reported for several stretches. spans are the blocks of
// letter pairs of s, from scanView; pairs is scratch space.
//
// A run of suspect windows is judged as one stretch. If that fails (a
// short hidden text diluted by the English around it, or a run of
// different things: reversed English around a shifted note), each window
// is judged on its own, and a cipher is reported only where two windows
// in a row agree on it: among thousands of windows of text that is not
// English at all (random words, some languages), one now and then reads
// as English under some shift by chance, two in a row under the same
// one almost never, and a hidden text long enough to leave prints spans
// two windows. Of the two, one must pass windowShiftCost to be searched
// for a shift; the other confirms it without.
func detectCiphers(s string, spans []pairSpan, allow allowed, pairs *[]uint16, fn func(c cipher, start, end int)) {
	w := min(pairWindow, len(spans))
	for i := 0; i+w <= len(spans); {
		if !suspect(spans[i:i+w], allow) {
			i++
			continue
		}
		j := i + 1
		for j+w <= len(spans) && suspect(spans[j:j+w], allow) {
			j++
		}
		if c, ok := judge(s, spans[i:j+w-1], allow, 0, pairs); ok {
			fn(c, spans[i].start, spans[j+w-2].end)
		} else if j > i+1 {
			for k := i; k < j; k++ {
				c, ok := judge(s, spans[k:k+w], allow, windowShiftCost, pairs)
				if !ok {
					continue
				}
				// A neighbour confirms, judged without the cost floor: the
				// edge of a short note costs less than its middle.
				for _, m := range [2]int{k - 1, k + 1} {
					if m < i || m >= j {
						continue
					}
					if c2, ok2 := judge(s, spans[m:m+w], allow, 0, pairs); ok2 && c2 == c {
						fn(c, spans[min(k, m)].start, spans[max(k, m)+w-1].end)
						break
					}
				}
			}
		}
		i = j
	}
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// suspect reports whether a window does not read as English forwards in
// a way an allowed cipher could explain: its pairs cost too much (a
// shift, or a reversal), or it reads better backwards (a reversal).
// Reversed English around a shifted note in a view reversed already is
// then English, and the note a run of its own.
func suspect(win []pairSpan, allow allowed) bool {
	var fwd, rev, n int32
	for _, b := range win {
		fwd, rev, n = fwd+b.fwd, rev+b.rev, n+b.n
	}
	return n >= minPairs && (fwd > suspectCost*n || allow.reversed && rev+revLead*n < fwd)
}

// allowed says which ciphers a view's chain still allows: a view reversed
// already is not reversed again, nor a shifted one shifted. A stretch is
// judged among the allowed ones only, so that the reversed English
// around a shifted note in a reversed view does not hide the note.
type allowed struct{ reversed, shift bool }

// judge finds the allowed shift or reversal under which a stretch of
// blocks reads as English and clearly better than it does as it is. A
// shift is searched for only if the stretch's letters are not as
// frequent as English ones, and its pairs cost at least minFwd on
// average.
func judge(s string, blocks []pairSpan, allow allowed, minFwd int32, pairs *[]uint16) (cipher, bool) {
	var fwd, rev, n, uni, letters int32
	for _, b := range blocks {
		fwd, rev, n = fwd+b.fwd, rev+b.rev, n+b.n
		uni, letters = uni+b.uni, letters+b.letters
	}
	d := int64(fwd - rev)
	reversal := allow.reversed && rev <= englishCost*n && d > 0 && d*d >= int64(revGain*revGain)*minPairs*int64(n)
	shift := allow.shift && uni >= shiftedLetters*letters && fwd >= minFwd*n
	if n < minPairs || !reversal && !shift {
		return cipher{}, false
	}
	start, end := blocks[0].start, blocks[len(blocks)-1].end
	var counts [26]int32
	*pairs = (*pairs)[:0]
	forPlainWords(s, start, end, func(w string) {
		prev := lowerIndex(w[0])
		counts[prev]++
		for i := 1; i < len(w); i++ {
			l := lowerIndex(w[i])
			counts[l]++
			*pairs = append(*pairs, uint16(prev)<<8|uint16(l))
			prev = l
		}
	})
	distinct := 0
	for _, c := range counts {
		distinct += int(b2u8(c > 0))
	}
	if distinct < minDistinct {
		return cipher{}, false
	}
	if reversal {
		return cipher{reversed: true}, true
	}
	if !shift {
		return cipher{}, false
	}
	best, bestCost := cipher{}, fwd-shiftGain*n
	for _, k := range shiftShortlist(&counts) {
		f, r := shiftedPairCosts(*pairs, k)
		if f < bestCost {
			best, bestCost = cipher{shift: k}, f
		}
		if allow.reversed && r < bestCost {
			best, bestCost = cipher{shift: k, reversed: true}, r
		}
	}
	return best, best.shift != 0 && bestCost <= englishCost*n
}

// shiftShortlist returns the shifts that make the letter counts most
// like English, best first, at most shortlist of them, and only those
// that do better than no shift.
func shiftShortlist(counts *[26]int32) []uint8 {
	// The letters present, so that each shift costs a sum over them.
	var present [26]struct{ c, n int32 }
	m := 0
	for c, n := range counts {
		if n != 0 {
			present[m] = struct{ c, n int32 }{int32(c), n}
			m++
		}
	}
	var score [26]int32
	for k := range score {
		var sc int32
		for _, p := range present[:m] {
			sc += p.n * int32(englishLetter2[p.c+int32(k)])
		}
		score[k] = sc
	}
	var out [shortlist]uint8
	n := 0
	for k := 1; k < 26; k++ {
		if score[k] >= score[0] {
			continue
		}
		// Insertion into the sorted shortlist.
		i := min(n, shortlist-1)
		if n == shortlist && score[k] >= score[out[i]] {
			continue
		}
		for i > 0 && score[out[i-1]] > score[k] {
			out[i] = out[i-1]
			i--
		}
		out[i] = uint8(k)
		n = min(n+1, shortlist)
	}
	return out[:n]
}

// englishLetter2 is englishLetter twice over, so that a shifted letter
// needs no modulo.
var englishLetter2 = func() (t [52]uint8) {
	copy(t[:26], englishLetter[:])
	copy(t[26:], englishLetter[:])
	return t
}()

// shiftedPairCosts sums the costs of letter pairs (a<<8|b, letters 0–25)
// with each letter shifted by k, read forwards and backwards.
func shiftedPairCosts(pairs []uint16, k uint8) (fwd, rev int32) {
	for _, p := range pairs {
		a, b := int(p>>8)+int(k), int(p&0xff)+int(k)
		a, b = mod26[a], mod26[b]
		fwd += int32(englishPair[a*26+b])
		rev += int32(englishPair[b*26+a])
	}
	return fwd, rev
}

// mod26 is i mod 26 for i below 52.
var mod26 = func() (t [52]int) {
	for i := range t {
		t[i] = i % 26
	}
	return t
}()

// plainWordEnd returns the end of the alphanumeric run at s[i:] if it is
// a plain word of at least two letters, else −1.
func plainWordEnd(s string, i int) int {
	j := i
	upper, lower := 0, 0
	for ; j < len(s) && isAlnum(s[j]); j++ {
		switch c := s[j]; {
		case isDigit(c):
			return -1
		case isUpper(c):
			// An upper-case letter after a lower-case one is camelCase
			// or noise, not a word.
			if lower > 0 {
				return -1
			}
			upper++
		default:
			// Lower case after two capitals (ABc) is not a word either.
			if upper > 1 {
				return -1
			}
			lower++
		}
	}
	if j-i < 2 {
		return -1
	}
	return j
}

// lowerIndex maps an ASCII letter to 0–25.
func lowerIndex(c byte) int { return int(c|0x20) - 'a' }

// pairCosts sums the costs of the letter pairs of the plain words in
// s[start:end], each letter shifted by k, read forwards and backwards.
func pairCosts(s string, start, end int, k uint8) (fwd, rev, n int32) {
	forPlainWords(s, start, end, func(w string) {
		prev := (lowerIndex(w[0]) + int(k)) % 26
		for i := 1; i < len(w); i++ {
			l := (lowerIndex(w[i]) + int(k)) % 26
			fwd += int32(englishPair[prev*26+l])
			rev += int32(englishPair[l*26+prev])
			n++
			prev = l
		}
	})
	return fwd, rev, n
}

// forPlainWords calls fn with each plain word of s[start:end], which
// begins and ends with a block of scanView's, so at word boundaries.
func forPlainWords(s string, start, end int, fn func(w string)) {
	s = s[:end]
	for i, j := start, start; i < len(s); i = j {
		if j = i + 1; !isAlnum(s[i]) {
			continue
		}
		j = plainWordEnd(s, i)
		if j < 0 {
			for j = i + 1; j < len(s) && isAlnum(s[j]); j++ {
			}
			continue
		}
		fn(s[i:j])
	}
}

// applyCipher appends s read under c to dst: each ASCII letter shifted,
// keeping its case, and the whole reversed rune by rune if c says so.
func applyCipher(dst []byte, s string, c cipher) []byte {
	if c.reversed {
		dst = appendReversed(dst, s)
	} else {
		dst = append(dst, s...)
	}
	if c.shift != 0 {
		shiftLetters(dst, c.shift)
	}
	return dst
}

// shiftLetters shifts each ASCII letter of b by k places, in place.
func shiftLetters(b []byte, k uint8) {
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = 'a' + (c-'a'+k)%26
		case 'A' <= c && c <= 'Z':
			b[i] = 'A' + (c-'A'+k)%26
		}
	}
}

// appendReversed appends s to dst rune by rune from the end; invalid
// bytes are kept as they are, each its own rune.
func appendReversed(dst []byte, s string) []byte {
	for i := len(s); i > 0; {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		dst = append(dst, s[i-size:i]...)
		i -= size
	}
	return dst
}
