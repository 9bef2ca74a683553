package fingerprint

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Letters spaced out (c r e d), joined by separators (c-r-e-d, c.r.e.d,
// c_r_e_d) or interleaved with invisible characters already normalise to
// the original, because normalisation keeps only letters and digits. What
// they defeat is everything that reads the view as it is: a token spaced
// out is no token, an escape sequence spaced out is no escape, and
// base64 or hex with a separator between every character, or every byte
// (4a 6f 68 6e, 4a:6f:68:6e), is no run of its alphabet. The spaced view
// puts them back together, in three steps:
//
//   - Invisible characters (format characters such as zero-width spaces
//     and joiners, soft hyphens, bidirectional controls, variation
//     selectors, and the invisible fillers and blanks that count as
//     letters or symbols) are removed, wherever they are.
//   - A spaced run is at least minSpaced characters, any at all, each
//     followed by a separator (space, tab, - . _ * / | , ~ +
//     : · •) but the last. The separator used most often in the run is
//     removed and the others are kept, so that letters spaced by dashes
//     and words by spaces (c-r-e-d a-r-e) stay words. At least three
//     quarters of the separators must be that one, at least a quarter of
//     the characters letters or digits (a rule of dashes is not text, and
//     HTML entities spaced out, &-#-7-2-;, are) and at most a quarter
//     spaces: code, whose operators are spaced and indented, is neither.
//   - A run of at least minSpaced pairs of hex digits separated by one to
//     three characters that are neither letters nor digits (a hex dump)
//     is joined the same way.
//
// Prose does not hold eight one-letter words in a row, nor code, so they
// make no spaced view.

// minSpaced is the fewest characters in a spaced run, and the fewest
// pairs in a run of hex pairs.
const minSpaced = 8

// maxSep is the longest separator between hex pairs, in runes.
const maxSep = 3

// unspace appends to dst the view without invisible characters and with
// its spaced runs joined, and reports whether that changed anything. The
// hints say which of the steps can apply to the view as it is; once a
// step changed it, the later ones look again.
func unspace(dst []byte, s string, h *hints) ([]byte, bool) {
	start := len(dst)
	text := s
	if h.invisible {
		if out, changed := dropInvisible(dst, s); changed {
			text = string(out[start:])
		}
		dst = dst[:start]
	}
	if h.spaced || text != s {
		if runs := alternatingRuns(text); len(runs) > 0 {
			text = string(joinRuns(dst, text, runs)[start:])
		}
	}
	if (h.hexPairs || text != s) && mayHexPairs(text) {
		if runs := hexPairRuns(text); len(runs) > 0 {
			text = string(joinRuns(dst, text, runs)[start:])
		}
	}
	if text == s {
		return dst, false
	}
	return append(dst, text...), true
}

// isInvisible reports the runes an agent can put between letters
// without changing how a text looks: format characters (zero-width
// spaces and joiners, soft hyphens, bidirectional controls, tags …),
// variation selectors, the combining grapheme joiner, and the invisible
// fillers and blanks that count as letters or symbols. Below U+2000
// only a few are, which the common scripts meet without a table search.
func isInvisible(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r < 0x2000:
		switch r {
		case 0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x180E:
			return true
		}
		return 0x600 <= r && r <= 0x8FF && unicode.Is(unicode.Cf, r)
	}
	switch r {
	case 0x3164, 0xFFA0, 0x2800:
		return true
	}
	return 0xFE00 <= r && r <= 0xFE0F || 0xE0100 <= r && r <= 0xE01EF || unicode.Is(unicode.Cf, r)
}

// dropInvisible appends s without its invisible runes and reports
// whether there were any. Tag characters (U+E0000–E007F, format
// characters) are dropped here too; UnicodeTags reads what they spell.
func dropInvisible(dst []byte, s string) ([]byte, bool) {
	changed := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isInvisible(r) {
			changed = true
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst, changed
}

// A spacedRun is s[start:end], to be joined by removing the separator
// s[sepStart:sepEnd] wherever it follows a character (alternating) or
// stands between hex pairs.
type spacedRun struct {
	start, end       int
	sepStart, sepEnd int
	alternating      bool
}

// isSpacer reports the separators of an alternating run.
func isSpacer(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpacer[r]
	}
	return r == '·' || r == '•'
}

var asciiSpacer = func() (t [utf8.RuneSelf]bool) {
	for _, c := range " \t-._*/|,~+:" {
		t[c] = true
	}
	return t
}()

// alternatingRuns finds the runs of s in which every character but the
// last is followed by a separator.
func alternatingRuns(s string) []spacedRun {
	var runs []spacedRun
	for i := 0; i < len(s); {
		// Most characters of ASCII text are not followed by a separator,
		// or are but the one after the next is not: two table lookups.
		if i+3 < len(s) && s[i]|s[i+1] < utf8.RuneSelf &&
			(!asciiSpacer[s[i+1]] || s[i+2]|s[i+3] < utf8.RuneSelf && !asciiSpacer[s[i+3]]) {
			i++
			continue
		}
		r, next, ok := alternatingRun(s, i)
		if ok {
			runs = append(runs, r)
		}
		i = next
	}
	return runs
}

// alternatingRun reads the alternating run that starts at s[i], if it is
// one, and returns it and where to resume: after the run if it was long
// enough, whether or not it was text (read from the next character it
// would be the same run, its separators taken for characters), else at
// the next character.
func alternatingRun(s string, i int) (spacedRun, int, bool) {
	var tally sepTally
	chars, alnum, blank := 0, 0, 0
	last := i // end of the last character
	for j := i; j < len(s); {
		c, size := utf8.DecodeRuneInString(s[j:])
		chars++
		switch {
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			alnum++
		case unicode.IsSpace(c):
			blank++
		}
		j += size
		last = j
		sep, ssize := utf8.DecodeRuneInString(s[j:])
		if j == len(s) || !isSpacer(sep) {
			break
		}
		tally.add(s, j, j+ssize)
		j += ssize
	}
	if chars < minSpaced {
		_, size := utf8.DecodeRuneInString(s[i:])
		return spacedRun{}, i + size, false
	}
	sep, n := tally.most()
	if 4*alnum < chars || 4*blank > chars || 4*n < 3*(chars-1) {
		return spacedRun{}, last, false
	}
	return spacedRun{start: i, end: last, sepStart: sep.start, sepEnd: sep.end, alternating: true}, last, true
}

// escapeIntroducers begin escape sequences of hex digits (=4A, %4A,
// \x4A, &#x4A;): pairs they separate are escapes, not a spaced run.
const escapeIntroducers = `=%\&#;`

// hexPairRuns finds the runs of at least minSpaced pairs of hex digits,
// each pair a word of its own, separated by one to three runes that are
// neither letters nor digits nor escapeIntroducers.
func hexPairRuns(s string) []spacedRun {
	var runs []spacedRun
	var tally sepTally
	pairs, start, end := 0, 0, 0
	finish := func() {
		if pairs >= minSpaced {
			sep, _ := tally.most()
			runs = append(runs, spacedRun{start: start, end: end, sepStart: sep.start, sepEnd: sep.end})
		}
		pairs, tally = 0, sepTally{}
	}
	for i := 0; i < len(s); {
		j := alnumEnd(s, i)
		if j == i {
			k, n := sepEnd(s, i)
			if pairs > 0 && (n > maxSep || k == len(s) || strings.ContainsAny(s[i:k], escapeIntroducers)) {
				finish()
			}
			if pairs > 0 {
				tally.add(s, i, k)
			}
			i = k
			continue
		}
		if j-i == 2 && isHexDigit(s[i]) && isHexDigit(s[i+1]) {
			if pairs == 0 {
				start = i
			}
			pairs++
			end = j
		} else {
			finish()
		}
		i = j
	}
	finish()
	return runs
}

// mayHexPairs reports whether s may hold a run of hex pairs: minSpaced
// words of two hex digits in a row, each at most 12 bytes (three runes)
// from the last. One pass of table lookups; hexPairRuns then reads the
// runes.
func mayHexPairs(s string) bool {
	pairs, gap, word := 0, 0, 0
	hexWord := true
	for i := 0; i <= len(s); i++ {
		if i < len(s) && wordClass[s[i]] != 0 {
			if word == 0 && gap > 12 {
				pairs = 0
			}
			word++
			hexWord = hexWord && isHexDigit(s[i])
			continue
		}
		if word > 0 {
			if word == 2 && hexWord {
				if pairs++; pairs >= minSpaced {
					return true
				}
			} else {
				pairs = 0
			}
			word, gap, hexWord = 0, 0, true
		}
		gap++
	}
	return false
}

// alnumEnd returns the end of the run of letters and digits at s[i:].
func alnumEnd(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !isAlnum(c) {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		i += size
	}
	return i
}

// sepEnd returns the end of the run of runes at s[i:] that are neither
// letters nor digits, and its length in runes.
func sepEnd(s string, i int) (int, int) {
	n := 0
	for i < len(s) && alnumEnd(s, i) == i {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return i, n
}

// sepTally counts the separators of a run, keeping the first four
// distinct ones; one that is not among them is never the most used of a
// run long enough to matter.
type sepTally struct {
	seps [4]struct{ start, end, n int }
	m    int
}

func (t *sepTally) add(s string, start, end int) {
	sep := s[start:end]
	for i := range t.seps[:t.m] {
		if x := &t.seps[i]; s[x.start:x.end] == sep {
			x.n++
			return
		}
	}
	if t.m < len(t.seps) {
		t.seps[t.m] = struct{ start, end, n int }{start, end, 1}
		t.m++
	}
}

// most returns the bounds of the most used separator, the first in case
// of a tie, and how many times it was used.
func (t *sepTally) most() (sep struct{ start, end int }, n int) {
	best := 0
	for i := 1; i < t.m; i++ {
		if t.seps[i].n > t.seps[best].n {
			best = i
		}
	}
	x := t.seps[best]
	return struct{ start, end int }{x.start, x.end}, x.n
}

// joinRuns appends s with its spaced runs joined.
func joinRuns(dst []byte, s string, runs []spacedRun) []byte {
	last := 0
	for _, r := range runs {
		dst = append(dst, s[last:r.start]...)
		sep := s[r.sepStart:r.sepEnd]
		if r.alternating {
			dst = appendAlternating(dst, s[r.start:r.end], sep)
		} else {
			dst = appendHexPairs(dst, s[r.start:r.end], sep)
		}
		last = r.end
	}
	return append(dst, s[last:]...)
}

// appendAlternating appends the characters of an alternating run, and
// the separators after them that are not sep.
func appendAlternating(dst []byte, run, sep string) []byte {
	for i := 0; i < len(run); {
		_, size := utf8.DecodeRuneInString(run[i:])
		dst = append(dst, run[i:i+size]...)
		i += size
		if i < len(run) {
			_, ssize := utf8.DecodeRuneInString(run[i:])
			if run[i:i+ssize] != sep {
				dst = append(dst, run[i:i+ssize]...)
			}
			i += ssize
		}
	}
	return dst
}

// appendHexPairs appends a run of hex pairs without the separators equal
// to sep, keeping the others.
func appendHexPairs(dst []byte, run, sep string) []byte {
	for i := 0; i < len(run); {
		if j := alnumEnd(run, i); j > i {
			dst = append(dst, run[i:j]...)
			i = j
			continue
		}
		k, _ := sepEnd(run, i)
		if run[i:k] != sep {
			dst = append(dst, run[i:k]...)
		}
		i = k
	}
	return dst
}
