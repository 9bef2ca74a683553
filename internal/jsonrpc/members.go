package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"
)

// ErrDuplicateKey reports an object with the same member name twice, or
// two names equal but for case. Parsers disagree on which one wins (first,
// last, or a case-folded match), and a gateway that reads one while the
// server obeys the other can be walked around, so Weir refuses such
// messages instead of guessing.
var ErrDuplicateKey = errors.New("duplicate member name")

// Valid reports whether data is one valid JSON value.
func Valid(data []byte) bool { return segjson.Valid(data) }

// Members calls fn for each member of the JSON object obj, in order, with
// its exact (unescaped) name and raw value. obj must be valid JSON; a
// non-object is an error, and so is a repeated name, compared without
// regard to case (ErrDuplicateKey). The value slices alias obj.
func Members(obj []byte, fn func(name string, value []byte) error) error {
	var seen [8]string // most messages have few members: no map
	names := seen[:0]
	return eachMember(obj, func(name string, value []byte) error {
		for _, n := range names {
			// Case-folded too: encoding/json matches struct fields without
			// regard to case, so a Go server would read "NAME" as "name".
			if strings.EqualFold(n, name) {
				return fmt.Errorf("%w %q", ErrDuplicateKey, name)
			}
		}
		names = append(names, name)
		return fn(name, value)
	})
}

// EachMember is Members without the duplicate check: it visits every
// member, repeats included, which is what a scan for leaked data wants.
func EachMember(obj []byte, fn func(name string, value []byte) error) error {
	return eachMember(obj, fn)
}

// EachElement calls fn for each element of the JSON array arr, which must
// be valid JSON.
func EachElement(arr []byte, fn func(i int, value []byte) error) error {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return errors.New("not a JSON array")
	}
	for n := 0; ; n++ {
		i = SkipSpace(arr, i+1)
		if i >= len(arr) || arr[i] == ']' {
			return nil
		}
		end := SkipValue(arr, i)
		if err := fn(n, arr[i:end]); err != nil {
			return err
		}
		i = SkipSpace(arr, end)
		if i >= len(arr) || arr[i] != ',' {
			return nil
		}
	}
}

func eachMember(obj []byte, fn func(name string, value []byte) error) error {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errors.New("not a JSON object")
	}
	i++
	for {
		i = SkipSpace(obj, i)
		if i < len(obj) && obj[i] == '}' {
			return nil
		}
		if i >= len(obj) || obj[i] != '"' {
			return errors.New("malformed object")
		}
		end := SkipString(obj, i)
		name, err := Unquote(obj[i:end])
		if err != nil {
			return err
		}
		i = SkipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return errors.New("malformed object")
		}
		start := SkipSpace(obj, i+1)
		i = SkipValue(obj, start)
		if err := fn(name, obj[start:i]); err != nil {
			return err
		}
		i = SkipSpace(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
}

// Unquote decodes the JSON string literal s as encoding/json does,
// invalid UTF-8 becoming U+FFFD.
func Unquote(s []byte) (string, error) {
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s[1 : len(s)-1]), nil
	}
	var out string
	if err := json.Unmarshal(s, &out); err != nil {
		return "", err
	}
	return out, nil
}

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the JSON string starting at b[i].
// It jumps from quote to quote (bytes.IndexByte is vectorised), checking
// each for an escaping backslash, so long strings cost little.
func SkipString(b []byte, i int) int {
	for i++; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		n := 0 // backslashes right before the quote
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return len(b)
}

// SkipValue returns the index just past the JSON value starting at b[i],
// which must be valid JSON (see Valid). It does not recurse, so nesting
// depth costs no stack.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = SkipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// ReplaceMember returns a copy of obj with the value of its top-level member
// name replaced by value, every other byte as it was. It reports false, and
// returns obj, when there is no such member.
func ReplaceMember(obj []byte, name string, value []byte) ([]byte, bool) {
	var start, end int
	found := false
	_ = eachMember(obj, func(n string, v []byte) error {
		if n == name && !found {
			// v aliases obj, so its offset is the difference in capacity.
			start = cap(obj) - cap(v)
			end = start + len(v)
			found = true
		}
		return nil
	})
	if !found {
		return obj, false
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(value))
	out = append(out, obj[:start]...)
	out = append(out, value...)
	return append(out, obj[end:]...), true
}
