package detect

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// HTML a browser would not show: elements hidden by style or attribute,
// and comments. The scanner is a single forward pass over tags with a
// bounded element stack; every search moves forward, so it is linear even
// on unclosed or deeply nested markup.

const (
	maxHiddenLen   = 500 // bytes kept per hidden string
	maxHiddenItems = 64
	maxStack       = 256
)

type hiddenSpan struct {
	start, end int    // source span of the hidden element or comment
	text       string // its text, trimmed to maxHiddenLen
	why        string
}

var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
}

type openElem struct {
	name   string
	hidden bool
}

// scanHiddenHTML returns the hidden text of s, and the data-carrying image
// URLs of <img> tags. Without withText the spans are the same but their
// text is left empty: a scan that only reports where text is hidden does
// not collapse and copy it.
func scanHiddenHTML(s string, withText bool) (spans []hiddenSpan, imgs []string) {
	if strings.IndexByte(s, '<') < 0 {
		return nil, nil
	}
	lastGT := strings.LastIndexByte(s, '>')
	var stackBuf [16]openElem
	stack := stackBuf[:0]
	hiddenAt := -1 // stack index of the outermost hidden element
	var curBuf [512]byte
	cur := curBuf[:0] // the hidden text so far
	curStart, curWhy := 0, ""
	finish := func(end int) {
		if withText {
			t := collapseSpace(string(cur))
			if t != "" && len(spans) < maxHiddenItems {
				spans = append(spans, hiddenSpan{curStart, end, clip(t, maxHiddenLen), curWhy})
			}
		} else if hasNonSpaceBytes(cur) && len(spans) < maxHiddenItems {
			spans = append(spans, hiddenSpan{curStart, end, "", curWhy})
		}
		cur = cur[:0]
		hiddenAt = -1
	}
	appendText := func(t string) {
		if hiddenAt >= 0 && len(cur) < maxHiddenLen*2 {
			cur = append(cur, decodeEntities(t[:min(len(t), maxHiddenLen*2)])...)
		}
	}
	i := 0
	for i < len(s) {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 || i+lt > lastGT {
			appendText(s[i:])
			break
		}
		appendText(s[i : i+lt])
		i += lt
		// comment
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			body, next := "", len(s)
			if end >= 0 {
				body, next = s[i+4:i+4+end], i+4+end+3
			} else {
				body = s[i+4:]
			}
			if hiddenAt < 0 && len(spans) < maxHiddenItems {
				if !withText {
					if hasNonSpace(body) {
						spans = append(spans, hiddenSpan{i, next, "", "an HTML comment"})
					}
				} else if t := collapseSpace(body); t != "" {
					spans = append(spans, hiddenSpan{i, next, clip(t, maxHiddenLen), "an HTML comment"})
				}
			}
			i = next
			continue
		}
		gt := strings.IndexByte(s[i:], '>')
		if gt < 0 {
			appendText(s[i:])
			break
		}
		tag := s[i+1 : i+gt]
		tagStart := i
		i += gt + 1
		name, attrs, closing, selfClose := parseTag(tag)
		if name == "" {
			appendText(s[tagStart:i])
			continue
		}
		if closing {
			// pop to the matching element (searching a bounded depth)
			for k := len(stack) - 1; k >= 0 && k >= len(stack)-16; k-- {
				if stack[k].name == name {
					if hiddenAt >= k {
						finish(i)
					}
					stack = stack[:k]
					break
				}
			}
			continue
		}
		if name == "script" || name == "style" || name == "template" || name == "noscript" {
			// raw text: skip to the closing tag
			end := indexFold(s[i:], "</"+name)
			if end < 0 {
				break
			}
			i += end
			continue
		}
		why := hiddenWhy(attrs)
		if name == "img" {
			if src := attrValue(attrs, "src"); src != "" && urlCarriesData(src) {
				imgs = append(imgs, clip(src, 2048))
			}
		}
		if name == "input" && strings.EqualFold(attrValue(attrs, "type"), "hidden") {
			if v := attrValue(attrs, "value"); v != "" && hiddenAt < 0 && len(spans) < maxHiddenItems {
				t := ""
				if withText {
					t = clip(collapseSpace(decodeEntities(v)), maxHiddenLen)
				}
				spans = append(spans, hiddenSpan{tagStart, i, t, "a hidden form field"})
			}
		}
		if voidElements[name] || selfClose {
			continue
		}
		if len(stack) >= maxStack {
			continue
		}
		stack = append(stack, openElem{name, why != ""})
		if why != "" && hiddenAt < 0 {
			hiddenAt = len(stack) - 1
			curStart, curWhy = tagStart, why
		}
	}
	if hiddenAt >= 0 {
		finish(len(s))
	}
	return spans, imgs
}

// parseTag splits the inside of a tag into its lowercased name and
// attribute text.
func parseTag(tag string) (name, attrs string, closing, selfClose bool) {
	t := tag
	if strings.HasPrefix(t, "/") {
		closing = true
		t = t[1:]
	}
	if strings.HasSuffix(t, "/") {
		selfClose = true
		t = t[:len(t)-1]
	}
	k := 0
	for k < len(t) && k < 32 && (('a' <= t[k] && t[k] <= 'z') || ('A' <= t[k] && t[k] <= 'Z') || ('0' <= t[k] && t[k] <= '9') || (k > 0 && t[k] == '-')) {
		k++
	}
	if k == 0 || !(('a' <= t[0] && t[0] <= 'z') || ('A' <= t[0] && t[0] <= 'Z')) {
		return "", "", false, false
	}
	if k < len(t) && t[k] != ' ' && t[k] != '\t' && t[k] != '\n' && t[k] != '\r' {
		return "", "", false, false
	}
	return strings.ToLower(t[:k]), t[k:], closing, selfClose
}

// attrValue returns the value of attribute name (case-insensitive).
func attrValue(attrs, name string) string {
	a := attrs
	for len(a) > 0 {
		a = trimLeft(a, attrSpaceSlash)
		k := 0
		for k < len(a) && a[k] != '=' && a[k] != ' ' && a[k] != '\t' && a[k] != '\n' && a[k] != '>' {
			k++
		}
		if k == 0 {
			return ""
		}
		key := a[:k]
		a = trimLeft(a[k:], attrSpace)
		val := ""
		if strings.HasPrefix(a, "=") {
			a = trimLeft(a[1:], attrSpace)
			if len(a) > 0 && (a[0] == '"' || a[0] == '\'') {
				q := a[0]
				e := strings.IndexByte(a[1:], q)
				if e < 0 {
					val, a = a[1:], ""
				} else {
					val, a = a[1:1+e], a[2+e:]
				}
			} else {
				e := 0
				for e < len(a) && a[e] != ' ' && a[e] != '\t' && a[e] != '\n' {
					e++
				}
				val, a = a[:e], a[e:]
			}
		} else if strings.EqualFold(key, name) {
			return " " // boolean attribute present
		}
		if strings.EqualFold(key, name) {
			if val == "" {
				return " "
			}
			return val
		}
	}
	return ""
}

// trimLeft is strings.TrimLeft for a cutset of ASCII bytes given as a
// table, so that no set is built per call.
func trimLeft(s string, set *byteSet) string {
	i := 0
	for i < len(s) && set[s[i]] {
		i++
	}
	return s[i:]
}

var (
	attrSpace      = newByteSet(" \t\r\n")
	attrSpaceSlash = newByteSet(" \t\r\n/")
)

// hiddenWhy says why an element with these attributes is hidden, or "".
func hiddenWhy(attrs string) string {
	if attrs == "" || asciiWithout(attrs, "hidden", "style") {
		// no attribute that could hide it: most tags (<a href>, <li>)
		return ""
	}
	if attrValue(attrs, "hidden") != "" {
		return "the hidden attribute"
	}
	if strings.EqualFold(strings.TrimSpace(attrValue(attrs, "aria-hidden")), "true") {
		return "aria-hidden"
	}
	style := attrValue(attrs, "style")
	if style == "" {
		return ""
	}
	var color, bg string
	for rest := strings.ToLower(style); rest != ""; {
		var decl string
		decl, rest, _ = strings.Cut(rest, ";")
		p, v, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		p = strings.TrimSpace(p)
		v = strings.ReplaceAll(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "!important")), " ", "")
		switch p {
		case "display":
			if v == "none" {
				return "display:none"
			}
		case "visibility":
			if v == "hidden" || v == "collapse" {
				return "visibility:hidden"
			}
		case "font-size":
			if isZeroLength(v) {
				return "font-size:0"
			}
		case "opacity":
			if v == "0" || v == "0.0" || v == ".0" || v == "0%" {
				return "opacity:0"
			}
		case "color":
			color = v
		case "background-color", "background":
			bg = v
		case "left", "top", "text-indent", "margin-left":
			if strings.HasPrefix(v, "-") && len(strings.TrimLeft(v, "-0123456789.")) <= 3 && len(v) >= 5 {
				return "positioned off-screen"
			}
		case "width", "height", "max-height", "max-width":
			if isZeroLength(v) && strings.Contains(style, "overflow") {
				return "zero size"
			}
		case "clip":
			if strings.HasPrefix(v, "rect(0") {
				return "clipped away"
			}
		}
	}
	if color != "" && isWhite(color) && (bg == "" || isWhite(bg)) {
		return "white text on white"
	}
	if color != "" && bg != "" && color == bg {
		return "text coloured like its background"
	}
	return ""
}

func isZeroLength(v string) bool {
	switch v {
	case "0", "0px", "0em", "0rem", "0pt", "0%", "0.0", "0vw", "0vh":
		return true
	}
	return false
}

func isWhite(v string) bool {
	switch v {
	case "white", "#fff", "#ffffff", "#ffff", "#ffffffff", "rgb(255,255,255)", "hsl(0,0%,100%)":
		return true
	}
	return strings.HasPrefix(v, "rgba(255,255,255")
}

// indexFold is a case-insensitive strings.Index for an ASCII needle.
func indexFold(s, sub string) int {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		if i+n <= len(s) && strings.EqualFold(s[i:i+n], sub) {
			return i
		}
	}
	return -1
}

// asciiWithout reports that s is ASCII and holds neither a nor b, in any
// case. (EqualFold, which matches attribute names, also folds a few
// non-ASCII letters to ASCII ones: "ſtyle" is "style".)
func asciiWithout(s, a, b string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if s[i] >= utf8.RuneSelf {
			return false
		}
		if c == a[0] && hasPrefixFold(s[i:], a) || c == b[0] && hasPrefixFold(s[i:], b) {
			return false
		}
	}
	return true
}

// hasPrefixFold reports whether s starts with the lowercase ASCII p, in
// any case.
func hasPrefixFold(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if s[k]|0x20 != p[k] {
			return false
		}
	}
	return true
}

// hasNonSpace reports whether s holds a rune that is not white space: the
// text collapseSpace would leave is not empty.
func hasNonSpace(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

// hasNonSpaceBytes is hasNonSpace for a byte slice.
func hasNonSpaceBytes(b []byte) bool {
	for _, r := range string(b) {
		if !unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

// collapseSpace trims s and collapses runs of white space.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

var entityReplacer = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", "\"", "&#39;", "'", "&apos;", "'", "&nbsp;", " ")

func decodeEntities(s string) string {
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	return entityReplacer.Replace(s)
}

// Markdown images.

// scanImages returns the markdown images in s whose URL carries data:
// inline ![alt](url) and reference-style ![alt][ref] with a [ref]: url
// definition. The client fetches an image to show it, so data in its URL
// leaves without a tool call.
func scanImages(s string) (urls []string, spans [][2]int) {
	if !strings.Contains(s, "![") {
		return nil, nil
	}
	var refs map[string]string
	stop := -1 // the next ']' or newline at or after the current alt text
	for i := 0; i < len(s) && len(urls) < 32; {
		k := strings.Index(s[i:], "![")
		if k < 0 {
			break
		}
		start := i + k
		j := start + 2
		// alt text: up to the next ']' on the same line, at most 1000
		// bytes; stop only moves forward, so the scan stays linear
		if stop < j {
			stop = len(s)
			if n := strings.IndexAny(s[j:], "]\n"); n >= 0 {
				stop = j + n
			}
		}
		e := stop
		if e >= len(s) || s[e] != ']' || e-j > 1000 {
			i = start + 2
			continue
		}
		e++
		var u string
		end := e
		switch {
		case e < len(s) && s[e] == '(':
			u, end = linkDest(s, e+1)
		case e < len(s) && s[e] == '[':
			r := e + 1
			for r < len(s) && r-e < 200 && s[r] != ']' && s[r] != '\n' {
				r++
			}
			if r < len(s) && s[r] == ']' {
				label := strings.ToLower(s[e+1 : r])
				if label == "" {
					label = strings.ToLower(s[j : e-1])
				}
				if refs == nil {
					refs = refDefinitions(s)
				}
				u, end = refs[label], r+1
			}
		}
		if u != "" && urlCarriesData(u) {
			urls = append(urls, clip(u, 2048))
			spans = append(spans, [2]int{start, end})
		}
		i = max(end, start+2)
	}
	return urls, spans
}

// linkDest parses a link destination starting at i (after '('), returning
// it and the offset after the closing ')'.
func linkDest(s string, i int) (string, int) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && s[i] == '<' {
		e := strings.IndexByte(s[i:min(len(s), i+4096)], '>')
		if e < 0 {
			return "", i
		}
		return s[i+1 : i+e], closeParen(s, i+e+1)
	}
	e := i
	depth := 0
	for e < len(s) && e-i < 8192 && s[e] != ' ' && s[e] != '\t' && s[e] != '\n' {
		if s[e] == '(' {
			depth++
		} else if s[e] == ')' {
			if depth == 0 {
				break
			}
			depth--
		}
		e++
	}
	return s[i:e], closeParen(s, e)
}

func closeParen(s string, i int) int {
	e := strings.IndexByte(s[i:min(len(s), i+1024)], ')')
	if e < 0 {
		return i
	}
	return i + e + 1
}

// refDefinitions collects "[label]: url" lines.
func refDefinitions(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "[") {
			continue
		}
		r := strings.Index(line, "]:")
		if r < 1 {
			continue
		}
		f := strings.Fields(line[r+2:])
		if len(f) > 0 && len(m) < 256 {
			m[strings.ToLower(line[1:r])] = strings.Trim(f[0], "<>")
		}
	}
	return m
}

// urlCarriesData reports a URL with data in it: a query parameter value
// longer than 32 bytes, or a query value or path segment holding a run of
// at least 16 characters of base64, hex or percent-encoded text.
func urlCarriesData(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "") || u.Host == "" {
		return false
	}
	// the query's parameters and the path's segments are read in place,
	// without splitting them into new slices
	for q := u.RawQuery; ; {
		kv, rest, more := strings.Cut(q, "&")
		q = rest
		_, raw, _ := strings.Cut(kv, "=")
		v, err := url.QueryUnescape(raw)
		if err != nil {
			v = raw
		}
		if len(v) > 32 || encodedRun(raw) || encodedRun(v) {
			return true
		}
		if !more {
			break
		}
	}
	if u.RawQuery != "" && !strings.Contains(u.RawQuery, "=") && (len(u.RawQuery) > 32 || encodedRun(u.RawQuery)) {
		return true
	}
	for p := u.EscapedPath(); ; {
		seg, rest, more := strings.Cut(p, "/")
		p = rest
		if dot := strings.LastIndexByte(seg, '.'); dot > 0 && len(seg)-dot <= 5 {
			seg = seg[:dot] // a file extension
		}
		if encodedRun(seg) {
			return true
		}
		if !more {
			return false
		}
	}
}

// encodedRun reports at least 16 consecutive characters that look encoded:
// base64 (mixed case and digits, or + and /), hex (digits and letters), or
// percent-encoded text with at least three escapes.
func encodedRun(s string) bool {
	if strings.Count(s, "%") >= 3 && len(s) >= 16 {
		return true
	}
	run, upper, lower, digit, sym, hexOnly := 0, false, false, false, false, true
	check := func() bool {
		if run < 16 {
			return false
		}
		if hexOnly && digit && (lower || upper) {
			return true
		}
		return (upper && lower && digit) || (sym && (upper || lower) && digit)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			upper = true
			if c > 'F' {
				hexOnly = false
			}
		case 'a' <= c && c <= 'z':
			lower = true
			if c > 'f' {
				hexOnly = false
			}
		case '0' <= c && c <= '9':
			digit = true
		case c == '+' || c == '/' || c == '=' || c == '_' || c == '-':
			sym = c == '+' || c == '/' || c == '='
			hexOnly = false
		default:
			if check() {
				return true
			}
			run, upper, lower, digit, sym, hexOnly = 0, false, false, false, false, true
			continue
		}
		run++
	}
	return check()
}
