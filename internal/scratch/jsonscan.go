package scratch

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// A small scanner for JSON that json.Valid has already accepted: it splits
// objects into members and arrays into elements as subslices of the input,
// without copying or decoding. encoding/json's Decoder, token by token,
// cost ten times as much as storing the rows in SQLite; validating once and
// then slicing costs about what one Unmarshal does.

var errNotJSON = errors.New("not valid JSON")

// members splits a JSON object into its members in document order,
// validating it first. The values alias raw.
func members(raw []byte) ([]member, error) {
	if !json.Valid(raw) {
		return nil, errNotJSON
	}
	return splitObject(raw)
}

// splitObject is members for valid JSON.
func splitObject(b []byte) ([]member, error) { return splitObjectKeys(b, nil, 0) }

// splitObjectKeys is splitObject for the rows of one array: keys repeat
// from row to row, so each is made into a string once and shared through
// keys, and size is how many members to expect.
func splitObjectKeys(b []byte, keys map[string]string, size int) ([]member, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errors.New("not an object")
	}
	ms := make([]member, 0, size)
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		kEnd := skipString(b, i)
		tok := b[i:kEnd]
		key, ok := keys[string(tok)] // no allocation for the lookup
		if !ok {
			var err error
			if key, err = unquote(tok); err != nil {
				return nil, err
			}
			if keys != nil && len(keys) < 4096 {
				keys[string(tok)] = key
			}
		}
		i = skipSpace(b, kEnd)
		i = skipSpace(b, i+1) // the ':'
		vEnd := skipValue(b, i)
		ms = append(ms, member{key, b[i:vEnd]})
		i = skipSpace(b, vEnd)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return ms, nil
}

// splitArray splits a valid JSON array into its elements.
func splitArray(b []byte) ([]json.RawMessage, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, errors.New("not an array")
	}
	var els []json.RawMessage
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		end := skipValue(b, i)
		els = append(els, b[i:end])
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return els, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' &&
		b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// unquote decodes a JSON string token, cheaply when it has no escapes.
// Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func unquote(tok []byte) (string, error) {
	if len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' {
		inner := tok[1 : len(tok)-1]
		plain := utf8.Valid(inner)
		for _, c := range inner {
			if c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner), nil
		}
	}
	var s string
	err := json.Unmarshal(tok, &s)
	return s, err
}
