package fingerprint

import (
	"fmt"
	"strings"
	"testing"
)

// TestTwoDeepRates measures how often the two-deep compositions that are
// undone by how English a text reads (a shift of leetspeak, found by its
// letter pairs; leetspeak of an encoding or of escapes, read back group
// by group) leave a view with two prints of the private text (as
// flow.min_matches asks in every preset), and holds each at 200
// characters to at least 90%, and the exact ones (a shift or reversal of
// escapes) to within 3 points of the text as it is at every length (a
// short text may not have two prints). Run with -v for the table the
// README quotes.
func TestTwoDeepRates(t *testing.T) {
	if testing.Short() {
		t.Skip("measures 3,600 expansions")
	}
	h := testHasher(t, 8)
	tests := []struct {
		name  string
		fn    func(string) string
		exact bool
	}{
		{"as it is (the most a composition can reach)", func(s string) string { return s }, true},
		{"caesar+3 of leet", func(s string) string { return caesar(leet(s), 3) }, false},
		{"leet of base64", func(s string) string { return leet(b64(s)) }, false},
		{"leet of base32", func(s string) string { return leet(b32(s)) }, false},
		{"leet of hex", func(s string) string { return leet(hexs(s)) }, false},
		{"leet of json escapes", func(s string) string { return leet(jsonEscapeAll(s)) }, false},
		{"rot13 of quoted-printable", func(s string) string { return caesar(quotedPrintableAll(s), 13) }, true},
		{"reversed percent-encoding", func(s string) string { return reverseRunes(percentAll(s)) }, true},
		{"caesar+5 of json escapes", func(s string) string { return caesar(jsonEscapeAll(s), 5) }, true},
	}
	const trials = 150
	lengths := []int{60, 100, 200}
	var table strings.Builder
	var base [3]float64 // the rates of the text as it is
	fmt.Fprintf(&table, "| composition | %d chars | %d chars | %d chars |\n|---|--:|--:|--:|\n", lengths[0], lengths[1], lengths[2])
	for _, tt := range tests {
		fmt.Fprintf(&table, "| %s |", tt.name)
		for i, n := range lengths {
			found := 0
			for seed := range trials {
				private := strings.Map(func(r rune) rune {
					if '0' <= r && r <= '9' {
						return -1 // leetspeak reads digits as letters
					}
					return r
				}, prose(n, uint64(seed)+1000))
				if _, ok, _ := newLeakCheck(h, private).carriedAtLeast(embed(tt.fn(private)), 2); ok {
					found++
				}
			}
			rate := float64(found) / trials
			fmt.Fprintf(&table, " %.0f%% |", 100*rate)
			if base[i] == 0 {
				base[i] = rate
			}
			if tt.exact && rate < base[i]-0.03 || n == 200 && rate < 0.9 {
				t.Errorf("%s of %d characters: attributed in %.0f%% of %d trials", tt.name, n, 100*rate, trials)
			}
		}
		table.WriteString("\n")
	}
	t.Logf("texts of the prose generator inside a message, %d trials each:\n%s", trials, table.String())
}
