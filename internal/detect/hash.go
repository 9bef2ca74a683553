package detect

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"
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
// JSON value, or an error if raw is not one valid JSON value.
func CanonicalJSON(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := canonical(&b, dec, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
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

// canonical writes the next JSON value of dec canonically.
func canonical(b *bytes.Buffer, dec *json.Decoder, depth int) error {
	if depth > 1000 {
		return errDepth
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			type kv struct {
				k string
				v []byte
			}
			var kvs []kv
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, ok := kt.(string)
				if !ok {
					return errSyntax
				}
				var vb bytes.Buffer
				if err := canonical(&vb, dec, depth+1); err != nil {
					return err
				}
				kvs = append(kvs, kv{k, vb.Bytes()})
			}
			if _, err := dec.Token(); err != nil { // '}'
				return err
			}
			sort.SliceStable(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
			b.WriteByte('{')
			for i, e := range kvs {
				if i > 0 {
					b.WriteByte(',')
				}
				writeJSONString(b, e.k)
				b.WriteByte(':')
				b.Write(e.v)
			}
			b.WriteByte('}')
		case '[':
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := canonical(b, dec, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			b.WriteByte(']')
		default:
			return errSyntax
		}
	case string:
		writeJSONString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
	return nil
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
