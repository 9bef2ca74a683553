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
// invalid UTF-8 and lone surrogates become U+FFFD. Its work is linear in
// the input however deep objects nest (see canonicaliser).
func CanonicalJSON(raw []byte) ([]byte, error) {
	c := canonicaliser{arena: make([]byte, 0, len(raw))}
	p, i, err := c.value(raw, skipWS(raw, 0), 0)
	if err != nil {
		return nil, err
	}
	if skipWS(raw, i) != len(raw) {
		return nil, errTrailing
	}
	if p.node < 0 {
		return c.arena[p.start:p.end], nil
	}
	out := make([]byte, 0, len(c.arena))
	return c.emit(out, p), nil
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

// canonicaliser writes a value's canonical bytes in one pass, in the
// order they are read, to arena. A value whose canonical form is what was
// written, in one piece (a scalar, an array of such, an object of such
// whose keys came in order), is that span of the arena; any other object
// or array is a node that lists its members' or elements' pieces, and
// the canonical bytes are put together once, at the end (emit). Sorting
// by copying each object's members into its parent, as the encoding/json
// version did, copied a value once for every object around it: 1 MB
// nested 1,000 objects deep took seconds.
type canonicaliser struct {
	arena []byte
	nodes []canonNode
	// scratch, per depth: the pieces of the container being read there
	elems   [][]canonPiece
	members [][]canonMember
}

// canonPiece is a value: arena[start:end] when node < 0, else nodes[node].
type canonPiece struct {
	start, end int
	node       int
}

type canonNode struct {
	obj     bool
	members []canonMember // an object's, in the order they were read
	elems   []canonPiece  // an array's
}

// canonMember is an object member: its decoded name, for sorting, the
// arena span of its canonical "name":, and its value.
type canonMember struct {
	key  []byte
	name canonPiece
	val  canonPiece
}

func (c *canonicaliser) span(start int) canonPiece {
	return canonPiece{start: start, end: len(c.arena), node: -1}
}

func (c *canonicaliser) scratch(depth int) {
	for len(c.elems) <= depth {
		c.elems = append(c.elems, nil)
		c.members = append(c.members, nil)
	}
}

// value reads the JSON value at s[i] and returns it and the index after it.
func (c *canonicaliser) value(s []byte, i, depth int) (canonPiece, int, error) {
	var none canonPiece
	if depth > maxCanonDepth {
		return none, 0, errDepth
	}
	if i >= len(s) {
		return none, 0, errSyntax
	}
	start := len(c.arena)
	switch ch := s[i]; {
	case ch == '{':
		c.arena = append(c.arena, '{')
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == '}' {
			c.arena = append(c.arena, '}')
			return c.span(start), i + 1, nil
		}
		c.scratch(depth)
		members := c.members[depth][:0]
		inOrder, flat := true, true
		for {
			if i >= len(s) || s[i] != '"' {
				return none, 0, errSyntax
			}
			end, ok := jsonrpc.ScanString(s, i)
			if !ok {
				return none, 0, errSyntax
			}
			key, err := jsonStringValue(s[i:end])
			if err != nil {
				return none, 0, err
			}
			if len(members) > 0 {
				c.arena = append(c.arena, ',')
				inOrder = inOrder && bytes.Compare(members[len(members)-1].key, key) <= 0
			}
			nameAt := len(c.arena)
			c.arena = appendJSONString(c.arena, key, s[i:end])
			c.arena = append(c.arena, ':')
			name := c.span(nameAt)
			i = skipWS(s, end)
			if i >= len(s) || s[i] != ':' {
				return none, 0, errSyntax
			}
			var val canonPiece
			if val, i, err = c.value(s, skipWS(s, i+1), depth+1); err != nil {
				return none, 0, err
			}
			flat = flat && val.node < 0
			members = append(members, canonMember{key, name, val})
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == '}' {
				break
			}
			return none, 0, errSyntax
		}
		c.members[depth] = members
		c.arena = append(c.arena, '}')
		if inOrder && flat {
			return c.span(start), i + 1, nil
		}
		ms := slices.Clone(members)
		slices.SortStableFunc(ms, func(x, y canonMember) int { return bytes.Compare(x.key, y.key) })
		c.nodes = append(c.nodes, canonNode{obj: true, members: ms})
		return canonPiece{node: len(c.nodes) - 1}, i + 1, nil
	case ch == '[':
		c.arena = append(c.arena, '[')
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == ']' {
			c.arena = append(c.arena, ']')
			return c.span(start), i + 1, nil
		}
		c.scratch(depth)
		elems := c.elems[depth][:0]
		flat := true
		for {
			if len(elems) > 0 {
				c.arena = append(c.arena, ',')
			}
			p, next, err := c.value(s, i, depth+1)
			if err != nil {
				return none, 0, err
			}
			flat = flat && p.node < 0
			elems = append(elems, p)
			i = skipWS(s, next)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == ']' {
				break
			}
			return none, 0, errSyntax
		}
		c.elems[depth] = elems
		c.arena = append(c.arena, ']')
		if flat {
			return c.span(start), i + 1, nil
		}
		c.nodes = append(c.nodes, canonNode{elems: slices.Clone(elems)})
		return canonPiece{node: len(c.nodes) - 1}, i + 1, nil
	case ch == '"':
		end, ok := jsonrpc.ScanString(s, i)
		if !ok {
			return none, 0, errSyntax
		}
		v, err := jsonStringValue(s[i:end])
		if err != nil {
			return none, 0, err
		}
		c.arena = appendJSONString(c.arena, v, s[i:end])
		return c.span(start), end, nil
	case ch == '-' || '0' <= ch && ch <= '9':
		end, ok := jsonrpc.ScanNumber(s, i)
		if !ok {
			return none, 0, errSyntax
		}
		c.arena = append(c.arena, s[i:end]...) // as written
		return c.span(start), end, nil
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(s[i:], []byte(lit)) {
				c.arena = append(c.arena, lit...)
				return c.span(start), i + len(lit), nil
			}
		}
		return none, 0, errSyntax
	}
}

// emit appends the canonical bytes of p to out.
func (c *canonicaliser) emit(out []byte, p canonPiece) []byte {
	if p.node < 0 {
		return append(out, c.arena[p.start:p.end]...)
	}
	n := &c.nodes[p.node]
	if n.obj {
		out = append(out, '{')
		for k, m := range n.members {
			if k > 0 {
				out = append(out, ',')
			}
			out = append(out, c.arena[m.name.start:m.name.end]...)
			out = c.emit(out, m.val)
		}
		return append(out, '}')
	}
	out = append(out, '[')
	for k, e := range n.elems {
		if k > 0 {
			out = append(out, ',')
		}
		out = c.emit(out, e)
	}
	return append(out, ']')
}

// appendJSONString appends the canonical encoding of a string whose
// decoded value is v and literal lit: the literal itself when it is plain
// (re-encoding it would give the same bytes).
func appendJSONString(out, v, lit []byte) []byte {
	if plainString(lit) {
		return append(out, lit...)
	}
	var b bytes.Buffer
	writeJSONString(&b, string(v))
	return append(out, b.Bytes()...)
}

// plainString reports whether a JSON string literal (from
// jsonrpc.ScanString) has no escapes and is valid UTF-8: its decoded value
// is its body, which writeJSONString would write back as it is.
func plainString(lit []byte) bool {
	body := lit[1 : len(lit)-1]
	return bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body)
}

// jsonStringValue is the decoded value of a JSON string literal (from
// jsonrpc.ScanString), aliasing it when it is plain.
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
