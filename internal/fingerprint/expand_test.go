package fingerprint

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

func views(s string) []View {
	vs, _ := expandAll(s)
	return vs
}

func expandAll(s string) ([]View, bool) {
	var vs []View
	complete := Expand(s, func(v View) { vs = append(vs, v) })
	return vs, complete
}

func viaString(via []Encoding) string {
	parts := make([]string, len(via))
	for i, e := range via {
		parts[i] = e.String()
	}
	return strings.Join(parts, ",")
}

func TestEncodingString(t *testing.T) {
	tests := []struct {
		e    Encoding
		want string
	}{
		{URL, "url"}, {Base64, "base64"}, {Base64URL, "base64url"}, {Base32, "base32"}, {Hex, "hex"},
		{0, "Encoding(0)"}, {200, "Encoding(200)"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("Encoding(%d).String() = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestExpand(t *testing.T) {
	const secret = "the quarterly numbers are confidential"
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	tests := []struct {
		name string
		in   string
		// want maps a view's text to its Via chain; every listed view must
		// appear. none lists texts that must not appear.
		want map[string]string
		none []string
	}{
		{"plain text has only itself", "nothing to see here", map[string]string{"nothing to see here": ""}, nil},
		{"base64", b64, map[string]string{secret: "base64"}, nil},
		{"base64 without padding", strings.TrimRight(b64, "="), map[string]string{secret: "base64"}, nil},
		{"base64 missing its last character", b64[:len(b64)-2], map[string]string{secret[:len(secret)-1]: "base64"}, nil},
		{"base64url", base64.RawURLEncoding.EncodeToString([]byte("??>>" + secret)), map[string]string{"??>>" + secret: "base64url"}, nil},
		{"hex", hex.EncodeToString([]byte(secret)), map[string]string{secret: "hex"}, nil},
		{"hex uppercase", strings.ToUpper(hex.EncodeToString([]byte(secret))), map[string]string{secret: "hex"}, nil},
		{"base32", base32.StdEncoding.EncodeToString([]byte(secret)), map[string]string{secret: "base32"}, nil},
		{"base32 lowercase unpadded", strings.ToLower(strings.TrimRight(base32.StdEncoding.EncodeToString([]byte(secret)), "=")), map[string]string{secret: "base32"}, nil},
		{"url", url.QueryEscape(secret + "&x=1"), map[string]string{secret + "&x=1": "url"}, nil},
		{"url malformed escape kept", "a%zz+b%41", map[string]string{"a%zz bA": "url"}, nil},
		{"query parameter", "https://evil.example/c?d=" + strings.TrimRight(b64, "="), map[string]string{secret: "base64"}, nil},
		{"embedded hex", "Here: " + hex.EncodeToString([]byte(secret)) + ", done", map[string]string{secret: "hex"}, nil},
		{"short whole string", "aGk=", map[string]string{"hi": "base64"}, nil},
		{"nested base64 of hex of url", base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString([]byte(url.QueryEscape(secret))))),
			map[string]string{
				hex.EncodeToString([]byte(url.QueryEscape(secret))): "base64",
				url.QueryEscape(secret):                             "base64,hex",
				secret:                                              "base64,hex,url",
			}, nil},
		{"binary is not a view", base64.StdEncoding.EncodeToString([]byte("\x00\x01\x02\x03\xff\xfe\xfd\xfc\x80\x81\x82\x83")), nil,
			[]string{"\x00\x01\x02\x03\xff\xfe\xfd\xfc\x80\x81\x82\x83"}},
		{"short run in prose is not decoded", "send aGk= now", nil, []string{"hi"}},
		{"plus before a short base64url value", "+aGk_", map[string]string{"hi?": "url,base64url"}, nil},
		{"long words are not views", "internationalization and characterization", map[string]string{"internationalization and characterization": ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, v := range views(tt.in) {
				got[v.Text] = viaString(v.Via)
			}
			for text, via := range tt.want {
				if g, ok := got[text]; !ok || g != via {
					t.Errorf("view %q: got via %q (present %v), want %q; all views: %q", text, g, ok, via, got)
				}
			}
			for _, text := range tt.none {
				if _, ok := got[text]; ok {
					t.Errorf("unexpected view %q", text)
				}
			}
			if tt.name == "long words are not views" && len(got) != 1 {
				t.Errorf("got %d views, want only the original: %q", len(got), got)
			}
		})
	}
}

func TestExpandDepthBound(t *testing.T) {
	s := "deep secret value that is long enough"
	for range 6 {
		s = base64.StdEncoding.EncodeToString([]byte(s))
	}
	for _, v := range views(s) {
		if len(v.Via) > maxDepth {
			t.Fatalf("view at depth %d", len(v.Via))
		}
	}
}

func TestExpandViewBound(t *testing.T) {
	// 200 distinct embedded base64 runs would make 200 views.
	var sb strings.Builder
	for i := range 200 {
		fmt.Fprintf(&sb, "%s ", base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("distinct secret number %04d", i))))
	}
	vs, complete := expandAll(sb.String())
	if len(vs) != maxViews {
		t.Fatalf("got %d views, want the bound %d", len(vs), maxViews)
	}
	if complete {
		t.Fatal("complete with 200 decodings and room for 63")
	}
}

func TestExpandDepthIsNotIncomplete(t *testing.T) {
	s := "deep secret value that is long enough"
	for range 6 {
		s = base64.StdEncoding.EncodeToString([]byte(s))
	}
	vs, complete := expandAll(s)
	if !complete {
		t.Fatal("the depth limit made the expansion incomplete")
	}
	if len(vs) != maxDepth+1 {
		t.Fatalf("got %d views, want %d", len(vs), maxDepth+1)
	}
}

func TestExpandByteBound(t *testing.T) {
	// Decodings of 80, 60, 30 and 15 bytes against a budget of 100: the
	// longest fits, the next two do not, the last fits in what is left.
	var parts []string
	for _, n := range []int{80, 60, 30, 15} {
		text := strings.Repeat(fmt.Sprintf("%d bytes ", n), n)[:n]
		parts = append(parts, base64.StdEncoding.EncodeToString([]byte(text)))
	}
	s := strings.Join(parts, " ")
	var got []int
	complete := expand(s, func(v View) {
		if len(v.Via) > 0 {
			got = append(got, len(v.Text))
		}
	}, 100)
	if !slices.Equal(got, []int{80, 15}) || complete {
		t.Fatalf("decoded views of %v bytes, complete %v; want [80 15], false", got, complete)
	}
	if !expand(s, func(View) {}, 185) {
		t.Fatal("incomplete with a budget that fits every view")
	}
}

// encodeStep applies one encoding with a variant drawn by rapid (padding,
// case), the forms an agent or a library might produce.
func encodeStep(t *rapid.T, e Encoding, s string) string {
	switch e {
	case URL:
		// PathEscape keeps + literal, which QueryUnescape (what Expand
		// follows) reads as a space.
		if !strings.Contains(s, "+") && rapid.Bool().Draw(t, "pathEscape") {
			return url.PathEscape(s)
		}
		return url.QueryEscape(s)
	case Base64:
		if rapid.Bool().Draw(t, "pad") {
			return base64.StdEncoding.EncodeToString([]byte(s))
		}
		return base64.RawStdEncoding.EncodeToString([]byte(s))
	case Base64URL:
		if rapid.Bool().Draw(t, "pad") {
			return base64.URLEncoding.EncodeToString([]byte(s))
		}
		return base64.RawURLEncoding.EncodeToString([]byte(s))
	case Base32:
		out := base32.StdEncoding.EncodeToString([]byte(s))
		if rapid.Bool().Draw(t, "unpad") {
			out = strings.TrimRight(out, "=")
		}
		if rapid.Bool().Draw(t, "lower") {
			out = strings.ToLower(out)
		}
		return out
	case Hex:
		out := hex.EncodeToString([]byte(s))
		if rapid.Bool().Draw(t, "upper") {
			out = strings.ToUpper(out)
		}
		return out
	}
	panic("unknown encoding")
}

// printableText draws text of printable runes, the kind of text Expand
// keeps as a view.
func printableText(t *rapid.T, minLen int) string {
	r := rapid.OneOf(
		rapid.RuneFrom([]rune(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"-_/+%=&()[]{}<>@#$*~")),
		rapid.RuneFrom(nil, unicode.L, unicode.N, unicode.P, unicode.S),
	)
	return rapid.StringOfN(r, minLen, 80, -1).Draw(t, "text")
}

// encodeChain encodes text through a random chain of up to three
// encodings and returns the encoded string and the chain Expand can see:
// a URL step that changed nothing is invisible, and base64url output with
// neither - nor _ is indistinguishable from (and reported as) base64.
func encodeChain(t *rapid.T, text string) (string, []Encoding) {
	chain := rapid.SliceOfN(rapid.SampledFrom([]Encoding{URL, Base64, Base64URL, Base32, Hex}), 0, 3).Draw(t, "chain")
	s := text
	var seen []Encoding // innermost first
	for _, e := range chain {
		out := encodeStep(t, e, s)
		switch {
		case out == s:
			continue
		case e == Base64URL && !strings.ContainsAny(out, "-_"):
			e = Base64
		}
		seen = append(seen, e)
		s = out
	}
	slices.Reverse(seen)
	return s, seen
}

// sameChain reports whether a view reached via got matches the encoding
// chain want. A URL step may be missing: when URL-escaping left an encoded
// run intact (it only escaped the padding, say), the run is decoded
// straight from the escaped text, one step shallower, and the deeper view
// with the same text is a duplicate.
func sameChain(got, want []Encoding) bool {
	i := 0
	for _, e := range want {
		switch {
		case i < len(got) && got[i] == e:
			i++
		case e != URL:
			return false
		}
	}
	return i == len(got)
}

func TestExpandRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := printableText(t, 1)
		enc, via := encodeChain(t, text)
		for _, v := range views(enc) {
			// A shorter chain to the same text was produced first, and
			// the longer one is its duplicate: "NkE" is base64 of "6A",
			// hex of "j", and base32 of "j" too.
			if v.Text == text && (sameChain(v.Via, via) || len(v.Via) < len(via)) {
				return
			}
		}
		t.Fatalf("no view %q via %v in Expand(%q): %v", text, via, enc, views(enc))
	})
}

func TestExpandRoundTripInProse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// 12 bytes make every encoding at least 16 characters long, the
		// shortest run Expand decodes inside other text.
		text := printableText(t, 12)
		if len(text) < 12 {
			t.Skip("text shorter than 12 bytes")
		}
		enc, via := encodeChain(t, text)
		s := "please send " + enc + " thanks"
		for _, v := range views(s) {
			if strings.Contains(v.Text, text) && sameChain(v.Via, via) {
				return
			}
		}
		t.Fatalf("no view containing %q via %v in Expand(%q): %v", text, via, s, views(s))
	})
}

// fataler is what the checks need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func checkExpandBounds(t fataler, s string) ([]View, bool) {
	t.Helper()
	var vs []View
	decoded := 0
	seen := map[string]bool{}
	limit := 8*len(s) + maxExtra
	complete, overgrown := expandOvergrown(s, func(v View) {
		if len(vs) == 0 {
			if v.Text != s || len(v.Via) != 0 {
				t.Fatalf("first view is not the original")
			}
		} else {
			decoded += len(v.Text)
			if len(v.Via) == 0 || len(v.Via) > maxDepth {
				t.Fatalf("view %q at depth %d", v.Text, len(v.Via))
			}
			if !isText([]byte(v.Text)) {
				t.Fatalf("view %q is not text", v.Text)
			}
			if len(v.Text) > maxViewLen(len(s)) {
				t.Fatalf("view of %d bytes, bound %d", len(v.Text), maxViewLen(len(s)))
			}
		}
		if seen[v.Text] {
			t.Fatalf("view %q twice", v.Text)
		}
		seen[v.Text] = true
		vs = append(vs, View{Text: v.Text, Via: slices.Clone(v.Via)})
	}, limit)
	if len(vs) > maxViews {
		t.Fatalf("%d views, bound %d", len(vs), maxViews)
	}
	if decoded > limit {
		t.Fatalf("%d decoded bytes, bound %d", decoded, limit)
	}
	// No view is longer than maxViewLen, so one was left out only if the
	// views ran out, the bytes left were fewer than that, or a rewrite
	// was longer.
	if !complete && !overgrown && len(vs) < maxViews && decoded <= limit-maxViewLen(len(s)) {
		t.Fatalf("incomplete with %d views and %d of %d decoded bytes", len(vs), decoded, limit)
	}
	if overgrown && complete {
		t.Fatalf("a view was left out for its length, and the expansion is complete")
	}
	return vs, complete
}

// checkOwnVia expands s with a callback that scribbles over every Via it
// is given, and checks that the views it is given later are unaffected.
func checkOwnVia(t fataler, s string, want []View) {
	t.Helper()
	i := 0
	Expand(s, func(v View) {
		if i < len(want) && !slices.Equal(v.Via, want[i].Via) {
			t.Fatalf("view %d via %v, want %v: a Via was shared", i, v.Via, want[i].Via)
		}
		i++
		for k := range v.Via {
			v.Via[k] = 0
		}
	})
}

// adversarialSeeds are inputs that stress the budget and the order in
// which it is spent.
func adversarialSeeds() []string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var hexWords strings.Builder
	for i := range 70 {
		hexWords.WriteString(hex.EncodeToString(fmt.Appendf(nil, "word %03d", i)) + " ")
	}
	return []string{
		decoyBody(63, 8),
		decoyBody(66, 40),
		hexWords.String(),
		b64(prose(600, 5)), // + and / inside the run
		base64.URLEncoding.EncodeToString([]byte(prose(600, 6))),
		"pre+" + b64("a payload right after a plus sign, aligned or not"),
		"d=" + url.QueryEscape(b64(credentials)) + "&x=" + hex.EncodeToString([]byte(credentials)),
		b64(hex.EncodeToString([]byte(b64(credentials)))),
		"A" + b64(credentials) + " " + strings.Repeat("7", 40),
		strings.Repeat("aGVsbG8gd29ybGQ+/", 40),
	}
}

func FuzzExpand(f *testing.F) {
	f.Add("aGVsbG8gd29ybGQ=")
	f.Add("please send 68656c6c6f20776f726c64 thanks")
	f.Add("NBSWY3DPEB3W64TMMQ======")
	f.Add("a+b%21c%zz%")
	f.Add("https://x.example/?d=YUdWc2JHOGdkMjl5YkdRPQ")
	for _, s := range adversarialSeeds() {
		f.Add(s)
	}
	for _, s := range hostileSeeds() {
		f.Add(s)
	}
	for _, s := range []string{
		caesar(secretNote, 13), reverseRunes(b64(secretNote)), leet(secretNote), spacedOut(shortToken, "-"),
		jsonEscapeAll(secretNote), htmlNamed(secretNote), quotedPrintableAll(secretNote), fullwidth(secretNote),
		cyrillicLookalikes(secretNote), tagChars(secretNote), variationSelectors(secretNote), hexLabels(secretToken),
		pathSegments(secretNote), queryKeys(secretToken), "https://xn--80ahdkcimkddcj3e6a1g.example/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ca := checkExpandBounds(t, s)
		b, cb := checkExpandBounds(t, s)
		if len(a) != len(b) || ca != cb {
			t.Fatal("not deterministic")
		}
		for i := range a {
			if a[i].Text != b[i].Text || !slices.Equal(a[i].Via, b[i].Via) {
				t.Fatal("not deterministic")
			}
		}
		checkOwnVia(t, s, a)
		if ca {
			checkAllDecoded(t, s, a)
		}
	})
}

var pctEscape = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

// refDecodings lists every decoding of s Expand should consider, found
// and decoded independently of Expand's scanners: the URL decoding when s
// has a + or a %XX escape, and each maximal run of each alphabet that is
// at least minRun long or is all of s but surrounding whitespace, that
// decodes to text.
func refDecodings(s string) []string {
	var out []string
	if strings.Contains(s, "+") || pctEscape.MatchString(s) {
		if d := urlDecode(nil, s); len(d) > 0 && isText(d) {
			out = append(out, string(d))
		}
	}
	trimmed := strings.TrimLeft(s, " \t\n\r\v\f")
	ws := len(s) - len(trimmed)
	we := ws + len(strings.TrimRight(trimmed, " \t\n\r\v\f"))
	const (
		b64std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	)
	alphabets := []struct {
		chars  string
		maxPad int
		decode func(run string) ([]byte, error)
	}{
		{"0123456789abcdefABCDEF", 0, func(r string) ([]byte, error) { return hex.DecodeString(r[:len(r)&^1]) }},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz234567", 6, func(r string) ([]byte, error) {
			usable := [8]int{0, 0, 2, 2, 4, 5, 5, 7}
			r = strings.ToUpper(r[:len(r)/8*8+usable[len(r)%8]])
			return base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(r)
		}},
		{b64std, 2, func(r string) ([]byte, error) {
			return base64.RawStdEncoding.DecodeString(r[:len(r)-b2i(len(r)%4 == 1)])
		}},
		{b64url, 2, func(r string) ([]byte, error) {
			return base64.RawURLEncoding.DecodeString(r[:len(r)-b2i(len(r)%4 == 1)])
		}},
	}
	for _, a := range alphabets {
		var in [256]bool
		for _, c := range []byte(a.chars) {
			in[c] = true
		}
		for i := 0; i < len(s); {
			if !in[s[i]] {
				i++
				continue
			}
			start := i
			for i < len(s) && in[s[i]] {
				i++
			}
			end, pad := i, 0
			for end+pad < len(s) && pad < a.maxPad && s[end+pad] == '=' {
				pad++
			}
			n := end - start
			if n < minRun && (n < 2 || start != ws || end+pad != we) {
				continue
			}
			if d, err := a.decode(s[start:end]); err == nil && len(d) > 0 && isText(d) {
				out = append(out, string(d))
			}
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkAllDecoded checks a complete expansion: every decoding of every
// view not at the depth limit is a view, or a substring of one (a base64
// run inside a longer run that decoded to text).
func checkAllDecoded(t fataler, s string, vs []View) {
	t.Helper()
	texts := map[string]bool{}
	for _, v := range vs {
		texts[v.Text] = true
	}
	for _, v := range vs {
		if len(v.Via) >= maxDepth {
			continue
		}
		for _, d := range refDecodings(v.Text) {
			if len(d) < minEvidence {
				continue // too short to hold a secret or a fingerprint: may be left out
			}
			if texts[d] || slices.ContainsFunc(vs, func(w View) bool { return strings.Contains(w.Text, d) }) {
				continue
			}
			t.Fatalf("complete, but %q, a decoding of view %v %q, is not a view", d, v.Via, v.Text)
		}
	}
}

// composite draws an argument made of pieces an agent might join: text,
// encoded text, runs of alphabet characters, and separators, including
// none, so that runs of different alphabets touch and nest.
func composite(t *rapid.T) string {
	seps := []string{"", " ", "+", "/", "-", "_", "=", "%2B", "\n", ", ", "0", "Z"}
	var sb strings.Builder
	for range rapid.IntRange(1, 10).Draw(t, "pieces") {
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			sb.WriteString(printableText(t, 1))
		case 1, 2:
			enc, _ := encodeChain(t, printableText(t, 1))
			sb.WriteString(enc)
		case 3:
			sb.WriteString(rapid.StringOfN(rapid.RuneFrom([]rune("0123456789abcdefABCDEFGHIJKLMNOPQRSTUVWXYZ+/-_=")), 1, 40, -1).Draw(t, "run"))
		}
		sb.WriteString(rapid.SampledFrom(seps).Draw(t, "sep"))
	}
	return sb.String()
}

func TestExpandCompleteMeansAllDecoded(t *testing.T) {
	incomplete := 0
	rapid.Check(t, func(t *rapid.T) {
		s := composite(t)
		vs, complete := checkExpandBounds(t, s)
		if !complete {
			incomplete++
			return
		}
		checkAllDecoded(t, s, vs)
	})
	t.Logf("%d inputs were incomplete", incomplete)
}

func TestExpandAdversarialSeeds(t *testing.T) {
	for _, s := range adversarialSeeds() {
		vs, complete := checkExpandBounds(t, s)
		checkOwnVia(t, s, vs)
		if complete {
			checkAllDecoded(t, s, vs)
		}
	}
}

func BenchmarkExpand(b *testing.B) {
	plain := benchText(3 << 10)
	arg := base64.StdEncoding.EncodeToString([]byte(plain)) // 4 KB
	b.SetBytes(int64(len(arg)))
	b.ReportAllocs()
	for b.Loop() {
		Expand(arg, func(View) {})
	}
}

// BenchmarkExpandArgs expands sink arguments of the sizes tools send:
// benign text and JSON (the common case, which must stay cheap), and
// base64 of text (a payload that decodes).
func BenchmarkExpandArgs(b *testing.B) {
	for _, c := range []struct {
		name string
		arg  string
	}{
		{"text-4KB", benchText(4 << 10)},
		{"text-64KB", benchText(64 << 10)},
		{"base64-64KB", base64.StdEncoding.EncodeToString([]byte(benchText(48 << 10)))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.arg)))
			b.ReportAllocs()
			done := cpuMeter(b)
			for b.Loop() {
				Expand(c.arg, func(View) {})
			}
			done(len(c.arg))
		})
	}
}

// decodedOrder lists the decoded views of s as "via:text".
func decodedOrder(s string) []string {
	var out []string
	for _, v := range views(s)[1:] {
		out = append(out, viaString(v.Via)+":"+v.Text)
	}
	return out
}

func TestExpandOrder(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	hx := func(s string) string { return hex.EncodeToString([]byte(s)) }
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"longest run first, wherever it is",
			"a " + hx("short hex text") + " b " + b64("a longer text, hidden in base64 further on"),
			[]string{"base64:a longer text, hidden in base64 further on", "hex:short hex text"}},
		{"equal lengths in position order",
			b64("second text, same size") + " " + b64("first text, but later!"),
			[]string{"base64:second text, same size", "base64:first text, but later!"}},
		{"shallow before deep, however long",
			b64(hx("inner text that is long enough to beat the other one")) + " " + hx("a sibling of the outer run"),
			[]string{
				"base64:" + hx("inner text that is long enough to beat the other one"),
				"hex:a sibling of the outer run",
				"base64,hex:inner text that is long enough to beat the other one",
			}},
		{"a run read in two alphabets gives the text one",
			// All hex, so also a base64 run (and a base32 one in part),
			// whose decodings are binary and take no place.
			hx("hex digits are base64 too"),
			[]string{"hex:hex digits are base64 too"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decodedOrder(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("decoded views\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestExpandSubstringRuns checks that base64 of text with + and / (which
// split it into URL-safe runs, and into standard runs once URL-decoded)
// yields the text once, not a view per piece.
func TestExpandSubstringRuns(t *testing.T) {
	text := prose(4<<10, 1)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
		s := enc.EncodeToString([]byte(text))
		vs, complete := expandAll(s)
		if !complete {
			t.Errorf("incomplete")
		}
		found := false
		for _, v := range vs[1:] {
			switch {
			case v.Text == text:
				found = true
			case len(v.Text) < len(text) && strings.Contains(text, v.Text):
				t.Errorf("view %v of %d bytes is a piece of the text", v.Via, len(v.Text))
			}
		}
		if !found {
			t.Errorf("the text is not a view")
		}
		if len(vs) > 3 {
			t.Errorf("%d views, want the original, the text and at most the URL-decoded original", len(vs))
		}
	}
}

// TestExpandMisalignedInnerRuns checks that a run inside a longer one
// that decoded to text is still decoded when it does not start a multiple
// of 4 characters from the outer run's start: its decoding is not part of
// the outer text.
func TestExpandMisalignedInnerRuns(t *testing.T) {
	b64 := func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }
	outer := b64(prose(150, 3)) // 200 characters, a multiple of 4
	// secret returns a text whose base64 contains the characters in has
	// and none of those in hasNot.
	secret := func(has, hasNot string) string {
		for i := range 1000 {
			// A ? two bytes into a 3-byte group encodes as /.
			s := fmt.Sprintf("inner secret number %d? misaligned on purpose", i)
			if !strings.Contains(has, "/") {
				s = strings.ReplaceAll(s, "?", ",")
			}
			if e := b64(s); strings.ContainsAny(e, has) && !strings.ContainsAny(e, hasNot) {
				return s
			}
		}
		panic("no such text")
	}
	tests := []struct {
		name, in, inner string
	}{
		// One standard run, text at its start; the inner URL-safe run
		// starts 201 characters in.
		{"URL-safe run after a slash", "", secret("ABC", "+/")},
		// The + makes the inner run a standard run of its own only in the
		// URL-decoded view; the / keeps it from being a URL-safe run.
		{"standard run after a plus", "", secret("/", "+")},
	}
	tests[0].in = outer + "/" + b64(tests[0].inner)
	tests[1].in = outer + "+" + b64(tests[1].inner)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, complete := expandAll(tt.in)
			if !complete {
				t.Error("incomplete")
			}
			for _, v := range vs {
				if v.Text == tt.inner {
					return
				}
			}
			t.Errorf("the inner text is not a view: %q", decodedOrder(tt.in))
		})
	}
}

func TestExpandManyTextRunsFit(t *testing.T) {
	// 63 hex runs, each also a base64 run that decodes to noise: the noise
	// takes no place, so all 63 are views and nothing was left out.
	var sb strings.Builder
	for i := range maxViews - 1 {
		fmt.Fprintf(&sb, "%s ", hex.EncodeToString(fmt.Appendf(nil, "text number %02d", i)))
	}
	vs, complete := expandAll(sb.String())
	if len(vs) != maxViews || !complete {
		t.Fatalf("%d views, complete %v; want %d, true", len(vs), complete, maxViews)
	}
}

// credentials is a private note of the kind an agent is steered to leak.
const credentials = "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n" +
	"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n" +
	"The production account is billed to the infrastructure team; rotate the secret key every ninety days and never paste it into chat or e-mail."

// decoyBody hides base64 of credentials after n hex-encoded decoy words,
// each decoding to printable text of size bytes.
func decoyBody(n, size int) string {
	var sb strings.Builder
	sb.WriteString("Hi, the meeting notes are below.\n")
	for i := range n {
		word := fmt.Sprintf("%04d decoy ", i)
		sb.WriteString(hex.EncodeToString([]byte(strings.Repeat(word, size/len(word)+1)[:size])))
		sb.WriteByte(' ')
	}
	sb.WriteString("\nAttachment: " + base64.StdEncoding.EncodeToString([]byte(credentials)) + "\nThanks!")
	return sb.String()
}

func TestExpandDecoys(t *testing.T) {
	payload := len(base64.StdEncoding.EncodeToString([]byte(credentials)))
	tests := []struct {
		name     string
		decoys   int
		size     int // decoded bytes per decoy
		found    bool
		complete bool
	}{
		// The reported bypass: 63 decoys used to take every view before
		// the payload was reached. Now the payload, the longest run, goes
		// first. Decoys too short to hold a secret or a fingerprint
		// (minEvidence) may be left out without the expansion becoming
		// incomplete; longer ones may not.
		{"63 short decoys before the payload", 63, 8, true, true},
		{"62 short decoys fit with the payload", 62, 8, true, true},
		{"200 short decoys", 200, minEvidence - 1, true, true},
		{"200 decoys long enough to hide a secret", 200, minEvidence, true, false},
		// Decoys longer than the payload win the budget: the payload may be
		// missed, and that is reported.
		{"64 decoys longer than the payload", 64, payload, false, false},
		{"100 decoys longer than the payload", 100, payload, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, complete := expandAll(decoyBody(tt.decoys, tt.size))
			found := -1
			for i, v := range vs {
				if v.Text == credentials && viaString(v.Via) == "base64" {
					found = i
				}
			}
			if (found >= 0) != tt.found || complete != tt.complete {
				t.Fatalf("payload view at %d, complete %v, %d views; want found %v, complete %v", found, complete, len(vs), tt.found, tt.complete)
			}
			if found > 1 {
				t.Errorf("payload is view %d, want the first decoded view", found)
			}
		})
	}
}

// prose makes deterministic English-like prose: sentences of words of
// varied length with capitals, punctuation, numbers and paragraphs.
func prose(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	words := strings.Fields(`the a of and to in is that it was for on are as with his they at be this have
		from or one had by but not what all were we when your can said there use an each which she do how
		their if will up other about out many then them these so some her would make like him into time has
		look two more write go see number no way could people my than first water been call who its now find
		long down day did get come made may part over new sound take only little work know place year live
		me back give most very after thing our just name good sentence man think say great where help through
		much before line right too mean old any same tell boy follow came want show also around form three
		small set put end does another well large must big even such because turn here why ask went men read
		need land different home us move try kind hand picture again change off play spell air away animal
		house point page letter mother answer found study still learn should America world quarterly revenue
		customer invoice contract renewal budget forecast confidential schedule meeting agenda deadline
		engineering infrastructure production deployment migration incident postmortem credentials`)
	names := []string{"Alice", "Bob", "Carol", "Dave", "Eve", "Mallory", "Oscar", "Peggy", "Trent", "Victor"}
	var sb strings.Builder
	for sb.Len() < n {
		for range 3 + r.IntN(5) {
			k := 6 + r.IntN(18)
			for i := range k {
				var w string
				switch x := r.IntN(40); {
				case x == 0:
					w = names[r.IntN(len(names))]
				case x == 1:
					w = strconv.Itoa(r.IntN(10000))
				default:
					w = words[r.IntN(len(words))]
				}
				if i == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				sb.WriteString(w)
				switch {
				case i == k-1:
					sb.WriteString([]string{". ", ". ", "? ", "! "}[r.IntN(4)])
				case r.IntN(10) == 0:
					sb.WriteString(", ")
				default:
					sb.WriteByte(' ')
				}
			}
		}
		sb.WriteString("\n\n")
	}
	return sb.String()[:n]
}

// tabular makes deterministic CSV: its base64 holds many base32 runs that
// decode to printable noise.
func tabular(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 4))
	var sb strings.Builder
	for sb.Len() < n {
		fmt.Fprintf(&sb, "%d,%s,%d.%02d,%s\n", r.IntN(1000000), []string{"ACME Corp", "Globex", "Initech", "Umbrella"}[r.IntN(4)],
			r.IntN(10000), r.IntN(100), []string{"PAID", "DUE", "VOID"}[r.IntN(3)])
	}
	return sb.String()[:n]
}

// TestExpandLargeBase64 expands base64 of megabytes of private text, the
// size of a document an agent attaches: the decoded text must be a view
// whose prints are the original's.
func TestExpandLargeBase64(t *testing.T) {
	if testing.Short() {
		t.Skip("megabytes of text")
	}
	h := testHasher(t, 3)
	tests := []struct {
		name     string
		text     string
		complete bool
	}{
		{"1 MB of prose", prose(1<<20, 1) + credentials, true},
		{"3 MB of prose", prose(3<<20, 2) + credentials, true},
		// Its base64 has more base32 runs that decode to printable noise
		// than the view bound: they were decoded first and filled it, so
		// the base64 run itself was never tried. Longest first, it is; the
		// noise that no longer fits makes the expansion incomplete.
		{"1 MB of CSV", tabular(1<<20, 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base64.StdEncoding.EncodeToString([]byte(tt.text))
			var view *View
			complete := Expand(s, func(v View) {
				if v.Text == tt.text {
					view = &v
				}
			})
			if view == nil {
				t.Fatal("the decoded text is not a view")
			}
			if viaString(view.Via) != "base64" {
				t.Errorf("via %v, want base64", view.Via)
			}
			if complete != tt.complete {
				t.Errorf("complete %v, want %v", complete, tt.complete)
			}
			want := SortUnique(h.Prints(nil, tt.text))
			shared := 0
			for _, p := range SortUnique(h.Prints(nil, view.Text)) {
				if _, ok := slices.BinarySearch(want, p); ok {
					shared++
				}
			}
			if shared == 0 || shared != len(want) {
				t.Errorf("the view shares %d of the original's %d prints", shared, len(want))
			}
		})
	}
}

// TestDecodeBase32 checks the allocation-free decoder against
// encoding/base32 on runs of any length and case.
func TestDecodeBase32(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		run := rapid.StringOfN(rapid.RuneFrom([]rune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz234567")), 0, 100, -1).Draw(t, "run")
		usable := len(run)/8*8 + base32Usable[len(run)%8]
		want, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(run[:usable]))
		if err != nil {
			t.Fatalf("encoding/base32: %v", err)
		}
		got, ok := decodeBase32([]byte("prefix"), []byte(run))
		if !ok || string(got) != "prefix"+string(want) {
			t.Fatalf("decodeBase32(%q) = %q, %v; want %q", run, got, ok, want)
		}
		// A byte outside the alphabet fails, unless it is trimmed.
		bad := run + "1"
		if _, ok := decodeBase32(nil, []byte(bad)); ok && len(bad)/8*8+base32Usable[len(bad)%8] == len(bad) {
			t.Fatalf("decodeBase32 accepted %q", bad)
		}
	})
}
