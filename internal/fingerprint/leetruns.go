package fingerprint

import (
	"encoding/base32"
	"encoding/base64"
	"strings"
)

// Leetspeak of an encoded run (the model base64-encodes, then writes the
// result in leetspeak) replaces letters of the run with digits that are
// characters of the alphabet too: the run still decodes, to noise, or,
// for hex, to text with every a and e wrong. The run has lost the
// letters, but not what they were: each leet digit is itself or one of
// the few letters it stands for, in either case, and a group of an
// alphabet (four base64 characters, eight base32, two hex) decodes to
// whole bytes on its own. So a run of at least minLeetRun characters
// that has none of the letters leetspeak replaces, and at least
// minLeetDigits digits that may stand for them, is read group by group:
// of the readings of each group that decode to printable ASCII, the one
// that makes the likeliest English with its neighbours (letter and pair
// costs, englishLetter and englishPair, chosen by dynamic programming
// over the groups) is kept. The run so read is a view (Leet) when its
// head decodes to plain text, and the next depth decodes it. A guess
// that picks a wrong reading of a group costs a few bytes of the text,
// not the run.

// Leet run parameters.
const (
	minLeetRun    = 24
	minLeetDigits = 4
	// maxGroupReadings bounds the readings of one group that are kept:
	// the cheapest ones on their own, so that a group of four ones
	// (five readings each) costs a bounded amount.
	maxGroupReadings = 16
	// readAsLetterCost is what reading a digit of a short hex run as a
	// letter costs, in englishLetter's units. Hex of ASCII text is
	// mostly digits, and a short run with no a or e may be hex of text
	// as it is; hex of longer English text without an a or an e (an n,
	// a full stop) is leetspeak, and reads best as English.
	readAsLetterCost = 40
	longHexRun       = 96
)

// leetReplaced marks the letters every leetspeak writes as digits, in
// either case (some also write b, g, l and z, which leetOptions reads).
var leetReplaced = func() (t [256]bool) {
	for _, c := range "aeiost" {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

// leetAlphabets are the alphabets a leet run is read in, with the size
// of a group and of the bytes it decodes to.
var leetAlphabets = [...]struct {
	a     *alphabet
	chars int
}{
	{b64Alphabets[0], 4},
	{base32Alphabet, 8},
	{hexAlphabet, 2},
}

// repairLeetRun tries the union run s[start:end] as leetspeak of a run of
// each alphabet, and offers the readings whose head decodes to text.
func (e *expander) repairLeetRun(vi int, ch *chain, s string, start, end int) {
	run := s[start:end]
	if !ch.may(Leet) || len(run) < minLeetRun {
		return
	}
	digits := 0
	for i := 0; i < len(run); i++ {
		c := run[i]
		if leetReplaced[c] {
			return
		}
		if isDigit(c) && leetLetter[c] != 0 {
			digits++
		}
	}
	if digits < minLeetDigits {
		return
	}
	for _, la := range leetAlphabets {
		if e.halted() {
			return
		}
		out, ok := readLeetRun(e.buf[:0], run, la.a, la.chars)
		if !ok || string(out) == run || !e.headIsText(la.a, out[:min(len(out), headLen)]) {
			e.buf = out[:0]
			continue
		}
		e.offer(cand{n: len(run), view: vi, start: start, enc: Leet}, out)
	}
}

// A reading is one way to read a group: its characters, the bytes they
// decode to, and what it costs as English after the best path to it.
type reading struct {
	chars       [8]byte
	first, last byte
	own         int32 // cost of its bytes on their own
	total       int32 // of the best path of readings that ends with it
	back        int16 // index of the previous group's reading on that path
}

// readLeetRun appends to dst the likeliest reading of run as leetspeak
// of alphabet a, whose groups of chars characters decode to whole bytes
// (the last group may be short); it reports false when some group has no
// reading that decodes to printable ASCII.
func readLeetRun(dst []byte, run string, a *alphabet, chars int) ([]byte, bool) {
	body := strings.TrimRight(run, "=")
	groups := (len(body) + chars - 1) / chars
	if groups == 0 {
		return dst, false
	}
	var penalty int32
	if a == hexAlphabet && len(body) < longHexRun {
		penalty = readAsLetterCost
	}
	levels := make([][]reading, groups)
	for g := range groups {
		levels[g] = groupReadings(body[g*chars:min(len(body), (g+1)*chars)], a, penalty)
		if len(levels[g]) == 0 {
			return dst, false
		}
		for i := range levels[g] {
			r := &levels[g][i]
			r.total, r.back = r.own+byteCost(r.first), -1
			if g == 0 {
				continue
			}
			for j, p := range levels[g-1] {
				if t := p.total + r.own + textCost(p.last, r.first); r.back < 0 || t < r.total {
					r.total, r.back = t, int16(j)
				}
			}
		}
	}
	best := 0
	for i, r := range levels[groups-1] {
		if r.total < levels[groups-1][best].total {
			best = i
		}
	}
	start := len(dst)
	dst = append(dst, run...) // with its padding
	for g := groups - 1; g >= 0; g-- {
		r := levels[g][best]
		copy(dst[start+g*chars:start+min(len(body), (g+1)*chars)], r.chars[:])
		best = int(r.back)
	}
	return dst, true
}

// groupReadings returns the readings of one group, each leet digit read
// as itself or as a letter it stands for, that decode to printable ASCII
// in alphabet a, at most maxGroupReadings of the cheapest; a digit read
// as a letter costs penalty (see readAsLetterCost).
func groupReadings(group string, a *alphabet, penalty int32) []reading {
	var opts [8][]byte
	for i := 0; i < len(group); i++ {
		opts[i] = leetOptions(group[i], a)
	}
	var rs []reading
	var cur [8]byte
	var walk func(i int)
	walk = func(i int) {
		if i == len(group) {
			var buf [5]byte
			b := decodeGroup(buf[:0], cur[:len(group)], a)
			if len(b) == 0 {
				return
			}
			var cost int32
			for j, c := range b {
				if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c >= 0x7f {
					return
				}
				if j > 0 {
					cost += textCost(b[j-1], c)
				}
			}
			for j := range len(group) {
				if cur[j] != group[j] {
					cost += penalty
				}
			}
			r := reading{chars: cur, first: b[0], last: b[len(b)-1], own: cost}
			rs = append(rs, r)
			return
		}
		for _, c := range opts[i] {
			cur[i] = c
			walk(i + 1)
		}
	}
	walk(0)
	if len(rs) > maxGroupReadings {
		// The cheapest on their own: a partial selection sort is enough
		// for so few.
		for i := range maxGroupReadings {
			m := i
			for j := i + 1; j < len(rs); j++ {
				if rs[j].own < rs[m].own {
					m = j
				}
			}
			rs[i], rs[m] = rs[m], rs[i]
		}
		rs = rs[:maxGroupReadings]
	}
	return rs
}

// leetOptions returns what character c of a leet run may have been in
// alphabet a: itself if it is of the alphabet, and the letters it may
// stand for that are (in both cases for base64, upper case for base32,
// lower case for hex).
func leetOptions(c byte, a *alphabet) []byte {
	var o []byte
	if a.mask[c] != 0 {
		o = append(o, c)
	}
	if !isDigit(c) || leetLetter[c] == 0 {
		return o
	}
	letters := []byte{leetLetter[c]}
	if c == '1' {
		letters = append(letters, 'l')
	}
	for _, l := range letters {
		switch a {
		case hexAlphabet:
			if a.mask[l] != 0 {
				o = append(o, l)
			}
		case base32Alphabet:
			o = append(o, l-'a'+'A')
		default:
			o = append(o, l, l-'a'+'A')
		}
	}
	return o
}

// decodeGroup appends the bytes one group of alphabet a decodes to, a
// short last group included; nothing if it does not decode.
func decodeGroup(dst, group []byte, a *alphabet) []byte {
	var buf [5]byte
	var n int
	var err error
	switch a {
	case b64Alphabets[0]:
		n, err = base64.RawStdEncoding.Decode(buf[:], group)
	case base32Alphabet:
		n, err = rawBase32.Decode(buf[:], group)
	default:
		if len(group) == 2 && isHexDigit(group[0]) && isHexDigit(group[1]) {
			buf[0], n = unhex(group[0])<<4|unhex(group[1]), 1
		}
	}
	if err != nil {
		return dst
	}
	return append(dst, buf[:n]...)
}

var rawBase32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// byteCost is what a byte of ASCII costs as English text, in the units
// of englishLetter: letters by their frequency (capitals more), spaces
// little, digits and punctuation more, other symbols most.
func byteCost(c byte) int32 {
	switch {
	case isUpper(c):
		// Text is mostly lower case.
		return int32(englishLetter[lowerIndex(c)]) + 25
	case isLetter(c):
		return int32(englishLetter[lowerIndex(c)])
	case c == ' ' || c == '\n':
		return 25
	case isDigit(c):
		return 70
	case c == '.' || c == ',' || c == ';' || c == ':' || c == '\'' || c == '"' || c == '-' || c == '?' || c == '!':
		return 60
	}
	return 150
}

// textCost is what byte b costs after byte a: a letter after a letter
// by how often the pair occurs (half of englishPair, which is a pair's
// cost, to weigh as one letter does), with a change to upper case inside
// a word penalised; any other byte by byteCost.
func textCost(a, b byte) int32 {
	if !isLetter(a) || !isLetter(b) {
		return byteCost(b)
	}
	cost := int32(englishPair[lowerIndex(a)*26+lowerIndex(b)]) / 2
	if !isUpper(a) && isUpper(b) {
		cost += 60
	}
	return cost
}
