package fingerprint

import "unicode/utf8"

// This file holds the rewrites of a whole view that Expand tries besides
// the alphabet runs of expand.go: each has a cheap test of whether it can
// apply, run on every view, and the rewrite itself, run only when the
// test passes. The tests look at the shape of the text (an escape
// sequence, a digit inside a word, an xn-- label, a run of spaced
// letters, a stretch that does not read as English), never at what it
// says, so that benign text costs one pass of table lookups (scanView)
// and a few byte searches, and makes few views or none.

// once lists the encodings that are not applied twice in one chain:
// applying them again undoes them, or does nothing, or is one step of
// the same kind (two Caesar shifts are one shift).
var once = func() (m [256]bool) {
	for _, e := range []Encoding{Reversed, Leet, Spaced, Punycode, NFKC, Confusables, UnicodeTags, VariationSelectors, HostLabels, PathSegments} {
		m[e] = true
	}
	for e := caesarFirst; e <= caesarLast; e++ {
		m[e] = true
	}
	return m
}()

// maxRewrites is the most rewrites (the encodings after Hex) in one
// chain. Two make every two-deep composition; a long benign argument
// can pass the cheap tests of several rewrites that each change a little
// (an ellipsis for NFKC, a \n for JSON), and three deep they would
// multiply into more views than the bound.
const maxRewrites = 2

// chain records which families of encodings a view's chain holds.
type chain struct {
	used     [256]bool
	caesar   bool
	rewrites int
}

func chainOf(via []Encoding) chain {
	var c chain
	for _, e := range via {
		c.used[e] = true
		c.caesar = c.caesar || e.Shift() != 0
		if e > Hex {
			c.rewrites++
		}
	}
	return c
}

// may reports whether enc may be applied to a view with this chain.
func (c *chain) may(enc Encoding) bool {
	switch {
	case enc > Hex && c.rewrites >= maxRewrites:
		return false
	case enc.Shift() != 0:
		return !c.caesar
	}
	return !once[enc] || !c.used[enc]
}

// transforms offers every rewrite of view vi whose test passes.
func (e *expander) transforms(vi int, n *node) {
	s := n.text
	ch := &e.chain
	var h hints
	e.spans, h = scanView(e.spans[:0], s)
	if ch.may(Reversed) || ch.may(ROT13) {
		e.ciphers(vi, ch, s)
		if h.escapes >= minRepairEscapes && !e.halted() {
			e.repairEscapes(vi, ch, s)
			e.repairLeetEscapes(vi, ch, s)
		}
		if h.leet >= minLeet && !e.halted() {
			e.repairLeetShift(vi, ch, s)
		}
	}
	steps := [...]struct {
		enc  Encoding
		gate bool // the step's own test could pass
		fn   func(dst []byte, s string, p *patches) ([]byte, bool)
	}{
		{Leet, h.leet >= minLeet, unleet},
		{Spaced, h.invisible || h.spaced || h.hexPairs, func(dst []byte, s string, _ *patches) ([]byte, bool) {
			return unspace(dst, s, &h)
		}},
		{JSONEscape, true, unescapeBackslash},
		{HTMLEntity, true, unescapeHTML},
		{QuotedPrintable, true, decodeQuotedPrintable},
		{Punycode, true, decodePunycodeLabels},
		{NFKC, h.nfkc, foldNFKC},
		{Confusables, h.lookalike, foldConfusables},
		{UnicodeTags, h.tags, decodeTags},
		{VariationSelectors, h.selectors, decodeVariationSelectors},
		{HostLabels, h.innerDots, joinHostLabels},
		{PathSegments, h.innerDots, joinPathSegments},
	}
	for _, st := range steps {
		if e.halted() {
			return
		}
		if !st.gate || !ch.may(st.enc) {
			continue
		}
		e.patches.spans = e.patches.spans[:0]
		if out, ok := st.fn(e.buf[:0], s, &e.patches); ok {
			e.rewrite(vi, st.enc, s, out)
		} else {
			e.buf = out[:0]
		}
	}
}

// ciphers offers the view read under each cipher detectCiphers finds
// (the shift a text was encoded with, or the reversal): like any rewrite,
// as the stretches it found with their context when they are a small
// part of the view. A shift and a reversal together are offered as the
// reversal: the shift is found again, on its own, in the reversed view.
func (e *expander) ciphers(vi int, ch *chain, s string) {
	var found [2][26][]span
	var order []cipher
	allow := allowed{reversed: ch.may(Reversed), shift: ch.may(ROT13)}
	detectCiphers(s, e.spans, allow, &e.pairs, func(c cipher, start, end int) {
		if c.reversed {
			c.shift = 0
		}
		f := &found[b2u8(c.reversed)][c.shift]
		if *f == nil {
			order = append(order, c)
		}
		*f = append(*f, span{start, end})
	})
	for _, c := range order {
		if e.halted() {
			return
		}
		e.offerCipher(vi, s, c, found[b2u8(c.reversed)][c.shift])
	}
}

// cipherEncoding is the Encoding that c undoes: the reversal, or the
// shift by the places c shifts back.
func cipherEncoding(c cipher) Encoding {
	if c.reversed {
		return Reversed
	}
	return CaesarShift((26 - int(c.shift)) % 26)
}

// offerCipher offers view s read under c: the places of s it was found
// at, with their context, or all of s when they are most of it.
func (e *expander) offerCipher(vi int, s string, c cipher, places []span) {
	enc := cipherEncoding(c)
	e.patches.spans = e.patches.spans[:0]
	for _, st := range places {
		e.patches.mark(st.start, st.end)
	}
	// The places are found in the view as it is, and only they are read
	// under the cipher: a reversal or a shift keeps every character where
	// its mirror or itself was.
	ws, local := localWindows(e, s)
	if !local {
		e.offer(cand{n: len(s), view: vi, enc: enc}, applyCipher(e.buf[:0], s, c))
		return
	}
	out, n := e.buf[:0], 0
	for i := range ws {
		w := ws[i]
		if c.reversed {
			w = ws[len(ws)-1-i]
		}
		if i > 0 {
			out = append(out, '\n')
		}
		out = applyCipher(out, s[w.start:w.end], c)
		n += w.end - w.start
	}
	e.offer(cand{n: n, view: vi, start: ws[0].start, enc: enc}, out)
}

// rewrite offers out, a rewrite of view s: all of it, or, when it changed
// only a few places of a long view, those places (see localWindows). It
// is ordered by the length of what it offers: a rewrite of a few bytes of
// a long view is not the likely payload that a long run is.
func (e *expander) rewrite(vi int, enc Encoding, s string, out []byte) {
	if string(out) == s {
		e.buf = out[:0]
		return // unchanged
	}
	ws, local := localWindows(e, out)
	if !local {
		e.offer(cand{n: len(out), view: vi, enc: enc}, out)
		return
	}
	text, n := e.local[:0], 0
	for i, w := range ws {
		if i > 0 {
			text = append(text, '\n')
		}
		text = append(text, out[w.start:w.end]...)
		n += w.end - w.start
	}
	// offer keeps the buffer it is given for reuse; this one stays the
	// rewrite's.
	e.local = out[:0]
	e.offer(cand{n: n, view: vi, start: ws[0].start, enc: enc}, text)
}

// patchContext is how much unchanged text a local view keeps on each
// side of a change: at least this many bytes, and at least contextAlnum
// letters and digits, so that a token holding the change (at most
// maxToken bytes) and the normalised bytes of any print across it are in
// the view however much punctuation surrounds it.
const (
	patchContext = maxToken
	contextAlnum = 2 * (K + W)
)

// patches records where a rewrite changed its output, as spans of the
// buffer it appends to, in order. A rewrite that marks nothing changed
// all of it.
type patches struct{ spans []span }

// mark records that out[start:end] was rewritten.
func (p *patches) mark(start, end int) {
	if n := len(p.spans); n > 0 && start <= p.spans[n-1].end+2*patchContext {
		p.spans[n-1].end = max(p.spans[n-1].end, end)
		return
	}
	p.spans = append(p.spans, span{start, end})
}

// localWindows returns the places of text that e.patches marks, with
// their context, when together they are less than half of it: a local
// view is those places, a line each. Each place is widened to whole runes
// and to the whole run of base64, base32 or hex characters it touches,
// so that a payload decoded from it is decoded whole. What a local view
// leaves out is text the view already had, fingerprinted there.
func localWindows[T ~string | ~[]byte](e *expander, text T) ([]span, bool) {
	spans := e.patches.spans
	if len(spans) == 0 {
		return nil, false
	}
	ws := e.windows[:0]
	total := 0
	for _, sp := range spans {
		a, b := widen(text, sp.start, -1), widen(text, sp.end, +1)
		if n := len(ws); n > 0 && a <= ws[n-1].end {
			total += max(b, ws[n-1].end) - ws[n-1].end
			ws[n-1].end = max(ws[n-1].end, b)
		} else {
			ws = append(ws, span{a, b})
			total += b - a + 1
		}
		if 2*total >= len(text) {
			e.windows = ws
			return nil, false
		}
	}
	e.windows = ws
	return ws, true
}

// widen moves i away from a change (dir −1 for its start, +1 for its
// end) by the context, then to the end of the run of alphabet characters
// it is in, then to a rune boundary.
func widen[T ~string | ~[]byte](out T, i, dir int) int {
	n, alnum := 0, 0
	for (n < patchContext || alnum < contextAlnum) && (dir < 0 && i > 0 || dir > 0 && i < len(out)) {
		var c byte
		if dir < 0 {
			i--
			c = out[i]
		} else {
			c = out[i]
			i++
		}
		n++
		if isAlnum(c) || c >= utf8.RuneSelf {
			alnum++
		}
	}
	if dir < 0 {
		for i > 0 && unionMask[out[i-1]] != 0 {
			i--
		}
		for i > 0 && !utf8.RuneStart(out[i]) {
			i--
		}
		return i
	}
	for i < len(out) && unionMask[out[i]] != 0 {
		i++
	}
	for i < len(out) && !utf8.RuneStart(out[i]) {
		i++
	}
	return i
}

// isASCII reports whether s is all ASCII, eight bytes at a time.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if (uint64(s[i])|uint64(s[i+1])|uint64(s[i+2])|uint64(s[i+3])|
			uint64(s[i+4])|uint64(s[i+5])|uint64(s[i+6])|uint64(s[i+7]))&0x80 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
