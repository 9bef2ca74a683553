package clients

import (
	"strconv"
	"strings"
)

// Lines maps each server's JSON pointer (Server.Path) to the 1-based line
// its entry starts on in the file: its key, for an entry in an object.
// Reports use it to point at an entry; a server whose entry cannot be
// found is left out.
func (c *Config) Lines() map[string]int {
	out := map[string]int{}
	var root *node
	var err error
	if c.syntax == syntaxYAML {
		root, err = parseYAML(c.raw)
	} else {
		root, err = parseJSONC(c.raw)
	}
	if err != nil || root == nil {
		return out
	}
	for _, s := range c.Servers {
		if off, ok := pointerOffset(root, s.Path); ok {
			out[s.Path], _ = position(c.raw, off)
		}
	}
	return out
}

// pointerOffset finds the byte offset of the value at a JSON pointer, or
// of its key when the value is an object member.
func pointerOffset(root *node, ptr string) (int, bool) {
	if ptr == "" || ptr[0] != '/' {
		return 0, false
	}
	n, off := root, root.start
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.kind {
		case kObject:
			m := n.member(tok)
			if m == nil {
				return 0, false
			}
			n, off = m.val, m.keyStart
		case kArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.elems) {
				return 0, false
			}
			n = n.elems[i]
			off = n.start
		default:
			return 0, false
		}
	}
	return off, true
}
