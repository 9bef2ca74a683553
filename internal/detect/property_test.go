package detect

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// alphabet mixes ordinary text with every kind of character Clean and the
// detectors treat specially. It leaves out Clean's own rendering marks
// (⟦ ⟧ ␛ and the Control Pictures), so a rendering in the output can be
// told from input text.
var alphabet = []rune{
	'a', 'b', 'e', 'g', 'i', 'n', 'o', 'r', 'I', 'G', ' ', ' ', '\n', '\t', '\r', '.', ':', '"', '\'',
	'<', '>', '/', '=', '!', '[', ']', '(', ')', '#', '|', '-', '_', '~', '?', '%', '0', '7',
	0x1B, 0x07, 0x08, 0x00, 0x7F, 0x9B, 0x9D, // controls
	'а', 'о', 'Ι', // Cyrillic and Greek look-alikes
	'ب', 'ی', 'क', // Arabic, Persian, Devanagari
	'忽', '略', 'ー', 'ก',
	0x1F600, 0x1F468, 0x1F3F4, 0x2764, // emoji, waving black flag
	0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, // zero-width
	0x202E, 0x202C, 0x2066, 0x2069, 0x200F, // bidi
	0xE0001, 0xE0020, 0xE0041, 0xE0067, 0xE0062, 0xE0073, 0xE007F, // tags
	0xFE0F, 0xFE00, 0xE0100, 0xE01EF, // variation selectors
	0x00AD, 0x0301, 'é', 'ß',
}

func genText(t *rapid.T, label string) string {
	rs := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 80).Draw(t, label)
	return string(rs)
}

func TestCleanIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genText(t, "s")
		once := Clean(s)
		twice := Clean(once.Text)
		if twice.Text != once.Text {
			t.Fatalf("Clean not idempotent:\n in    %q\n once  %q\n twice %q", s, once.Text, twice.Text)
		}
		if twice.Changed {
			t.Fatalf("Clean of clean text reports Changed: %q", once.Text)
		}
		if once.Changed != (once.Text != s) {
			t.Fatalf("Changed = %v but Text changed = %v", once.Changed, once.Text != s)
		}
	})
}

// renderings matches what Clean adds: ⟦…⟧ blocks, ␛ and Control Pictures,
// and U+FFFD for invalid bytes.
var renderings = regexp.MustCompile(`⟦[^⟧]*⟧|[␀-␡]|\x{FFFD}`)

// stripped is a character Clean may remove: invisible and control
// characters.
func strippable(r rune) bool {
	return isTag(r) || isVS(r) || isZeroWidth(r) || isBidiControl(r) ||
		(r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7F && r <= 0x9F)
}

// isSubsequence reports whether a's runes appear in b in order.
func isSubsequence(a, b string) bool {
	for _, r := range a {
		i := strings.IndexRune(b, r)
		if i < 0 {
			return false
		}
		b = b[i+utf8.RuneLen(r):]
	}
	return true
}

func TestCleanAddsOnlyRenderings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genText(t, "s")
		out := Clean(s).Text
		plain := renderings.ReplaceAllString(out, "")
		// nothing but renderings is added…
		if !isSubsequence(plain, s) {
			t.Fatalf("Clean added text:\n in  %q\n out %q\n without renderings %q", s, out, plain)
		}
		// …and nothing visible is lost
		var visible strings.Builder
		for _, r := range s {
			if !strippable(r) {
				visible.WriteRune(r)
			}
		}
		if !isSubsequence(visible.String(), plain) {
			t.Fatalf("Clean lost visible text:\n in  %q\n out %q", s, out)
		}
	})
}

func TestTagPayloadAlwaysFound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := []rune(genText(t, "base"))
		// the base keeps no tag characters of its own, so the payload
		// cannot complete an emoji flag
		kept := base[:0]
		for _, r := range base {
			if !isTag(r) {
				kept = append(kept, r)
			}
		}
		payload := rapid.StringMatching(`[ -~]{1,40}`).Draw(t, "payload")
		at := rapid.IntRange(0, len(kept)).Draw(t, "at")
		var enc strings.Builder
		for _, c := range payload {
			enc.WriteRune(0xE0000 + c)
		}
		text := string(kept[:at]) + enc.String() + string(kept[at:])
		start := len(string(kept[:at]))
		fs := ScanText("result", text)
		for _, f := range fs {
			if f.Detector == detTag && f.Severity == High && f.Start <= start && f.End >= start+enc.Len() {
				if !strings.Contains(f.Evidence, clip(payload, 60)[:min(len(payload), 20)]) {
					t.Fatalf("evidence %q does not show the payload %q", f.Evidence, payload)
				}
				return
			}
		}
		t.Fatalf("tag payload %q at %d not found in %q: %v", payload, start, text, fs)
	})
}

// Findings are deterministic and their spans lie within the field.
func TestFindingsWellFormed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genText(t, "s")
		checkFindings(t, s, ScanText("f", s))
		checkFindings(t, s, ScanTool(Tool{Name: "t", Description: s}, map[string][]string{"other": {"send_email"}}))
	})
}

type fatalf interface{ Fatalf(string, ...any) }

func checkFindings(t fatalf, text string, fs []Finding) {
	for _, f := range fs {
		if f.Detector == "" || f.Severity < Low || f.Severity > High || f.Message == "" {
			t.Fatalf("malformed finding %+v", f)
		}
		if f.Start < 0 || f.End < f.Start || f.End > len(text) && f.Field == "f" {
			t.Fatalf("span [%d,%d) outside %d bytes: %+v", f.Start, f.End, len(text), f)
		}
		if len(f.Evidence) > 120 {
			t.Fatalf("evidence longer than 120 bytes: %q", f.Evidence)
		}
		if !utf8.ValidString(f.Evidence) {
			t.Fatalf("evidence not UTF-8: %q", f.Evidence)
		}
	}
}
