package fingerprint

import (
	"unicode"
	"unicode/utf8"
)

// asciiNorm maps an ASCII byte to its normalised form: letters lowercased,
// digits kept, everything else 0 (dropped). Zero doubles as "drop" because
// NUL is not alphanumeric.
var asciiNorm = func() (t [utf8.RuneSelf]byte) {
	for c := range byte(utf8.RuneSelf) {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = c
		case 'A' <= c && c <= 'Z':
			t[c] = c + 'a' - 'A'
		}
	}
	return t
}()

// Normalize appends the normalised form of text to dst and returns the
// extended slice. Normalisation lowercases and keeps only letters and
// digits, so spacing, punctuation, markup and JSON quoting an agent adds or
// strips while copying text do not change its fingerprints. Non-ASCII
// letters and digits are kept, lowercased, as UTF-8; invalid UTF-8 bytes are
// dropped. Normalize is idempotent.
func Normalize(dst []byte, text string) []byte {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if v := asciiNorm[c]; v != 0 {
				dst = append(dst, v)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r, ok := normRune(r); ok {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// normRune reports whether a non-ASCII rune is kept, and its normalised
// form. utf8.RuneError is not a letter, so invalid bytes fall out here too.
func normRune(r rune) (rune, bool) {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return 0, false
	}
	return unicode.ToLower(r), true
}
