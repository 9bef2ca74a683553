package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// Caps on what Shape describes. Past them values are counted, not described,
// so a record stays small whatever the arguments hold.
const (
	ShapeMaxElems  = 32  // array elements described; the rest become "…+N more"
	ShapeMaxKeys   = 64  // object keys kept; the rest become "…": "+N more"
	ShapeMaxDepth  = 32  // nesting described; deeper arrays and objects become "[…]" and "{…}"
	ShapeMaxHashes = 256 // string values hashed
)

// Shape describes the JSON value args by type and size, never by value, and
// hashes its strings with keyed.
//
// In the shape every string becomes "string(N)" (N its length in bytes),
// every number "number", every boolean "bool", and null stays null. Arrays
// hold the shapes of their first ShapeMaxElems elements, then one more
// element "…+N more" if any were left out. Objects keep their keys, in input
// order (keys are parameter names, not values), with the shapes of their
// values, up to ShapeMaxKeys keys, then a key "…" with the value "+N more".
// Arrays and objects nested deeper than ShapeMaxDepth become "[…]" and "{…}".
//
// hashes maps the JSON path of each described string ($ for the root, $.to,
// $.items[2].body, and $["a b"] for keys that are not identifiers) to
// keyed(value), for the first ShapeMaxHashes strings in document order. With
// a nil keyed, hashes is nil. Strings left out of the shape are not hashed.
//
// Empty or all-blank args (a call without arguments) give a nil shape. Args
// that are not exactly one valid JSON value give an error, and so do args
// nested more than jsonrpc.MaxDepth levels deep (see jsonrpc.Valid).
func Shape(args json.RawMessage, keyed func(string) string) (shape json.RawMessage, hashes map[string]string, err error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil, nil, nil
	}
	// Validate once, then walk the bytes: Shape runs for every call, and a
	// token decoder costs tens of microseconds on a 4 KB argument.
	if !jsonrpc.Valid(args) {
		return nil, nil, errors.New("audit: shape: arguments are not exactly one valid JSON value")
	}
	s := shaper{
		data:  args,
		keyed: keyed,
		path:  []byte{'$'},
		out:   make([]byte, 0, 64+len(args)/8),
	}
	if keyed != nil {
		s.hashes = make(map[string]string)
	}
	if err := s.value(0); err != nil {
		return nil, nil, fmt.Errorf("audit: shape: %w", err)
	}
	if len(s.hashes) == 0 {
		s.hashes = nil
	}
	return s.out, s.hashes, nil
}

type shaper struct {
	data   []byte // valid JSON
	i      int    // read position in data
	keyed  func(string) string
	hashes map[string]string
	path   []byte // JSON path of the value being read
	out    []byte
}

// value reads one JSON value at s.i and appends its shape to s.out (and
// hashes its strings).
func (s *shaper) value(depth int) error {
	s.i = jsonrpc.SkipSpace(s.data, s.i)
	if s.i >= len(s.data) {
		return io.ErrUnexpectedEOF
	}
	switch c := s.data[s.i]; c {
	case '{', '[':
		if depth >= ShapeMaxDepth {
			if c == '{' {
				s.out = append(s.out, `"{…}"`...)
			} else {
				s.out = append(s.out, `"[…]"`...)
			}
			s.i = jsonrpc.SkipValue(s.data, s.i)
			return nil
		}
		s.i++
		if c == '{' {
			return s.object(depth)
		}
		return s.array(depth)
	case '"':
		str, err := s.str()
		if err != nil {
			return err
		}
		s.out = append(s.out, `"string(`...)
		s.out = strconv.AppendInt(s.out, int64(len(str)), 10)
		s.out = append(s.out, `)"`...)
		if s.keyed != nil && len(s.hashes) < ShapeMaxHashes {
			s.hashes[string(s.path)] = s.keyed(str)
		}
	case 't', 'f':
		s.out = append(s.out, `"bool"`...)
		s.i = jsonrpc.SkipValue(s.data, s.i)
	case 'n':
		s.out = append(s.out, "null"...)
		s.i = jsonrpc.SkipValue(s.data, s.i)
	default:
		s.out = append(s.out, `"number"`...)
		s.i = jsonrpc.SkipValue(s.data, s.i)
	}
	return nil
}

// str reads the string at s.i.
func (s *shaper) str() (string, error) {
	end := jsonrpc.SkipString(s.data, s.i)
	raw := s.data[s.i:end]
	s.i = end
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var str string
	err := json.Unmarshal(raw, &str)
	return str, err
}

// next skips whitespace and a comma, and reports whether another member or
// element follows before the closing delimiter, which it consumes.
func (s *shaper) next(close byte, first bool) bool {
	s.i = jsonrpc.SkipSpace(s.data, s.i)
	if s.i < len(s.data) && s.data[s.i] == close {
		s.i++
		return false
	}
	if !first && s.i < len(s.data) && s.data[s.i] == ',' {
		s.i = jsonrpc.SkipSpace(s.data, s.i+1)
	}
	return s.i < len(s.data)
}

// object reads the members of an object whose '{' has been read.
func (s *shaper) object(depth int) error {
	s.out = append(s.out, '{')
	n, more := 0, 0
	for s.next('}', n+more == 0) {
		key, err := s.str()
		if err != nil {
			return err
		}
		s.i = jsonrpc.SkipSpace(s.data, s.i) + 1 // ':'
		if n >= ShapeMaxKeys {
			more++
			s.i = jsonrpc.SkipValue(s.data, jsonrpc.SkipSpace(s.data, s.i))
			continue
		}
		if n > 0 {
			s.out = append(s.out, ',')
		}
		s.out = appendQuoted(s.out, key)
		s.out = append(s.out, ':')
		mark := len(s.path)
		s.path = appendKeyPath(s.path, key)
		err = s.value(depth + 1)
		s.path = s.path[:mark]
		if err != nil {
			return err
		}
		n++
	}
	if more > 0 {
		if n > 0 {
			s.out = append(s.out, ',')
		}
		s.out = append(s.out, `"…":"+`...)
		s.out = strconv.AppendInt(s.out, int64(more), 10)
		s.out = append(s.out, ` more"`...)
	}
	s.out = append(s.out, '}')
	return nil
}

// array reads the elements of an array whose '[' has been read.
func (s *shaper) array(depth int) error {
	s.out = append(s.out, '[')
	n, more := 0, 0
	for s.next(']', n+more == 0) {
		if n >= ShapeMaxElems {
			more++
			s.i = jsonrpc.SkipValue(s.data, s.i)
			continue
		}
		if n > 0 {
			s.out = append(s.out, ',')
		}
		mark := len(s.path)
		s.path = append(s.path, '[')
		s.path = strconv.AppendInt(s.path, int64(n), 10)
		s.path = append(s.path, ']')
		err := s.value(depth + 1)
		s.path = s.path[:mark]
		if err != nil {
			return err
		}
		n++
	}
	if more > 0 {
		if n > 0 {
			s.out = append(s.out, ',')
		}
		s.out = append(s.out, `"…+`...)
		s.out = strconv.AppendInt(s.out, int64(more), 10)
		s.out = append(s.out, ` more"`...)
	}
	s.out = append(s.out, ']')
	return nil
}

// appendKeyPath appends the path step for an object key: .key for an
// identifier ([A-Za-z_][A-Za-z0-9_]*), ["key"] otherwise.
func appendKeyPath(p []byte, key string) []byte {
	if isIdent(key) {
		p = append(p, '.')
		return append(p, key...)
	}
	p = append(p, '[')
	p = appendQuoted(p, key)
	return append(p, ']')
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// appendQuoted appends s as a JSON string. Unlike encoding/json it leaves
// <, > and & alone; it escapes quotes, backslashes, control characters,
// U+2028 and U+2029, and writes invalid UTF-8 as \ufffd.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
