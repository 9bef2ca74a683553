package clients

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the JSONC reader: JSON plus // and /* */ comments and
// trailing commas, the dialect VS Code, Zed and most MCP clients accept in
// their settings files. It builds a small tree that keeps the byte span of
// every value and key, which is what lets Wrap and Unwrap edit a file in
// place and leave every other byte alone.

// kind is the type of a node.
type kind uint8

const (
	kObject kind = iota + 1
	kArray
	kString
	kNumber
	kBool
	kNull
)

func (k kind) String() string {
	switch k {
	case kObject:
		return "an object"
	case kArray:
		return "an array"
	case kString:
		return "a string"
	case kNumber:
		return "a number"
	case kBool:
		return "a boolean"
	case kNull:
		return "null"
	}
	return "nothing"
}

// node is one value of a parsed file, JSONC or YAML, with its byte span in
// the file's raw bytes.
type node struct {
	kind       kind
	start, end int      // the value's bytes are raw[start:end]
	str        string   // decoded value of a string; raw text of a number or boolean
	members    []member // object members in file order
	elems      []*node  // array elements in file order

	// YAML only.
	flow     bool   // a flow collection ({...} or [...]), not a block one
	editable bool   // a scalar whose span is known exactly (single line, no anchor or tag)
	problem  string // why it cannot be edited, when it cannot
}

// member is one key and value of an object.
type member struct {
	key              string
	keyStart, keyEnd int
	val              *node
}

// get returns the value of key in an object, or nil. When a key repeats,
// the last one wins, as in JavaScript's JSON.parse (duplicates inside server
// entries are refused earlier by checkDuplicates).
func (n *node) get(key string) *node {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// member returns the member for key, or nil.
func (n *node) member(key string) *member {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

type jsoncParser struct {
	data  []byte
	pos   int
	depth int
}

// parseJSONC parses data as JSONC. An input that holds nothing but
// whitespace, comments and a byte order mark yields a nil node and no error.
// Errors are *Error values with Line and Column set (File is left empty for
// the caller to fill in).
func parseJSONC(data []byte) (*node, error) {
	p := &jsoncParser{data: data}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		p.pos = 3
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos == len(data) {
		return nil, nil
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(data) {
		return nil, p.errAt(p.pos, "unexpected %s after the end of the top-level value; the file must hold exactly one JSON value (is a '{' or ',' missing, or a '}' too many?)", p.describe(p.pos))
	}
	return n, nil
}

func (p *jsoncParser) errAt(off int, format string, args ...any) *Error {
	line, col := position(p.data, off)
	return &Error{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// describe names the token at off for an error message.
func (p *jsoncParser) describe(off int) string {
	if off >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[off:])
	switch {
	case r == utf8.RuneError:
		return fmt.Sprintf("byte 0x%02x", p.data[off])
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("control character %U", r)
	}
	return fmt.Sprintf("'%c'", r)
}

// space skips whitespace and comments.
func (p *jsoncParser) space() error {
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; c {
		case ' ', '\t', '\n', '\r':
			p.pos++
		case '/':
			if p.pos+1 >= len(p.data) {
				return p.errAt(p.pos, "unexpected '/'; comments start with // or /*")
			}
			switch p.data[p.pos+1] {
			case '/':
				for p.pos < len(p.data) && p.data[p.pos] != '\n' && p.data[p.pos] != '\r' {
					p.pos++
				}
			case '*':
				start := p.pos
				end := strings.Index(string(p.data[p.pos+2:]), "*/")
				if end < 0 {
					return p.errAt(start, "unterminated /* comment; close it with */")
				}
				p.pos += 2 + end + 2
			default:
				return p.errAt(p.pos, "unexpected '/'; comments start with // or /*")
			}
		default:
			return nil
		}
	}
	return nil
}

func (p *jsoncParser) value() (*node, error) {
	if p.pos >= len(p.data) {
		return nil, p.errAt(p.pos, "unexpected end of file; a value is missing")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '\'':
		return nil, p.errAt(p.pos, "strings must be in double quotes (\"...\"), not single quotes")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case isWordByte(c):
		start := p.pos
		for p.pos < len(p.data) && isWordByte(p.data[p.pos]) {
			p.pos++
		}
		switch w := string(p.data[start:p.pos]); w {
		case "true", "false":
			return &node{kind: kBool, start: start, end: p.pos, str: w}, nil
		case "null":
			return &node{kind: kNull, start: start, end: p.pos}, nil
		default:
			return nil, p.errAt(start, "unexpected word %q; a value is a \"string\", a number, an object, an array, true, false or null (strings need double quotes)", w)
		}
	case c == '}' || c == ']':
		return nil, p.errAt(p.pos, "unexpected '%c'; a value is missing (a trailing comma before it is fine, two commas in a row are not)", c)
	case c == ',':
		return nil, p.errAt(p.pos, "unexpected ','; a value is missing (two commas in a row?)")
	}
	return nil, p.errAt(p.pos, "unexpected %s; a value is a \"string\", a number, an object, an array, true, false or null", p.describe(p.pos))
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

func (p *jsoncParser) enter(open int, what string) error {
	p.depth++
	if p.depth > maxDepth {
		return p.errAt(open, "%s nested more than %d levels deep", what, maxDepth)
	}
	return nil
}

func (p *jsoncParser) object() (*node, error) {
	n := &node{kind: kObject, start: p.pos}
	if err := p.enter(p.pos, "object"); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // {
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) {
			return nil, p.errAt(p.pos, "unexpected end of file; the object opened at %s is not closed with '}'", p.where(n.start))
		}
		c := p.data[p.pos]
		if c == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if c != '"' {
			switch {
			case c == '\'':
				return nil, p.errAt(p.pos, "object keys must be in double quotes (\"key\"), not single quotes")
			case c == ',':
				return nil, p.errAt(p.pos, "unexpected ','; a member is missing (two commas in a row?)")
			case isWordByte(c):
				return nil, p.errAt(p.pos, "object keys must be in double quotes; write \"%s\"", p.word(p.pos))
			}
			return nil, p.errAt(p.pos, "expected a \"key\" or '}' in the object opened at %s, found %s", p.where(n.start), p.describe(p.pos))
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errAt(p.pos, "expected ':' after the key %q, found %s", k.str, p.describe(p.pos))
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, member{key: k.str, keyStart: k.start, keyEnd: k.end, val: v})
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) {
			return nil, p.errAt(p.pos, "unexpected end of file; the object opened at %s is not closed with '}'", p.where(n.start))
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
		default:
			if c := p.data[p.pos]; c == '"' || c == '{' || c == '[' || isWordByte(c) {
				return nil, p.errAt(p.pos, "missing ',' after the value of %q (which ends at %s)", k.str, p.where(v.end))
			}
			return nil, p.errAt(p.pos, "expected ',' or '}' after the value of %q, found %s", k.str, p.describe(p.pos))
		}
	}
}

func (p *jsoncParser) array() (*node, error) {
	n := &node{kind: kArray, start: p.pos}
	if err := p.enter(p.pos, "array"); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // [
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) {
			return nil, p.errAt(p.pos, "unexpected end of file; the array opened at %s is not closed with ']'", p.where(n.start))
		}
		if p.data[p.pos] == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) {
			return nil, p.errAt(p.pos, "unexpected end of file; the array opened at %s is not closed with ']'", p.where(n.start))
		}
		switch c := p.data[p.pos]; {
		case c == ',':
			p.pos++
		case c == ']':
		case c == '"' || c == '{' || c == '[' || c == '-' || isWordByte(c):
			return nil, p.errAt(p.pos, "missing ',' between array elements (after the one that ends at %s)", p.where(v.end))
		default:
			return nil, p.errAt(p.pos, "expected ',' or ']' in the array opened at %s, found %s", p.where(n.start), p.describe(p.pos))
		}
	}
}

func (p *jsoncParser) word(off int) string {
	end := off
	for end < len(p.data) && isWordByte(p.data[end]) {
		end++
	}
	return string(p.data[off:end])
}

func (p *jsoncParser) where(off int) string {
	line, col := position(p.data, off)
	return fmt.Sprintf("%d:%d", line, col)
}

func (p *jsoncParser) number() (*node, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i - j
	}
	bad := func() (*node, error) {
		end := i
		for end < len(d) && (isWordByte(d[end]) || d[end] == '.' || d[end] == '+' || d[end] == '-') {
			end++
		}
		return nil, p.errAt(start, "invalid number %q; numbers are written like 12, -3.5 or 1e9 (no leading zeros, no hex, no NaN or Infinity)", string(d[start:end]))
	}
	if i < len(d) && d[i] == '0' {
		i++
		if i < len(d) && d[i] >= '0' && d[i] <= '9' {
			return bad()
		}
	} else if digits() == 0 {
		return bad()
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			return bad()
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			return bad()
		}
	}
	if i < len(d) && isWordByte(d[i]) {
		return bad()
	}
	p.pos = i
	return &node{kind: kNumber, start: start, end: i, str: string(d[start:i])}, nil
}

// string parses a double-quoted string at p.pos.
func (p *jsoncParser) string() (*node, error) {
	start := p.pos
	d := p.data
	i := start + 1
	var b []byte // decoded bytes, allocated only when an escape is seen
	plainFrom := i
	for {
		if i >= len(d) {
			return nil, p.errAt(start, "unterminated string; close it with '\"'")
		}
		c := d[i]
		switch {
		case c == '"':
			var s string
			if b == nil {
				s = string(d[plainFrom:i])
			} else {
				b = append(b, d[plainFrom:i]...)
				s = string(b)
			}
			p.pos = i + 1
			return &node{kind: kString, start: start, end: p.pos, str: s}, nil
		case c == '\n' || c == '\r':
			return nil, p.errAt(i, "line break inside a string; close the string on this line, or write the line break as \\n")
		case c < 0x20:
			return nil, p.errAt(i, "control character %U inside a string; write it as \\u%04x", rune(c), c)
		case c == '\\':
			if b == nil {
				b = make([]byte, 0, i-start+16)
			}
			b = append(b, d[plainFrom:i]...)
			if i+1 >= len(d) {
				return nil, p.errAt(start, "unterminated string; close it with '\"'")
			}
			e := d[i+1]
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
				i += 2
			case 'b':
				b = append(b, '\b')
				i += 2
			case 'f':
				b = append(b, '\f')
				i += 2
			case 'n':
				b = append(b, '\n')
				i += 2
			case 'r':
				b = append(b, '\r')
				i += 2
			case 't':
				b = append(b, '\t')
				i += 2
			case 'u':
				r, ok := hex4(d, i+2)
				if !ok {
					bad := d[i:min(i+6, len(d))]
					if q := bytes.IndexByte(bad[1:], '"'); q >= 0 {
						bad = bad[:q+1]
					}
					return nil, p.errAt(i, "invalid escape %s in a string; \\u needs four hex digits, as in \\u00e9", bad)
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(d, i+2); ok && i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
							i += 6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				r, _ := utf8.DecodeRune(d[i+1:])
				return nil, p.errAt(i, "invalid escape \"\\%c\" in a string; valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX; write a backslash as \\\\ (a Windows path is \"C:\\\\Program Files\\\\...\")", r)
			}
			plainFrom = i
		default:
			i++
		}
	}
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d[i:i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}

// position converts a byte offset into a 1-based line and column. Lines end
// at \n, \r\n or a lone \r; columns count characters (runes), a tab as one.
func position(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	line, col = 1, 1
	for i := 0; i < off; {
		c := data[i]
		switch {
		case c == '\n':
			line++
			col = 1
			i++
		case c == '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
				continue
			}
			line++
			col = 1
			i++
		case c < utf8.RuneSelf:
			col++
			i++
		default:
			_, size := utf8.DecodeRune(data[i:])
			col++
			i += size
		}
	}
	if off >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF && line == 1 {
		col-- // the byte order mark is not a character anyone sees
	}
	return line, col
}

// quoteJSON encodes s as a JSON string literal. It escapes only what JSON
// requires (quote, backslash, control characters), so paths and non-ASCII
// text stay readable.
func quoteJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
