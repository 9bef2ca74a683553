package engine

import (
	"hash/maphash"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
)

// Steering evidence. The trifecta and integrity rules say that untrusted
// text may be steering a sink call; they cannot see the user's request, so
// on their own they ask about every sink call after untrusted content. A
// call untrusted text steered carries something that text chose: a
// recipient, URL or account it names, a passage of it, or a short value —
// a password, a file id, a hotel's name — every word of which it
// contains, or a longer value made of its sentences, every pair of
// adjacent words of which it has side by side (an event title it
// dictated). A call carrying none of that was shaped by the user or
// trusted data, and asking a person about it only trains them to click
// "allow". A time, date, amount or id it names counts too, whatever the
// length of the argument. So when those rules would ask (escalate), they
// ask only about a call with such evidence (see steered); a preset that blocks still blocks.
//
// Untrusted results keep the keyed digests of their distinct words among
// their identifiers, under a prefix no identifier kind uses, so a word
// never attributes an argument as an identifier does (tainted_args).

// maxShortWords is the most words a value may have to count as chosen
// from untrusted content when every one of them occurs there. A longer
// value is text the agent wrote; it counts only by the identifiers or
// passages of untrusted text it carries.
const maxShortWords = 4

// evidenceVersion is the steering evidence DigestCall records: 1 held the
// words of short values and number-like tokens, 2 adds the word pairs of
// longer ones.
const evidenceVersion = 2

// maxQuoteWords is the most words a value may have to be checked as a
// quote, pair by pair (see valueWords). A longer one that came from
// untrusted text is a passage of it, which its fingerprints find.
const maxQuoteWords = 64

// maxObservedWords bounds the distinct words, pairs and numbers one
// observation keeps. Past it the observation holds the overflow digest
// instead of the rest, and a call in its session counts as steered: a
// bound never lets a call through unasked (DESIGN rule 1).
const maxObservedWords = 1 << 16

// The kinds of Word hash steering evidence uses: a word and a number-like
// token (see eachNumber). A time, date, amount or id the untrusted text
// named ("09:00", "2024-05-01", "12.50", "13") is a value it chose,
// however long the argument holding it.
const (
	kindWord   = 'w'
	kindNumber = 'n'
)

func numberDigest(h *fingerprint.Hasher, n string) uint64 { return h.Word(kindNumber, n) }

// pairDigest is the digest of two adjacent words from theirs: keyed as
// they are, and a different value for b a than for a b.
func pairDigest(a, b uint64) uint64 {
	x := a ^ bits.RotateLeft64(b, 29) ^ 0x9e3779b97f4a7c15
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return x
}

// eachNumber calls fn with every number-like token of text of at least
// two bytes, without the punctuation at its ends.
func eachNumber(text string, fn func(n string)) {
	start, digits := -1, 0
	flush := func(end int) {
		if start >= 0 && digits > 0 {
			n := strings.Trim(text[start:end], ":.,/-")
			if len(n) >= 2 {
				fn(n)
			}
		}
		start, digits = -1, 0
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == ':' || c == '.' || c == ',' || c == '/' || c == '-':
		default:
			flush(i)
			continue
		}
		if start < 0 {
			// a token starts at a digit, or at a letter-less boundary
			if c < '0' || c > '9' {
				continue
			}
			if i > 0 && isWordByte(text[i-1]) {
				// digits inside a word ("user2", "v1") are part of it
				for i < len(text) && isWordByte(text[i]) {
					i++
				}
				i--
				continue
			}
			start = i
		}
	}
	flush(len(text))
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c >= utf8.RuneSelf
}

func wordDigest(h *fingerprint.Hasher, w string) uint64 { return h.Word(kindWord, w) }

// wordOverflow is the digest no word has: a word hash has one part.
func wordOverflow(h *fingerprint.Hasher) uint64 { return h.Word(kindWord) }

// eachWord calls fn with every run of letters and digits in text, lower
// case, in order.
func eachWord(text string, fn func(w string)) {
	eachRawWord(text, func(w string, upper bool) {
		if upper {
			w = strings.ToLower(w)
		}
		fn(w)
	})
}

// eachRawWord calls fn with every run of letters and digits in text as
// it is written, a slice of text, and whether it has letters that are not
// lower case.
func eachRawWord(text string, fn func(w string, upper bool)) {
	start := -1
	upper := false
	flush := func(end int) {
		if start < 0 {
			return
		}
		fn(text[start:end], upper)
		start, upper = -1, false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				upper = true
			default:
				flush(i)
				i++
				continue
			}
			if start < 0 {
				start = i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			upper = upper || !unicode.IsLower(r)
		} else {
			flush(i)
		}
		i += n
	}
	flush(len(text))
}

// wordCache remembers the digests of the words of one text as written:
// a page uses a few hundred words again and again, and hashing one (and
// lowercasing it, when it is capitalised) costs more than looking it up.
// It is direct-mapped: a word whose slot another took is hashed again.
// recent holds the last digest appended in each of its slots (see
// observedWords).
type wordCache struct {
	words  [wordCacheSlots]string
	sums   [wordCacheSlots]uint64
	recent [1 << 12]uint64
}

const wordCacheSlots = 1 << 11

// wordSlotSeed places words in a wordCache; it keys nothing that leaves
// the process.
var wordSlotSeed = maphash.MakeSeed()

func (wc *wordCache) digest(h *fingerprint.Hasher, w string, upper bool) uint64 {
	k := maphash.String(wordSlotSeed, w) % wordCacheSlots
	if wc.words[k] == w {
		return wc.sums[k]
	}
	lw := w
	if upper {
		lw = strings.ToLower(w)
	}
	d := wordDigest(h, lw)
	wc.words[k], wc.sums[k] = w, d
	return d
}

// observedWords are the digests of the distinct words, pairs of adjacent
// words and number-like tokens of an untrusted result's text, at most
// maxObservedWords of them, then the overflow digest if there were more.
func observedWords(h *fingerprint.Hasher, text string) []uint64 {
	// Every occurrence is appended and the list sorted by radix (see
	// fingerprint.SortUnique): cheaper than a set, whose inserts cost more
	// than the hashing. The list is deduplicated whenever it reaches
	// observeChunk, so a long page holds at most that many digests at
	// once, and once it holds more than maxObservedWords distinct ones the
	// rest is not hashed: the overflow digest stands for it. A digest
	// equal to the last one appended in its slot of wc.recent is a repeat
	// and is not appended at all: most of a long page's words are.
	const observeChunk = 4 * maxObservedWords
	out := make([]uint64, 0, min(len(text)/4, observeChunk))
	var wc *wordCache // for a text long enough to repeat itself (from 8 KB, measured: at 4 KB it costs what it saves)
	if len(text) >= 8<<10 {
		wc = new(wordCache)
	}
	over := false
	add := func(d uint64) {
		if over {
			return
		}
		if wc != nil {
			if r := &wc.recent[d%uint64(len(wc.recent))]; *r == d && d != 0 {
				return
			} else {
				*r = d
			}
		}
		out = append(out, d)
		if len(out) == observeChunk {
			out = fingerprint.SortUnique(out)
			over = len(out) > maxObservedWords
		}
	}
	var prev uint64
	first := true
	eachRawWord(text, func(w string, upper bool) {
		if over {
			return
		}
		var d uint64
		switch {
		case wc != nil:
			d = wc.digest(h, w, upper)
		case upper:
			d = wordDigest(h, strings.ToLower(w))
		default:
			d = wordDigest(h, w)
		}
		add(d)
		if !first {
			add(pairDigest(prev, d))
		}
		prev, first = d, false
	})
	eachNumber(text, func(n string) {
		if !over {
			add(numberDigest(h, n))
		}
	})
	out = fingerprint.SortUnique(out)
	if len(out) > maxObservedWords {
		// which ones are kept matters not: the overflow digest makes
		// every call of the session count as steered
		return append(out[:maxObservedWords], wordOverflow(h))
	}
	return out
}

// valueNumbers are the digests of a value's number-like tokens.
func valueNumbers(h *fingerprint.Hasher, v string) Hashes {
	var out Hashes
	eachNumber(v, func(n string) { out = append(out, numberDigest(h, n)) })
	return out
}

// valueWords is the evidence of a value's words: the digests of its words
// when it has 1 to maxShortWords of them, of its pairs of adjacent words
// when it has up to maxQuoteWords, else nil. Untrusted text chose the
// value when it has every one of them (see steered).
func valueWords(h *fingerprint.Hasher, v string) Hashes {
	var ws Hashes
	n := 0
	eachWord(v, func(w string) {
		if n++; n <= maxQuoteWords {
			ws = append(ws, wordDigest(h, w))
		}
	})
	switch {
	case n == 0 || n > maxQuoteWords:
		return nil
	case n <= maxShortWords:
		return ws
	}
	for i := range len(ws) - 1 {
		ws[i] = pairDigest(ws[i], ws[i+1])
	}
	return ws[:len(ws)-1]
}

// A call that runs code or a command is its own action: the agent writes
// the command, so untrusted text steering it leaves no copied value to
// find ("clean up with find / -delete"), and a command can do anything,
// `weir approve ID` included. Such a call always counts as steered.
var (
	runToolWords = words("exec execute run shell bash terminal command cmd eval script kubectl ssh powershell sh")
	codeArgWords = words("command commands cmd cmdline script scripts code shell bash sh zsh powershell program exec execute eval javascript js python")
)

// runsCode reports whether a tool named as running something, or an
// argument named as code or a command, makes the call one that runs code.
func runsCode(tool string, dg *ArgDigest) bool {
	for _, w := range splitName(tool) {
		if runToolWords[w] {
			return true
		}
	}
	for _, v := range dg.Views {
		for _, seg := range strings.FieldsFunc(v.Path, func(r rune) bool { return r == '.' || r == '[' || r == ']' || r == '$' }) {
			for _, w := range splitName(seg) {
				if codeArgWords[w] {
					return true
				}
			}
		}
	}
	return false
}

// steered reports whether a sink call's arguments carry something the
// session's counted untrusted sources could have chosen (see the top of
// this file). Whatever Weir cannot examine counts as steered: a digest
// made without words (an older recording), arguments the decoder gave up
// on, and untrusted sources whose words were evicted, pruned or cut at
// maxObservedWords. A call that runs code always counts (see runsCode).
func steered(s *flow.Session, j *judgement, m *attribution, tool string, dg *ArgDigest, overflow uint64) bool {
	untrusted := func(i int32) bool {
		return j.counted(i) && s.Sources[i].Labels.Has(flow.Untrusted)
	}
	if dg == nil || dg.Evidence < evidenceVersion || m.undecoded != "" || runsCode(tool, dg) {
		return true
	}
	for k, v := range j.of {
		if v.counted && k.Labels.Has(flow.Untrusted) && k.Labels.Any(flow.Evicted|flow.Pruned|flow.Unloaded) {
			return true
		}
	}
	scratch := s.IdentSources(nil, overflow)
	for _, i := range scratch {
		if untrusted(i) {
			return true
		}
	}
	for _, srcs := range m.provenance {
		for _, i := range srcs {
			if untrusted(i) {
				return true
			}
		}
	}
	for _, v := range dg.Views {
		for _, n := range v.Numbers {
			scratch = s.IdentSources(scratch[:0], n)
			for _, i := range scratch {
				if untrusted(i) {
					return true
				}
			}
		}
		if len(v.Words) == 0 {
			continue
		}
		all := true
		for _, w := range v.Words {
			found := false
			scratch = s.IdentSources(scratch[:0], uint64(w))
			for _, i := range scratch {
				if untrusted(i) {
					found = true
					break
				}
			}
			if !found {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}
