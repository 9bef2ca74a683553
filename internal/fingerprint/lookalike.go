package fingerprint

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Text can look the same and be made of other code points: fullwidth or
// mathematical letters (ｃｒｅｄ, 𝐜𝐫𝐞𝐝), which NFKC folds to ASCII, and
// letters of other scripts that look like Latin ones (Cyrillic с and е in
// "сrеd"), which no normalisation folds. Normalisation keeps letters of
// every script, so either gives a text different prints. Invisible
// characters can also carry text themselves: tag characters spell ASCII,
// and runs of variation selectors can spell any bytes.

// nfkcStable reports a rune that NFKC leaves as it is whatever stands
// around it: its own NFKC form, a starter, and not one that combines
// with the rune before it. The letters of most scripts are; a text of
// them needs no normalisation pass. The table of the Basic Multilingual
// Plane is built the first time it is needed (a few milliseconds);
// runes beyond it are taken to change.
func nfkcStable(r rune) bool {
	if r >= 0x10000 {
		return false
	}
	nfkcOnce.Do(buildNFKCStable)
	return nfkcStableBMP[r>>6]&(1<<(r&63)) != 0
}

var (
	nfkcOnce      sync.Once
	nfkcStableBMP [0x10000 / 64]uint64
)

func buildNFKCStable() {
	var buf [4]byte
	for r := rune(0); r < 0x10000; r++ {
		if 0xD800 <= r && r < 0xE000 {
			continue
		}
		s := buf[:utf8.EncodeRune(buf[:], r)]
		p := norm.NFKC.Properties(s)
		if p.CCC() == 0 && p.BoundaryBefore() && norm.NFKC.IsNormal(s) {
			nfkcStableBMP[r>>6] |= 1 << (r & 63)
		}
	}
}

// foldNFKC appends the NFKC form of the view, when it is not already in
// that form (ASCII always is). An ASCII character never combines with
// the character before it, so the view is normalised a stretch of
// non-ASCII text at a time, each with the ASCII character before it (an
// e before a combining accent), and what changed is known.
func foldNFKC(dst []byte, s string, p *patches) ([]byte, bool) {
	if isASCII(s) || norm.NFKC.IsNormalString(s) {
		return dst, false
	}
	last := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		start := max(i-1, last)
		j := i
		for j < len(s) && s[j] >= utf8.RuneSelf {
			j++
		}
		i = j
		if norm.NFKC.IsNormalString(s[start:j]) {
			continue
		}
		dst = append(dst, s[last:start]...)
		at := len(dst)
		dst = norm.NFKC.AppendString(dst, s[start:j])
		p.mark(at, len(dst))
		last = j
	}
	return append(dst, s[last:]...), true
}

// confusable maps letters that look like Latin ones to those: Cyrillic,
// Greek and Armenian letters that share their shape, and the Latin small
// capitals and IPA letters that pass for ordinary ones. It is a small
// table of the common look-alikes, not Unicode's full confusables list.
var confusable = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'к': 'k', 'ӏ': 'l', 'м': 'm', 'н': 'h',
	'о': 'o', 'р': 'p', 'ԛ': 'q', 'с': 'c', 'ѕ': 's', 'т': 't', 'у': 'y', 'ԝ': 'w', 'х': 'x', 'ԁ': 'd',
	'А': 'A', 'В': 'B', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O', 'Р': 'P',
	'Ԛ': 'Q', 'С': 'C', 'Ѕ': 'S', 'Т': 'T', 'У': 'Y', 'Ү': 'Y', 'Ԝ': 'W', 'Х': 'X', 'Ӏ': 'I', 'Ԁ': 'D',
	// Greek
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'γ': 'y', 'ϲ': 'c', 'ϳ': 'j',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ϲ': 'C', 'Ϳ': 'J',
	// Armenian
	'օ': 'o', 'ս': 'u', 'հ': 'h', 'ց': 'g',
	// Latin small capitals and IPA letters
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k',
	'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v',
	'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z', 'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ǫ': 'q',
}

// confusableLow is confusable for the runes below U+0600, where all but
// the small capitals and one s are: a table lookup instead of a map's
// for every letter of a Russian or Greek text.
var confusableLow = func() (t [0x600]byte) {
	for r, l := range confusable {
		if r < 0x600 {
			t[r] = l
		}
	}
	return t
}()

// lookalike returns the Latin letter r imitates, if it is in confusable.
func lookalike(r rune) (byte, bool) {
	switch {
	case r < 0x100:
		return 0, false
	case r < 0x600:
		l := confusableLow[r]
		return l, l != 0
	case 0x1D00 <= r && r <= 0x1D2F || r == 0xA731:
		l, ok := confusable[r]
		return l, ok
	}
	return 0, false
}

// latinOnly reports a look-alike that is Latin itself, which ordinary
// text in any language does not use for its words: one is enough to
// fold a view. A Cyrillic or Greek look-alike is folded only when a word
// mixes it with ASCII letters, which a Russian or Greek word never does.
func latinOnly(r rune) bool { return unicode.Is(unicode.Latin, r) }

// foldConfusables appends the view with every look-alike replaced by the
// Latin letter it imitates, when a word mixes look-alikes with ASCII
// letters or a view holds a Latin look-alike.
func foldConfusables(dst []byte, s string, p *patches) ([]byte, bool) {
	if isASCII(s) || !hasConfusableWord(s) {
		return dst, false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if l, ok := lookalike(r); ok {
			p.mark(len(dst), len(dst)+1)
			dst = append(dst, l)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst, true
}

// hasConfusableWord reports whether a run of letters and digits of s
// holds both a look-alike and an ASCII letter or digit (hex with Cyrillic
// а and е in it), or s holds a Latin look-alike.
func hasConfusableWord(s string) bool {
	ascii, look := false, false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isAlnum(c) {
				ascii = true
			} else {
				ascii, look = false, false
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			switch _, ok := lookalike(r); {
			case ok && latinOnly(r):
				return true
			case ok:
				look = true
			case !unicode.IsLetter(r) && !unicode.IsMark(r):
				ascii, look = false, false
			}
		}
		if ascii && look {
			return true
		}
	}
	return false
}

// Tag characters U+E0020–E007E mirror ASCII 0x20–0x7E and are invisible;
// U+E0001 and U+E007F begin and end a tag.
const (
	tagFirst = 0xE0000
	tagLast  = 0xE007F
)

// decodeTags appends the view with each tag character replaced by the
// ASCII character it mirrors (the begin and cancel tags dropped), when
// it holds tag characters.
func decodeTags(dst []byte, s string, p *patches) ([]byte, bool) {
	// U+E0000–E007F are F3 A0 80 xx and F3 A0 81 xx in UTF-8.
	if !strings.Contains(s, "\xf3\xa0\x80") && !strings.Contains(s, "\xf3\xa0\x81") {
		return dst, false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case 0xE0020 <= r && r <= 0xE007E:
			p.mark(len(dst), len(dst)+1)
			dst = append(dst, byte(r-tagFirst))
		case tagFirst <= r && r <= tagLast:
			p.mark(len(dst), len(dst))
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst, true
}

// Variation selectors can each stand for a byte: U+FE00–FE0F for 0–15
// and U+E0100–E01EF for 16–255, appended invisibly to a visible
// character. A single one after an emoji is ordinary text; a run of two
// or more is read as bytes.
func vsByte(r rune) (byte, bool) {
	switch {
	case 0xFE00 <= r && r <= 0xFE0F:
		return byte(r - 0xFE00), true
	case 0xE0100 <= r && r <= 0xE01EF:
		return byte(r - 0xE0100 + 16), true
	}
	return 0, false
}

// decodeVariationSelectors appends the view with every run of two or
// more variation selectors replaced by the bytes they stand for.
func decodeVariationSelectors(dst []byte, s string, p *patches) ([]byte, bool) {
	// U+FE00–FE0F are EF B8 8x, U+E0100–E01EF F3 A0 84–87 xx.
	if !strings.Contains(s, "\xef\xb8") && !strings.Contains(s, "\xf3\xa0\x84") && !strings.Contains(s, "\xf3\xa0\x85") &&
		!strings.Contains(s, "\xf3\xa0\x86") && !strings.Contains(s, "\xf3\xa0\x87") {
		return dst, false
	}
	start := len(dst)
	changed := false
	for i := 0; i < len(s); {
		j, n := i, 0
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if _, ok := vsByte(r); !ok {
				break
			}
			j += size
			n++
		}
		if n >= 2 {
			p.mark(len(dst), len(dst)+n)
			for k := i; k < j; {
				r, size := utf8.DecodeRuneInString(s[k:])
				b, _ := vsByte(r)
				dst = append(dst, b)
				k += size
			}
			i, changed = j, true
			continue
		}
		if n == 1 {
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		dst = append(dst, s[i:i+size]...)
		i += size
	}
	if !changed {
		return dst[:start], false
	}
	return dst, true
}
