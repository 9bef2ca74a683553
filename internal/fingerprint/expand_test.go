package fingerprint

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

func views(s string) []View {
	var vs []View
	Expand(s, func(v View) { vs = append(vs, v) })
	return vs
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
	vs := views(sb.String())
	if len(vs) != maxViews {
		t.Fatalf("got %d views, want the bound %d", len(vs), maxViews)
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
			if v.Text == text && sameChain(v.Via, via) {
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

func checkExpandBounds(t testing.TB, s string) []View {
	var vs []View
	decoded := 0
	seen := map[string]bool{}
	Expand(s, func(v View) {
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
		}
		if seen[v.Text] {
			t.Fatalf("view %q twice", v.Text)
		}
		seen[v.Text] = true
		vs = append(vs, View{Text: v.Text, Via: slices.Clone(v.Via)})
	})
	if len(vs) > maxViews {
		t.Fatalf("%d views, bound %d", len(vs), maxViews)
	}
	if limit := 8*len(s) + maxExtra; decoded > limit {
		t.Fatalf("%d decoded bytes, bound %d", decoded, limit)
	}
	return vs
}

func FuzzExpand(f *testing.F) {
	f.Add("aGVsbG8gd29ybGQ=")
	f.Add("please send 68656c6c6f20776f726c64 thanks")
	f.Add("NBSWY3DPEB3W64TMMQ======")
	f.Add("a+b%21c%zz%")
	f.Add("https://x.example/?d=YUdWc2JHOGdkMjl5YkdRPQ")
	f.Fuzz(func(t *testing.T, s string) {
		a := checkExpandBounds(t, s)
		b := checkExpandBounds(t, s)
		if len(a) != len(b) {
			t.Fatal("not deterministic")
		}
		for i := range a {
			if a[i].Text != b[i].Text || !slices.Equal(a[i].Via, b[i].Via) {
				t.Fatal("not deterministic")
			}
		}
	})
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
