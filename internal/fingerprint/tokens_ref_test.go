package fingerprint

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// refTokens is Tokens read byte by byte: every maximal run between
// separators is a candidate, and every word start is tried as the first
// group of a card number or an IBAN. The jumping scans of Tokens and
// groupedTokens must report exactly what it reports, in the same order.
func refTokens(text string, fn func(string)) {
	for i := 0; i < len(text); {
		for i < len(text) && isTokenSep(text[i]) {
			i++
		}
		j := i
		for j < len(text) && !isTokenSep(text[j]) {
			j++
		}
		if j > i {
			candidate(text[i:j], fn)
		}
		i = j
	}
	refGrouped(text, fn)
}

// refGrouped is groupedTokens as first written, trying every word start.
func refGrouped(text string, fn func(string)) {
	const maxGroups = 9
	for i := 0; i < len(text); i++ {
		if !isAlnum(text[i]) || i > 0 && isAlnum(text[i-1]) {
			continue
		}
		// The first group decides what to look for: digits start a card
		// number, two letters and two digits an IBAN. Words of prose
		// start neither, so they cost this one test.
		first := i
		for first < len(text) && isAlnum(text[first]) {
			first++
		}
		card := allDigits(text[i:first]) && first-i >= 3 && first-i <= 6
		iban := first-i == 4 && isUpper(text[i]) && isUpper(text[i+1]) && isDigit(text[i+2]) && isDigit(text[i+3])
		if !card && !iban || first+1 >= len(text) || text[first] != ' ' && text[first] != '-' {
			continue
		}
		var buf [64]byte
		compact := append(buf[:0], text[i:first]...)
		var lens [maxGroups]int // compact length after each group
		lens[0] = len(compact)
		ng := 1
		for j := first + 1; ng < maxGroups && j < len(text); {
			k := j
			for k < len(text) && isAlnum(text[k]) {
				k++
			}
			g := text[j:k]
			if card && (len(g) < 3 || len(g) > 6 || !allDigits(g)) || iban && (len(g) < 1 || len(g) > 4 || !upperOrDigits(g)) {
				break
			}
			compact = append(compact, g...)
			lens[ng] = len(compact)
			ng++
			if k+1 >= len(text) || text[k] != ' ' && text[k] != '-' {
				break
			}
			j = k + 1
		}
		for g := ng - 1; g >= 1; g-- {
			c := compact[:lens[g]]
			if card && len(c) >= 13 && len(c) <= 19 && luhn(c) || iban && isIBAN(c) {
				fn(string(c))
				break
			}
		}
	}
}

func genTokenText(t *rapid.T) string {
	pieces := []string{" ", "-", "  ", "\n", ",", "=", ":", "&", "?", "'", "(", "4111", "1111", "5500", "0000", "0004",
		"GB29", "NWBK", "6016", "1331", "9268", "19", "DE89", "3704", "0044", "0532", "0130", "00",
		"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "the", "Word", "a", "b7", "xY9zQ", "é", "\xff", "123456789012", "https://x.example/?k=Zx9Qw2Er7Ty1"}
	var b strings.Builder
	for range rapid.IntRange(0, 40).Draw(t, "n") {
		b.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
	}
	return b.String()
}

// TestTokensMatchReference: on generated texts dense in card groups,
// IBAN groups, keys and separators, and on arbitrary strings, Tokens
// reports what the byte-by-byte reading reports.
func TestTokensMatchReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.OneOf(rapid.Custom(genTokenText), rapid.String()).Draw(t, "text")
		var got, want []string
		Tokens(text, func(s string) { got = append(got, s) })
		refTokens(text, func(s string) { want = append(want, s) })
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("Tokens(%q) = %q; byte by byte: %q", text, got, want)
		}
	})
}

// TestIndexDigitOrUpper: every byte value at every offset of a word, with
// every other byte value around it.
func TestIndexDigitOrUpper(t *testing.T) {
	naive := func(s string) int {
		for i := 0; i < len(s); i++ {
			if isDigit(s[i]) || isUpper(s[i]) {
				return i
			}
		}
		return -1
	}
	for c := range 256 {
		for _, fill := range []byte{'a', ' ', 0x80, 0xff, 0x00, '/', '@', '[', ':', '`', '{'} {
			for n := range 20 {
				for pos := range n + 1 {
					b := []byte(strings.Repeat(string(fill), n))
					if pos < n {
						b[pos] = byte(c)
					}
					s := string(b)
					if got, want := indexDigitOrUpper(s), naive(s); got != want {
						t.Fatalf("indexDigitOrUpper(%q) = %d, want %d", s, got, want)
					}
				}
			}
		}
	}
}
