package fingerprint

import (
	"html"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Escapes write a character as a sequence that names it. The engine reads
// arguments as JSON, so one level of JSON string escapes is undone before
// Expand sees them; these rewrites undo the next level, and the escapes
// of other languages, each when the view holds at least one well-formed
// escape (two for quoted-printable, whose =XX looks like a query
// parameter). Malformed escapes are kept as they are, so one stray
// backslash does not cost the view.

// unescapeBackslash decodes backslash escapes: JSON's \uXXXX (with
// surrogate pairs; a lone surrogate becomes U+FFFD), \" \\ \/ \b \f \n
// \r \t, and also the \xXX, \u{X…}, \' and \v of JavaScript, Python and
// C, which a model uses as readily.
func unescapeBackslash(dst []byte, s string, p *patches) ([]byte, bool) {
	i := strings.IndexByte(s, '\\')
	if i < 0 || !hasBackslashEscape(s[i:]) {
		return dst, false
	}
	dst = append(dst, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			j := strings.IndexByte(s[i:], '\\')
			if j < 0 {
				j = len(s) - i
			}
			dst = append(dst, s[i:i+j]...)
			i += j
			continue
		}
		var n int
		at := len(dst)
		dst, n = appendBackslash(dst, s[i:])
		if n > 1 {
			p.mark(at, len(dst))
		}
		i += n
	}
	return dst, true
}

// hasBackslashEscape reports whether s holds a well-formed escape.
func hasBackslashEscape(s string) bool {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			return false
		}
		if _, n := appendBackslash(nil, s[i:]); n > 1 {
			return true
		}
		s = s[i+1:]
	}
}

// appendBackslash decodes the escape at the start of s (which begins
// with a backslash) and returns how many bytes it took; a malformed
// escape is the backslash alone, kept.
func appendBackslash(dst []byte, s string) ([]byte, int) {
	if len(s) < 2 {
		return append(dst, '\\'), 1
	}
	switch c := s[1]; c {
	case '"', '\\', '/', '\'':
		return append(dst, c), 2
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'v':
		return append(dst, '\v'), 2
	case 'x':
		if len(s) >= 4 && isHexDigit(s[2]) && isHexDigit(s[3]) {
			return append(dst, unhex(s[2])<<4|unhex(s[3])), 4
		}
	case 'u':
		if r, n := braceEscape(s); n > 0 {
			return utf8.AppendRune(dst, r), n
		}
		r, ok := hex4(s[2:])
		if !ok {
			break
		}
		if utf16.IsSurrogate(r) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if r2, ok := hex4(s[8:]); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return utf8.AppendRune(dst, d), 12
					}
				}
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(dst, r), 6
	}
	return append(dst, '\\'), 1
}

// braceEscape decodes \u{X…} (one to six hex digits) at the start of s.
func braceEscape(s string) (rune, int) {
	if len(s) < 5 || s[2] != '{' {
		return 0, 0
	}
	var r rune
	for i := 3; i < len(s) && i < 10; i++ {
		switch c := s[i]; {
		case c == '}' && i > 3:
			if r > utf8.MaxRune || utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			return r, i + 1
		case isHexDigit(c):
			r = r<<4 | rune(unhex(c))
		default:
			return 0, 0
		}
	}
	return 0, 0
}

// hex4 reads four hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		if !isHexDigit(s[i]) {
			return 0, false
		}
		r = r<<4 | rune(unhex(s[i]))
	}
	return r, true
}

// unescapeHTML decodes HTML and XML character references: numeric
// (&#65; &#x41;, the semicolon optional) and named (&amp; and the rest of
// HTML5's list, as html.UnescapeString knows them, with their
// semicolon), when the view holds one.
func unescapeHTML(dst []byte, s string, p *patches) ([]byte, bool) {
	if !hasEntity(s) {
		return dst, false
	}
	last := 0
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '&')
		if j < 0 {
			break
		}
		i += j
		n := entityLen(s[i:])
		if n == 0 {
			i++
			continue
		}
		dec := html.UnescapeString(s[i : i+n])
		if dec == s[i:i+n] {
			i += n
			continue
		}
		dst = append(dst, s[last:i]...)
		at := len(dst)
		dst = append(dst, dec...)
		p.mark(at, len(dst))
		i += n
		last = i
	}
	return append(dst, s[last:]...), true
}

// hasEntity reports whether s holds a character reference.
func hasEntity(s string) bool {
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			return false
		}
		if entityLen(s[i:]) > 0 {
			return true
		}
		s = s[i+1:]
	}
}

// entityLen returns the length of the character reference at the start
// of s (which begins with &), or 0: &# and one to seven digits, or &#x
// and one to six hex digits, with an optional semicolon; or & a name of
// up to 32 letters and digits and a semicolon.
func entityLen(s string) int {
	if len(s) < 3 {
		return 0
	}
	if s[1] == '#' {
		i, limit, digit := 2, 9, isDigit
		if s[2] == 'x' || s[2] == 'X' {
			i, limit, digit = 3, 9, isHexDigit
		}
		j := i
		for j < len(s) && j < limit && digit(s[j]) {
			j++
		}
		if j == i {
			return 0
		}
		if j < len(s) && s[j] == ';' {
			j++
		}
		return j
	}
	j := 1
	for j < len(s) && j < 33 && isAlnum(s[j]) {
		j++
	}
	if j > 1 && j < len(s) && s[j] == ';' {
		return j + 1
	}
	return 0
}

// decodeQuotedPrintable decodes =XX escapes (either case) and removes
// soft line breaks (= at the end of a line), when the view holds at
// least two =XX escapes in upper case, the form encoders write.
func decodeQuotedPrintable(dst []byte, s string, p *patches) ([]byte, bool) {
	n := 0
	for rest := s; n < 2; {
		i := strings.IndexByte(rest, '=')
		if i < 0 || i+2 >= len(rest) {
			break
		}
		if isUpperHex(rest[i+1]) && isUpperHex(rest[i+2]) {
			n++
		}
		rest = rest[i+1:]
	}
	if n < 2 {
		return dst, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' {
			dst = append(dst, c)
			continue
		}
		at := len(dst)
		switch {
		case i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]):
			dst = append(dst, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case i+1 < len(s) && s[i+1] == '\n':
			i++
		case i+2 < len(s) && s[i+1] == '\r' && s[i+2] == '\n':
			i += 2
		default:
			dst = append(dst, c)
			continue
		}
		p.mark(at, len(dst))
	}
	return dst, true
}

func isUpperHex(c byte) bool { return isDigit(c) || 'A' <= c && c <= 'F' }
