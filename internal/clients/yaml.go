package clients

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// This file reads YAML configurations (Goose, Continue) into the same tree
// the JSONC reader builds, with byte spans, so that Wrap and Unwrap can edit
// them in place too. go.yaml.in/yaml/v3 gives each node's line and column;
// the span of a scalar is found by scanning the raw bytes from there. A
// scalar whose span cannot be known exactly (multi-line plain or quoted
// scalars, block scalars, anchors, tags, aliases) is marked not editable, and
// an entry that would need it edited is refused rather than guessed at.

// parseYAML parses data as a single YAML document. An empty document yields
// a nil node.
func parseYAML(data []byte) (*node, error) {
	if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		return nil, &Error{Line: 1, Column: 1, Msg: "the file is UTF-16; save it as UTF-8"}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		line, col := position(data, off)
		return nil, &Error{Line: line, Column: col, Msg: "invalid UTF-8; save the file as UTF-8"}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := safeDecode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(data, err)
	}
	var extra yaml.Node
	if err := safeDecode(dec, &extra); err == nil {
		return nil, &Error{Line: extra.Line, Column: extra.Column, Msg: "the file holds more than one YAML document; want one"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	y := yamlConv{data: data, lines: lineStarts(data), done: map[*yaml.Node]*node{}}
	return y.conv(doc.Content[0], false, 0)
}

// safeDecode reads the next YAML document. The YAML parser is not ours: a
// panic in it becomes an error.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse (%v)", r)
		}
	}()
	return dec.Decode(n)
}

var yamlLineRE = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error into an *Error with the line it names.
// (yaml.v3 gives no column, and for some errors the line where the
// enclosing block starts rather than the offending one.)
func yamlError(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	hint := "check the indentation and quoting at or below this line"
	if bytes.Contains(data, []byte("\n\t")) || bytes.HasPrefix(data, []byte("\t")) {
		hint = "indent with spaces; YAML does not allow tabs"
	}
	return &Error{Line: line, Msg: fmt.Sprintf("invalid YAML: %s; %s", msg, hint), err: err}
}

// lineStarts returns the byte offset of each line's start, breaking lines
// where yaml.v3 does: \r\n, \r, \n, U+0085, U+2028, U+2029.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i := 0; i < len(data); {
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			i += 2
		case data[i] == '\r' || data[i] == '\n':
			i++
		case data[i] == 0xC2 && i+1 < len(data) && data[i+1] == 0x85:
			i += 2
		case data[i] == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			i += 3
		default:
			i++
			continue
		}
		starts = append(starts, i)
	}
	return starts
}

type yamlConv struct {
	data  []byte
	lines []int
	done  map[*yaml.Node]*node
}

// offset converts a yaml.v3 line and column (1-based, in characters) into a
// byte offset.
func (y *yamlConv) offset(line, col int) int {
	if line < 1 || line > len(y.lines) {
		return len(y.data)
	}
	off := y.lines[line-1]
	for c := 1; c < col && off < len(y.data); c++ {
		_, size := utf8.DecodeRune(y.data[off:])
		off += size
	}
	return off
}

func (y *yamlConv) conv(n *yaml.Node, inFlow bool, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
	}
	if out, ok := y.done[n]; ok {
		return out, nil
	}
	out := &node{start: y.offset(n.Line, n.Column)}
	y.done[n] = out
	switch n.Kind {
	case yaml.AliasNode:
		// An alias shares its anchor's value; editing it would edit every
		// user of the anchor. Read it, never edit it.
		if n.Alias == nil {
			out.kind = kNull
			break
		}
		target, err := y.conv(n.Alias, inFlow, depth+1)
		if err != nil {
			return nil, err
		}
		cp := *target
		cp.start, cp.end = out.start, out.start
		cp.editable = false
		cp.problem = fmt.Sprintf("uses the YAML alias *%s; edit it by hand", n.Value)
		*out = cp
	case yaml.MappingNode:
		out.kind = kObject
		out.flow = n.Style&yaml.FlowStyle != 0
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kn, err := y.conv(k, out.flow || inFlow, depth+1)
			if err != nil {
				return nil, err
			}
			vn, err := y.conv(v, out.flow || inFlow, depth+1)
			if err != nil {
				return nil, err
			}
			if k.Value == "<<" && k.Tag == "!!merge" {
				out.problem = "uses a YAML merge key (<<); edit it by hand"
			}
			out.members = append(out.members, member{key: k.Value, keyStart: kn.start, keyEnd: kn.end, val: vn})
		}
		out.end = out.start
		if k := len(out.members); k > 0 {
			out.end = max(out.members[k-1].keyEnd, out.members[k-1].val.end)
		}
		if out.flow {
			out.end = y.closing(out.start, out.end, '}')
		}
	case yaml.SequenceNode:
		out.kind = kArray
		out.flow = n.Style&yaml.FlowStyle != 0
		for _, c := range n.Content {
			cn, err := y.conv(c, out.flow || inFlow, depth+1)
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, cn)
		}
		out.end = out.start
		if k := len(out.elems); k > 0 {
			out.end = out.elems[k-1].end
		}
		if out.flow {
			out.end = y.closing(out.start, out.end, ']')
		}
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			out.kind = kString
		case "!!int", "!!float":
			out.kind = kNumber
		case "!!bool":
			out.kind = kBool
			out.str = strconv.FormatBool(strings.EqualFold(n.Value, "true"))
		case "!!null":
			out.kind = kNull
		default:
			out.kind = kString
		}
		if out.kind != kBool {
			out.str = n.Value
		}
		y.scalarSpan(n, out, inFlow)
	default:
		out.kind = kNull
	}
	if n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		out.editable = false
		if out.problem == "" {
			out.problem = "uses a YAML anchor or tag; edit it by hand"
		}
	}
	return out, nil
}

// closing returns the offset just past the bracket that closes a flow
// collection opened at start whose last item ends at from.
func (y *yamlConv) closing(start, from int, bracket byte) int {
	d := y.data
	i := max(from, start+1)
	for i < len(d) {
		switch c := d[i]; {
		case c == bracket:
			return i + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case c == '#':
			for i < len(d) && d[i] != '\n' && d[i] != '\r' {
				i++
			}
		default:
			return from // not where expected; leave the end at the last item
		}
	}
	return from
}

// scalarSpan finds where a scalar ends in the raw bytes and whether it can
// be edited in place.
func (y *yamlConv) scalarSpan(n *yaml.Node, out *node, inFlow bool) {
	d := y.data
	i := out.start
	out.end = i
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if i >= len(d) || d[i] != '"' {
			return
		}
		for j := i + 1; j < len(d); j++ {
			switch d[j] {
			case '\\':
				j++
			case '\n', '\r':
				return // multi-line: span known, but not safe to move
			case '"':
				out.end = j + 1
				out.editable = true
				return
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		if i >= len(d) || d[i] != '\'' {
			return
		}
		for j := i + 1; j < len(d); j++ {
			switch d[j] {
			case '\n', '\r':
				return
			case '\'':
				if j+1 < len(d) && d[j+1] == '\'' {
					j++
					continue
				}
				out.end = j + 1
				out.editable = true
				return
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return
	default: // plain
		j := i
		for j < len(d) {
			c := d[j]
			if c == '\n' || c == '\r' {
				break
			}
			if c == '#' && j > i && (d[j-1] == ' ' || d[j-1] == '\t') {
				break
			}
			if c == ':' && (j+1 == len(d) || d[j+1] == ' ' || d[j+1] == '\t' || d[j+1] == '\n' || d[j+1] == '\r' || (inFlow && strings.IndexByte(",[]{}", d[j+1]) >= 0)) {
				break
			}
			if inFlow && strings.IndexByte(",[]{}", c) >= 0 {
				break
			}
			j++
		}
		for j > i && (d[j-1] == ' ' || d[j-1] == '\t') {
			j--
		}
		out.end = j
		// A plain scalar that continues on the next line would read
		// differently from its first line alone. An empty value (a null
		// written as nothing) has no span to edit.
		out.editable = j > i && string(d[i:j]) == n.Value
	}
}

// quoteYAML encodes s as a YAML scalar: plain when that reads back as the
// same string in YAML 1.1 and 1.2, in block and flow context; otherwise
// double-quoted (JSON escapes are valid YAML double-quoted escapes).
func quoteYAML(s string) string {
	if yamlPlainRE.MatchString(s) && !yamlSpecial[strings.ToLower(s)] && !yamlNumberRE.MatchString(s) {
		return s
	}
	return quoteJSON(s)
}

var (
	// Plain scalars may not start with an indicator such as @ or %.
	yamlPlainRE  = regexp.MustCompile(`^[A-Za-z0-9_./~+=-][A-Za-z0-9_./@~+=%-]*$`)
	yamlNumberRE = regexp.MustCompile(`^[-+.]?[0-9]|^\.(inf|nan)$|^0[xob]`)
	yamlSpecial  = map[string]bool{
		"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true, "y": true, "n": true,
		"null": true, "~": true, "-": true, "---": true, "...": true,
	}
)
