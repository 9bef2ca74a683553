package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrDuplicateKey reports an object with the same member name twice, or
// two names equal but for case. Parsers disagree on which one wins (first,
// last, or a case-folded match), and a gateway that reads one while the
// server obeys the other can be walked around, so Weir refuses such
// messages instead of guessing.
var ErrDuplicateKey = errors.New("duplicate member name")

// Valid reports whether data is one valid JSON value nested at most
// MaxDepth levels deep, in one pass that does not recurse (see scanValue).
func Valid(data []byte) bool {
	end, err := scanValue(data, 0, MaxDepth)
	return err == nil && SkipSpace(data, end) == len(data)
}

// Members calls fn for each member of the JSON object obj, in order, with
// its exact (unescaped) name and raw value. obj must be valid JSON; a
// non-object is an error, and so is a repeated name, compared without
// regard to case (ErrDuplicateKey). The value slices alias obj.
func Members(obj []byte, fn func(name string, value []byte) error) error {
	return eachMember(obj, unique(fn))
}

// unique wraps fn for one object's walk: a name repeated, compared without
// regard to case, is ErrDuplicateKey instead of a call.
func unique(fn func(name string, value []byte) error) func(name string, value []byte) error {
	var seen [8]string // most messages have few members: no map
	names := seen[:0]
	var folded map[string]struct{} // past a few names: linear time, not quadratic
	return func(name string, value []byte) error {
		// Case-folded too: encoding/json matches struct fields without
		// regard to case, so a Go server would read "NAME" as "name".
		dup := false
		if folded == nil {
			for _, n := range names {
				dup = dup || strings.EqualFold(n, name)
			}
			names = append(names, name)
			if len(names) > 16 {
				folded = make(map[string]struct{}, 2*len(names))
				for _, n := range names {
					folded[FoldKey(n)] = struct{}{}
				}
			}
		} else {
			k := FoldKey(name)
			_, dup = folded[k]
			folded[k] = struct{}{}
		}
		if dup {
			return fmt.Errorf("%w %q", ErrDuplicateKey, name)
		}
		return fn(name, value)
	}
}

// FoldKey maps a name to the same key as every name strings.EqualFold
// takes for it: each rune becomes the smallest rune of its case-folding
// orbit. Names are then compared for case-insensitive repeats through
// one map, in time linear in their number.
func FoldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
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

// eachMember walks the members of obj, which must be valid JSON (Parse
// reads untrusted lines with validMembers instead). It does not recurse.
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
		// Parse walks the envelope before it validates, so this reads
		// anything: an unterminated name ends the walk.
		end, closed := skipString(obj, i)
		if !closed {
			return errors.New("malformed object")
		}
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
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", errors.New("not a JSON string")
	}
	body := s[1 : len(s)-1]
	esc := bytes.IndexByte(body, '\\')
	if esc < 0 && utf8.Valid(body) {
		if bytes.IndexByte(body, '"') >= 0 || hasControl(body) {
			return "", errors.New("not a JSON string")
		}
		return string(body), nil
	}
	// A tool result's text is one long string with escapes (every line
	// ends in \n): decoded here in one pass, not through encoding/json,
	// which validated and decoded it at a fifth of the speed.
	// FuzzUnquote holds the two to the same output and errors.
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			if i+1 >= len(body) {
				return "", errors.New("not a JSON string: it ends in a backslash")
			}
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := hex4(body, i+2)
				if !ok {
					return "", errors.New("not a JSON string: a bad \\u escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A surrogate is only kept as half of a pair that
					// decodes; else it is U+FFFD and what follows is read
					// on its own, as encoding/json does.
					if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
						if r2, ok := hex4(body, i+2); ok {
							if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
								b.WriteRune(d)
								i += 6
								continue
							}
						}
					}
					r = unicode.ReplacementChar
				}
				b.WriteRune(r)
				continue
			default:
				return "", fmt.Errorf("not a JSON string: the escape \\%c", e)
			}
			i += 2
		case c == '"' || c < ' ':
			return "", errors.New("not a JSON string")
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(body) && body[j] < utf8.RuneSelf && body[j] >= ' ' && body[j] != '\\' && body[j] != '"' {
				j++
			}
			b.Write(body[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(unicode.ReplacementChar)
			} else {
				b.Write(body[i : i+size])
			}
			i += size
		}
	}
	return b.String(), nil
}

// hasControl reports whether b holds a byte a JSON string may not hold
// unescaped.
func hasControl(b []byte) bool {
	// Eight bytes at a time: a byte below 0x20 borrows when 0x20 is taken
	// from it, and sets its top bit where the byte's own was clear.
	const low, high = 0x2020202020202020, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-low)&^x&high != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < ' ' {
			return true
		}
	}
	return false
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the JSON string starting at b[i].
// It jumps from quote to quote (see indexQuote), checking each for an
// escaping backslash, so long strings cost little.
func SkipString(b []byte, i int) int {
	end, _ := skipString(b, i)
	return end
}

// skipString is SkipString that also reports whether the string is closed.
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); {
		j := indexQuote(b[i:])
		if j < 0 {
			return len(b), false
		}
		q := i + j
		n := 0 // backslashes right before the quote
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
	return len(b), false
}

// indexQuote is bytes.IndexByte(b, '"') with a fast path for the short
// strings (member names, ids, enum values) that make up most of a message:
// it looks at the first 16 bytes eight at a time, in a register, before
// paying for the call to the vectorised search.
func indexQuote(b []byte) int {
	const (
		quotes = 0x2222222222222222
		ones   = 0x0101010101010101
		highs  = 0x8080808080808080
	)
	if len(b) >= 8 {
		// u has a zero byte exactly where b has a quote; the lowest set
		// bit of the mask marks the first one (a borrow can only mark
		// bytes above a real zero, never below).
		u := binary.LittleEndian.Uint64(b) ^ quotes
		if m := (u - ones) &^ u & highs; m != 0 {
			return bits.TrailingZeros64(m) / 8
		}
		if len(b) >= 16 {
			u = binary.LittleEndian.Uint64(b[8:]) ^ quotes
			if m := (u - ones) &^ u & highs; m != 0 {
				return 8 + bits.TrailingZeros64(m)/8
			}
			if j := bytes.IndexByte(b[16:], '"'); j >= 0 {
				return 16 + j
			}
			return -1
		}
	}
	return bytes.IndexByte(b, '"')
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
	if len(value) == 0 {
		return obj, false
	}
	var start, end int
	found := false
	_ = eachMember(obj, func(n string, v []byte) error {
		if n == name {
			// v aliases obj, so its offset is the difference in capacity.
			start = cap(obj) - cap(v)
			end = start + len(v)
			found = true
			return errFound // the rest need not be scanned
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

// ReplaceValue returns obj with v, a value of obj read by [Parse] or
// [Member] (a slice of obj's bytes), replaced by value: the splice
// [ReplaceMember] makes, without scanning obj again to find v's end. ok is
// false when v is not a slice of obj.
func ReplaceValue(obj, v, value []byte) ([]byte, bool) {
	start := cap(obj) - cap(v)
	if len(v) == 0 || start < 0 || start+len(v) > len(obj) || &obj[start] != &v[0] {
		return obj, false
	}
	out := make([]byte, 0, len(obj)-len(v)+len(value))
	out = append(out, obj[:start]...)
	out = append(out, value...)
	return append(out, obj[start+len(v):]...), true
}

// Member is the raw value of obj's top-level member name, or nil when it
// has none (or is not an object).
func Member(obj []byte, name string) []byte {
	var v []byte
	_ = eachMember(obj, func(n string, mv []byte) error {
		if n == name {
			v = mv
			return errFound
		}
		return nil
	})
	return v
}

// ReplaceAt is ReplaceMember along a path of nested objects: the value at
// obj.path[0].path[1]… is replaced, every other byte kept. It reports
// false, and returns obj, when some member of the path is missing.
func ReplaceAt(obj []byte, value []byte, path ...string) ([]byte, bool) {
	if len(path) == 0 {
		return obj, false
	}
	if len(path) == 1 {
		return ReplaceMember(obj, path[0], value)
	}
	inner := Member(obj, path[0])
	if inner == nil {
		return obj, false
	}
	nv, ok := ReplaceAt(inner, value, path[1:]...)
	if !ok {
		return obj, false
	}
	return ReplaceMember(obj, path[0], nv)
}

// Meta keys of MCP 2026-07-28 that Weir reads in a message's params._meta.
const (
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	MetaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// WithoutMembers returns obj rebuilt without its top-level members with
// the given names: the other members' values are copied as they were, their
// names re-encoded. It returns obj itself when it has none of them.
func WithoutMembers(obj []byte, names ...string) []byte {
	var out []byte
	found := false
	_ = EachMember(obj, func(n string, v []byte) error {
		for _, x := range names {
			if n == x {
				found = true
				return nil
			}
		}
		if len(out) == 0 {
			out = append(out, '{')
		} else {
			out = append(out, ',')
		}
		q, _ := json.Marshal(n)
		out = append(out, q...)
		out = append(out, ':')
		out = append(out, v...)
		return nil
	})
	if !found {
		return obj
	}
	if len(out) == 0 {
		return []byte("{}")
	}
	return append(out, '}')
}

// errFound stops a member walk once the member sought is found.
var errFound = errors.New("found")
