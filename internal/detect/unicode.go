package detect

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Invisible text: tag characters, variation-selector runs, zero-width
// characters, bidi controls and mixed-script (homoglyph) words. One pass
// over the runes of the source text.

// adder records one finding of a field.
type adder func(det string, sev Severity, start, end int, msg string)

func hasNonASCII(s string) bool {
	return nextNonASCII(s, 0) < len(s)
}

func isASCIIAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// isLineBreakScript reports scripts that use ZWSP as a line-break hint.
func isLineBreakScript(r rune) bool {
	return (r >= 0x0E00 && r <= 0x0EFF) || (r >= 0x1000 && r <= 0x109F) || (r >= 0x1780 && r <= 0x17FF) || isCJK(r)
}

func scanUnicode(s string, ctx ctxKind, add adder) {
	if !hasNonASCII(s) {
		return
	}
	rtl := -1      // lazily: does s contain right-to-left text?
	bidiUntil := 0 // end of the text the last reported bidi opener governs
	prev := rune(-1)
	// homoglyph word state
	wordStart, latin, conf := -1, false, false
	endWord := func(at int) {
		if wordStart >= 0 && latin && conf {
			add(detHomoglyph, Medium, wordStart, at, "A word mixes Latin letters with Cyrillic or Greek look-alikes: text that reads as one word but matches as another (a spoofed name, or a keyword hidden from filters).")
		}
		wordStart, latin, conf = -1, false, false
	}
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			// A run of ASCII: only the homoglyph word state changes. The
			// word in progress goes on up to the run's first byte that is
			// not a letter or digit, where it ends; words wholly inside
			// the run have no look-alikes and cannot be reported; the
			// run's last word is in progress at its end.
			j := nextNonASCII(s, i)
			k := i
			for k < j && isASCIIAlnum(s[k]) {
				if wordStart < 0 {
					wordStart = k
				}
				latin = latin || s[k] > '9'
				k++
			}
			if k < j {
				if wordStart >= 0 {
					endWord(k)
				}
				w := j
				for w > k && isASCIIAlnum(s[w-1]) {
					w--
				}
				for m := w; m < j; m++ {
					if wordStart < 0 {
						wordStart = m
					}
					latin = latin || s[m] > '9'
				}
			}
			prev = rune(s[j-1])
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isTag(r):
			endWord(i)
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !isTag(r2) {
					break
				}
				j += sz
			}
			start := i
			if prev == 0x1F3F4 {
				start += subdivisionFlagLen(s[i:j])
			}
			if start < j {
				dec := decodeTags(s[start:j])
				add(detTag, High, start, j, "Unicode tag characters hide text the user cannot see but the model reads: \""+clip(dec, 80)+"\".")
			}
			prev = -2
			i = j
			continue
		case isVS(r):
			j, n := vsRun(s, i)
			if n >= 2 {
				endWord(i)
				add(detVS, High, i, j, "A run of variation selectors after one character encodes hidden bytes ("+vsSummary(s[i:j])+"): no emoji or ideograph uses more than one.")
			}
			prev = r
			i = j
			continue
		case isZeroWidth(r):
			j, n, allJoin := i, 0, true
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !isZeroWidth(r2) {
					break
				}
				if !isJoiner(r2) {
					allJoin = false
				}
				j += sz
				n++
			}
			next := rune(-1)
			if j < len(s) {
				next, _ = utf8.DecodeRuneInString(s[j:])
			}
			switch {
			case n == 1 && r == 0xFEFF && i == 0:
				// a byte-order mark
			case allJoin && n <= 2 && joinerNeeded(r, prev, next):
				// ZWJ/ZWNJ doing their job in emoji or a joining script
			case n == 1 && r == 0x200B && (isLineBreakScript(prev) || isLineBreakScript(next)):
				// a line-break hint in Thai, Khmer, Burmese or CJK text
			case n >= 4:
				add(detInvisible, sevFor(ctx, High, Medium), i, j, "A run of zero-width characters: invisible to the user, they can encode hidden data.")
			case isLetterRune(prev) && isLetterRune(next):
				add(detInvisible, sevFor(ctx, High, Medium), i, j, "A zero-width character inside a word: it hides the word from filters while the model still reads it.")
			case n <= 3 && onlyRune(s[i:j], 0x200B):
				// a few zero-width spaces between words or marks: copied
				// from a rich-text editor, too few to carry anything
				add(detInvisible, Low, i, j, "Zero-width spaces: invisible to the user.")
			default:
				add(detInvisible, sevFor(ctx, Medium, Low), i, j, "A zero-width character: invisible to the user.")
			}
			// zero-width characters do not end a word for the homoglyph check
			i = j
			continue
		case isBidiControl(r):
			endWord(i)
			if rtl < 0 {
				rtl = 0
				for _, c := range s {
					if isRTL(c) {
						rtl = 1
						break
					}
				}
			}
			if i < bidiUntil {
				// governed by an opener already reported: part of the same
				// construct (and scanning its extent again would make hostile
				// runs of openers quadratic)
				prev = r
				i += size
				continue
			}
			j := bidiExtent(s, i, r)
			if r != 0x202C && r != 0x2069 {
				bidiUntil = j
			}
			switch {
			case r == 0x202C || r == 0x2069:
				// a terminator: reported with its opener, or harmless alone
			case isBidiOverride(r):
				add(detBidi, sevFor(ctx, High, Medium), i, j, "A bidi override reverses how the following text is displayed, so the user reads something other than what the model reads (Trojan Source).")
			case rtl == 0:
				add(detBidi, sevFor(ctx, High, Medium), i, j, "A bidi embedding or isolate in text with no right-to-left script: it reorders what the user sees (Trojan Source).")
			default:
				add(detBidi, Low, i, j, "A bidi embedding or isolate next to right-to-left text.")
			}
			// keep scanning inside the governed text: it can hide more
			prev = r
			i += size
			continue
		}
		switch {
		case fastLetter(r):
			if wordStart < 0 {
				wordStart = i
			}
			if c := confusableOf(r); c != 0 {
				conf = true
			} else if r < 0x250 {
				latin = true
			}
		case isCJK(r):
			endWord(i)
		case isIgnorable(r):
		case isWordRune(r):
			if wordStart < 0 {
				wordStart = i
			}
			if isConfusableScript(r) {
				if confusableOf(r) != 0 {
					conf = true
				}
			} else if isLatinLetter(r) {
				latin = true
			}
		default:
			endWord(i)
		}
		prev = r
		i += size
	}
	endWord(len(s))
}

func isLetterRune(r rune) bool { return r >= 0 && unicode.IsLetter(r) }

// sevFor picks the severity for the context.
func sevFor(ctx ctxKind, def, res Severity) Severity {
	if ctx == ctxDef {
		return def
	}
	return res
}

// bidiExtent returns the end of the text a bidi opener at i governs: up to
// and including its terminator, the end of the line, or 512 bytes.
func bidiExtent(s string, i int, opener rune) int {
	_, size := utf8.DecodeRuneInString(s[i:])
	closer := rune(0x202C)
	if opener >= 0x2066 {
		closer = 0x2069
	}
	depth := 0
	j := i + size
	for j < len(s) && j-i < 512 {
		r, sz := utf8.DecodeRuneInString(s[j:])
		if r == '\n' {
			return j
		}
		switch {
		case r == closer && depth == 0:
			return j + sz
		case r == closer:
			depth--
		case isBidiControl(r) && r != 0x202C && r != 0x2069:
			depth++
		}
		j += sz
	}
	return j
}

// decodeTags renders a run of tag characters as the ASCII it mirrors;
// characters without an ASCII twin (LANGUAGE TAG, CANCEL TAG) are shown as
// \u{…}.
func decodeTags(s string) string {
	var b strings.Builder
	for _, r := range s {
		if c := tagASCII(r); c != 0 {
			b.WriteByte(c)
		} else {
			writeEscape(&b, r)
		}
	}
	return b.String()
}

// vsBytes decodes a variation-selector run into the bytes it carries.
func vsBytes(s string) []byte {
	var out []byte
	for _, r := range s {
		out = append(out, vsByte(r))
	}
	return out
}

// vsSummary describes the bytes of a variation-selector run: the text if
// they are printable UTF-8, else their count.
func vsSummary(s string) string {
	b := vsBytes(s)
	if printableUTF8(b) {
		return "\"" + clip(string(b), 80) + "\""
	}
	return itoa(len(b)) + " bytes"
}

func printableUTF8(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r != ' ' && r != '\n' && r != '\t' && !unicode.IsGraphic(r) {
			return false
		}
	}
	return len(b) > 0
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// clip trims s to n bytes at a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return validUTF8Prefix(s, n-len("…")) + "…"
}

// vsRun returns the end of the run of variation selectors starting at
// s[i], and how many it holds.
func vsRun(s string, i int) (end, n int) {
	for end = i; end < len(s); n++ {
		r, sz := utf8.DecodeRuneInString(s[end:])
		if !isVS(r) {
			break
		}
		end += sz
	}
	return end, n
}

// onlyRune reports whether s holds only the rune r.
func onlyRune(s string, r rune) bool {
	for _, c := range s {
		if c != r {
			return false
		}
	}
	return s != ""
}
