package jsonrpc

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// Every message the relay forwards is validated before anything else reads
// it, so validation is the floor of the proxy's cost per byte. The
// validator here is one pass, without recursion or allocation: a stack of
// one bit per level (object or array) and strings crossed eight bytes at a
// time. It accepts exactly what encoding/json.Valid accepts (RFC 8259;
// bytes of 0x80 and above inside strings whatever their UTF-8, as
// encoding/json does) up to a nesting depth, and the envelope walk of
// Parse reads member spans in the same pass.

// errSyntax: the bytes are not valid JSON. Callers that report it say so
// in their own words (see diagnose).
var errSyntax = errors.New("not valid JSON")

// depthWords is the size of the validator's level stack, in bits over 64:
// MaxDepth levels.
const depthWords = (MaxDepth + 63) / 64

// scanValue validates the JSON value at b[i:] (after any whitespace) and
// returns the index just past it. A value nesting more than limit levels
// (limit at most MaxDepth) is errTooDeep; anything else wrong is
// errSyntax, with the index where reading stopped.
func scanValue(b []byte, i, limit int) (int, error) {
	var objects [depthWords]uint64 // bit d set: level d is an object
	limit = min(limit, MaxDepth)
	depth := 0
	for {
		// A value.
		i = SkipSpace(b, i)
		if i >= len(b) {
			return i, errSyntax
		}
		var ok bool
		switch c := b[i]; c {
		case '{', '[':
			if depth >= limit {
				return i, errTooDeep
			}
			closer := byte(']')
			if c == '{' {
				objects[depth/64] |= 1 << (depth % 64)
				closer = '}'
			} else {
				objects[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == closer {
				depth--
				i++
				break
			}
			if c == '{' {
				if i, ok = scanKey(b, i); !ok {
					return i, errSyntax
				}
			}
			continue
		case '"':
			if i, ok = ScanString(b, i); !ok {
				return i, errSyntax
			}
		case 't':
			if i, ok = literal(b, i, "true"); !ok {
				return i, errSyntax
			}
		case 'f':
			if i, ok = literal(b, i, "false"); !ok {
				return i, errSyntax
			}
		case 'n':
			if i, ok = literal(b, i, "null"); !ok {
				return i, errSyntax
			}
		default:
			if i, ok = ScanNumber(b, i); !ok {
				return i, errSyntax
			}
		}
		// After a value: close levels until one goes on with a comma.
		for {
			if depth == 0 {
				return i, nil
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, errSyntax
			}
			object := objects[(depth-1)/64]&(1<<((depth-1)%64)) != 0
			switch c := b[i]; {
			case c == ',':
				i++
				if object {
					if i, ok = scanKey(b, SkipSpace(b, i)); !ok {
						return i, errSyntax
					}
				}
			case object && c == '}' || !object && c == ']':
				depth--
				i++
				continue
			default:
				return i, errSyntax
			}
			break
		}
	}
}

// scanKey reads a member name and its colon at b[i:], returning the index
// just past the colon.
func scanKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := ScanString(b, i)
	if !ok {
		return i, false
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return i + 1, true
}

// ScanString validates the string literal at b[i] (a quote) and returns
// the index just past its closing quote. It crosses eight bytes at a time
// until a quote, a backslash or a control byte.
func ScanString(b []byte, i int) (int, bool) {
	const (
		ones   = 0x0101010101010101
		highs  = 0x8080808080808080
		quotes = 0x2222222222222222
		slashs = 0x5c5c5c5c5c5c5c5c
		spaces = 0x2020202020202020
	)
	for i++; ; {
		if i+8 <= len(b) {
			// The lowest marked byte of m is the first quote, backslash
			// or byte below 0x20 (a borrow only marks bytes above a real
			// one).
			x := binary.LittleEndian.Uint64(b[i:])
			q, s := x^quotes, x^slashs
			m := ((q-ones)&^q | (s-ones)&^s | (x-spaces)&^x) & highs
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		} else {
			for i < len(b) && b[i] >= ' ' && b[i] != '"' && b[i] != '\\' {
				i++
			}
			if i >= len(b) {
				return i, false
			}
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default: // a control byte
			return i, false
		}
	}
}

// literal checks for the word at b[i:].
func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// ScanNumber validates a number at b[i:]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func ScanNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// validMembers is the strict walk of Parse: it validates the object at
// obj[0:] (after whitespace) member by member, each value nesting at most
// limit levels, and calls fn with each name and raw value as it goes. It
// returns the index just past the object; an error of fn ends the walk.
func validMembers(obj []byte, limit int, fn func(name string, value []byte) error) (int, error) {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return i, errSyntax
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return i, errSyntax
		}
		end, ok := ScanString(obj, i)
		if !ok {
			return end, errSyntax
		}
		name, err := Unquote(obj[i:end])
		if err != nil {
			return i, errSyntax
		}
		i = SkipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return i, errSyntax
		}
		start := SkipSpace(obj, i+1)
		if i, err = scanValue(obj, start, limit); err != nil {
			return i, err
		}
		if err := fn(name, obj[start:i]); err != nil {
			return i, err
		}
		i = SkipSpace(obj, i)
		switch {
		case i < len(obj) && obj[i] == ',':
			i = SkipSpace(obj, i+1)
		case i < len(obj) && obj[i] == '}':
			return i + 1, nil
		default:
			return i, errSyntax
		}
	}
}
