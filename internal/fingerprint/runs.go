package fingerprint

import (
	"unicode"
	"unicode/utf8"
)

// An encoded run can itself be reversed or Caesar-shifted (the model
// base64-encodes, then applies ROT13 to the result): then it is still a
// run of its alphabet, or of base64's, but decodes to noise. Every run
// that decodes to at least minRepair bytes of noise, and is not inside a
// base64 run that decoded to text or a longer run tried already (see
// repairFailed), is tried undone, cheaply: only its first headLen
// characters are decoded, and only under the shifts that the structure
// of encoded ASCII allows, which are few. A head must decode to plain
// text (isPlainText), not merely printable bytes.
//
//   - Reversed: the run read backwards.
//   - Shifted base64: the first character of each group of four encodes
//     the top six bits of a byte, below 32 for ASCII, so it is A–Z or
//     a–f. Upper-case letters stay upper-case under a shift; the shifts
//     that bring the lower-case group starts back into a–f (all but one
//     in eight of the group starts, for text beyond ASCII) are tried,
//     when there are at most maxRunShifts of them.
//   - Shifted base32: the first character of each group of eight encodes
//     five bits below 16 for ASCII (A–P), the second one whose second
//     lowest bit is 0; the shifts that satisfy both are tried.
//   - Shifted hex: digits do not shift and a–f become six other letters
//     in a row, so a base64 run of digits and letters of one case within
//     six consecutive letters is tried under the shifts that bring them
//     back into a–f.
//
// A run undone whose head decodes to text is offered as a view of its
// own: the whole run, undone, which the next depth decodes.

// headLen is how many characters of a run are decoded to test a repair:
// a multiple of every alphabet's quantum.
const headLen = 64

// maxRunShifts is the most shifts the structure of a run may allow for
// them to be tried: one that allows more (a run whose constrained
// characters are all upper case, say) gives no signal of a shift.
const maxRunShifts = 10

// repairRun tries the run s[start:end] of alphabet a, which decoded to
// noise, reversed and shifted, and reports whether a repair was offered.
func (e *expander) repairRun(vi int, ch *chain, a *alphabet, s string, start, end int) bool {
	run := s[start:end]
	repaired := false
	if ch.may(Reversed) {
		e.src = appendReversed(e.src[:0], run[max(0, len(run)-headLen):])
		if e.headIsText(a, e.src) {
			out := appendReversed(e.buf[:0], run)
			e.offer(cand{n: len(run), view: vi, start: start, enc: Reversed}, out)
			repaired = true
		}
	}
	if !ch.may(ROT13) {
		return repaired
	}
	var shifts [26]bool
	switch a.enc {
	case Base64, Base64URL:
		runShifts(&shifts, run, 4, 0, 1<<6-1, false) // a–f
		repaired = e.tryShifts(vi, a, run, start, &shifts) || repaired
		if hexShifts(&shifts, run) {
			repaired = e.tryShifts(vi, hexAlphabet, run, start, &shifts) || repaired
		}
	case Base32:
		runShifts(&shifts, run, 8, 0, 1<<16-1, true) // A–P
		var second [26]bool
		runShifts(&second, run, 8, 1, evenPairs, true)
		for k := range shifts {
			shifts[k] = shifts[k] && second[k]
		}
		repaired = e.tryShifts(vi, a, run, start, &shifts) || repaired
	}
	return repaired
}

// evenPairs is the set of base32 values whose second lowest bit is 0.
var evenPairs = func() (m uint32) {
	for v := range 32 {
		if v&2 == 0 {
			m |= 1 << v
		}
	}
	return m
}()

// tryShifts offers run shifted by each marked shift under which its head
// decodes to text in alphabet a, if at most maxRunShifts are marked, and
// reports whether it offered one.
func (e *expander) tryShifts(vi int, a *alphabet, run string, start int, shifts *[26]bool) bool {
	n := 0
	for _, ok := range shifts {
		n += int(b2u8(ok))
	}
	if n > maxRunShifts {
		return false // no signal: the structure allows too many
	}
	offered := false
	for k := 1; k < 26; k++ {
		if !shifts[k] {
			continue
		}
		e.src = append(e.src[:0], run[:min(len(run), headLen)]...)
		shiftLetters(e.src, uint8(k))
		if !e.headIsText(a, e.src) {
			continue
		}
		out := append(e.buf[:0], run...)
		shiftLetters(out, uint8(k))
		e.offer(cand{n: len(run), view: vi, start: start, enc: CaesarShift(26 - k)}, out)
		offered = true
	}
	return offered
}

// headIsText reports whether head, all of alphabet a, decodes to at
// least minRepair bytes of plain text. A repair is a guess, and noise
// passes isText's 80% often enough in short runs: it must read as words.
func (e *expander) headIsText(a *alphabet, head []byte) bool {
	if !a.all(head) {
		return false
	}
	var buf [headLen]byte
	b, ok := a.decode(buf[:0], head)
	return ok && len(b) >= minRepair && isPlainText(b)
}

// isPlainText reports valid UTF-8 with no control characters but tabs
// and line breaks, at least 95% printable, of which at least two thirds
// are letters, digits or spaces.
func isPlainText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	total, printable, words := 0, 0, 0
	for _, r := range string(b) {
		total++
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			printable++
			words++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			printable++
			words++
		case unicode.IsPrint(r):
			printable++
		case r < ' ' || r == 0x7f:
			return false
		}
	}
	return printable*20 >= total*19 && words*3 >= total*2
}

// runShifts marks in shifts the shifts k under which the character at
// offset off of every group of the given size in the first headLen*4
// characters of run, but one in eight (UTF-8 text beyond ASCII breaks
// the rule where its bytes start a group), is a letter whose value,
// shifted, is in ok (a set of values, bit v for value v). For base64
// only lower-case letters are constrained (values a−f are 0–5) and
// upper-case ones always pass; for base32 (fold) letters of either case
// are constrained (A–Z are 0–25) and digits are the values 26–31 under
// every shift. If no letter constrains the shift, no shift is marked:
// there are too many to try.
func runShifts(shifts *[26]bool, run string, size, off int, ok uint32, fold bool) {
	var counts [26]int
	total, bad, constrained := 0, 0, 0
	for i := off; i < len(run) && i < 4*headLen; i += size {
		total++
		switch c := run[i]; {
		case fold && isLetter(c):
			counts[lowerIndex(c)]++
			constrained++
		case !fold && 'a' <= c && c <= 'z':
			counts[c-'a']++
			constrained++
		case !fold && 'A' <= c && c <= 'Z':
		case fold && '2' <= c && c <= '7' && ok&(1<<(c-'2'+26)) != 0:
		default:
			bad++
		}
	}
	if constrained == 0 || 8*bad > total {
		return
	}
	var present [26]struct{ l, n int }
	m := 0
	for l, n := range counts {
		if n > 0 {
			present[m] = struct{ l, n int }{l, n}
			m++
		}
	}
	for k := 1; k < 26; k++ {
		viol := bad
		for _, p := range present[:m] {
			if ok&(1<<mod26[p.l+k]) == 0 {
				viol += p.n
			}
		}
		shifts[k] = 8*viol <= total
	}
}

// hexShifts marks the shifts that turn run into hex, if it is digits
// and letters of one case within six consecutive letters, and reports
// whether it did.
func hexShifts(shifts *[26]bool, run string) bool {
	var letters uint32
	upper, lower := false, false
	for i := 0; i < len(run) && i < 4*headLen; i++ {
		switch c := run[i]; {
		case isDigit(c):
		case 'a' <= c && c <= 'z':
			letters |= 1 << (c - 'a')
			lower = true
		case 'A' <= c && c <= 'Z':
			letters |= 1 << (c - 'A')
			upper = true
		default:
			return false
		}
	}
	if letters == 0 || upper && lower || letters&0x3f == letters {
		return false // no letters, mixed case, or hex already
	}
	found := false
	for k := 1; k < 26; k++ {
		rot := (letters<<k | letters>>(26-k)) & (1<<26 - 1)
		if rot&^0x3f == 0 {
			shifts[k] = true
			found = true
		} else {
			shifts[k] = false
		}
	}
	return found
}
