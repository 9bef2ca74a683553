package policy

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

func mustDeclassify(t testing.TB, doc any) *Declassify {
	t.Helper()
	d, err := CompileDeclassify("inline", doc, flow.Untrusted)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecodeInstance(t *testing.T) {
	for _, tt := range []struct {
		in, err string
	}{
		{`{"a": 1, "b": [true, null, "x"]}`, ""},
		{`  12.50 `, ""},
		{`{"a": 1, "a": 2}`, "repeated"},
		{`{"a": {"b": 1, "b": 1}}`, "repeated"},
		{`[1, 2] [3]`, "not JSON"},
		{`{"a": 1`, "not JSON"},
		{`12.50 EUR`, "not JSON"},
		{strings.Repeat("[", 40) + strings.Repeat("]", 40), "nested deeper"},
		{`"` + strings.Repeat("x", MaxDeclassifyBytes) + `"`, "larger than"},
	} {
		_, err := DecodeInstance([]byte(tt.in))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%.40q: %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%.40q: error %v, want ...%s...", tt.in, err, tt.err)
		}
	}
}

func TestDeclassifyHosts(t *testing.T) {
	d := mustDeclassify(t, map[string]any{"type": "string", "format": "uri", HostsKeyword: []any{"shop.example", "*.cdn.shop.example"}})
	for uri, ok := range map[string]bool{
		"https://shop.example/p/42":            true,
		"https://www.shop.example/p/42":        true,
		"https://img.cdn.shop.example/a.png":   true,
		"https://shop.example.evil.example/p":  false,
		"https://shop.example@evil.example/p":  false,
		"javascript:alert(1)":                  false,
		"ftp://shop.example/p":                 false,
		"not a url":                            false,
		"https://evil.example/?u=shop.example": false,
		"https://xn--shp-4na.example/":         false,
	} {
		if err := d.Check(uri); (err == nil) != ok {
			t.Errorf("%s: Check = %v, want ok %v", uri, err, ok)
		}
	}
}

// TestDeclassifyCheckQuotesNothing: DESIGN rule 2 — what Check says goes
// to the audit log, so for random results that fail, it never repeats a
// value or a member name longer than a schema's own.
func TestDeclassifyCheckQuotesNothing(t *testing.T) {
	d := mustDeclassify(t, map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"price": map[string]any{"type": "number"}, "code": map[string]any{"type": "string", "pattern": "^[A-Z]+$", "maxLength": 8}},
		"patternProperties":    map[string]any{"^S": map[string]any{"type": "integer"}},
		"additionalProperties": false,
	})
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz_-0123456789 ;:/@.!"
		b := make([]byte, 12+r.IntN(30))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return "Secret" + string(b)
	}
	for range 500 {
		secret := word()
		var v any
		switch r.IntN(4) {
		case 0:
			v = map[string]any{"price": secret}
		case 1:
			v = map[string]any{"code": secret}
		case 2:
			v = map[string]any{secret: 1.5} // a name the pattern admits, a value it does not
		default:
			v = []any{secret}
		}
		err := d.Check(v)
		if err == nil {
			t.Fatalf("%v validated", v)
		}
		if strings.Contains(err.Error(), "Secret") {
			t.Fatalf("Check(%v) = %q: quotes the value", v, err)
		}
	}
}

// FuzzDeclassify: no input makes decoding or checking panic, and what
// validates is what the schema describes.
func FuzzDeclassify(f *testing.F) {
	for _, s := range []string{`{"amount": 1, "currency": "EUR"}`, `[1,2]`, `"EUR"`, `{"amount":1,"amount":2}`, `{`, `1e400`} {
		f.Add([]byte(s))
	}
	d := mustDeclassify(f, map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"amount": map[string]any{"type": "number"}, "currency": map[string]any{"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3}},
		"required":             []any{"amount", "currency"},
		"additionalProperties": false,
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeInstance(data)
		if err != nil {
			return
		}
		if d.Check(v) != nil {
			return
		}
		m, ok := v.(map[string]any)
		if !ok || len(m) != 2 {
			t.Fatalf("%q validated as %v", data, v)
		}
		if c, _ := m["currency"].(string); len(c) != 3 {
			t.Fatalf("%q validated with currency %q", data, c)
		}
	})
}
