package detect

import (
	"encoding/binary"
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A view is the normalised form of one field's text that the phrase, markup
// and path detectors match against, with a map from every normalised byte
// back to the source bytes it came from, so findings carry spans of the
// original text.
//
// Normalisation lowercases; folds accents off Latin letters, full-width
// forms and mathematical alphanumerics to ASCII; folds Cyrillic and Greek
// look-alikes to Latin inside words that mix them with Latin letters (so
// "іgnоre" with Cyrillic і and о reads "ignore", while Russian words stay
// Russian); drops invisible characters (zero-width, bidi controls, tag
// characters, variation selectors, soft hyphens) and combining marks;
// collapses runs of white space to one space, or one newline (two for a
// blank line); and turns control characters into spaces.
type view struct {
	src  string
	norm []byte
	segs []seg // the map from norm to src, in order of norm
	toks []token
	// marks lists, for each of the normalised-text detectors that start at
	// certain bytes (markup, paths, commands: see markKinds), where norm
	// holds one, in order: they find their next candidate there
	// (markCursor) instead of each reading all of norm
	marks [3][]int32
	dense uint8 // bit k: list k was given up (see tokenizer.mark)
	// what the normaliser saw, so that the detectors of the source text
	// that would find nothing are not run at all: a control character
	// other than tab and newline (ANSI escapes, overwrites); a character
	// the invisible-text and homoglyph detectors look at (invisible
	// characters, marks, Greek, Cyrillic and Armenian letters)
	controls, specials bool
	// ids is the set of lexicon ids the tokens hold, as a bitset
	ids []uint64
	// hits is matchPhrases' buffer
	hits []phraseHit

	dests, lines []int32 // see hasDestination; nil until first needed
}

// seg maps the normalised bytes from norm up to the next segment to the
// source. A linear segment maps byte for byte (norm+k ↔ src+k); an atomic
// one maps all its bytes to the whole source span [src, srcEnd) (a folded
// letter, a collapsed run of white space).
type seg struct {
	norm, src, srcEnd int32 // srcEnd < 0: linear
}

// token is one word of the normalised text (or one CJK character).
type token struct {
	start, end int32 // byte span in view.norm
	sentEnd    int32 // index of the last token of this token's sentence
	flags      uint8
	nid        uint8
	ids        [4]int16 // lexicon entries this token matches (see lexicon.go)
}

const (
	tokSentStart   uint8 = 1 << iota // first token of a sentence
	tokColonAfter                    // a ':' follows before the next token
	tokQuoteBefore                   // a quote mark precedes it
	tokQuoteAfter                    // a quote mark follows it
	tokBreakAfter                    // a sentence ends after it
	tokInIdent                       // part of a URL, e-mail address, path or identifier
	tokLineStart                     // first token of a line
)

// latinFold maps precomposed Latin letters (U+00C0–U+024F) to their base
// letters, lowercased; "" means no folding.
var latinFold = func() (t [0x250 - 0xC0]string) {
	for _, p := range [][2]string{
		{"ÀÁÂÃÄÅàáâãäåĀāĂăĄąǍǎǺǻȀȁȂȃȦȧ", "a"}, {"ÆæǼǽ", "ae"},
		{"ÇçĆćĈĉĊċČč", "c"}, {"ĎďĐđÐð", "d"},
		{"ÈÉÊËèéêëĒēĔĕĖėĘęĚěȄȅȆȇȨȩ", "e"}, {"ĜĝĞğĠġĢģǦǧ", "g"},
		{"ĤĥĦħȞȟ", "h"}, {"ÌÍÎÏìíîïĨĩĪīĬĭĮįİıǏǐȈȉȊȋ", "i"}, {"Ĳĳ", "ij"},
		{"Ĵĵǰ", "j"}, {"Ķķĸ", "k"}, {"ĹĺĻļĽľĿŀŁł", "l"},
		{"ÑñŃńŅņŇňŉŊŋ", "n"}, {"ÒÓÔÕÖØòóôõöøŌōŎŏŐőǑǒǾǿȌȍȎȏȪȫȬȭȮȯȰȱ", "o"}, {"Œœ", "oe"},
		{"ŔŕŖŗŘřȐȑȒȓ", "r"}, {"ŚśŜŝŞşŠšſȘș", "s"}, {"ß", "ss"},
		{"ŢţŤťŦŧȚț", "t"}, {"ÙÚÛÜùúûüŨũŪūŬŭŮůŰűŲųǓǔǕǖǗǘǙǚǛǜȔȕȖȗ", "u"},
		{"Ŵŵ", "w"}, {"ÝýÿŶŷŸȲȳ", "y"}, {"ŹźŻżŽž", "z"}, {"Þþ", "th"},
	} {
		for _, r := range p[0] {
			t[r-0xC0] = p[1]
		}
	}
	return t
}()

// confusable maps Cyrillic and Greek letters (already lowercased) that look
// like Latin letters to the Latin letter they imitate.
var confusable = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p',
	'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd',
	'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'ɡ': 'g', 'ո': 'n', 'օ': 'o', 'ս': 'u',
	// Greek
	'α': 'a', 'β': 'b', 'γ': 'y', 'ε': 'e', 'ζ': 'z', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v',
	'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w', 'ϲ': 'c', 'ϳ': 'j',
}

// confTable maps every letter of U+0370–U+058F (either case) that looks like
// a Latin letter to that letter: confusable, as an array.
var confTable = func() (t [0x590 - 0x370]byte) {
	for r := rune(0x370); r < 0x590; r++ {
		if c, ok := confusable[unicode.ToLower(r)]; ok {
			t[r-0x370] = c
		}
	}
	return t
}()

// confusableOf returns the Latin letter r looks like, or 0.
func confusableOf(r rune) byte {
	if r >= 0x370 && r < 0x590 {
		return confTable[r-0x370]
	}
	if r == 0x0261 {
		return 'g'
	}
	return 0
}

// isConfusableScript reports letters of the scripts homoglyph attacks borrow
// from.
func isConfusableScript(r rune) bool {
	return (r >= 0x0370 && r <= 0x03FF) || (r >= 0x0400 && r <= 0x052F) || (r >= 0x0530 && r <= 0x058F) || r == 0x0261
}

func isLatinLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	if r < 0x250 {
		return r >= 0xC0 && r != 0xD7 && r != 0xF7
	}
	if r < 0x1E00 {
		return false
	}
	return unicode.Is(unicode.Latin, r)
}

// fastLetter reports the letters of the Latin-1, Latin Extended, Greek and
// Cyrillic blocks without a table lookup: none is a mark, a space or a
// control.
func fastLetter(r rune) bool {
	switch {
	case r >= 0xC0 && r < 0x250:
		return r != 0xD7 && r != 0xF7
	case r >= 0x386 && r < 0x3FC:
		return r != 0x387
	case r >= 0x400 && r < 0x482, r >= 0x48A && r < 0x530:
		return true
	}
	return false
}

// isWordRune reports runes that continue a word for the purposes of
// deciding whether a word mixes scripts.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
	}
	if fastLetter(r) {
		return true
	}
	if r < runePropsLen {
		return runeProps[r]&rpWord != 0
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || isIgnorable(r)
}

// mixedWord reports whether the word starting at s[i] mixes Latin letters
// with Cyrillic, Greek or Armenian look-alikes, and returns its end.
func mixedWord(s string, i int) (mixed bool, end int) {
	latin, other := false, false
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			break
		}
		if isLatinLetter(r) {
			latin = true
		} else if confusableOf(r) != 0 {
			other = true
		}
		i += size
	}
	return latin && other, i
}

// foldRune appends the normalised form of one non-ASCII rune to dst.
// mixed says the rune sits in a word that mixes Latin with look-alikes.
func foldRune(dst []byte, r rune, mixed bool) []byte {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
		c := byte(r - 0xFEE0)
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return append(dst, c)
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters
		i := (r - 0x1D400) % 52
		if i < 26 {
			return append(dst, byte('a'+i))
		}
		return append(dst, byte('a'+i-26))
	case r >= 0x1D7CE && r <= 0x1D7FF:
		return append(dst, byte('0'+(r-0x1D7CE)%10))
	case r >= 0xC0 && r < 0x250:
		if f := latinFold[r-0xC0]; f != "" {
			return append(dst, f...)
		}
	}
	switch r {
	case 0x2018, 0x2019, 0x201A, 0x201B, 0x2032, 0xFF07:
		return append(dst, '\'')
	case 0x201C, 0x201D, 0x201E, 0x201F, 0x00AB, 0x00BB, 0x2033, 0x300C, 0x300D, 0x300E, 0x300F:
		return append(dst, '"')
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212:
		return append(dst, '-')
	case 0x2024, 0x2026:
		return append(dst, '.')
	case 0x0131:
		return append(dst, 'i')
	case 'й':
		return append(dst, "и"...)
	case 'ё', 'Ё':
		if !mixed {
			return append(dst, "е"...)
		}
	case 'ς':
		return append(dst, "σ"...)
	}
	if mixed {
		if c := confusableOf(r); c != 0 {
			return append(dst, c)
		}
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}

// asciiRun copies the run of printable ASCII at s[i:] into dst,
// lowercased, and returns its length: the bytes up to the first one that
// is not printable ASCII, a single space or newline between two printable
// bytes, or a blank line (two newlines) between two, all of which
// normalise to themselves. s[i] is printable and not a space.
func asciiRun(dst []byte, s string, i int) int {
	w, j := 0, i
	// where blocks may be tried (again): not in the first eight bytes (a
	// short run between controls, "\x1b]8;;\x1b]8;;…", would pay for a
	// failed try each), nor within eight bytes of a block that failed
	blocks := i + 8
	for j < len(s) && w < len(dst) {
		if j >= blocks && s[j] > ' ' && s[j] < 0x7F {
			k := lowerBlocks(dst[w:], s[j:])
			w += k
			j += k
			blocks = j + 8
		}
		if j >= len(s) || w >= len(dst) {
			break
		}
		c := s[j]
		if c <= ' ' || c >= 0x7F {
			if j == i || j+1 >= len(s) {
				break
			}
			if c == ' ' || c == '\n' {
				if d := s[j+1]; d > ' ' && d < 0x7F {
					dst[w] = c
					w++
					j++
					continue
				}
				if c == '\n' && s[j+1] == '\n' && j+2 < len(s) && w+1 < len(dst) {
					if d := s[j+2]; d > ' ' && d < 0x7F {
						dst[w], dst[w+1] = '\n', '\n'
						w += 2
						j += 2
						continue
					}
				}
			}
			break
		}
		dst[w] = asciiLower[c]
		w++
		j++
	}
	return w
}

// lowerBlocks copies src to dst lowercased, eight bytes at a time while
// they are printable and hold no two spaces in a row nor end in one, and
// returns how many bytes it copied. (The byte before them is never a
// space: the normaliser lets a space into a run of printable ASCII only
// before a printable byte, and a block never ends in one.)
func lowerBlocks(dst []byte, src string) int {
	k := 0
	for k+8 <= len(src) && k+8 <= len(dst) {
		b := src[k : k+8]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		sp := bytesEqual(x, ' ')
		if (x-0x2020202020202020)&^x&0x8080808080808080|(x+0x0101010101010101|x)&0x8080808080808080 != 0 ||
			sp&(sp>>8) != 0 || sp>>63 != 0 {
			break
		}
		binary.LittleEndian.PutUint64(dst[k:], asciiLower8(x))
		k += 8
	}
	return k
}

// bytesEqual returns, for the eight bytes of x, 0x80 in each byte equal to
// c and 0 in the others.
func bytesEqual(x uint64, c byte) uint64 {
	t := x ^ 0x0101010101010101*uint64(c)
	return ^((t&0x7F7F7F7F7F7F7F7F + 0x7F7F7F7F7F7F7F7F) | t) & 0x8080808080808080
}

// asciiLower8 lowercases the eight bytes of x, all of them below 0x7F.
func asciiLower8(x uint64) uint64 {
	geA := x + 0x0101010101010101*(0x80-'A') // high bit: byte >= 'A'
	gtZ := x + 0x0101010101010101*(0x80-'Z'-1)
	return x | (geA&^gtZ&0x8080808080808080)>>2
}

// asciiLower lowercases ASCII letters and keeps every other byte.
var asciiLower = func() (t [256]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] = byte(c + 'a' - 'A')
		}
	}
	return t
}()

// runeProps caches, for the runes below runePropsLen (Latin, Greek,
// Cyrillic, the other alphabets and the punctuation, currency and symbol
// blocks), the Unicode properties the normaliser asks about per rune.
const runePropsLen = 0x3000

const (
	rpWord          uint8 = 1 << iota // isWordRune
	rpSpace                           // unicode.IsSpace
	rpDrop                            // isDropped
	rpLetterOrDigit                   // unicode.IsLetter or unicode.IsDigit
)

var runeProps = func() *[runePropsLen]uint8 {
	t := new([runePropsLen]uint8)
	for r := rune(0); r < runePropsLen; r++ {
		var p uint8
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || isIgnorable(r) {
			p |= rpWord
		}
		if unicode.IsSpace(r) {
			p |= rpSpace
		}
		if isIgnorable(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
			p |= rpDrop
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			p |= rpLetterOrDigit
		}
		t[r] = p
	}
	return t
}()

// isDropped reports the runes the normaliser drops: invisible characters
// and combining marks.
func isDropped(r rune) bool {
	if r >= 0 && r < runePropsLen {
		return runeProps[r]&rpDrop != 0
	}
	return isIgnorable(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
}

func isLetterOrDigit(r rune) bool {
	if r >= 0 && r < runePropsLen {
		return runeProps[r]&rpLetterOrDigit != 0
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isSpaceRune reports white space, including the Unicode spaces.
func isSpaceRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
	}
	if r < runePropsLen {
		return runeProps[r]&rpSpace != 0
	}
	return unicode.IsSpace(r)
}

// viewPool holds views whose buffers newView reuses.
var viewPool = sync.Pool{New: func() any { return new(view) }}

// maxPooledView is the largest text whose view's buffers go back to the
// pool: a hostile megabyte should not pin megabytes of buffers.
const maxPooledView = 64 << 10

// release returns v's buffers to the pool. v must not be used after.
func (v *view) release() {
	if cap(v.norm) > maxPooledView+8 {
		return
	}
	*v = view{norm: v.norm[:0], segs: v.segs[:0], toks: v.toks[:0], ids: v.ids[:0], hits: v.hits[:0],
		marks: [3][]int32{v.marks[0][:0], v.marks[1][:0], v.marks[2][:0]}}
	viewPool.Put(v)
}

// newView normalises s, tokenises the normalised text and resolves every
// token against the lexicon, in one pass over s: the tokeniser follows the
// normaliser a few hundred bytes behind (feedChunk), reading what it wrote
// while it is still in the cache, and walks each token through the
// lexicon as its bytes arrive. The same pass notes what the detectors
// that come after would otherwise each read the whole text for: where
// markup, paths and commands can start (view.marks), whether the text has
// controls or invisible and look-alike characters at all, and the set of
// lexicon ids it holds. The view's buffers may come from an earlier view
// that was released.
func newView(s string) *view {
	v := viewPool.Get().(*view)
	v.src = s
	norm := v.norm[:0]
	if cap(norm) < len(s)+8 {
		norm = make([]byte, 0, len(s)+8)
	}
	segs := v.segs[:0]
	if cap(segs) < len(s)/64+4 {
		segs = make([]seg, 0, len(s)/64+4)
	}
	// the tokens' buffer grows when the first token that does not fit
	// begins, to room for the tokens of the text left (see grow), so a text that normalises to little (a megabyte of
	// zero-width characters) costs no buffer for tokens it will never have
	tz := tokenizer{toks: v.toks[:0], pending: tokSentStart, size: len(s),
		marks: [3][]int32{v.marks[0][:0], v.marks[1][:0], v.marks[2][:0]}}
	lin := false       // the last segment is linear
	linSrc := int32(0) // where the next byte continues it in src
	// emit records that norm grew from n0 by the bytes of src [a, b).
	emit := func(n0, a, b int) {
		if len(norm)-n0 == b-a {
			if !lin || linSrc != int32(a) {
				segs = appendSeg(segs, seg{int32(n0), int32(a), -1})
				lin = true
			}
			linSrc = int32(b)
			return
		}
		segs = appendSeg(segs, seg{int32(n0), int32(a), int32(b)})
		lin = false
	}
	pendingWS := -1 // source offset of a pending white-space run
	newlines := 0
	// look-alike folding applies to words that mix Latin letters with
	// Cyrillic or Greek ones; decided lazily, at the first look-alike of a
	// word, so plain text is scanned once
	wordLatin := false // the current word has a Latin letter so far
	mixedUntil := -1   // a look-ahead found the word mixed up to here
	scannedUntil := -1 // a look-ahead found it not mixed up to here
	controls, specials := false, false
	fedAt := 0 // where the source of the normalised text not yet fed starts
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7F {
				if c < ' ' && c != '\t' && c != '\n' || c == 0x7F {
					controls = true
				}
				wordLatin = false
				if pendingWS < 0 {
					pendingWS = i
				}
				if c == '\n' {
					newlines++
				}
				i++
				continue
			}
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case fastLetter(r):
			case isCJK(r):
				// no case, no marks, no look-alikes: copied as is
				wordLatin = false
			case r == utf8.RuneError && size == 1, isSpaceRune(r), isC0orC1(r):
				// invalid bytes and controls separate words like spaces
				if r <= 0x9F {
					controls = true // C1
				}
				if isIgnorable(r) {
					specials = true
				}
				wordLatin = false
				if pendingWS < 0 {
					pendingWS = i
				}
				if r == 0x2028 || r == 0x2029 || r == 0x85 {
					newlines++
				}
				i += size
				continue
			case isDropped(r):
				specials = true
				i += size
				continue
			}
		}
		mixed := false
		if size == 1 {
			switch {
			case ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
				wordLatin = true
			case '0' <= c && c <= '9':
			default:
				wordLatin = false
			}
		} else if isConfusableScript(r) {
			specials = true
			switch {
			case wordLatin || i < mixedUntil:
				mixed = true
			case i < scannedUntil:
			default:
				m, end := mixedWord(s, i)
				if m {
					mixedUntil = end
					mixed = true
				} else {
					scannedUntil = end
				}
			}
		} else if !isWordRune(r) {
			wordLatin = false
		} else if isLatinLetter(r) {
			wordLatin = true
		}
		if pendingWS >= 0 {
			if len(norm) > 0 {
				n0 := len(norm)
				switch {
				case newlines >= 2:
					norm = append(norm, '\n', '\n')
				case newlines == 1:
					norm = append(norm, '\n')
				default:
					norm = append(norm, ' ')
				}
				if i-pendingWS == len(norm)-n0 && (newlines == 0 || s[pendingWS] == '\n') {
					emit(n0, pendingWS, i)
				} else {
					segs = appendSeg(segs, seg{int32(n0), int32(pendingWS), int32(i)})
					lin = false
				}
			}
			pendingWS, newlines = -1, 0
		}
		if size == 1 {
			if !lin || linSrc != int32(i) {
				segs = appendSeg(segs, seg{int32(len(norm)), int32(i), -1})
				lin = true
			}
			// the rest of a run of printable ASCII in one go, lowercased;
			// a single space or newline between two printable bytes (or a
			// blank line: two newlines) normalises to itself, so the run
			// goes on over it
			if cap(norm)-len(norm) < len(s)-i {
				norm = append(norm[:cap(norm)], make([]byte, len(s)-i)...)[:len(norm)]
			}
			k := 1
			if i+1 < len(s) && (s[i+1] >= ' ' && s[i+1] < 0x7F || s[i+1] == '\n') {
				// at most asciiChunk bytes at a time, so that the
				// tokeniser reads them while they are in the cache
				k = asciiRun(norm[len(norm):min(cap(norm), len(norm)+asciiChunk)], s, i)
				norm = norm[:len(norm)+k]
			} else {
				// a run of one byte, before a control ("\x1b[\x1b[…")
				norm = append(norm, asciiLower[c])
			}
			j := i + k
			// a word goes on over digits: the run's last letter or other
			// byte after them decides whether the word has Latin letters
			for k := j - 1; k >= i; k-- {
				if c := s[k]; c < '0' || c > '9' {
					wordLatin = ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
					break
				}
			}
			linSrc = int32(j)
			i = j
			if len(norm)-tz.pos >= feedChunk {
				tz.left, fedAt = len(s)-fedAt, i
				tz.feed(norm)
			}
			continue
		}
		n0 := len(norm)
		if isCJK(r) {
			norm = append(norm, s[i:i+size]...)
		} else {
			norm = foldRune(norm, r, mixed)
		}
		emit(n0, i, i+size)
		i += size
		if len(norm)-tz.pos >= feedChunk {
			tz.left, fedAt = len(s)-fedAt, i
			tz.feed(norm)
		}
	}
	ids := v.ids[:0]
	if words := (len(lex.words) + 63) / 64; cap(ids) < words {
		ids = make([]uint64, words)
	} else {
		ids = ids[:words]
		clear(ids)
	}
	tz.ids = ids
	tz.left = len(s) - fedAt
	tz.finish(norm)
	v.norm, v.segs, v.toks, v.marks, v.dense, v.ids = norm, segs, tz.toks, tz.marks, tz.dense, ids
	v.controls, v.specials = controls, specials
	return v
}

// segAt returns the segment holding normalised offset n.
func (v *view) segAt(n int) *seg {
	lo, hi := 0, len(v.segs)
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if int(v.segs[m].norm) <= n {
			lo = m
		} else {
			hi = m
		}
	}
	return &v.segs[lo]
}

// srcStart is the source offset of the rune that produced norm[n].
func (v *view) srcStart(n int) int {
	g := v.segAt(n)
	if g.srcEnd < 0 {
		return int(g.src) + n - int(g.norm)
	}
	return int(g.src)
}

// srcEnd is the source end offset of the rune that produced norm[n].
func (v *view) srcEnd(n int) int {
	g := v.segAt(n)
	if g.srcEnd < 0 {
		e := int(g.src) + n - int(g.norm) + 1
		// extend to the end of a multi-byte rune copied byte for byte
		for e < len(v.src) && !utf8.RuneStart(v.src[e]) {
			e++
		}
		return e
	}
	return int(g.srcEnd)
}

// span maps a normalised byte span to the source byte span.
func (v *view) span(ns, ne int) (int, int) {
	if ns >= len(v.norm) || ne <= ns {
		return len(v.src), len(v.src)
	}
	return v.srcStart(ns), v.srcEnd(ne - 1)
}

// tokSpan maps tokens [a, b] (inclusive) to the source byte span.
func (v *view) tokSpan(a, b int) (int, int) {
	return v.span(int(v.toks[a].start), int(v.toks[b].end))
}

// feedChunk is how much normalised text newView writes before it has the
// tokeniser read it: enough that hostile text of one-byte runs ("\x1b[\x1b[…")
// does not pay a call per run, little enough that the bytes are still in
// the cache.
const feedChunk = 256

// asciiChunk is the most printable ASCII asciiRun copies in one call. A
// text of plain prose is one run from end to end: copied whole, the
// tokeniser would read a megabyte back after it had left the cache, and
// the tokens' buffer would grow with no idea yet of the text's density.
const asciiChunk = 4096

// tokenizer splits the normalised text into word tokens (runs of letters
// and digits) and single-character CJK tokens, records the punctuation
// between them as flags, and resolves each token against the lexicon as
// its bytes arrive. newView feeds it the normalised text every feedChunk
// bytes, and the rest at the end (finish).
//
// Two separators need the byte after them: '.', '!', '?' and ';' end a
// sentence only before a space, a newline or the end of the text, and a
// newline only before a blank line or a list, heading, quote or table
// line. When such a separator is the last byte written so far, its flags
// wait (in wait) for the next byte, or for finish.
type tokenizer struct {
	toks    []token    // the last one is being read when inWord
	marks   [3][]int32 // see view.marks
	dense   uint8      // see view.dense
	ids     []uint64   // see view.ids, filled by finish
	state   int32      // the lexicon state of the token being read, or lexDead
	pos     int        // norm[:pos] is tokenised
	pending uint8      // flags for the next token
	inWord  bool
	wait    byte // '.' or '\n': the separator at norm[pos-1] waits for the next byte
	left    int  // how much of the source text is left, from the stretch being fed on
	size    int  // the length of the source text
}

// feed tokenises norm[tz.pos:].
func (tz *tokenizer) feed(n []byte) {
	i := tz.pos
	if i < len(n) && tz.wait != 0 {
		tz.settle(n[i], false)
	}
	cells, pairs := lex.cells, lex.pairs
	for i < len(n) {
		c := n[i]
		switch tokClass[c] {
		case tcWord:
			if cells == nil {
				i = tz.word(n, i)
				continue
			}
			// The tokeniser's inner loop, a run of ASCII letters and
			// digits: a table lookup and a step of the double-array trie
			// per byte, the first two bytes of a token in one lookup of a
			// small table (no prefix entry is that short).
			s := tz.state
			if !tz.inWord {
				tz.begin(i)
				s = 0
				if i+1 < len(n) && tokClass[n[i+1]] == tcWord {
					s = pairs[pairIndex(c, n[i+1])]
					i += 2
				}
			}
			t := &tz.toks[len(tz.toks)-1]
			for ; i < len(n) && tokClass[n[i]] == tcWord; i++ {
				if s == lexDead {
					// no entry: the rest of the run only extends the token
					for i < len(n) && tokClass[n[i]] == tcWord {
						i++
					}
					break
				}
				x := int32(cells[s].base&cellBase) + int32(n[i])
				if cells[x].check != int16(s) {
					s = lexDead
					continue
				}
				s = x
				if cells[x].base&cellPref != 0 && t.nid < uint8(len(t.ids)) {
					t.ids[t.nid] = lex.pref[x]
					t.nid++
				}
			}
			t.end = int32(i)
			tz.state = s
			continue
		case tcPlain:
			// a separator that sets no flag
			if k := markKinds[c] &^ tz.dense; k != 0 {
				tz.mark(k, i)
			}
			tz.endWord()
			i++
			continue
		case tcFlag:
			if k := markKinds[c] &^ tz.dense; k != 0 {
				tz.mark(k, i)
			}
			// the flags of an ASCII separator, as separator and settle
			// would set them, without the calls
			var prev uint8
			switch c {
			case '.', '!', '?', ';':
				// a sentence ends before a space or a newline
				if i+1 == len(n) {
					tz.wait = '.'
				} else if d := n[i+1]; d == ' ' || d == '\n' {
					prev = tokBreakAfter
					tz.pending |= tokSentStart
				}
			case ':':
				prev = tokColonAfter
			case '"', '`':
				prev = tokQuoteAfter
				tz.pending |= tokQuoteBefore
			case '\'':
				if !tz.inWord {
					tz.pending |= tokQuoteBefore
				}
				prev = tokQuoteAfter
			case '\n':
				// and before a blank line or a list, heading, quote or
				// table line
				tz.pending |= tokLineStart
				if i+1 == len(n) {
					tz.wait = '\n'
				} else if d := n[i+1]; d == '\n' || d == '-' || d == '*' || d == '#' || d == '>' || d == '|' {
					prev = tokBreakAfter
					tz.pending |= tokSentStart
				}
			}
			if prev != 0 && len(tz.toks) > 0 {
				tz.toks[len(tz.toks)-1].flags |= prev
			}
			tz.endWord()
			i++
			continue
		}
		r, size := utf8.DecodeRune(n[i:])
		switch {
		case isCJK(r):
			tz.endWord()
			tz.bytes(n[i:i+size], i)
			tz.endWord()
		case isLetterOrDigit(r):
			tz.bytes(n[i:i+size], i)
		default:
			tz.separator(r)
		}
		i += size
	}
	tz.pos = i
}

// word reads the run of ASCII letters and digits at n[i:] into the token
// being read, starting one if there is none, and returns the offset after
// the run: feed's inner loop, for use during init, before the lexicon's
// double array is built.
func (tz *tokenizer) word(n []byte, i int) int {
	if !tz.inWord {
		tz.begin(i)
	}
	t := &tz.toks[len(tz.toks)-1]
	s := tz.state
	for ; i < len(n) && tokClass[n[i]] == tcWord; i++ {
		if s == lexDead {
			continue
		}
		if s = lex.next(s, n[i]); s != lexDead {
			pref, _ := lex.entries(s)
			t.addID(pref)
		}
	}
	t.end = int32(i)
	tz.state = s
	return i
}

// bytes reads the bytes of one non-ASCII letter, n[i:] as seen from the
// whole normalised text, into the token being read (starting one if there
// is none).
func (tz *tokenizer) bytes(b []byte, i int) {
	if !tz.inWord {
		tz.begin(i)
	}
	t := &tz.toks[len(tz.toks)-1]
	for _, c := range b {
		if tz.state == lexDead {
			break
		}
		if tz.state = lex.next(tz.state, c); tz.state != lexDead {
			pref, _ := lex.entries(tz.state)
			t.addID(pref)
		}
	}
	t.end = int32(i + len(b))
}

// begin starts a token at norm offset i. It is read in place, as the last
// token of toks.
func (tz *tokenizer) begin(i int) {
	if len(tz.toks) == cap(tz.toks) {
		tz.grow()
	}
	toks := tz.toks[:len(tz.toks)+1]
	// field by field: a token built elsewhere and copied in would be read
	// back with wide loads right after narrow stores, which stalls
	t := &toks[len(toks)-1]
	t.start, t.end, t.sentEnd = int32(i), int32(i), 0
	t.flags, t.nid = tz.pending, 0
	t.ids = [4]int16{}
	tz.toks = toks
	tz.pending = 0
	tz.inWord = true
	tz.state = 0
}

// grow makes room for the tokens of the rest of the text. Until 16 KB of
// the source is read it doubles the buffer; after that it makes room for
// as many tokens as the text left holds at the density seen so far, plus
// an eighth. (A fixed guess of one token per six bytes fell short on
// ordinary prose, which runs nearer one per five, and cost a second buffer
// twice the size of the first and a copy into it.) It grows by half at
// least, so that text that turns denser as it goes is copied a bounded
// number of times over; a text that normalises to little (a megabyte of
// zero-width characters) costs no buffer for tokens it will never have.
// (Not inlined, so that begin is.)
//
//go:noinline
func (tz *tokenizer) grow() {
	est := len(tz.toks)
	if read := tz.size - tz.left; read >= 16<<10 {
		est = int(int64(tz.left) * int64(len(tz.toks)) / int64(read))
		est += est / 8
	}
	n := make([]token, len(tz.toks), len(tz.toks)+max(len(tz.toks)/2, est)+16)
	copy(n, tz.toks)
	tz.toks = n
}

func (t *token) addID(id int16) {
	if id >= 0 && t.nid < uint8(len(t.ids)) {
		t.ids[t.nid] = id
		t.nid++
	}
}

// endWord ends the token being read, if any: its exact entry comes after
// its prefix entries.
func (tz *tokenizer) endWord() {
	if !tz.inWord {
		return
	}
	if tz.state != lexDead {
		_, exact := lex.entries(tz.state)
		tz.toks[len(tz.toks)-1].addID(exact)
	}
	tz.inWord = false
}

// separator records the flags of a separator rune r for the token before
// it and the token after it.
func (tz *tokenizer) separator(r rune) {
	var prev uint8
	switch r {
	case ':', '：':
		prev = tokColonAfter
	case '"', '`':
		prev = tokQuoteAfter
		tz.pending |= tokQuoteBefore
	case '\'':
		if !tz.inWord {
			tz.pending |= tokQuoteBefore
		}
		prev = tokQuoteAfter
	case '.', '!', '?', ';':
		tz.wait = '.'
	case '。', '！', '？', '；':
		prev = tokBreakAfter
		tz.pending |= tokSentStart
	case '\n':
		tz.pending |= tokLineStart
		tz.wait = '\n'
	}
	// the token before: the one being read, or the last one read
	if prev != 0 && len(tz.toks) > 0 {
		tz.toks[len(tz.toks)-1].flags |= prev
	}
	tz.endWord()
}

// settle decides the flags of a waiting separator now that the byte after
// it, next, is known (end: there is none).
func (tz *tokenizer) settle(next byte, end bool) {
	brk := false
	switch tz.wait {
	case '.':
		brk = end || next == ' ' || next == '\n'
	case '\n':
		brk = !end && (next == '\n' || next == '-' || next == '*' || next == '#' || next == '>' || next == '|')
	}
	tz.wait = 0
	if brk {
		if len(tz.toks) > 0 {
			tz.toks[len(tz.toks)-1].flags |= tokBreakAfter
		}
		tz.pending |= tokSentStart
	}
}

// finish tokenises the rest of n, the whole normalised text, and sets the
// flags that depend on the tokens around each token.
func (tz *tokenizer) finish(n []byte) {
	tz.feed(n)
	if tz.wait != 0 {
		tz.settle(0, true)
	}
	tz.endWord()
	toks := tz.toks
	// one pass from the end: flags that depend on the bytes around a token
	// and on the next token, then sentence ends
	const label = tokLineStart | tokColonAfter
	last := int32(len(toks) - 1)
	for k := len(toks) - 1; k >= 0; k-- {
		t := &toks[k]
		// tokens glued to '.', '@', '/', '_' or '-' on either side are
		// pieces of URLs, addresses, paths and identifiers ("e.g." and
		// "i.e." are not)
		if t.end-t.start >= 2 && (t.start > 0 && isGlue(n[t.start-1]) && (t.start < 2 || n[t.start-2] != ' ') || int(t.end) < len(n) && isGlue(n[t.end]) && int(t.end)+1 < len(n) && n[t.end+1] != ' ' && n[t.end+1] != '\n') {
			t.flags |= tokInIdent
		}
		// a line that starts with a label ("Assistant:", "Subject:")
		// starts a sentence: chat logs and headers do not run on across
		// lines
		if k+1 < len(toks) && toks[k+1].flags&label == label {
			t.flags |= tokBreakAfter
		}
		if k > 0 && t.flags&label == label {
			t.flags |= tokSentStart
		}
		if t.flags&tokBreakAfter != 0 || k < len(toks)-1 && toks[k+1].flags&tokSentStart != 0 {
			last = int32(k)
		}
		t.sentEnd = last
		for j := uint8(0); j < t.nid; j++ {
			tz.ids[t.ids[j]>>6] |= 1 << (t.ids[j] & 63)
		}
	}
	tz.toks = toks
}

// tokenAt returns the index of the first token that ends after normalised
// offset off.
func (v *view) tokenAt(off int) int {
	lo, hi := 0, len(v.toks)
	for lo < hi {
		m := (lo + hi) / 2
		if int(v.toks[m].end) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func isGlue(c byte) bool { return glueByte[c] }

// markKinds says, for each byte, in which of view.marks the tokeniser
// lists it: bit k for list k, whose bytes are markStarts[k].
var markKinds = func() *[256]uint8 {
	var t [256]uint8
	for k, set := range markStarts {
		for c, in := range set {
			if in {
				if c >= utf8.RuneSelf || tokClass[c] == tcWord {
					panic("detect: a marked byte the tokeniser does not see as a separator")
				}
				t[c] |= 1 << k
			}
		}
	}
	return &t
}()

// The lists of view.marks, and the bytes each holds.
const (
	markMarkup = iota
	markPath
	markCommand
)

var markStarts = [3]*byteSet{markMarkup: markupStart, markPath: pathAnchors, markCommand: cmdLeads}

// mark lists norm offset i in the lists of kinds.
// A list that grows denser than one offset per 16 bytes is given up:
// on text made of marked bytes ("<<<<…", "~/.ssh/~/.ssh/…") reading the
// bytes themselves is cheaper than listing them, and its detector does.
func (tz *tokenizer) mark(kinds uint8, i int) {
	for k := range tz.marks {
		if kinds&(1<<k) != 0 {
			tz.marks[k] = appendMark(tz.marks[k], int32(i))
			if n := len(tz.marks[k]); n > 256 && n*16 > i {
				tz.dense |= 1 << k
				tz.marks[k] = tz.marks[k][:0]
			}
		}
	}
}

// appendMark appends i to a list of marks, doubling it when full: append
// grows a large slice by a quarter at a time, and on a megabyte of text
// the copies left behind came to twice the lists themselves.
func appendMark(m []int32, i int32) []int32 {
	if len(m) == cap(m) {
		n := make([]int32, len(m), 2*cap(m)+64)
		copy(n, m)
		m = n
	}
	return append(m, i)
}

// markCursor walks one of view.marks.
type markCursor struct {
	marks []int32
	dense bool // the list was given up
	k     int
}

// cursor returns a cursor over list k of v.marks.
func (v *view) cursor(k int) markCursor {
	return markCursor{marks: v.marks[k], dense: v.dense&(1<<k) != 0}
}

// fromList returns the first offset in the list at or after i, or len(n).
// A list that was given up (dense) is empty: its detector reads the bytes
// of markStarts instead.
func (c *markCursor) fromList(n []byte, i int) int {
	if c.k > 0 && int(c.marks[c.k-1]) >= i {
		// asked about an earlier offset than before
		c.k = sort.Search(len(c.marks), func(k int) bool { return int(c.marks[k]) >= i })
	}
	for c.k < len(c.marks) && int(c.marks[c.k]) < i {
		c.k++
	}
	if c.k == len(c.marks) {
		return len(n)
	}
	return int(c.marks[c.k])
}

var glueByte = newByteSet("./_-~@")

// tokClass classifies ASCII bytes for the tokeniser: letters and digits,
// separators that set token flags (handled one by one), and the others.
var tokClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = tcOther
		case ('a' <= c && c <= 'z') || ('0' <= c && c <= '9'):
			t[c] = tcWord
		case c == ':' || c == '"' || c == '`' || c == '\'' || c == '.' || c == '!' || c == '?' || c == ';' || c == '\n':
			t[c] = tcFlag
		default:
			t[c] = tcPlain
		}
	}
	return t
}()

const (
	tcPlain uint8 = iota // a separator that sets no flag
	tcWord               // a-z, 0-9
	tcFlag               // a separator that sets flags
	tcOther              // not ASCII
)

// appendSeg and appendTok grow by doubling: append grows large slices by a
// quarter at a time, which on hostile text (one segment or token every few
// bytes of a megabyte) copies the slice many times over.
func appendSeg(s []seg, g seg) []seg {
	if len(s) == cap(s) {
		n := make([]seg, len(s), 2*cap(s)+16)
		copy(n, s)
		s = n
	}
	return append(s, g)
}

func appendTok(s []token, t token) []token {
	if len(s) == cap(s) {
		n := make([]token, len(s), 2*cap(s)+16)
		copy(n, s)
		s = n
	}
	return append(s, t)
}
