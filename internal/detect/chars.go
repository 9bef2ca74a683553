package detect

import (
	"unicode"
	"unicode/utf8"
)

// Character classes shared by the normaliser, the detectors and Clean.

// isTag reports a Unicode tag character (U+E0000–U+E007F). Tag characters
// render as nothing; U+E0020–U+E007E mirror printable ASCII, which is what
// makes them a channel for hidden text.
func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// tagASCII returns the ASCII character a tag character mirrors, or 0.
func tagASCII(r rune) byte {
	if r >= 0xE0020 && r <= 0xE007E {
		return byte(r - 0xE0000)
	}
	return 0
}

// isVS reports a variation selector: VS1–VS16 (U+FE00–U+FE0F) and the
// supplement VS17–VS256 (U+E0100–U+E01EF).
func isVS(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF)
}

// vsByte is the byte a variation selector encodes in the usual smuggling
// scheme: VS1–VS16 carry 0–15, VS17–VS256 carry 16–255.
func vsByte(r rune) byte {
	if r <= 0xFE0F {
		return byte(r - 0xFE00)
	}
	return byte(r - 0xE0100 + 16)
}

// isZeroWidth reports the zero-width and invisible formatting characters the
// invisible-control detector looks for and Clean strips (ZWJ and ZWNJ are
// kept where a script needs them, see joinerNeeded).
func isZeroWidth(r rune) bool {
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x180E:
		return true
	}
	return false
}

// isJoiner reports ZWNJ and ZWJ, the two zero-width characters scripts need.
func isJoiner(r rune) bool { return r == 0x200C || r == 0x200D }

// isBidiControl reports the embedding, override and isolate controls that
// reorder text (Trojan Source). The implicit marks LRM, RLM and ALM are not
// included: they do not reorder runs of other text.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// isBidiOverride reports LRO and RLO, which force the direction of
// everything up to the next PDF.
func isBidiOverride(r rune) bool { return r == 0x202D || r == 0x202E }

// isIgnorable reports characters the normaliser drops before matching: they
// render as nothing (or as a soft hyphen at a line end) and are used to
// split keywords so that filters miss them.
func isIgnorable(r rune) bool {
	switch {
	case isZeroWidth(r), isBidiControl(r), isVS(r), isTag(r):
		return true
	}
	switch r {
	case 0x00AD, 0x034F, 0x061C, 0x200E, 0x200F, 0x17B4, 0x17B5:
		return true
	}
	return false
}

// isRTL reports a strong right-to-left character: Hebrew, Arabic, Syriac,
// Thaana, NKo and the other right-to-left blocks.
func isRTL(r rune) bool {
	switch {
	case r >= 0x0590 && r <= 0x08FF,
		r >= 0xFB1D && r <= 0xFDFF,
		r >= 0xFE70 && r <= 0xFEFC,
		r >= 0x10800 && r <= 0x10FFF,
		r >= 0x1E800 && r <= 0x1EFFF:
		return true
	}
	return false
}

// joiningScripts are the scripts whose orthography uses ZWJ and ZWNJ.
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mandaic, unicode.Mongolian,
	unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya,
	unicode.Tamil, unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala,
	unicode.Tibetan, unicode.Myanmar, unicode.Khmer, unicode.Hebrew, unicode.Thaana,
	unicode.Phags_Pa, unicode.Manichaean, unicode.Psalter_Pahlavi, unicode.Hanifi_Rohingya,
}

// inJoiningScript reports a rune of a script that needs joiners.
func inJoiningScript(r rune) bool {
	if r < 0x0590 {
		return false
	}
	return unicode.In(r, joiningScripts...)
}

// isEmojiish approximates Extended_Pictographic plus the pieces of emoji
// sequences a ZWJ sits next to (VS16, skin-tone modifiers, regional
// indicators). The standard library has no emoji table; these ranges cover
// every emoji in use.
func isEmojiish(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF,
		r >= 0x2600 && r <= 0x27BF,
		r >= 0x2300 && r <= 0x23FF,
		r >= 0x2B00 && r <= 0x2BFF,
		r >= 0x2190 && r <= 0x21FF,
		r == 0xFE0F, r == 0x20E3,
		r == 0x00A9, r == 0x00AE, r == 0x203C, r == 0x2049, r == 0x2122, r == 0x2139,
		r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299:
		return true
	}
	return false
}

// joinerNeeded reports whether a ZWJ or ZWNJ between prev and next (the
// runes right before and after it, or -1 at an edge) does work: it sits
// inside an emoji sequence or next to a letter of a joining script.
func joinerNeeded(j, prev, next rune) bool {
	if j == 0x200D && (isEmojiish(prev) || isEmojiish(next)) {
		return true
	}
	return (prev >= 0 && inJoiningScript(prev)) || (next >= 0 && inJoiningScript(next))
}

// isCJK reports the characters the tokeniser treats one per token, because
// Chinese and Japanese do not separate words with spaces.
func isCJK(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r >= 0x3040 && r <= 0x30FF, // Hiragana, Katakana (incl. ー)
		r >= 0x3400 && r <= 0x4DBF,
		r >= 0x4E00 && r <= 0x9FFF,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0x20000 && r <= 0x3134F,
		r == 0x3005, r == 0x3006, r == 0x303B,
		r >= 0xFF66 && r <= 0xFF9F: // half-width Katakana
		return true
	}
	return false
}

// isC0orC1 reports control characters other than tab, newline and carriage
// return: C0, DEL and C1.
func isC0orC1(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7F && r <= 0x9F)
}

// subdivisionFlagLen reports, for text starting at a U+1F3F4 WAVING BLACK
// FLAG, the byte length of the tag sequence that follows it if it is a
// well-formed emoji subdivision flag (🏴 + 2–7 tag letters or digits +
// CANCEL TAG), else 0.
func subdivisionFlagLen(s string) int {
	n := 0
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0xE007F:
			if n >= 2 && n <= 7 {
				return i + size
			}
			return 0
		case (r >= 0xE0030 && r <= 0xE0039) || (r >= 0xE0061 && r <= 0xE007A):
			n++
			i += size
		default:
			return 0
		}
	}
	return 0
}
