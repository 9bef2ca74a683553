package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// unquoteCases are JSON string literals, valid and not, that Unquote
// must decode exactly as encoding/json does, or refuse as it does.
var unquoteCases = []string{
	`""`, `"plain text"`, `"line one\nline two\r\n\ttabbed"`,
	`"quote \" backslash \\ slash \/ \b \f"`,
	`"\u00e9\u4e2d\u0041"`, `"pair \ud83d\ude00 done"`,
	`"lone high \ud83d then text"`, `"lone low \ude00"`, `"high then bad \ud83d\u0041"`,
	`"high twice \ud83d\ud83d\ude00"`, `"bad hex \u12g4"`, `"short \u12"`,
	`"ends in a backslash \"`, `"bad escape \x"`, `"raw "quote" inside"`,
	"\"control \x01 char\"", "\"tab \t raw\"", "\"invalid utf-8 \xff\xfe here\"",
	"\"truncated \xe4\xb8\"", "\"escape then invalid \\n\xc3\"", `"é 中 😀 plain utf-8"`,
	`"`, `x`, `"unterminated`, `"\u0000 nul"`, `"\uDFFF\uD800"`,
}

func TestUnquote(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, []byte(c))
	}
	long := `"` + strings.Repeat(`Paragraph with a \"quote\" and \u00e9.\n`, 2000) + `"`
	checkUnquote(t, []byte(long))
}

// checkUnquote holds Unquote to encoding/json on s: the same string, or
// an error from both. Unquote reads a literal exactly, so what does not
// start and end with a quote (a literal with space around it, which
// encoding/json takes) is an error.
func checkUnquote(t *testing.T, s []byte) {
	t.Helper()
	got, err := Unquote(s)
	var want string
	werr := json.Unmarshal(s, &want)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if (err == nil) != (werr == nil) || got != want {
			t.Errorf("Unquote(%q) = %q, %v; encoding/json: %q, %v", s, got, err, want, werr)
		}
	} else if err == nil {
		t.Errorf("Unquote(%q) = %q, want an error", s, got)
	}
}

// FuzzUnquote: Unquote decodes every input as encoding/json does.
func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		checkUnquote(t, s)
		// And the input as the body of a string literal.
		checkUnquote(t, append(append([]byte{'"'}, s...), '"'))
	})
}

func BenchmarkUnquote64KB(b *testing.B) {
	s := []byte(`"` + strings.Repeat(`A line of a tool result, with "quotes" escaped.\n`, 64<<10/50) + `"`)
	s = []byte(strings.ReplaceAll(string(s[1:len(s)-1]), `"`, `\"`))
	s = append(append([]byte{'"'}, s...), '"')
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := Unquote(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHasControl checks the eight-bytes-at-a-time test against the plain
// one for every byte at every position of a word and its tail.
func TestHasControl(t *testing.T) {
	for _, bg := range []byte{'a', ' ', '!', 0x7f, 0x80, 0xff} {
		for n := range 20 {
			for pos := range n {
				for c := range 256 {
					b := bytes.Repeat([]byte{bg}, n)
					b[pos] = byte(c)
					if got, want := hasControl(b), c < ' '; got != want {
						t.Fatalf("hasControl(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}
