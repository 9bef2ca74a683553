package jsonrpc

import (
	"errors"
	"strconv"
)

// Token is what Walk reports: where an object or array starts and ends,
// an object member's name, or a scalar.
type Token uint8

const (
	ObjectStart Token = iota + 1
	ObjectEnd
	ArrayStart
	ArrayEnd
	// Key is an object member's name (unescaped), before its value.
	Key
	// Scalar is a string, number, true, false or null, as raw JSON.
	Scalar
)

// ErrSkip, returned by a Walk callback for a Key, skips that member's
// value.
var ErrSkip = errors.New("skip this value")

var errMalformed = errors.New("malformed JSON")

// Walk calls fn for each token of the JSON value v, in document order, in
// a single pass: the work is linear in len(v) however deep the value nests
// (a walk that recursed through EachMember would scan each level again,
// size × depth). For a Key, text is the member's name; for a Scalar, raw
// is its JSON. fn returning ErrSkip for a Key skips the member's value;
// any other error stops the walk and is returned. v should be valid JSON
// (see Valid); anything else is an error, never a panic.
func Walk(v []byte, fn func(tok Token, text string, raw []byte) error) error {
	var stack []byte // '{' or '[' per open container
	i := SkipSpace(v, 0)
	for {
		// A value starts at i.
		if i >= len(v) {
			return errMalformed
		}
		switch c := v[i]; c {
		case '{', '[':
			tok, closer := ObjectStart, byte('}')
			if c == '[' {
				tok, closer = ArrayStart, ']'
			}
			if err := fn(tok, "", nil); err != nil {
				return err
			}
			stack = append(stack, c)
			i = SkipSpace(v, i+1)
			if i < len(v) && v[i] == closer {
				break // empty: closed below
			}
			if c == '[' {
				continue // at the first element
			}
			var skipped bool
			var err error
			if i, skipped, err = walkKey(v, i, fn); err != nil {
				return err
			}
			if !skipped {
				continue // at the member's value
			}
		default:
			end := SkipValue(v, i)
			if end <= i {
				return errMalformed
			}
			if err := fn(Scalar, "", v[i:end]); err != nil {
				return err
			}
			i = end
		}
		// After a value: commas, keys of skipped members and closes, up to
		// the next value or the end.
	after:
		for {
			i = SkipSpace(v, i)
			if len(stack) == 0 {
				if i != len(v) {
					return errMalformed // data after the value
				}
				return nil
			}
			if i >= len(v) {
				return errMalformed
			}
			top := stack[len(stack)-1]
			switch v[i] {
			case ',':
				i = SkipSpace(v, i+1)
				if top == '[' {
					break after
				}
				var skipped bool
				var err error
				if i, skipped, err = walkKey(v, i, fn); err != nil {
					return err
				}
				if !skipped {
					break after
				}
			case '}', ']':
				if (v[i] == '}') != (top == '{') {
					return errMalformed
				}
				tok := ObjectEnd
				if top == '[' {
					tok = ArrayEnd
				}
				if err := fn(tok, "", nil); err != nil {
					return err
				}
				stack = stack[:len(stack)-1]
				i++
			default:
				return errMalformed
			}
		}
	}
}

// walkKey reports the member name at v[i] and moves past its ':'. It
// returns the index of the member's value, or, when fn skipped it, the
// index just past the value.
func walkKey(v []byte, i int, fn func(Token, string, []byte) error) (next int, skipped bool, err error) {
	if i >= len(v) || v[i] != '"' {
		return 0, false, errMalformed
	}
	end := SkipString(v, i)
	name, err := Unquote(v[i:end])
	if err != nil {
		return 0, false, err
	}
	j := SkipSpace(v, end)
	if j >= len(v) || v[j] != ':' {
		return 0, false, errMalformed
	}
	j = SkipSpace(v, j+1)
	switch err := fn(Key, name, nil); {
	case errors.Is(err, ErrSkip):
		end := SkipValue(v, j)
		if end <= j {
			return 0, false, errMalformed
		}
		return end, true, nil
	case err != nil:
		return 0, false, err
	}
	return j, false, nil
}

// Decode decodes a JSON value as encoding/json decodes it into any
// (numbers as float64, the last of repeated members), in one pass
// (see Walk) and without reflection: the engine decodes the arguments of
// every call a rule matches. v should be valid JSON.
func Decode(v []byte) (any, error) {
	type frame struct {
		obj map[string]any
		arr []any
		key string
	}
	var stack []*frame
	var root any
	put := func(x any) {
		if len(stack) == 0 {
			root = x
			return
		}
		if f := stack[len(stack)-1]; f.obj != nil {
			f.obj[f.key] = x
		} else {
			f.arr = append(f.arr, x)
		}
	}
	err := Walk(v, func(tok Token, text string, raw []byte) error {
		switch tok {
		case ObjectStart:
			stack = append(stack, &frame{obj: map[string]any{}})
		case ArrayStart:
			stack = append(stack, &frame{arr: []any{}})
		case ObjectEnd, ArrayEnd:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f.obj != nil {
				put(f.obj)
			} else {
				put(f.arr)
			}
		case Key:
			stack[len(stack)-1].key = text
		case Scalar:
			x, err := scalar(raw)
			if err != nil {
				return err
			}
			put(x)
		}
		return nil
	})
	return root, err
}

// scalar decodes a JSON scalar as encoding/json decodes it into any.
func scalar(raw []byte) (any, error) {
	switch raw[0] {
	case '"':
		return Unquote(raw)
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return strconv.ParseFloat(string(raw), 64)
}
