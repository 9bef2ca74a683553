package fingerprint

import (
	"html"
	"slices"
	"unicode/utf8"
)

// This file holds two rewrites that undo a Caesar shift or a reversal
// where cipher.go cannot see one, because what was shifted or reversed
// is not plain words:
//
//   - escapes read backwards or shifted (a reversal of \u0054, 4500u\, or
//     ROT13 of it, \h0054): escaped ASCII is digits, a few hex letters and
//     punctuation, with no letter pairs to read as English, and the
//     escape decoders find broken escapes or escapes of noise. Escapes
//     are regular, though: under the right inverse most of the view's
//     escape introducers start a well-formed escape of a printable
//     character again.
//   - leetspeak under a shift (ROT13 of 7h3 m3rg3r, 7u3 z3et3e): the
//     leet digits were not shifted, so neither the letters alone nor the
//     unleeted words read as English; under the right inverse of the
//     letters, with each digit read as the letter it stands for, they do.
//
// Each is tried only when its cheap test passes (enough escape
// introducers that do not start a printable escape; a leet view), and
// makes one view: the places it applies to read under the inverse, which
// the next depth then decodes (the escapes) or unleets.

// escapeIntroducer marks the bytes that start an escape: \ for JSON and
// C, & for HTML, = for quoted-printable and % for URLs.
var escapeIntroducer = [256]bool{'\\': true, '&': true, '=': true, '%': true}

// Escape repair parameters.
const (
	// minRepairEscapes is the fewest escape introducers, in the gaps of a
	// view (scanView's hint) and then in the stretch judged, that make a
	// repair worth trying: a short hidden text escaped has one per
	// character, and code or a URL a few.
	minRepairEscapes = 8
	// escapeSample is the length of the stretches of a view that are
	// judged, from its first shaped introducer.
	escapeSample = 512
	// escapeDensity is the most bytes per introducer of a stretch judged:
	// escaped text has one every 3 to 10.
	escapeDensity = 16
)

// repairEscapes offers view s reversed, or shifted, where that makes
// nearly all the escape introducers (19 in 20) start well-formed escapes
// of printable characters, and more of them than as it is. Text that is
// not escapes (code, a URL's query) has introducers too, but no shift
// makes nearly all of them escapes. The view is judged in stretches of
// escapeSample bytes, each overlapping the next by half, so that
// introducers elsewhere (decoys, or escapes that read well) do not hide
// a stretch and no short one is cut in two: each is tried first under
// the ciphers found for the stretches before it, and under all of them
// only if none of those fits, which keeps the work at most 52 readings
// of each byte.
func (e *expander) repairEscapes(vi int, ch *chain, s string) {
	if ch.rewrites > 0 {
		return // the escapes would be a third rewrite
	}
	rev, shift := ch.may(Reversed), ch.may(ROT13)
	if !rev && !shift {
		return
	}
	first, last, shaped := shapedIntroducers(s)
	if shaped < minRepairEscapes {
		return
	}
	var found []cipher
	var places, tight [][]span
	for a := max(0, first-8); a <= last; a += escapeSample / 2 {
		if e.halted() {
			return
		}
		b := min(len(s), a+escapeSample)
		c, ok := e.escapeCipher(s[a:min(len(s), b+maxEscapeLen)], b-a, rev, shift, found)
		if !ok {
			continue
		}
		k := slices.Index(found, c)
		if k < 0 {
			k = len(found)
			found, places, tight = append(found, c), append(places, nil), append(tight, nil)
		}
		places[k] = append(places[k], span{a, b})
		tight[k] = appendSpan(tight[k], brokenEscapes(s, a, b))
	}
	for k, c := range found {
		if e.halted() {
			return
		}
		e.offerCipher(vi, s, c, places[k])
		if !c.reversed || len(tight[k]) == 0 || e.halted() {
			continue
		}
		// And the broken escapes alone, without the context other
		// rewrites keep: escapes that read well as they are, reversed,
		// decode to bytes that are not text, and cost the view theirs.
		out, n := e.buf[:0], 0
		for i := range tight[k] {
			w := tight[k][len(tight[k])-1-i]
			if i > 0 {
				out = append(out, '\n')
			}
			out = applyCipher(out, s[w.start:w.end], c)
			n += w.end - w.start
		}
		e.offer(cand{n: n, view: vi, start: tight[k][0].start, enc: Reversed}, out)
	}
}

// brokenEscapes returns the span of s[a:b] from its first escape
// introducer that does not start an escape of a printable character to
// the end of its last one, with the longest escape after it.
func brokenEscapes(s string, a, b int) span {
	sp := span{-1, -1}
	for i := a; i < b; i++ {
		if !escapeIntroducer[s[i]] {
			continue
		}
		if r, size := escapeAt(s[i:]); size > 0 && printableEscaped(r) {
			i += size - 1
			continue
		}
		if sp.start < 0 {
			sp.start = i
		}
		sp.end = min(len(s), i+maxEscapeLen)
	}
	return sp
}

// maxEscapeLen is the length of the longest escape escapeAt reads but
// named entities: &#x10FFFF; and \u{10FFFF}.
const maxEscapeLen = 10

// appendSpan appends sp to spans, merged with the last one if they
// overlap.
func appendSpan(spans []span, sp span) []span {
	if sp.start < 0 {
		return spans
	}
	if n := len(spans); n > 0 && sp.start <= spans[n-1].end {
		spans[n-1].end = max(spans[n-1].end, sp.end)
		return spans
	}
	return append(spans, sp)
}

// escapeCipher returns the cipher under which nearly all the escape
// introducers of a stretch, those in its first end bytes (the rest is
// there for the escapes they start), start escapes of printable
// characters, and more than as it is: one of known, if one fits, else
// the best of all.
func (e *expander) escapeCipher(stretch string, end int, rev, shift bool, known []cipher) (cipher, bool) {
	n0, _, intro := escapeReading(stretch, end)
	if intro < minRepairEscapes || n0+2 > intro || intro*escapeDensity < end {
		// The escapes read well as they are, or there are too few of
		// them to be escaped text (an escape every few bytes) rather
		// than code with a \n or a %v here and there.
		return cipher{}, false
	}
	need := max(n0+2, (19*intro+19)/20)
	best, bestN, bestCost := cipher{}, need-1, 0
	try := func(c cipher) {
		e.local = applyCipher(e.local[:0], stretch, c)
		read := e.local
		if c.reversed {
			read = read[len(stretch)-end:] // the stretch's end is now its start
		}
		n, cost, _ := escapeReading(read, end)
		if n > bestN || n == bestN && best != (cipher{}) && cost < bestCost {
			best, bestN, bestCost = c, n, cost
		}
	}
	for _, c := range known {
		try(c)
	}
	if best != (cipher{}) {
		return best, true
	}
	if rev {
		try(cipher{reversed: true})
	}
	for k := uint8(1); shift && k < 26; k++ {
		try(cipher{shift: k})
	}
	return best, best != (cipher{})
}

// shapedIntroducers returns the positions of the first and last escape
// introducers of s that stand next to a letter, digit or # (as every
// escape's does, read either way), and how many there are.
func shapedIntroducers(s string) (first, last, n int) {
	first = -1
	for i := 0; i < len(s); i++ {
		if !escapeIntroducer[s[i]] {
			continue
		}
		if i > 0 && escapeNeighbour(s[i-1]) || i+1 < len(s) && escapeNeighbour(s[i+1]) {
			if first < 0 {
				first = i
			}
			last = i
			n++
		}
	}
	return first, last, n
}

func escapeNeighbour(c byte) bool { return isAlnum(c) || c == '#' }

// escapeReading counts the escapes starting in s[:end] that are well
// formed and stand for a printable character, and the introducers that
// stand next to a
// letter, digit or # (every escape's do); cost is what s decoded costs
// as English (textCost), which tells apart shifts that make equally many
// escapes well formed (a shift by one more or one less keeps most hex
// letters hex letters).
func escapeReading[T ~string | ~[]byte](s T, end int) (n, cost, shaped int) {
	var prev byte
	for i := 0; i < end; i++ {
		c := s[i]
		if escapeIntroducer[c] && (i > 0 && escapeNeighbour(s[i-1]) || i+1 < len(s) && escapeNeighbour(s[i+1])) {
			shaped++
			if r, size := escapeAt(s[i:]); size > 0 && printableEscaped(r) {
				n++
				i += size - 1
				c = 0x80 // beyond ASCII
				if r < utf8.RuneSelf {
					c = byte(r)
				}
			}
		}
		cost += int(textCost(prev, c))
		prev = c
	}
	return n, cost, shaped
}

// printableEscaped reports whether r is a character escaped text is made
// of: printable, or a tab or line break.
func printableEscaped(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || 0x20 <= r && r < 0x7f || r >= 0xa0 && r != utf8.RuneError
}

// escapeAt decodes the escape at the start of s (which begins with an
// introducer) and returns what it stands for and its length, or a length
// of 0: \uXXXX, \u{X…}, \xXX; &#…; &#x…; and the named entities of HTML
// with their semicolon; =XX and %XX.
func escapeAt[T ~string | ~[]byte](s T) (rune, int) {
	if len(s) < 3 {
		return 0, 0
	}
	switch s[0] {
	case '\\':
		switch s[1] {
		case 'u':
			if s[2] == '{' {
				return hexNumber(s, 3, 6, '}')
			}
			if len(s) >= 6 {
				if r, ok := hex4(string(s[2:6])); ok {
					return r, 6
				}
			}
		case 'x':
			if isHexDigit(s[2]) && len(s) > 3 && isHexDigit(s[3]) {
				return rune(unhex(s[2])<<4 | unhex(s[3])), 4
			}
		}
	case '&':
		if s[1] == '#' {
			if s[2] == 'x' || s[2] == 'X' {
				return hexNumber(s, 3, 6, ';')
			}
			return decimalNumber(s, 2, 7, ';')
		}
		if n := entityLen(string(s[:min(len(s), 34)])); n > 0 {
			if dec := html.UnescapeString(string(s[:n])); dec != string(s[:n]) {
				r, _ := utf8.DecodeRuneInString(dec)
				return r, n
			}
		}
	case '=', '%':
		if isHexDigit(s[1]) && isHexDigit(s[2]) {
			return rune(unhex(s[1])<<4 | unhex(s[2])), 3
		}
	}
	return 0, 0
}

// hexNumber parses one to most hex digits at s[at:] ended by end, and
// returns the rune and the length of s up to and including end.
func hexNumber[T ~string | ~[]byte](s T, at, most int, end byte) (rune, int) {
	var r rune
	j := at
	for ; j < len(s) && j < at+most && isHexDigit(s[j]); j++ {
		r = r<<4 | rune(unhex(s[j]))
	}
	if j == at || j >= len(s) || s[j] != end || !utf8.ValidRune(r) {
		return 0, 0
	}
	return r, j + 1
}

// decimalNumber is hexNumber for decimal digits.
func decimalNumber[T ~string | ~[]byte](s T, at, most int, end byte) (rune, int) {
	var r rune
	j := at
	for ; j < len(s) && j < at+most && isDigit(s[j]); j++ {
		r = r*10 + rune(s[j]-'0')
	}
	if j == at || j >= len(s) || s[j] != end || !utf8.ValidRune(r) {
		return 0, 0
	}
	return r, j + 1
}

// repairLeetShift's parameters: the pairs a leet view needs to be
// judged, and how much better than as it is, and than under any other
// shift, the best shift must make it read, on average per pair (in
// englishPair's units, as cipher.go's).
const (
	leetShiftPairs = minPairs
	leetShiftGain  = 10
	leetShiftLead  = 5
)

// repairLeetShift offers view s, a leet view, with its letters shifted
// back, where its leet words read as English under some shift of their
// letters with their leet digits read as the letters they stand for, and
// clearly better than as they are. Each cluster of leet words (words
// less than 2×patchContext apart) is judged on its own, so that leetspeak
// that reads well as it is does not hide a shifted cluster elsewhere.
func (e *expander) repairLeetShift(vi int, ch *chain, s string) {
	if !ch.may(ROT13) || !ch.may(Leet) || ch.rewrites > 0 {
		return
	}
	// Letters are 0–25 and shift; what a leet character stands for is
	// 26 + its letter and does not.
	codes := e.pairs[:0]
	type cluster struct {
		span
		from int // its first pair in codes
	}
	var clusters []cluster
	forLeetWords(s, false, func(start, end, _ int) {
		if n := len(clusters); n > 0 && start-clusters[n-1].end <= 2*patchContext {
			clusters[n-1].end = end
		} else {
			clusters = append(clusters, cluster{span{start, end}, len(codes)})
		}
		prev := -1
		for i := start; i < end; i++ {
			c := s[i]
			var code int
			switch {
			case isLetter(c):
				code = lowerIndex(c)
			case leetLetter[c] != 0:
				code = 26 + int(leetLetter[c]-'a')
			default:
				prev = -1
				continue
			}
			if prev >= 0 {
				codes = append(codes, uint16(prev)<<8|uint16(code))
			}
			prev = code
		}
	})
	e.pairs = codes
	var found [26][]span
	var order []uint8
	for i, cl := range clusters {
		to := len(codes)
		if i+1 < len(clusters) {
			to = clusters[i+1].from
		}
		if k := leetShiftOf(codes[cl.from:to]); k != 0 {
			if found[k] == nil {
				order = append(order, k)
			}
			found[k] = append(found[k], cl.span)
		}
	}
	for _, k := range order {
		if e.halted() {
			return
		}
		e.offerCipher(vi, s, cipher{shift: k}, found[k])
	}
}

// leetShiftOf returns the shift under which the pairs of a cluster of
// leet words (see repairLeetShift) read as English, or 0.
func leetShiftOf(codes []uint16) uint8 {
	n := len(codes)
	if n < leetShiftPairs {
		return 0
	}
	cost := func(k int) int {
		sum := 0
		for _, p := range codes {
			a, b := mixedLetter(int(p>>8), k), mixedLetter(int(p&0xff), k)
			sum += int(englishPair[a*26+b])
		}
		return sum
	}
	c0 := cost(0)
	if c0 <= englishCost*n-leetShiftGain*n {
		return 0 // leetspeak that reads as English as it is
	}
	best, bestCost, second := 0, c0, c0
	for k := 1; k < 26; k++ {
		switch c := cost(k); {
		case c < bestCost:
			best, bestCost, second = k, c, bestCost
		case c < second:
			second = c
		}
	}
	// The leet digits read as letters under every shift, so a shift
	// gains less than it does on plain words (cipher.go's shiftGain);
	// it must still read as English, and clearly better than any other.
	if best == 0 || bestCost > englishCost*n || c0-bestCost < leetShiftGain*n || second-bestCost < leetShiftLead*n {
		return 0
	}
	return uint8(best)
}

// mixedLetter is the letter of code (see repairLeetShift) under a shift
// by k: a letter shifted, what a leet character stands for as it is.
func mixedLetter(code, k int) int {
	if code >= 26 {
		return code - 26
	}
	return (code + k) % 26
}

// repairLeetEscapes offers view s with the hex digits of its escapes of
// single bytes read as leetspeak of hex (see leetruns.go), when there
// are at least minRepairEscapes such escapes and their digits have none
// of the letters leetspeak replaces (a and e): leetspeak of escaped text
// writes the a and e of \u006e and =6E as 4 and 3, and the escapes still
// decode, to the wrong letters.
func (e *expander) repairLeetEscapes(vi int, ch *chain, s string) {
	if !ch.may(Leet) || ch.rewrites > 0 {
		return
	}
	digits := e.src[:0]
	var at []int
	leets := 0
	for i := 0; i < len(s); i++ {
		if !escapeIntroducer[s[i]] {
			continue
		}
		j := byteEscapeDigits(s, i)
		if j < 0 {
			continue
		}
		for _, c := range []byte{s[j], s[j+1]} {
			if leetReplaced[c] {
				e.src = digits
				return
			}
			leets += int(b2u8(c == '3' || c == '4' || c == '8'))
		}
		digits = append(digits, s[j], s[j+1])
		at = append(at, j)
		i = j + 1
	}
	e.src = digits
	if len(at) < minRepairEscapes || leets < minLeetDigits {
		return
	}
	read, ok := readLeetRun(e.local[:0], string(digits), hexAlphabet, 2)
	e.local = read[:0]
	if !ok || string(read) == string(digits) {
		return
	}
	out := append(e.buf[:0], s...)
	e.patches.spans = e.patches.spans[:0]
	for k, j := range at {
		if out[j] != read[2*k] || out[j+1] != read[2*k+1] {
			out[j], out[j+1] = read[2*k], read[2*k+1]
			e.patches.mark(j, j+2)
		}
	}
	e.rewrite(vi, Leet, s, out)
}

// byteEscapeDigits returns where the two hex digits of the escape of one
// byte at s[i:] start (\xXX, \u00XX, %XX, =XX, &#xXX;), or −1.
func byteEscapeDigits(s string, i int) int {
	j := -1
	switch {
	case s[i] == '%' || s[i] == '=':
		j = i + 1
	case s[i] == '\\' && i+1 < len(s) && s[i+1] == 'x':
		j = i + 2
	case s[i] == '\\' && i+3 < len(s) && s[i+1] == 'u' && s[i+2] == '0' && s[i+3] == '0':
		j = i + 4
		if i+6 < len(s) && isHexDigit(s[i+6]) {
			return -1 // \u00XXX… is not \u00XX
		}
	case s[i] == '&' && i+2 < len(s) && s[i+1] == '#' && (s[i+2] == 'x' || s[i+2] == 'X'):
		j = i + 3
		if i+5 >= len(s) || s[i+5] != ';' {
			return -1
		}
	}
	if j < 0 || j+1 >= len(s) || !isHexDigit(s[j]) || !isHexDigit(s[j+1]) {
		return -1
	}
	return j
}
