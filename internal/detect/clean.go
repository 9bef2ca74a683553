package detect

import (
	"strings"
	"unicode/utf8"
)

// Cleaned is a tool result made safe to show: what the relay passes to the
// client instead of the raw text, with what it surfaced.
type Cleaned struct {
	// Text is the text with tag characters decoded into visible text
	// ("⟦tags: …⟧"), runs of variation selectors decoded the same way
	// ("⟦hidden bytes: …⟧"), zero-width characters and bidi controls
	// stripped (ZWJ and ZWNJ stay where emoji or a joining script need
	// them), and terminal controls made visible: ESC as "␛", other C0
	// controls and DEL as their Control Pictures (␇, ␈…), C1 controls as
	// "⟦C1 9B⟧". Tab, newline and carriage return are kept. Invalid UTF-8
	// bytes become U+FFFD.
	Text string
	// Hidden holds text a browser would not show: elements hidden with
	// display:none, visibility:hidden, font-size:0, opacity:0, white on
	// white or off-screen positioning, the hidden and aria-hidden
	// attributes, hidden form fields, and HTML comments; each trimmed to
	// 500 bytes, in document order, at most 64. It is an annotation: Text
	// still contains the markup.
	Hidden []string
	// Images holds the URLs of markdown images (and HTML <img> tags) whose
	// URL carries data: a query parameter value longer than 32 bytes, or a
	// run of at least 16 characters of base64, hex or percent-encoded text
	// in a query value or path segment. The client fetches images itself,
	// so such a URL is a channel out of the session that bypasses MCP.
	Images []string
	// Changed reports Text != the input. Hidden and Images never change it.
	Changed bool
}

// Clean applies result hygiene to text. It is idempotent, never adds text
// other than the visible renderings described on Cleaned, and is linear in
// the length of text.
func Clean(text string) Cleaned {
	out := cleanText(text)
	c := Cleaned{Text: out, Changed: out != text}
	spans, imgs := scanHiddenHTML(out, true)
	for _, h := range spans {
		c.Hidden = append(c.Hidden, h.text)
	}
	urls, _ := scanImages(out)
	c.Images = append(urls, imgs...)
	return c
}

// needsCleaning reports whether cleanText would change s.
func needsCleaning(s string) bool {
	for i := 0; i < len(s); {
		// eight printable ASCII bytes at a time: most of a result is prose
		if i+8 <= len(s) && printable8(load8(s, i)) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7F {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isTag(r) || isVS(r) || isZeroWidth(r) || isBidiControl(r) || (r >= 0x80 && r <= 0x9F) || (r == utf8.RuneError && size == 1) {
			return true
		}
		i += size
	}
	return false
}

func cleanText(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	prev := rune(-1)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == 0x1B:
				b.WriteString("␛")
			case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
				b.WriteRune(0x2400 + rune(c))
			case c == 0x7F:
				b.WriteString("␡")
			default:
				b.WriteByte(c)
			}
			prev = rune(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// an invalid byte becomes U+FFFD: passed through, it could join
			// the bytes around a stripped character into a new one
			b.WriteString("\uFFFD")
		case isTag(r):
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
				if n := subdivisionFlagLen(s[i:j]); n > 0 {
					b.WriteString(s[i : i+n]) // an emoji subdivision flag
					start += n
				}
			}
			if start < j {
				b.WriteString("⟦tags: ")
				b.WriteString(decodeTags(s[start:j]))
				b.WriteString("⟧")
			}
			prev = -2
			i = j
			continue
		case isVS(r):
			j, sel := vsRunStripped(s, i)
			if len(sel) == size {
				b.WriteString(sel)
				prev = r
			} else {
				bs := vsBytes(sel)
				if printableUTF8(bs) {
					b.WriteString("⟦hidden bytes: ")
					b.WriteString(escapeForBrackets(string(bs)))
					b.WriteString("⟧")
				} else {
					b.WriteString("⟦" + itoa(len(bs)) + " hidden bytes⟧")
				}
				prev = -2
			}
			i = j
			continue
		case isJoiner(r):
			next := rune(-1)
			if i+size < len(s) {
				next, _ = utf8.DecodeRuneInString(s[i+size:])
			}
			if joinerNeeded(r, prev, next) {
				b.WriteString(s[i : i+size])
			}
		case isZeroWidth(r), isBidiControl(r):
			// stripped
		case r >= 0x80 && r <= 0x9F:
			b.WriteString("⟦C1 ")
			b.WriteString(hex2(byte(r)))
			b.WriteString("⟧")
		default:
			b.WriteString(s[i : i+size])
		}
		prev = r
		i += size
	}
	return b.String()
}

// vsRunStripped returns the end of the run of variation selectors starting
// at s[i], and the selectors in it. Characters Clean strips (zero-width
// and bidi controls) may sit between them: the run is what remains once
// they are gone, so that cleaning the result again finds nothing new.
func vsRunStripped(s string, i int) (end int, selectors string) {
	var sel strings.Builder
	for j := i; j < len(s); {
		r, sz := utf8.DecodeRuneInString(s[j:])
		switch {
		case isVS(r):
			sel.WriteString(s[j : j+sz])
			j += sz
			end = j
		case isZeroWidth(r), isBidiControl(r):
			j += sz
		default:
			return end, sel.String()
		}
	}
	return end, sel.String()
}

// escapeForBrackets keeps decoded bytes from closing the rendering early or
// smuggling controls back in.
func escapeForBrackets(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '⟧' || r == '⟦' || isIgnorable(r) || isC0orC1(r) || r == '\r' || r == '\n' || r == '\t':
			writeEscape(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const hexDigits = "0123456789ABCDEF"

func hex2(c byte) string { return string([]byte{hexDigits[c>>4], hexDigits[c&15]}) }

// writeEscape writes r as \u{XXXX}.
func writeEscape(b *strings.Builder, r rune) {
	b.WriteString(`\u{`)
	const h = "0123456789ABCDEF"
	var buf [8]byte
	n := len(buf)
	v := uint32(r)
	for {
		n--
		buf[n] = h[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	for len(buf)-n < 4 {
		n--
		buf[n] = '0'
	}
	b.Write(buf[n:])
	b.WriteByte('}')
}

// visible renders s for Evidence: invisible characters as \u{…}, tag runs
// decoded ("⟦tags: …⟧"), variation-selector runs decoded, controls as
// \x1b-style escapes, new lines as \n; the result is clipped to 120 bytes.
// homoglyph also escapes Cyrillic and Greek look-alike letters.
func visible(s string, homoglyph bool) string {
	// most evidence is printable ASCII, which renders as itself: copied
	// (a finding outlives the text it was found in, and must not keep it
	// in memory) and clipped, without the rune-by-rune rendering
	if n := min(len(s), 121); printableASCII(s[:n]) {
		if len(s) <= 120 {
			return strings.Clone(s)
		}
		return s[:120-len("…")] + "…"
	}
	var b strings.Builder
	prev := rune(-1)
	for i := 0; i < len(s) && b.Len() < 200; {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case isTag(r):
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !isTag(r2) {
					break
				}
				j += sz
			}
			if prev == 0x1F3F4 && subdivisionFlagLen(s[i:j]) == j-i {
				b.WriteString(s[i:j])
			} else {
				b.WriteString("⟦tags: ")
				b.WriteString(decodeTags(s[i:j]))
				b.WriteString("⟧")
			}
			prev = -2
			i = j
			continue
		case isVS(r):
			j, n := vsRun(s, i)
			if n == 1 {
				writeEscape(&b, r)
			} else {
				b.WriteString("⟦" + itoa(n) + " variation selectors: " + vsSummary(s[i:j]) + "⟧")
			}
			prev = -2
			i = j
			continue
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7F:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case (r >= 0x80 && r <= 0x9F) || isIgnorable(r):
			writeEscape(&b, r)
		case homoglyph && !isLatinLetter(r) && r >= 0x370:
			if confusableOf(r) != 0 {
				writeEscape(&b, r)
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
		prev = r
		i += size
	}
	return clip(b.String(), 120)
}

// printableASCII reports whether s is all printable ASCII, spaces
// included.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			return false
		}
	}
	return true
}
