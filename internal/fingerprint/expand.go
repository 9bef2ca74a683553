package fingerprint

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Encoding is one decoding step Expand can apply.
type Encoding uint8

// The encodings Expand peels. The first five are alphabets; the rest are
// the rewrites a model can do in its head, escapes, and data moved into
// the parts of a URL. See Expand for when each is tried.
const (
	URL                Encoding = iota + 1 // percent-encoding, + as space
	Base64                                 // standard alphabet, padding optional
	Base64URL                              // URL-safe alphabet, padding optional
	Base32                                 // RFC 4648 alphabet, any case, padding optional
	Hex                                    // hexadecimal, any case
	Reversed                               // written backwards, rune by rune
	Leet                                   // leetspeak: 4 for a, 3 for e, 0 for o …
	Spaced                                 // letters spaced out or joined by separators, invisible characters
	JSONEscape                             // backslash escapes: \u0041, \x41, \n …
	HTMLEntity                             // HTML and XML character references, numeric and named
	QuotedPrintable                        // =41 escapes and soft line breaks
	Punycode                               // xn-- labels (RFC 3492)
	NFKC                                   // Unicode compatibility forms: fullwidth, mathematical letters …
	Confusables                            // Cyrillic, Greek and other look-alikes of Latin letters
	UnicodeTags                            // ASCII written in invisible tag characters
	VariationSelectors                     // bytes written as invisible variation selectors
	HostLabels                             // data split across the labels of a host name
	PathSegments                           // data split across URL path segments, query keys or values
)

// A Caesar shift of the letters by n places (n from 1 to 25; 13 is
// ROT13) is the Encoding CaesarShift(n).
const (
	caesarFirst Encoding = 32
	caesarLast  Encoding = caesarFirst + 24
	// ROT13 is CaesarShift(13).
	ROT13 = caesarFirst + 12
)

// CaesarShift returns the Encoding of a shift of the letters by n places
// forward (a becomes b for n = 1), for n from 1 to 25, and 0 otherwise.
// Shifts by n and by 26−n undo each other; Expand reports the shift the
// text was encoded with.
func CaesarShift(n int) Encoding {
	if n < 1 || n > 25 {
		return 0
	}
	return caesarFirst + Encoding(n-1)
}

// Shift returns n for the Encoding CaesarShift(n), and 0 for the others.
func (e Encoding) Shift() int {
	if e < caesarFirst || e > caesarLast {
		return 0
	}
	return int(e-caesarFirst) + 1
}

var encodingNames = [...]string{
	URL: "url", Base64: "base64", Base64URL: "base64url", Base32: "base32", Hex: "hex",
	Reversed: "reversed", Leet: "leet", Spaced: "spaced", JSONEscape: "json-escape",
	HTMLEntity: "html-entity", QuotedPrintable: "quoted-printable", Punycode: "punycode",
	NFKC: "nfkc", Confusables: "confusables", UnicodeTags: "unicode-tags",
	VariationSelectors: "variation-selectors", HostLabels: "hostname-labels", PathSegments: "path-segments",
}

func (e Encoding) String() string {
	switch n := e.Shift(); {
	case n == 13:
		return "rot13"
	case n != 0:
		return "caesar+" + strconv.Itoa(n)
	case int(e) < len(encodingNames) && encodingNames[e] != "":
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
	maxDepth = 4  // decodings in a chain: a design limit, not a budget
	maxViews = 64 // views per call, the original included
	minRun   = 16 // shortest encoded run decoded inside a longer string
	// Decoded bytes per call: at most 8×len(s) + maxExtra.
	maxExtra = 64 << 10
)

// maxViewLen bounds one view of an argument of n bytes: ¼ is 1⁄4 in
// NFKC, and a text of nothing else would grow 2.5 times.
func maxViewLen(n int) int { return 2*n + 64 }

// Expand calls fn with s itself and then with every decoded view of s, so
// that a secret the agent encoded, escaped or disguised before passing it
// to a sink is still seen, and reports whether it examined every
// candidate decoding.
//
// From each view, Expand tries the alphabets:
//   - URL percent-decoding (as url.QueryUnescape, + becoming a space),
//     when the view holds a %XX escape or a +; malformed escapes are kept
//     as they are rather than failing the whole view (so percent-encoding
//     of every byte is undone too);
//   - every maximal run of the base64 (standard or URL-safe, with optional
//     = padding), base32 (any case, optional padding) and hex alphabets
//     that is at least 16 bytes long, or that is the whole view (after
//     trimming surrounding whitespace) at any length. A run whose length
//     cannot be decoded is trimmed to the longest length that can, so a
//     lost trailing character costs a byte, not the view. A run is tried
//     in every alphabet it belongs to. A run that decodes to at least 16
//     bytes of noise, and is not inside a base64 run that decoded to
//     text or inside a longer run tried already, is tried undone: read backwards (Reversed), and under the
//     few Caesar shifts that the structure of encoded ASCII allows (see
//     runs.go); a repair whose first 64 characters decode to plain text
//     is a view, which the next depth decodes.
//
// and the rewrites, each only where a cheap test says it can apply (the
// tests look at the shape of the text, never at what it says; the files
// named hold the exact rules):
//   - Caesar shifts (CaesarShift(1) to CaesarShift(25), ROT13 among them)
//     and Reversed: a stretch of at least 16 letter pairs of plain words
//     that does not read as English, letter pair by letter pair, but
//     reads as English backwards or under one of the three shifts its
//     letter frequencies rank best, makes the view read that way; where
//     a run of such stretches fails as a whole, two windows in a row
//     must agree on the cipher (cipher.go). A shift and a reversal
//     together are found a depth apart.
//   - Leet: digits and @ $ ! | for letters, when the view has three
//     distinct leet words, holding six leet characters (leet.go).
//   - Spaced: invisible characters removed; characters each followed by
//     a separator (c-r-e-d, c r e d), and hex pairs (4a 6f 68), joined
//     (spaced.go). Case games and spacing already normalise away for
//     prints; these are for tokens and encoded runs.
//   - JSONEscape (\uXXXX with surrogate pairs, \xXX, \u{…}, \n …),
//     HTMLEntity (numeric, and named with their semicolon),
//     QuotedPrintable (=XX and soft line breaks, given two =XX in upper
//     case), Punycode (xn-- labels) (escapes.go, punycode.go).
//   - NFKC (fullwidth, mathematical and other compatibility letters),
//     Confusables (Cyrillic, Greek, Armenian, small-capital look-alikes
//     of Latin letters, in a word that mixes them with ASCII), UnicodeTags
//     (ASCII in tag characters) and VariationSelectors (bytes in runs of
//     variation selectors) (lookalike.go).
//   - HostLabels and PathSegments: the labels of a host name but its
//     registered domain, and groups of path segments, query keys or
//     query values that decode as one run, joined (split.go).
//   - Reversed and Caesar shifts of escapes, when the view has an escape
//     introducer at least every 16 bytes and the inverse makes 19 in 20
//     of them start escapes of printable characters; Caesar shifts of
//     leetspeak, when a cluster of leet words reads as English under a
//     shift of its letters with its digits read as letters; and Leet of
//     the hex digits of escapes of single bytes (repairs.go).
//   - Leet of an encoded run: a union run of at least 24 characters with
//     none of the letters leetspeak replaces, read group by group as
//     the likeliest English (leetruns.go).
//
// A rewrite that changes only a few places of a long view is offered as
// those places with their context (a line each, each widened to at least
// 128 bytes and 72 letters or digits and to the whole encoded run it
// touches), since the rest of it is text the view already had. A chain
// holds each of Reversed, Leet, Spaced, Punycode, NFKC, Confusables,
// UnicodeTags, VariationSelectors, HostLabels, PathSegments and one
// Caesar shift at most once, and at most two rewrites in all: every
// composition two deep is found, and a benign argument that passes
// several cheap tests does not multiply its views. A view that is one
// encoded run that decoded to text is not rewritten: its decoding is;
// nor is a view that is its parent with + turned into spaces, whose
// rewrites the parent's are.
//
// A decoding becomes a view only if it is valid UTF-8 with at least 80%
// printable runes (spaces of any width and invisible format characters
// count as printable; binary noise is not text an agent read), and
// differs from every view already produced (its parent included). A
// base64 run that lies inside a run of the other base64 alphabet at a
// multiple of 4 characters from its start, where the outer run decoded to
// text, decodes to a substring of that text and is not made a view of
// its own; so is such a run of a view that differs from its parent only
// by + turned into spaces, inside a run of the parent. Each view is
// decoded again, up to 4 decodings deep; views 4 decodings deep are not
// decoded further, by design, and that does not make the expansion
// incomplete.
//
// The work is bounded: at most 64 views per call (the original included),
// none longer than 2×len(s)+64 bytes (NFKC and punycode can lengthen
// text), and at most 8×len(s)+64 KiB decoded bytes in all. The budget goes
// to the likeliest payloads first. Views are produced breadth first, one
// depth at a time; at each depth every candidate of every view of the
// depth above is decoded and tested, and the ones that decode to new text
// are made views longest encoded run (or rewritten part) first (ties:
// earlier view, then earlier position, then Encoding order), because the
// payload an attacker hides is usually the longest run. A candidate that
// decodes to binary noise, or to a view already produced, costs nothing.
// Each view is scanned a constant number of times, a pass of table
// lookups deciding which rewrites to try, so the time is linear in the
// bytes produced.
//
// complete is false when a decoding to new text was left out because a
// bound (views, view length or decoded bytes) was reached: the views
// Expand produced are the longest ones, but the undecoded remainder could
// hold anything, and the caller must treat it so (Weir decides as if it
// were private). Views are still produced, up to the bounds, when
// complete is false. The tests of the rewrites are heuristics, not
// bounds: a rewrite they do not try leaves nothing undecoded. Same input,
// same views, in the same order, and the same complete.
//
// Every View passed to fn has its own Via slice, which fn may keep.
func Expand(s string, fn func(View)) (complete bool) {
	return expand(s, fn, 8*len(s)+maxExtra)
}

// expand is Expand with a budget of decoded bytes.
func expand(s string, fn func(View), budget int) bool {
	complete, _ := expandOvergrown(s, fn, budget)
	return complete
}

// expandOvergrown is expand that also reports whether a view longer than
// maxViewLen was left out, for tests of the bounds.
func expandOvergrown(s string, fn func(View), budget int) (complete, overgrown bool) {
	fn(View{Text: s})
	sc := scratchSpace.Get().(*rewriteScratch)
	defer scratchSpace.Put(sc)
	e := expander{fn: fn, orig: s, budget: budget, views: 1, rewriteScratch: sc}
	level := []node{{text: s}}
	for depth := 0; depth < maxDepth && len(level) > 0; depth++ {
		if e.incomplete && e.views >= maxViews {
			break // nothing more can be produced or learnt
		}
		level = e.step(level)
	}
	return !e.incomplete, e.overgrown
}

// rewriteScratch is the working memory of the rewrites, reused between
// calls: every view's letter pairs need a few kilobytes.
type rewriteScratch struct {
	spans     []pairSpan
	pairs     []uint16    // letter pairs of a stretch being judged
	patches   patches     // of the rewrite being made
	windows   []span      // of its local view
	local     []byte      // a local view, reused as buf is
	failed    []failedRun // runs of the current union run that decoded to noise
	textSpans []span      // its base64 runs that decoded to text
	tried     []span      // its runs tried for repair
}

var scratchSpace = sync.Pool{New: func() any { return new(rewriteScratch) }}

// A node is a view awaiting expansion.
type node struct {
	text string
	via  []Encoding
	// inherit, for a view that is its parent with only + turned into
	// spaces (same length, same positions), is the parent's base64 runs
	// that decoded to text. Such a view's hex, base32 and URL-safe base64
	// runs of minRun or more are exactly its parent's, examined already;
	// only its standard base64 runs, now split at the spaces, are new.
	inherit *textRuns
	// runs collects this view's base64 runs that decoded to text, when it
	// has such a child.
	runs *textRuns
}

// textRuns are the base64 runs of a view that decoded to text, each list
// in position order and disjoint.
type textRuns struct{ std, url []span }

type expander struct {
	fn         func(View)
	orig       string
	seen       map[string]struct{} // views produced but the original
	budget     int                 // decoded bytes left
	views      int
	incomplete bool
	pend       pending
	buf        []byte // decoded bytes, reused until they become a view
	src        []byte // a copy of the run being decoded
	*rewriteScratch
	// chain is that of the view being collected.
	chain chain
	// overgrown records that a rewrite longer than the original was
	// left out, which makes the expansion incomplete.
	overgrown bool
	// wholeText records that the view being collected is one encoded
	// run that decoded to text.
	wholeText bool
}

// halted reports that nothing more can be learnt: the expansion is
// incomplete and no view can be added.
func (e *expander) halted() bool { return e.incomplete && e.pend.slots == 0 }

func (e *expander) isSeen(b []byte) bool {
	if string(b) == e.orig {
		return true
	}
	_, ok := e.seen[string(b)]
	return ok
}

// step decodes every candidate of the views of one depth, makes views of
// the ones that decode to new text, longest run first, and returns them:
// the next depth.
func (e *expander) step(level []node) []node {
	e.pend.reset(maxViews - e.views)
	for i := range level {
		if e.halted() {
			break
		}
		e.collect(i, &level[i])
	}
	var next []node
	for _, c := range e.pend.sorted() {
		if len(c.text) > e.budget {
			e.incomplete = true
			continue
		}
		e.budget -= len(c.text)
		e.views++
		if e.seen == nil {
			e.seen = make(map[string]struct{})
		}
		e.seen[c.text] = struct{}{}
		parent := &level[c.view]
		via := make([]Encoding, len(parent.via)+1)
		copy(via, parent.via)
		via[len(parent.via)] = c.enc
		n := node{text: c.text, via: slices.Clone(via)}
		if c.plus {
			n.inherit = parent.runs
		}
		next = append(next, n)
		e.fn(View{Text: c.text, Via: via})
	}
	return next
}

// collect decodes every candidate of one view and offers the decodings.
func (e *expander) collect(vi int, n *node) {
	e.chain = chainOf(n.via)
	e.wholeText = false
	e.runs(vi, n)
	// A view that is one encoded run, which decoded to text, was not
	// rewritten before it was encoded: its decoding is. A view that is
	// its parent with + turned into spaces has the parent's rewrites,
	// which read + as a space already.
	if !e.halted() && !e.wholeText && n.inherit == nil {
		e.transforms(vi, n)
	}
}

// runs decodes the URL escapes and the alphabet runs of one view.
func (e *expander) runs(vi int, n *node) {
	s := n.text
	if plus, pct := urlEscapes(s); plus || pct {
		if !pct {
			n.runs = &textRuns{}
		}
		e.offer(cand{n: len(s), view: vi, enc: URL, plus: !pct}, urlDecode(e.buf[:0], s))
	}
	whole := trimSpace(s)
	var inh [2]cursor
	if n.inherit != nil {
		inh = [2]cursor{{spans: n.inherit.std}, {spans: n.inherit.url}}
	}
	// Every run of every alphabet lies inside a run of their union (with
	// padding). Prose and JSON rarely have a union run long enough to
	// decode, so most text is skipped by one pass over it, which keeps
	// the length of the current union run without branching on each byte.
	run := 0
	for i := 0; i < len(s); i++ {
		m := unionMask[s[i]]
		if (run >= minRun || i == whole.end) && m == 0 && run > 0 {
			if e.unionRun(vi, n, s[:i], i-run, whole, &inh); e.halted() {
				return
			}
		}
		run = (run + 1) & m
	}
	if run > 0 && (run >= minRun || len(s) == whole.end) {
		e.unionRun(vi, n, s, len(s)-run, whole, &inh)
	}
}

// unionRun decodes the runs of every alphabet in the union run s[us:].
func (e *expander) unionRun(vi int, n *node, s string, us int, whole span, inh *[2]cursor) {
	ue := len(s)
	isWhole := us == whole.start && ue == whole.end
	if ue-us < minRun && !isWhole {
		return
	}
	// A view that is its parent with + turned into spaces has its parent's
	// hex, base32 and URL-safe base64 runs, decoded already; only a run
	// that is the whole view may be eligible here and not there.
	others := n.inherit == nil || isWhole
	e.failed, e.textSpans, e.tried = e.failed[:0], e.textSpans[:0], e.tried[:0]
	for _, a := range [...]*alphabet{hexAlphabet, base32Alphabet} {
		for j := us; others && !e.halted(); {
			start, end, pad := a.next(s, j, whole)
			if start < 0 {
				break
			}
			j = end + pad
			if n.inherit != nil && end-start >= minRun {
				continue
			}
			if e.decode(vi, a, s, start, end) && start == whole.start && end+pad == whole.end {
				e.wholeText = true
			}
		}
	}
	e.base64Runs(vi, n, s, us, whole, inh, others)
	if n.inherit == nil {
		// A view that is its parent with + turned into spaces has the
		// parent's runs cut into pieces, and the parent's were tried.
		e.repairFailed(vi, s)
		if !e.halted() {
			e.repairLeetRun(vi, &e.chain, s, us, ue)
		}
	}
}

// repairFailed tries the runs of the union run that decoded to noise
// reversed and shifted (see repairRun), longest first at each position,
// except those inside a base64 run that decoded to text or inside a run
// tried already: a piece of encoded text is noise in any other reading,
// a piece of a run that no repair makes text is part of the same noise,
// and a large attachment holds thousands of such pieces.
func (e *expander) repairFailed(vi int, s string) {
	slices.SortFunc(e.failed, func(a, b failedRun) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end), cmp.Compare(a.a.enc, b.a.enc))
	})
	var last failedRun
	for _, f := range e.failed {
		if e.halted() {
			return
		}
		if f.start == last.start && f.end == last.end && f.a.enc == Base64URL && last.a.enc == Base64 {
			continue // the same run in the other base64 alphabet: repaired as base64 once
		}
		last = f
		covered := false
		for _, t := range e.textSpans {
			if t.start <= f.start && f.end <= t.end {
				covered = true
				break
			}
		}
		// The same run in another alphabet is tried, and may be what the
		// text was: a reversed hex run is base64 too.
		for _, t := range e.tried {
			if t.start <= f.start && f.end <= t.end && (t.start != f.start || t.end != f.end) {
				covered = true
				break
			}
		}
		if !covered {
			e.repairRun(vi, &e.chain, f.a, s, f.start, f.end)
			e.tried = append(e.tried, span{f.start, f.end})
		}
	}
}

// base64Runs decodes the runs of both base64 alphabets in s[us:], in
// position order, outer runs before the runs inside them, so that a run
// inside one that decoded to text (at a multiple of 4 characters from its
// start) is recognised as a substring of that text and skipped.
func (e *expander) base64Runs(vi int, n *node, s string, us int, whole span, inh *[2]cursor, urlRuns bool) {
	type run struct {
		start, end, pad int
		text            bool
	}
	var next, last [2]run
	fetch := func(k, from int) {
		start, end, pad := b64Alphabets[k].next(s, from, whole)
		next[k] = run{start: start, end: end, pad: pad}
	}
	fetch(0, us)
	next[1].start = -1
	if urlRuns {
		fetch(1, us)
	}
	for !e.halted() {
		k := 0
		switch {
		case next[0].start < 0 && next[1].start < 0:
			return
		case next[0].start < 0:
			k = 1
		case next[1].start < 0:
		case next[1].start < next[0].start, next[1].start == next[0].start && next[1].end > next[0].end:
			k = 1
		}
		r := next[k]
		if k == 0 || urlRuns {
			fetch(k, r.end+r.pad)
		}
		if k == 1 && n.inherit != nil && r.end-r.start >= minRun {
			continue // the parent's own URL-safe run
		}
		if o := last[1-k]; o.start <= r.start && r.end <= o.end && (o.text || o.start == r.start && o.end == r.end) && (r.start-o.start)%4 == 0 {
			last[k] = r
			continue // a substring of o's text, or o's decoding itself
		}
		if inh[0].covers(r.start, r.end) || inh[1].covers(r.start, r.end) {
			last[k] = r
			continue // a substring of the parent's text
		}
		r.text = e.decode(vi, b64Alphabets[k], s, r.start, r.end)
		last[k] = r
		if r.text {
			e.textSpans = append(e.textSpans, span{r.start, r.end})
			e.wholeText = e.wholeText || r.start == whole.start && r.end+r.pad == whole.end
		}
		if r.text && n.runs != nil {
			if k == 0 {
				n.runs.std = append(n.runs.std, span{r.start, r.end})
			} else {
				n.runs.url = append(n.runs.url, span{r.start, r.end})
			}
		}
	}
}

// A cursor walks a view's inherited text runs, for runs asked about in
// position order.
type cursor struct {
	spans []span
	i     int
}

// covers reports whether [start, end) lies inside one of the spans at a
// multiple of 4 characters from its start.
func (c *cursor) covers(start, end int) bool {
	for c.i+1 < len(c.spans) && c.spans[c.i+1].start <= start {
		c.i++
	}
	if c.i >= len(c.spans) {
		return false
	}
	o := c.spans[c.i]
	return o.start <= start && end <= o.end && (start-o.start)%4 == 0
}

// decode decodes s[start:end] in alphabet a, offers the result and
// reports whether it is text. A run long enough that decodes to noise is
// kept for repairFailed.
func (e *expander) decode(vi int, a *alphabet, s string, start, end int) bool {
	e.src = append(e.src[:0], s[start:end]...)
	b, ok := a.decode(e.buf[:0], e.src)
	text := ok && e.offer(cand{n: end - start, view: vi, start: start, enc: a.enc}, b)
	if !ok {
		e.buf = b[:0]
	}
	if !text && a.decodedLen(end-start) >= minRepair {
		e.failed = append(e.failed, failedRun{a, start, end})
	}
	return text
}

// minRepair is the fewest decoded bytes of a run worth repairing: over
// the thousands of runs of a large attachment, fewer bytes of noise
// read as plain text by chance now and then.
const minRepair = 16

// A failedRun is a run that decoded to noise, for repairRun.
type failedRun struct {
	a          *alphabet
	start, end int
}

// decodedLen is the number of bytes n characters of the alphabet decode
// to.
func (a *alphabet) decodedLen(n int) int {
	switch a.enc {
	case Hex:
		return n / 2
	case Base32:
		return n * 5 / 8
	}
	return n * 3 / 4
}

// offer queues decoded bytes for the next depth if they are new text, and
// reports whether they are text. Decodings are shorter than what they
// decode, but NFKC, HTML entities and punycode can lengthen text: a view
// longer than maxViewLen is left out, and the expansion is incomplete.
func (e *expander) offer(c cand, b []byte) bool {
	e.buf = b[:0]
	if len(b) == 0 || !isText(b) {
		return false
	}
	if len(b) > maxViewLen(len(e.orig)) {
		e.incomplete, e.overgrown = true, true
		return true
	}
	if !e.isSeen(b) {
		if dropped := e.pend.add(c, b); dropped >= minEvidence {
			e.incomplete = true
		}
	}
	return true
}

// minEvidence is the shortest decoded text that can hold evidence of a
// leak: a secret token ([Tokens] finds none shorter) or a fingerprint
// (K normalised characters). A shorter decoding left out for want of room
// cannot have hidden private data, so it does not make an expansion
// incomplete: binary-ish base32 stretches inside a large base64 blob would
// otherwise make every big attachment "undecodable".
const minEvidence = minToken

// A cand is a decoding to new text, waiting for its turn to be a view.
type cand struct {
	text  string
	n     int // length of the encoded run (the whole view for URL)
	view  int // index of the parent in its depth
	start int
	enc   Encoding
	plus  bool // URL decoding that only turned + into spaces
	idx   int  // in pending.h
}

// compare orders candidates by when they become views: the longer run
// first, then the earlier view, the earlier position, the lower Encoding.
// Two candidates never tie.
func (c *cand) compare(d *cand) int {
	return cmp.Or(cmp.Compare(d.n, c.n), cmp.Compare(c.view, d.view), cmp.Compare(c.start, d.start), cmp.Compare(c.enc, d.enc))
}

func (c *cand) before(d *cand) bool { return c.compare(d) < 0 }

// pending holds the best candidates of one depth, at most slots of them,
// one per distinct text: a heap with the last in order at its root.
type pending struct {
	slots int
	h     []*cand
	index map[string]*cand
}

func (p *pending) reset(slots int) {
	p.slots = max(slots, 0)
	p.h = p.h[:0]
	clear(p.index)
}

// add keeps a candidate if it is among the best slots. When a distinct
// text is dropped (this one, or one it displaced) it returns that text's
// length, else -1.
func (p *pending) add(c cand, b []byte) int {
	if old, ok := p.index[string(b)]; ok {
		if c.before(old) {
			c.text, c.idx = old.text, old.idx
			*old = c
			p.down(old.idx)
		}
		return -1
	}
	dropped := -1
	if len(p.h) >= p.slots {
		if p.slots == 0 || !c.before(p.h[0]) {
			return len(b)
		}
		dropped = len(p.h[0].text)
		delete(p.index, p.h[0].text)
		last := len(p.h) - 1
		p.swap(0, last)
		p.h = p.h[:last]
		p.down(0)
	}
	c.text = string(b)
	nc := &c
	nc.idx = len(p.h)
	p.h = append(p.h, nc)
	p.up(nc.idx)
	if p.index == nil {
		p.index = make(map[string]*cand)
	}
	p.index[nc.text] = nc
	return dropped
}

// sorted returns the candidates in the order they become views.
func (p *pending) sorted() []*cand {
	slices.SortFunc(p.h, (*cand).compare)
	return p.h
}

// later orders the heap: the candidate that becomes a view last is at the
// root.
func (p *pending) later(i, j int) bool { return p.h[j].before(p.h[i]) }

func (p *pending) swap(i, j int) {
	p.h[i], p.h[j] = p.h[j], p.h[i]
	p.h[i].idx, p.h[j].idx = i, j
}

func (p *pending) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !p.later(i, parent) {
			return
		}
		p.swap(i, parent)
		i = parent
	}
}

// down moves h[i] toward the leaves after it moved earlier in order.
func (p *pending) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(p.h) {
			return
		}
		m := l
		if r := l + 1; r < len(p.h) && p.later(r, l) {
			m = r
		}
		if !p.later(m, i) {
			return
		}
		p.swap(i, m)
		i = m
	}
}

// isText reports valid UTF-8 with at least 80% printable runes; spaces of
// every width, tabs and line breaks count as printable, and so do
// invisible format characters (zero-width spaces, joiners, tags), which
// hide text between letters but are not noise.
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
		if unicode.IsPrint(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
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

// urlEscapes reports whether s holds a + and whether it holds a %XX
// escape.
func urlEscapes(s string) (plus, pct bool) {
	plus = strings.IndexByte(s, '+') >= 0
	for i := 0; ; i++ {
		j := strings.IndexByte(s[i:], '%')
		if j < 0 {
			return plus, false
		}
		i += j
		if i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			return plus, true
		}
	}
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
	mask   [256]int // all ones for the bytes of the alphabet, padding excluded
	maxPad int      // '=' bytes that may follow a run
	decode func(dst, run []byte) ([]byte, bool)
}

// next finds the first run of the alphabet at or after i that is
// decoded: one of at least minRun bytes, or one of at least 2 that is the
// whole (trimmed) view with its padding. It returns the run's bounds and
// the padding after it, or start = −1. Only the length of the current run
// is kept while scanning, without branching on each byte.
func (a *alphabet) next(s string, i int, whole span) (start, end, pad int) {
	if i == whole.start {
		if start, end, pad = a.run(s, i); start == i && end+pad == whole.end && end-start >= 2 {
			return start, end, pad
		}
	}
	run := 0
	for ; i < len(s); i++ {
		m := a.mask[s[i]]
		if run >= minRun && m == 0 {
			break
		}
		run = (run + 1) & m
	}
	if run < minRun {
		return -1, -1, 0
	}
	return i - run, i, a.padding(s, i)
}

// run finds the first run of the alphabet at or after i, of any length,
// and returns its bounds and the padding after it, or start = −1.
func (a *alphabet) run(s string, i int) (start, end, pad int) {
	for i < len(s) && a.mask[s[i]] == 0 {
		i++
	}
	if i == len(s) {
		return -1, -1, 0
	}
	start = i
	for i < len(s) && a.mask[s[i]] != 0 {
		i++
	}
	return start, i, a.padding(s, i)
}

// padding counts the = bytes at s[i:] that may follow a run.
func (a *alphabet) padding(s string, i int) (pad int) {
	for i+pad < len(s) && pad < a.maxPad && s[i+pad] == '=' {
		pad++
	}
	return pad
}

var (
	hexAlphabet    = newAlphabet(Hex, "0123456789abcdefABCDEF", 0, decodeHex)
	base32Alphabet = newAlphabet(Base32, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz234567", 6, decodeBase32)
	// b64Alphabets are standard and URL-safe base64, in that order.
	b64Alphabets = [2]*alphabet{
		newAlphabet(Base64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 2, decodeBase64(base64.RawStdEncoding)),
		newAlphabet(Base64URL, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 2, decodeBase64(base64.RawURLEncoding)),
	}
	encAlphabets = []*alphabet{hexAlphabet, base32Alphabet, b64Alphabets[0], b64Alphabets[1]}
)

// unionMask is all ones for the bytes of any alphabet, and padding, and
// zero for the rest.
var unionMask = func() (u [256]int) {
	for _, a := range encAlphabets {
		for c, m := range a.mask {
			u[c] |= m
		}
	}
	u['='] = -1
	return u
}()

func newAlphabet(enc Encoding, chars string, maxPad int, decode func(dst, run []byte) ([]byte, bool)) *alphabet {
	a := &alphabet{enc: enc, maxPad: maxPad, decode: decode}
	for i := 0; i < len(chars); i++ {
		a.mask[chars[i]] = -1
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

// base32Val maps a byte of the base32 alphabet, in either case, to its
// value, and every other byte to 0xff.
var base32Val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" {
		t[c] = byte(i)
		if 'A' <= c && c <= 'Z' {
			t[c+'a'-'A'] = byte(i)
		}
	}
	return t
}()

// base32Usable maps len(run)%8 to the longest decodable length of that
// residue: 1, 3 and 6 characters cannot end a quantum.
var base32Usable = [8]int{0, 0, 2, 2, 4, 5, 5, 7}

// decodeBase32 decodes a run without padding, as base32.StdEncoding
// would with padding removed and any case, without allocating; the bits
// of an incomplete last byte are dropped.
func decodeBase32(dst, run []byte) ([]byte, bool) {
	run = run[:len(run)/8*8+base32Usable[len(run)%8]]
	dst = slices.Grow(dst, len(run)*5/8)
	var acc uint64
	bits := 0
	for _, c := range run {
		v := base32Val[c]
		if v == 0xff {
			return dst, false
		}
		acc = acc<<5 | uint64(v)
		if bits += 5; bits >= 8 {
			bits -= 8
			dst = append(dst, byte(acc>>bits))
		}
	}
	return dst, true
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
