package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
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
// that are not exactly one JSON value give an error.
func Shape(args json.RawMessage, keyed func(string) string) (shape json.RawMessage, hashes map[string]string, err error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil, nil, nil
	}
	s := shaper{
		dec:   json.NewDecoder(bytes.NewReader(args)),
		keyed: keyed,
		path:  []byte{'$'},
		out:   make([]byte, 0, 64+len(args)/2),
	}
	s.dec.UseNumber()
	if keyed != nil {
		s.hashes = make(map[string]string)
	}
	if err := s.value(0, true); err != nil {
		return nil, nil, fmt.Errorf("audit: shape: %w", err)
	}
	if _, err := s.dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return nil, nil, fmt.Errorf("audit: shape: after the arguments: %w", err)
	}
	if len(s.hashes) == 0 {
		s.hashes = nil
	}
	return s.out, s.hashes, nil
}

type shaper struct {
	dec    *json.Decoder
	keyed  func(string) string
	hashes map[string]string
	path   []byte // JSON path of the value being read
	out    []byte
}

// value reads one JSON value; with emit set it appends its shape to s.out
// (and hashes its strings), else it only consumes it.
func (s *shaper) value(depth int, emit bool) error {
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	if !emit {
		return s.skip(tok)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= ShapeMaxDepth {
			if t == '{' {
				s.out = append(s.out, `"{…}"`...)
			} else {
				s.out = append(s.out, `"[…]"`...)
			}
			return s.skip(tok)
		}
		if t == '{' {
			return s.object(depth)
		}
		return s.array(depth)
	case string:
		s.out = append(s.out, `"string(`...)
		s.out = strconv.AppendInt(s.out, int64(len(t)), 10)
		s.out = append(s.out, `)"`...)
		if s.keyed != nil && len(s.hashes) < ShapeMaxHashes {
			s.hashes[string(s.path)] = s.keyed(t)
		}
	case json.Number:
		s.out = append(s.out, `"number"`...)
	case bool:
		s.out = append(s.out, `"bool"`...)
	case nil:
		s.out = append(s.out, "null"...)
	default:
		return fmt.Errorf("unexpected token %T", tok)
	}
	return nil
}

// skip consumes the rest of the value that starts with tok, without
// recursion, so nesting depth costs no stack.
func (s *shaper) skip(tok json.Token) error {
	open := 0
	for {
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				open++
			} else {
				open--
			}
		}
		if open == 0 {
			return nil
		}
		var err error
		if tok, err = s.dec.Token(); err != nil {
			return err
		}
	}
}

// object reads the members of an object whose '{' has been read.
func (s *shaper) object(depth int) error {
	s.out = append(s.out, '{')
	n, more := 0, 0
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object key is %T, not a string", tok)
		}
		if n >= ShapeMaxKeys {
			more++
			if err := s.value(depth+1, false); err != nil {
				return err
			}
			continue
		}
		if n > 0 {
			s.out = append(s.out, ',')
		}
		s.out = appendQuoted(s.out, key)
		s.out = append(s.out, ':')
		mark := len(s.path)
		s.path = appendKeyPath(s.path, key)
		err = s.value(depth+1, true)
		s.path = s.path[:mark]
		if err != nil {
			return err
		}
		n++
	}
	if _, err := s.dec.Token(); err != nil { // '}'
		return err
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
	for s.dec.More() {
		if n >= ShapeMaxElems {
			more++
			if err := s.value(depth+1, false); err != nil {
				return err
			}
			continue
		}
		if n > 0 {
			s.out = append(s.out, ',')
		}
		mark := len(s.path)
		s.path = append(s.path, '[')
		s.path = strconv.AppendInt(s.path, int64(n), 10)
		s.path = append(s.path, ']')
		err := s.value(depth+1, true)
		s.path = s.path[:mark]
		if err != nil {
			return err
		}
		n++
	}
	if _, err := s.dec.Token(); err != nil { // ']'
		return err
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
