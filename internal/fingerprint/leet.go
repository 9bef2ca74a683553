package fingerprint

import (
	"slices"
	"strings"
)

// Leetspeak writes letters as the digits and symbols that resemble them
// (p4ssw0rd). Normalisation keeps digits, so a leet copy of a private
// text shares none of its prints.
//
// A leet word is a run of letters and leet characters that stands
// between spaces or sentence punctuation (not inside a token: base64, a
// URL, an escape sequence or an e-mail address), in which letters and
// leet characters alternate at least twice (7h3, p4ss, h4x0r; a name
// has its digits at one end, base64, sha256, 2FA, or is a numeronym,
// i18n, k8s), or that holds two of @ and $. Its letters are not in
// camelCase or random case, and it is not hex digits only (a short hash
// or id, 5dbb481, or hex data) or a hex literal (0x7f). ! and | at the
// ends of a word are punctuation, and + is never leet: it joins the
// words of a query string.
//
// A view is rewritten when it has at least minLeetWords distinct leet
// words, holding at least minLeet leet characters in all, so that a
// name or id in code or prose, however often repeated, does not make a
// view. Then every word that mixes letters and leet characters is
// rewritten, however it is shaped, in any case, or inside a token, and
// so is every number of up to three digits (4 is a, 17 is it): in a text
// that is leetspeak they are leetspeak too.

// minLeet is the fewest leet characters, over all leet words of a view,
// that make a leet view: a name like base64url or l10n has one or two,
// and a sentence of leetspeak has a dozen.
const minLeet = 6

// minLeetWords is the fewest distinct leet words that make a leet view.
const minLeetWords = 3

// leetLetter maps a leet character to the letter it stands for; 0 for
// the rest. 1 and | stand for i or l, see leetAmbiguous.
var leetLetter = [256]byte{
	'0': 'o', '1': 'i', '2': 'z', '3': 'e', '4': 'a', '5': 's', '6': 'g', '7': 't', '8': 'b', '9': 'g',
	'@': 'a', '$': 's', '!': 'i', '|': 'l',
}

// unleet appends to dst the view with its leet words rewritten, and
// reports whether it has enough of them to be a leet view.
func unleet(dst []byte, s string, p *patches) ([]byte, bool) {
	if !isLeet(s) {
		return dst, false
	}
	last := 0
	forLeetWords(s, true, func(start, end, _ int) {
		dst = append(dst, s[last:start]...)
		at := len(dst)
		dst = appendUnleet(dst, s[start:end])
		p.mark(at, len(dst))
		last = end
	})
	return append(dst, s[last:]...), true
}

// isLeet reports whether s has at least minLeetWords distinct leet
// words holding minLeet leet characters: code repeats its names
// (base64url, utf8mb4) and leetspeak does not repeat its words.
func isLeet(s string) bool {
	var words []string
	total := 0
	forLeetWords(s, false, func(start, end, leets int) {
		if len(words) >= minLeetWords && total >= minLeet {
			return // enough; every new word adds a leet character
		}
		if w := s[start:end]; !slices.Contains(words, w) {
			words = append(words, w)
			total += leets
		}
	})
	return len(words) >= minLeetWords && total >= minLeet
}

// forLeetWords calls fn with the bounds of each leet word of s (each
// word mixing letters and leet characters, if lenient) and the number of
// leet characters in it.
func forLeetWords(s string, lenient bool, fn func(start, end, leets int)) {
	for i := 0; i < len(s); {
		if c := s[i]; !isLetter(c) && leetLetter[c] == 0 {
			i++
			continue
		}
		j := i
		for j < len(s) && (isLetter(s[j]) || leetLetter[s[j]] != 0) {
			j++
		}
		start, end := i, j
		for start < end && (s[start] == '!' || s[start] == '|') {
			start++
		}
		for end > start && (s[end-1] == '!' || s[end-1] == '|') {
			end--
		}
		i = j
		if start == end || !leetBounded(s, start, end, lenient) {
			continue
		}
		if n := leetWord(s[start:end], lenient); n > 0 {
			fn(start, end, n)
		}
	}
}

// leetBounded reports whether s[start:end] stands as a word: after and
// before a space or sentence punctuation, or, if lenient, anything but
// the start of an escape sequence; and, if it holds an @, not followed
// by a dot (local@example.com).
func leetBounded(s string, start, end int, lenient bool) bool {
	ok := &wordBound
	if lenient {
		ok = &notEscape
	}
	if start > 0 && !ok[s[start-1]] || end < len(s) && !ok[s[end]] {
		return false
	}
	return end >= len(s) || s[end] != '.' || strings.IndexByte(s[start:end], '@') < 0
}

// wordBound marks the bytes that may stand next to a word of prose, and
// notEscape those that do not begin an escape sequence.
var wordBound, notEscape = func() (w, n [256]bool) {
	for _, c := range []byte(" \t\n\r\v\f.,;:?!'\"()[]{}<>*") {
		w[c] = true
	}
	for c := range n {
		n[c] = strings.IndexByte(`\%&#=`, byte(c)) < 0
	}
	return w, n
}()

// leetWord returns the number of leet characters in w if it is a leet
// word (or, if lenient, mixes letters and leet characters, or is a
// number of up to three digits), else 0.
func leetWord(w string, lenient bool) int {
	letters, leets, money, segments := 0, 0, 0, 0
	hexOnly, lower := true, false
	prevLetter := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		hexOnly = hexOnly && isHexDigit(c)
		letter := isLetter(c)
		if i == 0 || letter != prevLetter {
			segments++
		}
		prevLetter = letter
		switch {
		case letter:
			if isUpper(c) && lower && !lenient {
				return 0 // camelCase or random case
			}
			lower = lower || !isUpper(c)
			letters++
		default:
			leets++
			if c == '@' || c == '$' {
				money++
			}
		}
	}
	switch {
	case lenient && letters == 0 && money == 0 && leets <= 3 && allDigits(w):
		return leets // 4 is a, 17 is it
	case letters == 0 || leets == 0 || len(w) > 2 && w[0] == '0' && w[1]|0x20 == 'x':
		return 0 // no letters, no leet, or a hex literal
	case lenient:
		return leets
	case hexOnly:
		return 0 // a hash or an id, however short (5dbb481)
	case money >= 2 || segments >= 3 && !numeronym(w, segments):
		return leets
	}
	return 0
}

// numeronym reports a word like i18n, k8s or l10n: one letter, a number,
// one letter.
func numeronym(w string, segments int) bool {
	return segments == 3 && isLetter(w[0]) && !isLetter(w[1]) && isLetter(w[len(w)-1]) && !isLetter(w[len(w)-2])
}

// appendUnleet appends a leet word with each leet character replaced by
// its letter, in the word's case.
func appendUnleet(dst []byte, w string) []byte {
	upper := true
	for i := 0; i < len(w); i++ {
		if c := w[i]; isLetter(c) && !isUpper(c) {
			upper = false
			break
		}
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if isLetter(c) {
			dst = append(dst, c)
			continue
		}
		l := leetLetter[c]
		if c == '1' || c == '|' {
			l = leetAmbiguous(w, i)
		}
		if upper {
			l -= 'a' - 'A'
		}
		dst = append(dst, l)
	}
	return dst
}

// leetAmbiguous chooses i or l for the 1 or | at w[i]: i, the commoner
// meaning, unless l makes clearly likelier English letter pairs with its
// neighbours (by leetMargin), read forwards or backwards (the text may
// also be reversed). Letter pairs alone cannot tell said from sald; they
// can tell hello from heiio.
func leetAmbiguous(w string, i int) byte {
	pair := func(a, b byte) int { return int(englishPair[lowerIndex(a)*26+lowerIndex(b)]) }
	cost := func(l byte) int {
		fwd, rev := 0, 0
		if i > 0 {
			if p := leetOrLetter(w[i-1]); p != 0 {
				fwd, rev = fwd+pair(p, l), rev+pair(l, p)
			}
		}
		if i+1 < len(w) {
			if n := leetOrLetter(w[i+1]); n != 0 {
				fwd, rev = fwd+pair(l, n), rev+pair(n, l)
			}
		}
		return min(fwd, rev)
	}
	if cost('l')+leetMargin < cost('i') {
		return 'l'
	}
	return 'i'
}

// leetMargin is how much likelier, in englishPair's units, l must make a
// word than i to be chosen for a 1.
const leetMargin = 30

// leetOrLetter returns the letter c is or stands for, or 0.
func leetOrLetter(c byte) byte {
	if isLetter(c) {
		return c
	}
	return leetLetter[c]
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
