package fingerprint

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token length bounds, in bytes. Shorter values are too guessable to
// attribute; longer ones are fingerprinted (and a secret that long is
// rarely quoted whole).
const (
	minToken = 12
	maxToken = 128
)

// Tokens calls fn with every short high-entropy value in text: API keys,
// passwords, tokens, account numbers, card numbers. Fingerprints need a
// shared run of K+W−1 normalised bytes, so a 20-character key copied from a
// private result into a sink argument would slip past them; the engine
// stores a keyed Digest of each token instead and compares exactly.
//
// The same rules run on private results and on sink arguments, so they are
// deterministic, context-free and symmetric: a value found on one side is
// found, in the same form, on the other.
//
// Candidates:
//   - A candidate is a maximal run of bytes that are not ASCII whitespace,
//     quotes (" ' `) or one of , ; ( ) [ ] { } < > |, with trailing
//     . ! ? : = trimmed.
//   - A candidate is also split at = and :, and each part is a candidate
//     too, so api_key=sk_live_… yields sk_live_…. A candidate holding & or
//     ? is split again at = : & ?, so a key in a URL query is found
//     whatever parameter carries it; the first split is skipped for URLs
//     (it would only yield key&next-parameter) and kept otherwise, because
//     a password may contain & or ?.
//   - Digit groups separated by single spaces or dashes that form a card
//     number (13–19 digits passing the Luhn check), and IBANs written in
//     groups ("GB29 NWBK 6016 …", checksum valid), are candidates in their
//     compact form.
//
// A candidate of 12 to 128 bytes is a token if it is:
//   - a card number: 13–19 digits, optionally grouped by dashes, passing
//     the Luhn check (reported as the bare digits);
//   - IBAN-like: two uppercase letters, two digits, 10–30 uppercase
//     letters or digits;
//   - a UUID (reported in lowercase): an identifier, and identifiers of
//     private records are exactly what a leak carries;
//   - otherwise high entropy: at least three of the four classes lower,
//     upper, digit, symbol; or at least two classes and a Shannon entropy
//     of at least 3.5 bits per byte.
//
// and it is none of:
//   - a word or name: letters only, or simple pieces joined by - _ . ' :
//     where each piece is a word (at most three case changes: iPhone,
//     PostgreSQL), a number of at most four digits, or at most three
//     letters and digits (v1.2.3-beta.4, Meeting-Room-4B);
//   - a path: contains / or \ and every segment looks like a name, not a
//     key (few case and letter/digit alternations);
//   - a URL (contains ://) or an e-mail address (an @ with a dot after
//     it); these and the words and paths above are long enough, or common
//     enough, that fingerprints are the better test;
//   - a date, time or plain number: digits and the characters - / : . , +
//     T Z only (2024-05-13T10:00:00Z, 10:00:00.123, +1-555-0100).
//
// A token may be reported more than once; callers digest and deduplicate.
func Tokens(text string, fn func(tok string)) {
	// Only candidates of minToken bytes or more can hold a token, and one
	// that starts in text[i:i+minToken] covers text[i+minToken-1]: where
	// that byte is a separator, the scan jumps past it; otherwise it reads
	// the run around it. Prose, whose words are short, is mostly jumped.
	// i is 0 or just past a separator throughout.
	for i := 0; i+minToken <= len(text); {
		k := i + minToken - 1
		if isTokenSep(text[k]) {
			i = k + 1
			continue
		}
		s, e := k, k+1
		for s > i && !isTokenSep(text[s-1]) {
			s--
		}
		for e < len(text) && !isTokenSep(text[e]) {
			e++
		}
		candidate(text[s:e], fn)
		i = e + 1 // text[e] is a separator (or the end)
	}
	groupedTokens(text, fn)
}

// tokenSep marks the bytes that end a candidate.
var tokenSep = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\v\f\"'`,;()[]{}<>|") {
		t[c] = true
	}
	return t
}()

func isTokenSep(c byte) bool { return tokenSep[c] }

// candidate considers a whole candidate and its parts: split at = and :
// (assignments, headers), and split further at & and ? (query strings).
// Both splits are kept because a password may hold & or ?.
func candidate(c string, fn func(string)) {
	if len(c) < minToken {
		return // nor can any part of it be long enough
	}
	c = trimTrailing(c)
	considerToken(c, fn)
	if !strings.ContainsAny(c, "=:&?") {
		return
	}
	if !strings.Contains(c, "://") {
		parts(c, "=:", fn)
	}
	if strings.ContainsAny(c, "&?") {
		parts(c, "=:&?", fn)
	}
}

// parts considers each piece of c between bytes of seps.
func parts(c, seps string, fn func(string)) {
	for rest := c; len(rest) > 0; {
		i := strings.IndexAny(rest, seps)
		if i < 0 {
			i = len(rest)
		}
		if p := trimTrailing(rest[:i]); p != c {
			considerToken(p, fn)
		}
		rest = rest[min(i+1, len(rest)):]
	}
}

// trimTrailing drops sentence punctuation and a dangling = or : (as in
// "password:" or a base64 tail that a query split left behind).
func trimTrailing(s string) string {
	for len(s) > 0 {
		switch s[len(s)-1] {
		case '.', '!', '?', ':', '=':
			s = s[:len(s)-1]
		default:
			return s
		}
	}
	return s
}

// considerToken reports tok (or its canonical form) if it is a token.
func considerToken(tok string, fn func(string)) {
	if len(tok) < minToken || len(tok) > maxToken {
		return
	}
	if digits, ok := cardNumber(tok); ok {
		fn(digits)
		return
	}
	if isUUID(tok) {
		fn(strings.ToLower(tok))
		return
	}
	if strings.Contains(tok, "://") || isEmail(tok) || isDateOrNumber(tok) || isWordLike(tok) || isPathLike(tok) {
		return
	}
	if isIBANLike(tok) || highEntropy(tok) {
		fn(tok)
	}
}

// cardNumber reports whether s is 13–19 digits, optionally grouped by
// single dashes, passing the Luhn check, and returns the bare digits.
func cardNumber(s string) (string, bool) {
	var buf [maxToken]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			buf[n] = c
			n++
		case c == '-' && i > 0 && i < len(s)-1 && isDigit(s[i-1]) && isDigit(s[i+1]):
		default:
			return "", false
		}
	}
	if n < 13 || n > 19 || !luhn(buf[:n]) {
		return "", false
	}
	return string(buf[:n]), true
}

func luhn(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// isUUID reports the 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHexDigit(s[i]) {
				return false
			}
		}
	}
	return true
}

func isEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && strings.IndexByte(s[at+1:], '.') > 0
}

// isDateOrNumber reports strings made of digits and date, time and number
// punctuation only.
func isDateOrNumber(s string) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			digits++
		case strings.IndexByte("-/:.,+TZtz", c) >= 0:
		default:
			return false
		}
	}
	return digits > 0
}

// isWordLike reports letters only, or a name made of simple pieces joined
// by - _ . ' or : (see simplePiece): words, product and version names, room
// numbers. Weak passwords of the same shape (Summer-2024-Sale) are dropped
// with them; telling them apart would take context Tokens does not have.
func isWordLike(s string) bool {
	onlyLetters := true
	for _, r := range s {
		if !isLetterRune(r) {
			onlyLetters = false
			break
		}
	}
	if onlyLetters {
		return true
	}
	for w := range strings.FieldsFuncSeq(s, func(r rune) bool {
		return r == '-' || r == '_' || r == '.' || r == '\'' || r == ':'
	}) {
		if !simplePiece(w) {
			return false
		}
	}
	// Separators only (or doubled) yield no pieces at all: punctuation,
	// not a secret either.
	return true
}

// simplePiece reports a piece of a name: letters with at most three case
// changes (a word, a capitalised or camelCase name, an acronym), a number
// of at most four digits, or any letters and digits up to three bytes
// (v1, 4B, x86). Pieces of random keys alternate far more.
func simplePiece(w string) bool {
	letters, digits := 0, 0
	for _, r := range w {
		switch {
		case isLetterRune(r):
			letters++
		case '0' <= r && r <= '9':
			digits++
		default:
			return false
		}
	}
	switch {
	case digits == 0:
		return alternations(w) <= 3
	case letters == 0:
		return digits <= 4
	}
	return len(w) <= 3
}

func isLetterRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

// isPathLike reports a slash-separated path whose segments all look like
// names. Keys in base64 contain slashes too, but their segments alternate
// between lower, upper and digits at about 0.6 per byte; names rarely more
// than twice plus once per 8 bytes.
func isPathLike(s string) bool {
	if !strings.ContainsAny(s, `/\`) {
		return false
	}
	for seg := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if len(seg) > 40 || alternations(seg) > 2+len(seg)/8 || strings.ContainsFunc(seg, notPathByte) {
			return false
		}
	}
	return true
}

// notPathByte reports ASCII punctuation that file names rarely hold.
func notPathByte(r rune) bool {
	return r < utf8.RuneSelf && class(byte(r)) == classSymbol && !strings.ContainsRune("._-~+@: ", r)
}

// alternations counts changes between lower, upper and digit along s,
// ignoring other bytes: "Q3-Report" has 2, "MyDocuments" 2, a random
// base64 key segment of the same length about 7.
func alternations(s string) int {
	n := 0
	var last byte       // class of the previous letter or digit
	lastStarts := false // it followed a symbol or began s
	afterSymbol := true
	for i := 0; i < len(s); i++ {
		k := class(s[i])
		if k == classSymbol {
			afterSymbol = true
			continue
		}
		// An upper letter that starts a word, then lower, is
		// capitalisation, not an alternation.
		capital := last == classUpper && k == classLower && lastStarts
		if last != 0 && k != last && !capital {
			n++
		}
		last, lastStarts, afterSymbol = k, afterSymbol, false
	}
	return n
}

const (
	classLower = 1 << iota
	classUpper
	classDigit
	classSymbol
)

func class(c byte) byte {
	switch {
	case 'a' <= c && c <= 'z':
		return classLower
	case 'A' <= c && c <= 'Z':
		return classUpper
	case isDigit(c):
		return classDigit
	}
	return classSymbol
}

// isIBANLike reports two uppercase letters, two digits, then 10–30
// uppercase letters or digits.
func isIBANLike(s string) bool {
	if len(s) < 14 || len(s) > 34 {
		return false
	}
	if !isUpper(s[0]) || !isUpper(s[1]) || !isDigit(s[2]) || !isDigit(s[3]) {
		return false
	}
	for i := 4; i < len(s); i++ {
		if !isUpper(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// highEntropy applies the class and Shannon entropy rules.
func highEntropy(s string) bool {
	var classes byte
	var counts [256]uint8
	for i := 0; i < len(s); i++ {
		classes |= class(s[i])
		counts[s[i]]++
	}
	nc := 0
	for c := classes; c != 0; c &= c - 1 {
		nc++
	}
	switch {
	case nc >= 3:
		return true
	case nc < 2:
		return false
	}
	return entropy(&counts, len(s)) >= 3.5
}

// entropy is the Shannon entropy in bits per byte of a string of length n
// with the given byte counts.
func entropy(counts *[256]uint8, n int) float64 {
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isUpper(c byte) bool    { return 'A' <= c && c <= 'Z' }
func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// groupedTokens finds card numbers and IBANs written in groups separated
// by single spaces or dashes, and reports their compact form. Each start of
// an alphanumeric word is tried; the groups that follow it are joined
// while they still fit, and the longest prefix of two or more groups that
// is a valid card number or IBAN is reported.
func groupedTokens(text string, fn func(string)) {
	const maxGroups = 9
	for next := 0; next < len(text); {
		// A group starts with a digit or an upper-case letter at the
		// start of a word: the scan jumps to the next such byte, eight
		// bytes at a time, and past the rest of a word it lands inside.
		j := indexDigitOrUpper(text[next:])
		if j < 0 {
			return
		}
		i := next + j
		first := i + 1
		for first < len(text) && isAlnum(text[first]) {
			first++
		}
		next = first
		if i > 0 && isAlnum(text[i-1]) {
			continue
		}
		// The first group decides what to look for: digits start a card
		// number, two letters and two digits an IBAN.
		card := first-i >= 3 && first-i <= 6 && allDigits(text[i:first])
		iban := first-i == 4 && isUpper(text[i]) && isUpper(text[i+1]) && isDigit(text[i+2]) && isDigit(text[i+3])
		if !card && !iban || first+1 >= len(text) || text[first] != ' ' && text[first] != '-' {
			continue
		}
		var buf [64]byte
		compact := append(buf[:0], text[i:first]...)
		var lens [maxGroups]int // compact length after each group
		lens[0] = len(compact)
		ng := 1
		for j := first + 1; ng < maxGroups && j < len(text); {
			k := j
			for k < len(text) && isAlnum(text[k]) {
				k++
			}
			g := text[j:k]
			if card && (len(g) < 3 || len(g) > 6 || !allDigits(g)) || iban && (len(g) < 1 || len(g) > 4 || !upperOrDigits(g)) {
				break
			}
			compact = append(compact, g...)
			lens[ng] = len(compact)
			ng++
			if k+1 >= len(text) || text[k] != ' ' && text[k] != '-' {
				break
			}
			j = k + 1
		}
		for g := ng - 1; g >= 1; g-- {
			c := compact[:lens[g]]
			if card && len(c) >= 13 && len(c) <= 19 && luhn(c) || iban && isIBAN(c) {
				fn(string(c))
				break
			}
		}
	}
}

// indexDigitOrUpper returns the index of the first ASCII digit or
// upper-case letter in s, or -1. Eight bytes at a time: for bytes below
// 0x80, (0x7f+hi+1 − x) keeps its top bit while x ≤ hi and (x + 0x7f − lo
// + 1) gains it once x ≥ lo, exactly, with no carry between bytes; bytes
// of 0x80 and above are masked out.
func indexDigitOrUpper(s string) int {
	const (
		lows  = 0x7f7f7f7f7f7f7f7f
		highs = 0x8080808080808080
		b     = 0x0101010101010101
	)
	between := func(x uint64, lo, hi uint64) uint64 {
		y := x & lows
		return (b*(127+hi+1) - y) & (y + b*(127-lo+1)) &^ x & highs
	}
	// Converted once, as Prints does: the compiler does not copy a []byte
	// it can see is only read.
	sb := []byte(s)
	i := 0
	for ; i+8 <= len(sb); i += 8 {
		x := binary.LittleEndian.Uint64(sb[i : i+8])
		if m := between(x, '0', '9') | between(x, 'A', 'Z'); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if isDigit(s[i]) || isUpper(s[i]) {
			return i
		}
	}
	return -1
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

func upperOrDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isUpper(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return alnum[c] }

var alnum = func() (t [256]bool) {
	for c := range 256 {
		t[c] = '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	return t
}()

// isIBAN reports a compact IBAN with a valid ISO 13616 checksum. Grouped
// numbers are only taken when the checksum holds, because joining groups
// of ordinary text would otherwise find IBAN-like strings by chance.
func isIBAN(b []byte) bool {
	if len(b) < 15 || len(b) > 34 || !isIBANLike(string(b)) {
		return false
	}
	rem := 0
	add := func(c byte) {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
			return
		}
		v := int(c-'A') + 10
		rem = (rem*100 + v) % 97
	}
	for _, c := range b[4:] {
		add(c)
	}
	for _, c := range b[:4] {
		add(c)
	}
	return rem == 1
}

// FoldToken returns tok with its ASCII letters in lower case: the form a
// token's digest is taken of, so that a secret copied with its letters'
// case changed (sK_LiVe_…, a game a hijacked model plays to get past an
// exact comparison) still matches. Two distinct high-entropy tokens that
// differ only in case are not a risk worth an exact comparison; a token
// that is a case variant of a private one is that private token.
func FoldToken(tok string) string {
	for i := 0; i < len(tok); i++ {
		if isUpper(tok[i]) {
			b := []byte(tok)
			for j := i; j < len(b); j++ {
				if isUpper(b[j]) {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return tok
}
