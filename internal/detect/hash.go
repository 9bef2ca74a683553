package detect

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// DefinitionHash is the SHA-256 of a canonical encoding of what a tool
// definition shows the model: name, title, description, inputSchema,
// outputSchema and annotations. The pin system compares it across
// launches and list_changed notifications (it adds the server's
// instructions itself).
//
// The encoding is one JSON object with those six keys, prefixed with the
// line "weir-tool-definition-v1\n". JSON values are canonical: object keys
// sorted bytewise (duplicates kept, in their original order), no
// insignificant white space, strings re-encoded with only `"`, `\` and
// control characters escaped, numbers as written. So two definitions that
// differ only in key order or formatting hash alike, and any change a model
// could see changes the hash. Server is not part of it: pins are keyed by
// server already. An absent or null schema encodes as null; a schema that
// is not valid JSON encodes as {"$invalid": <its bytes as a string>}.
func DefinitionHash(t Tool) [32]byte {
	var b bytes.Buffer
	b.WriteString("weir-tool-definition-v1\n{")
	field := func(name string, first bool) {
		if !first {
			b.WriteByte(',')
		}
		writeJSONString(&b, name)
		b.WriteByte(':')
	}
	field("annotations", true)
	writeCanonicalRaw(&b, t.Annotations)
	field("description", false)
	writeJSONString(&b, t.Description)
	field("inputSchema", false)
	writeCanonicalRaw(&b, t.InputSchema)
	field("name", false)
	writeJSONString(&b, t.Name)
	field("outputSchema", false)
	writeCanonicalRaw(&b, t.OutputSchema)
	field("title", false)
	writeJSONString(&b, t.Title)
	b.WriteByte('}')
	return sha256.Sum256(b.Bytes())
}

// CanonicalJSON returns the canonical encoding DefinitionHash uses for a
// JSON value, or an error if raw is not one valid JSON value. It reads the
// bytes once, strictly, as encoding/json does (a value nested more than
// maxCanonDepth deep is an error too), and decodes strings as it does:
// invalid UTF-8 and lone surrogates become U+FFFD.
func CanonicalJSON(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(raw))
	var c canonicaliser
	i, err := c.value(&b, raw, skipWS(raw, 0), 0)
	if err != nil {
		return nil, err
	}
	if skipWS(raw, i) != len(raw) {
		return nil, errTrailing
	}
	return b.Bytes(), nil
}

type canonError string

func (e canonError) Error() string { return string(e) }

const (
	errTrailing = canonError("detect: trailing data after JSON value")
	errDepth    = canonError("detect: JSON nested too deeply")
	errSyntax   = canonError("detect: malformed JSON")
)

// maxCanonDepth is the deepest a value may be nested (the top one is at
// depth 0).
const maxCanonDepth = 1000

func writeCanonicalRaw(b *bytes.Buffer, raw json.RawMessage) {
	if len(bytes.TrimSpace(raw)) == 0 {
		b.WriteString("null")
		return
	}
	c, err := CanonicalJSON(raw)
	if err != nil {
		b.WriteString(`{"$invalid":`)
		writeJSONString(b, string(raw))
		b.WriteByte('}')
		return
	}
	b.Write(c)
}

func skipWS(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// canonMember is one member of an object being canonicalised: its name,
// and where its canonical value is in the object's buffer.
type canonMember struct {
	key        []byte
	start, end int
}

// canonicaliser holds, per depth, the buffer an object's member values
// are written to before they are put in order, and its members: reused by
// every object at that depth.
type canonicaliser struct {
	vals    []*bytes.Buffer // pointers: a deeper object may grow the slice
	members [][]canonMember
}

// value writes the JSON value at s[i] canonically to b and returns the
// index after it.
func (c *canonicaliser) value(b *bytes.Buffer, s []byte, i, depth int) (int, error) {
	if depth > maxCanonDepth {
		return 0, errDepth
	}
	if i >= len(s) {
		return 0, errSyntax
	}
	switch ch := s[i]; {
	case ch == '{':
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == '}' {
			b.WriteString("{}")
			return i + 1, nil
		}
		for len(c.vals) <= depth {
			c.vals = append(c.vals, new(bytes.Buffer))
			c.members = append(c.members, nil)
		}
		vals := c.vals[depth]
		vals.Reset()
		members := c.members[depth][:0]
		for {
			if i >= len(s) || s[i] != '"' {
				return 0, errSyntax
			}
			end, err := jsonStringEnd(s, i)
			if err != nil {
				return 0, err
			}
			key, err := jsonStringValue(s[i:end])
			if err != nil {
				return 0, err
			}
			i = skipWS(s, end)
			if i >= len(s) || s[i] != ':' {
				return 0, errSyntax
			}
			at := vals.Len()
			if i, err = c.value(vals, s, skipWS(s, i+1), depth+1); err != nil {
				return 0, err
			}
			members = append(members, canonMember{key, at, vals.Len()})
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == '}' {
				break
			}
			return 0, errSyntax
		}
		slices.SortStableFunc(members, func(x, y canonMember) int { return bytes.Compare(x.key, y.key) })
		c.members[depth] = members
		v := vals.Bytes()
		b.WriteByte('{')
		for k, m := range members {
			if k > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, string(m.key))
			b.WriteByte(':')
			b.Write(v[m.start:m.end])
		}
		b.WriteByte('}')
		return i + 1, nil
	case ch == '[':
		b.WriteByte('[')
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == ']' {
			b.WriteByte(']')
			return i + 1, nil
		}
		for n := 0; ; n++ {
			if n > 0 {
				b.WriteByte(',')
			}
			var err error
			if i, err = c.value(b, s, i, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == ']' {
				b.WriteByte(']')
				return i + 1, nil
			}
			return 0, errSyntax
		}
	case ch == '"':
		end, err := jsonStringEnd(s, i)
		if err != nil {
			return 0, err
		}
		if plainString(s[i:end]) {
			b.Write(s[i:end]) // re-encoding it would give the same bytes
			return end, nil
		}
		str, err := jsonrpc.Unquote(s[i:end])
		if err != nil {
			return 0, errSyntax
		}
		writeJSONString(b, str)
		return end, nil
	case ch == '-' || '0' <= ch && ch <= '9':
		end := numberEnd(s, i)
		if end < 0 {
			return 0, errSyntax
		}
		b.Write(s[i:end]) // as written
		return end, nil
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(s[i:], []byte(lit)) {
				b.WriteString(lit)
				return i + len(lit), nil
			}
		}
		return 0, errSyntax
	}
}

// jsonStringEnd returns the index after the JSON string starting at s[i] (a
// quote): the next quote no backslash escapes. A control character
// before it is an error; escapes are checked when it is decoded.
func jsonStringEnd(s []byte, i int) (int, error) {
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			i++
		case c < 0x20:
			return 0, errSyntax
		}
	}
	return 0, errSyntax
}

// plainString reports whether a JSON string literal (from jsonStringEnd)
// has no escapes and is valid UTF-8: its decoded value is its body, which
// writeJSONString would write back as it is.
func plainString(lit []byte) bool {
	body := lit[1 : len(lit)-1]
	return bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body)
}

// jsonStringValue is the decoded value of a JSON string literal (from
// jsonStringEnd), aliasing it when it is plain.
func jsonStringValue(lit []byte) ([]byte, error) {
	if plainString(lit) {
		return lit[1 : len(lit)-1], nil
	}
	str, err := jsonrpc.Unquote(lit)
	if err != nil {
		return nil, errSyntax
	}
	return []byte(str), nil
}

// numberEnd returns the index after the JSON number starting at s[i], or
// -1 if none does: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(s []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		return j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// writeJSONString writes s as a JSON string, escaping only what JSON
// requires. Invalid UTF-8 is written as U+FFFD.
func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20:
				switch c {
				case '\n':
					b.WriteString(`\n`)
				case '\r':
					b.WriteString(`\r`)
				case '\t':
					b.WriteString(`\t`)
				default:
					b.WriteString(`\u00`)
					b.WriteString(hex2(c))
				}
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}
