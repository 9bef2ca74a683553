package policy

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Glob is a compiled tool pattern, as written in a `match:` key or on either
// side of an allow_flows rule. The zero Glob matches nothing.
//
// A pattern is either "server:tool" or "tool":
//
//   - "server:tool" is split at its first unescaped colon; the left side is
//     matched against the server name and the right side against the tool
//     name, each on its own.
//   - "tool" (no unescaped colon) is matched against the tool name on any
//     server.
//
// In either side, * matches any run of characters (including none), ? matches
// exactly one character, and \ makes the next character literal (\*, \?, \:,
// \\, "\ "). Every other character matches itself; matching is case-sensitive.
//
// Because each side is matched against one name, a * never reaches across
// the server/tool boundary: "notes*" does not match tool "read" on server
// "notes", and "n*:*" does. Within one name a * matches anything, including
// a colon that is part of the name: "*" matches a tool named "a:b". A literal
// colon in a server name must be escaped ("my\:srv:*"); in the tool part it
// may be written plainly ("srv:a:b" matches tool "a:b").
type Glob struct {
	src       string
	server    pattern // used only when hasServer
	tool      pattern
	hasServer bool
	valid     bool
}

// pattern is one side of a Glob.
type pattern struct {
	literal bool   // no wildcards: compare with lit
	lit     string // the unescaped text when literal
	toks    []tok  // the pattern when not literal
}

type tokKind uint8

const (
	tokRune tokKind = iota // one literal character
	tokOne                 // ?
	tokStar                // *
)

type tok struct {
	kind tokKind
	r    rune
}

// CompileGlob compiles a tool pattern. The error says what is wrong with the
// pattern and how to write it.
func CompileGlob(pat string) (Glob, error) {
	if pat == "" {
		return Glob{}, errors.New(`empty pattern; write "server:tool" or "tool", e.g. "notes:*" or "read_file"`)
	}
	if !utf8.ValidString(pat) {
		return Glob{}, fmt.Errorf("pattern %s is not valid UTF-8", Quote(pat))
	}
	g := Glob{src: pat, valid: true}
	// Find the first unescaped colon and check escapes and spaces on the way.
	split := -1
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; {
		case c == '\\':
			if i+1 == len(pat) {
				return Glob{}, fmt.Errorf(`pattern %s ends with a lone "\"; write "\\" for a backslash`, Quote(pat))
			}
			_, w := utf8.DecodeRuneInString(pat[i+1:])
			i += w
		case c == ':' && split < 0:
			split = i
		default:
			r, w := utf8.DecodeRuneInString(pat[i:])
			if unicode.IsSpace(r) {
				return Glob{}, fmt.Errorf(`pattern %s contains a space; server and tool names have none (write "\ " if you mean one)`, Quote(pat))
			}
			i += w - 1
		}
	}
	toolSrc := pat
	if split >= 0 {
		serverSrc := pat[:split]
		toolSrc = pat[split+1:]
		if serverSrc == "" {
			return Glob{}, fmt.Errorf(`pattern %s has nothing before ":"; write %s for any server, or drop the colon`, Quote(pat), Quote("*:"+toolSrc))
		}
		if toolSrc == "" {
			return Glob{}, fmt.Errorf(`pattern %s has nothing after ":"; write %s for every tool of that server`, Quote(pat), Quote(pat+"*"))
		}
		g.hasServer = true
		g.server = compileSide(serverSrc)
	}
	g.tool = compileSide(toolSrc)
	return g, nil
}

// compileSide compiles one side of a pattern whose escapes were checked.
func compileSide(s string) pattern {
	var toks []tok
	var lit strings.Builder
	literal := true
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch r {
		case '\\':
			r, w = utf8.DecodeRuneInString(s[i:])
			i += w
			toks = append(toks, tok{kind: tokRune, r: r})
			lit.WriteRune(r)
		case '*':
			literal = false
			if n := len(toks); n == 0 || toks[n-1].kind != tokStar { // ** is *
				toks = append(toks, tok{kind: tokStar})
			}
		case '?':
			literal = false
			toks = append(toks, tok{kind: tokOne})
		default:
			toks = append(toks, tok{kind: tokRune, r: r})
			lit.WriteRune(r)
		}
	}
	if literal {
		return pattern{literal: true, lit: lit.String()}
	}
	return pattern{toks: toks}
}

// String returns the pattern as written.
func (g Glob) String() string { return g.src }

// Match reports whether the pattern matches tool on server.
func (g Glob) Match(server, tool string) bool {
	if !g.valid {
		return false
	}
	if g.hasServer && !g.server.match(server) {
		return false
	}
	return g.tool.match(tool)
}

// match is the classic two-pointer wildcard match: on a mismatch, retry from
// the last * with it swallowing one more character. It runs in
// O(len(pattern) * len(s)) at worst and allocates nothing.
func (p *pattern) match(s string) bool {
	if p.literal {
		return s == p.lit
	}
	t := p.toks
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(t) {
			switch t[pi].kind {
			case tokStar:
				starP, starS = pi, si
				pi++
				continue
			case tokOne:
				_, w := utf8.DecodeRuneInString(s[si:])
				si += w
				pi++
				continue
			case tokRune:
				if r, w := utf8.DecodeRuneInString(s[si:]); r == t[pi].r {
					si += w
					pi++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		si, pi = starS, starP+1
	}
	for pi < len(t) && t[pi].kind == tokStar {
		pi++
	}
	return pi == len(t)
}
