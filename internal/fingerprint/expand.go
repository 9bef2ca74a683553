package fingerprint

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Encoding is one decoding step Expand can apply.
type Encoding uint8

// The encodings Expand peels.
const (
	URL       Encoding = iota + 1 // percent-encoding, + as space
	Base64                        // standard alphabet, padding optional
	Base64URL                     // URL-safe alphabet, padding optional
	Base32                        // RFC 4648 alphabet, any case, padding optional
	Hex                           // hexadecimal, any case
)

var encodingNames = [...]string{URL: "url", Base64: "base64", Base64URL: "base64url", Base32: "base32", Hex: "hex"}

func (e Encoding) String() string {
	if int(e) < len(encodingNames) && encodingNames[e] != "" {
		return encodingNames[e]
	}
	return "Encoding(" + strconv.Itoa(int(e)) + ")"
}

// A View is one reading of a sink argument: the argument itself, or text
// decoded from it.
type View struct {
	Text string
	// Via is the chain of decodings that produced Text from the original,
	// outermost first; empty for the original.
	Via []Encoding
}

// Expansion bounds. Every view is fingerprinted by the caller, so the
// bounds cap the caller's work as well as Expand's.
const (
	maxDepth = 4  // decodings in a chain
	maxViews = 64 // views per call, the original included
	minRun   = 16 // shortest encoded run decoded inside a longer string
	// Decoded bytes per call: at most 8×len(s) + maxExtra.
	maxExtra = 64 << 10
)

// Expand calls fn with s itself and then with every decoded view of s, so
// that a secret the agent encoded before passing it to a sink is still
// seen. Views are produced breadth first, so shallow decodings come before
// deep ones when a bound is hit, and the order is deterministic.
//
// From each view, Expand tries:
//   - URL percent-decoding (as url.QueryUnescape, + becoming a space),
//     when the view holds a %XX escape or a +; malformed escapes are kept
//     as they are rather than failing the whole view;
//   - every maximal run of the base64 (standard or URL-safe, with optional
//     = padding), base32 (any case, optional padding) and hex alphabets
//     that is at least 16 bytes long, or that is the whole view (after
//     trimming surrounding whitespace) at any length. A run whose length
//     cannot be decoded is trimmed to the longest length that can, so a
//     lost trailing character costs a byte, not the view.
//
// A decoding becomes a view only if it is valid UTF-8 with at least 80%
// printable runes (binary noise is not text an agent read), and differs
// from every view already produced (its parent included). Each view is
// decoded again, up to 4 decodings deep.
//
// The work is bounded: at most 64 views per call (the original included)
// and at most 8×len(s)+64 KiB decoded bytes in all; expansion stops at
// whichever is reached first. Each view is scanned a constant number of
// times, so the time is linear in the bytes produced.
//
// Every View passed to fn has its own Via slice, which fn may keep.
func Expand(s string, fn func(View)) {
	e := expander{
		fn:     fn,
		budget: 8*len(s) + maxExtra,
		seen:   map[string]struct{}{s: {}},
	}
	fn(View{Text: s})
	e.views = 1
	queue := []View{{Text: s}}
	for len(queue) > 0 && !e.done {
		v := queue[0]
		queue = queue[1:]
		if len(v.Via) >= maxDepth {
			continue
		}
		e.expand(v, &queue)
	}
}

type expander struct {
	fn     func(View)
	budget int // decoded bytes left
	views  int
	done   bool
	seen   map[string]struct{}
	buf    []byte // decoded bytes, reused until they become a view
	src    []byte // the run being decoded, which decoders may modify
}

// expand emits and queues the one-step decodings of v.
func (e *expander) expand(v View, queue *[]View) {
	s := v.Text
	if hasURLEscape(s) {
		e.offer(v, URL, urlDecode(e.buf[:0], s), queue)
	}
	whole := trimSpace(s)
	// Every run of every alphabet lies inside a run of their union (with
	// padding). Prose and JSON rarely have a union run long enough to
	// decode, so most text is skipped by one pass over it.
	for i := 0; i < len(s) && !e.done; {
		for i < len(s) && !inUnion[s[i]] {
			i++
		}
		us := i
		for i < len(s) && inUnion[s[i]] {
			i++
		}
		ue := i
		if ue-us < minRun && (us != whole.start || ue != whole.end) {
			continue
		}
		for _, a := range encAlphabets {
			for j := us; j < ue && !e.done; {
				start, end, pad := a.run(s[:ue], j)
				if start < 0 {
					break
				}
				j = max(end+pad, start+1)
				if end-start < minRun && (start != whole.start || end+pad != whole.end || end-start < 2) {
					continue
				}
				e.src = append(e.src[:0], s[start:end]...)
				if b, ok := a.decode(e.buf[:0], e.src); ok {
					e.offer(v, a.enc, b, queue)
				}
			}
		}
	}
}

// offer turns decoded bytes into a view if they are text and new.
func (e *expander) offer(parent View, enc Encoding, b []byte, queue *[]View) {
	e.buf = b[:0]
	if e.done || len(b) == 0 || !isText(b) {
		return
	}
	if _, ok := e.seen[string(b)]; ok {
		return
	}
	if e.views >= maxViews || len(b) > e.budget {
		e.done = true
		return
	}
	e.views++
	e.budget -= len(b)
	text := string(b)
	e.seen[text] = struct{}{}
	via := make([]Encoding, len(parent.Via)+1)
	copy(via, parent.Via)
	via[len(parent.Via)] = enc
	v := View{Text: text, Via: via}
	*queue = append(*queue, View{Text: text, Via: slices.Clone(via)})
	e.fn(v)
}

// isText reports valid UTF-8 with at least 80% printable runes; tabs and
// line breaks count as printable.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	total, printable := 0, 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			total++
			if ' ' <= c && c < 0x7f || c == '\t' || c == '\n' || c == '\r' {
				printable++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		total++
		if unicode.IsPrint(r) {
			printable++
		}
	}
	return printable*5 >= total*4
}

type span struct{ start, end int }

// trimSpace returns the span of s without surrounding ASCII whitespace.
func trimSpace(s string) span {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return span{i, j}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// hasURLEscape reports a %XX escape or a +.
func hasURLEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '+':
			return true
		case '%':
			if i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
				return true
			}
		}
	}
	return false
}

// urlDecode appends the percent-decoding of s to dst: %XX becomes the byte,
// + a space, and anything else (a malformed escape included) is kept.
func urlDecode(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]):
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		dst = append(dst, c)
	}
	return dst
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// An alphabet finds and decodes runs of one encoding.
type alphabet struct {
	enc    Encoding
	in     [256]bool                            // bytes of the alphabet, padding excluded
	maxPad int                                  // '=' bytes that may follow a run
	decode func(dst, run []byte) ([]byte, bool) // may modify run
}

// run finds the first run of the alphabet at or after i and returns its
// bounds and the padding after it, or start = −1.
func (a *alphabet) run(s string, i int) (start, end, pad int) {
	for i < len(s) && !a.in[s[i]] {
		i++
	}
	if i == len(s) {
		return -1, -1, 0
	}
	start = i
	for i < len(s) && a.in[s[i]] {
		i++
	}
	end = i
	for i < len(s) && pad < a.maxPad && s[i] == '=' {
		i++
		pad++
	}
	return start, end, pad
}

var encAlphabets = []*alphabet{
	newAlphabet(Hex, "0123456789abcdefABCDEF", 0, decodeHex),
	newAlphabet(Base32, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz234567", 6, decodeBase32),
	newAlphabet(Base64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 2, decodeBase64(base64.RawStdEncoding)),
	newAlphabet(Base64URL, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 2, decodeBase64(base64.RawURLEncoding)),
}

// inUnion marks the bytes of any alphabet, and padding.
var inUnion = func() (u [256]bool) {
	for _, a := range encAlphabets {
		for c, in := range a.in {
			u[c] = u[c] || in
		}
	}
	u['='] = true
	return u
}()

func newAlphabet(enc Encoding, chars string, maxPad int, decode func(dst, run []byte) ([]byte, bool)) *alphabet {
	a := &alphabet{enc: enc, maxPad: maxPad, decode: decode}
	for i := 0; i < len(chars); i++ {
		a.in[chars[i]] = true
	}
	return a
}

func decodeHex(dst, run []byte) ([]byte, bool) {
	run = run[:len(run)&^1]
	n := len(run) / 2
	dst = slices.Grow(dst, n)[:n]
	_, err := hex.Decode(dst, run)
	return dst, err == nil
}

var base32Raw = base32.StdEncoding.WithPadding(base32.NoPadding)

// base32Usable maps len(run)%8 to the longest decodable length of that
// residue: 1, 3 and 6 characters cannot end a quantum.
var base32Usable = [8]int{0, 0, 2, 2, 4, 5, 5, 7}

func decodeBase32(dst, run []byte) ([]byte, bool) {
	run = run[:len(run)/8*8+base32Usable[len(run)%8]]
	for i, c := range run {
		if 'a' <= c && c <= 'z' {
			run[i] = c - ('a' - 'A')
		}
	}
	n := base32Raw.DecodedLen(len(run))
	dst = slices.Grow(dst, n)[:n]
	n, err := base32Raw.Decode(dst, run)
	return dst[:n], err == nil
}

// decodeBase64 decodes a run without padding; a run of 4k+1 characters
// has a stray last character, which is dropped.
func decodeBase64(enc *base64.Encoding) func(dst, run []byte) ([]byte, bool) {
	return func(dst, run []byte) ([]byte, bool) {
		if len(run)%4 == 1 {
			run = run[:len(run)-1]
		}
		n := enc.DecodedLen(len(run))
		dst = slices.Grow(dst, n)[:n]
		n, err := enc.Decode(dst, run)
		return dst[:n], err == nil
	}
}
