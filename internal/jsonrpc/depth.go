package jsonrpc

import (
	"bytes"
	"fmt"
)

// MaxDepth is the deepest nesting of arrays and objects Weir accepts in a
// JSON value: Valid reports false past it and Parse refuses the message.
//
// Real MCP messages nest a few dozen levels, tool input and output schemas
// included; encoding/json itself stops at 10000, and the go-sdk's decoder
// refuses past 1000 too, so Weir refuses no message an SDK peer would
// read. The bound is there because the JSON parsers the rest of Weir
// hands a message to (encoding/json, schema validation, CEL) recurse once
// per level, though Valid itself does not: 2,000,000 nested arrays fit in a
// 4 MB line, well under DefaultMaxMessage, and overflow the goroutine
// stack, a fatal error no recover catches, so one line could kill the
// proxy from either side.
const MaxDepth = 1000

// errTooDeep is the reason Parse gives for a value nested past MaxDepth.
var errTooDeep = fmt.Errorf("the message nests arrays and objects more than %d levels deep; Weir refuses it", MaxDepth)

// structural classifies the bytes TooDeep acts on outside strings.
var structural = [256]uint8{'"': 1, '[': 2, '{': 2, ']': 3, '}': 3}

var (
	openBracket = []byte{'['}
	openBrace   = []byte{'{'}
)

// TooDeep reports whether data nests arrays and objects more than MaxDepth
// levels deep. Brackets inside strings do not count. It does not validate
// data and needs no valid JSON: it counts levels as a parser would meet
// them, and stops at a closer that matches no opener (where any parser
// stops too). It does not recurse and does not allocate, so it is safe to
// run on untrusted input before handing that input to a recursive parser.
func TooDeep(data []byte) bool { return nestsDeeper(data, MaxDepth) }

// nestsDeeper reports whether data nests more than limit levels deep.
func nestsDeeper(data []byte, limit int) bool {
	// Nesting past limit needs more than limit openers, and counting two
	// bytes is vectorised: most messages stop here.
	if len(data) <= limit || bytes.Count(data, openBracket)+bytes.Count(data, openBrace) <= limit {
		return false
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		switch structural[data[i]] {
		case 0:
		case 1:
			i = SkipString(data, i) - 1
		case 2:
			depth++
			if depth > limit {
				return true
			}
		case 3:
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return false
}
