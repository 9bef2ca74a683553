package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// testKeyed is a keyed hash as the fingerprint package would supply one.
func testKeyed(v string) string {
	m := hmac.New(sha256.New, []byte("test key"))
	m.Write([]byte(v))
	return "hmac:" + hex.EncodeToString(m.Sum(nil))[:16]
}

// join writes n comma-separated items made by item, between open and close,
// with tail appended (after a comma) if it is not empty.
func join(open string, n int, item func(i int) string, tail, close string) string {
	var b strings.Builder
	b.WriteString(open)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(item(i))
	}
	if tail != "" {
		if n > 0 {
			b.WriteString(",")
		}
		b.WriteString(tail)
	}
	b.WriteString(close)
	return b.String()
}

func TestShape(t *testing.T) {
	str1 := func(int) string { return `"v"` }
	strShape := func(int) string { return `"string(1)"` }
	one := func(int) string { return "1" }
	numShape := func(int) string { return `"number"` }
	kv := func(i int) string { return fmt.Sprintf(`"k%d":%d`, i, i) }
	kvShape := func(i int) string { return fmt.Sprintf(`"k%d":"number"`, i) }
	idx := func(n int) []string {
		var p []string
		for i := range n {
			p = append(p, fmt.Sprintf("$[%d]", i))
		}
		return p
	}
	deep := strings.Repeat(`{"a":`, ShapeMaxDepth) + `{"b":"hidden"}` + strings.Repeat("}", ShapeMaxDepth)
	tests := []struct {
		name  string
		args  string
		shape string
		paths []string // hashed paths
	}{
		{"no arguments", ``, ``, nil},
		{"blank", " \n\t", ``, nil},
		{"null", `null`, `null`, nil},
		{"root string", `"hello"`, `"string(5)"`, []string{"$"}},
		{"scalars", `{"to":"alice@example.com","n":42,"f":-1.5e3,"ok":true,"no":false,"x":null}`,
			`{"to":"string(17)","n":"number","f":"number","ok":"bool","no":"bool","x":null}`, []string{"$.to"}},
		{"key order kept", `{"z":1,"a":2,"m":3}`, `{"z":"number","a":"number","m":"number"}`, nil},
		{"length in bytes", `{"s":"héllo ✓"}`, `{"s":"string(10)"}`, []string{"$.s"}},
		{"escapes counted decoded", `{"s":"a\nb\u0041"}`, `{"s":"string(4)"}`, []string{"$.s"}},
		{"nested paths", `{"items":[{"body":"x"},{"body":"y"},{"body":"z","tags":["a","b"]}]}`,
			`{"items":[{"body":"string(1)"},{"body":"string(1)"},{"body":"string(1)","tags":["string(1)","string(1)"]}]}`,
			[]string{"$.items[0].body", "$.items[1].body", "$.items[2].body", "$.items[2].tags[0]", "$.items[2].tags[1]"}},
		{"quoted keys", `{"a b":"v","content-type":"v","_ok9":"v","9lives":"v","":"v","q\"\\":"v","<&>":"v","é":"v"}`,
			`{"a b":"string(1)","content-type":"string(1)","_ok9":"string(1)","9lives":"string(1)","":"string(1)","q\"\\":"string(1)","<&>":"string(1)","é":"string(1)"}`,
			[]string{`$["a b"]`, `$["content-type"]`, `$._ok9`, `$["9lives"]`, `$[""]`, `$["q\"\\"]`, `$["<&>"]`, `$["é"]`}},
		{"empty containers", `{"a":[],"o":{}}`, `{"a":[],"o":{}}`, nil},
		{"array cap", join("[", 40, str1, "", "]"), join("[", 32, strShape, `"…+8 more"`, "]"), idx(32)},
		{"array at cap", join("[", 32, one, "", "]"), join("[", 32, numShape, "", "]"), nil},
		{"key cap", join("{", 70, kv, "", "}"), join("{", 64, kvShape, `"…":"+6 more"`, "}"), nil},
		{"key at cap", join("{", 64, kv, "", "}"), join("{", 64, kvShape, "", "}"), nil},
		{"depth cap", deep, strings.Repeat(`{"a":`, ShapeMaxDepth) + `"{…}"` + strings.Repeat("}", ShapeMaxDepth), nil},
		{"duplicate keys kept", `{"a":"x","a":1}`, `{"a":"string(1)","a":"number"}`, []string{"$.a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shape, hashes, err := Shape(json.RawMessage(tt.args), testKeyed)
			if err != nil {
				t.Fatal(err)
			}
			if string(shape) != tt.shape {
				t.Fatalf("shape\n%s\nwant\n%s", shape, tt.shape)
			}
			if len(shape) > 0 && !json.Valid(shape) {
				t.Fatalf("shape is not valid JSON: %s", shape)
			}
			got := slices.Sorted(maps.Keys(hashes))
			want := slices.Sorted(slices.Values(tt.paths))
			if !slices.Equal(got, want) {
				t.Fatalf("hashed paths %q, want %q", got, want)
			}
		})
	}
}

func TestShapeHashes(t *testing.T) {
	_, hashes, err := Shape(json.RawMessage(`{"to":"alice@example.com","cc":["alice@example.com"]}`), testKeyed)
	if err != nil {
		t.Fatal(err)
	}
	want := testKeyed("alice@example.com")
	if hashes["$.to"] != want || hashes["$.cc[0]"] != want {
		t.Fatalf("hashes %v, want both %s", hashes, want)
	}
	if _, h, _ := Shape(json.RawMessage(`{"to":"x"}`), nil); h != nil {
		t.Fatalf("nil keyed gave hashes %v", h)
	}
	var b strings.Builder
	b.WriteString("[")
	for i := range 30 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`["a","b","c","d","e","f","g","h","i","j"]`)
	}
	b.WriteString("]")
	_, hashes, err = Shape(json.RawMessage(b.String()), testKeyed)
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes) != ShapeMaxHashes {
		t.Fatalf("%d hashes, want the cap %d", len(hashes), ShapeMaxHashes)
	}
	if _, ok := hashes["$[25][5]"]; !ok {
		t.Fatal("hashes do not hold the first strings in document order")
	}
}

func TestShapeErrors(t *testing.T) {
	for _, in := range []string{`{`, `{"a":}`, `[1,]`, `{"a":1}{"b":2}`, `{"a":1} x`, `nul`, `{1:2}`, `"\x`, `}`, strings.Repeat("[", 100000)} {
		shape, hashes, err := Shape(json.RawMessage(in), testKeyed)
		if err == nil {
			t.Errorf("Shape(%.20q) = %s, %v; want an error", in, shape, hashes)
		}
	}
	// Deep nesting past the cap is skipped without recursion, up to the
	// depth any JSON Weir reads may have; past that it is refused.
	in := strings.Repeat("[", jsonrpc.MaxDepth) + strings.Repeat("]", jsonrpc.MaxDepth)
	if _, _, err := Shape(json.RawMessage(in), testKeyed); err != nil {
		t.Errorf("deep array: %v", err)
	}
	in = strings.Repeat("[", jsonrpc.MaxDepth+1) + strings.Repeat("]", jsonrpc.MaxDepth+1)
	if _, _, err := Shape(json.RawMessage(in), testKeyed); err == nil {
		t.Errorf("an array nested past jsonrpc.MaxDepth has a shape")
	}
}

// planted is a generated JSON document and the string values planted in it.
type planted struct {
	doc    any
	values []string
}

// Keys are lower-case letters; planted values always hold an upper-case
// letter, so they can be told from keys and from the shape vocabulary.
var (
	keyGen   = rapid.StringMatching(`[a-z]{1,8}`)
	valueGen = rapid.Custom(func(t *rapid.T) string {
		head := rapid.StringMatching(`[A-Z]`).Draw(t, "head")
		rest := rapid.SliceOfN(rapid.SampledFrom([]string{
			"A", "Z", "Q", "0", "9", `"`, `\`, "/", "é", "✓", "\u2028", "\n", "<", "&", " ", "\x00", "\xff",
		}), 3, 20).Draw(t, "rest")
		return head + strings.Join(rest, "")
	})
)

func genDoc(t *rapid.T, depth int, p *planted) any {
	kind := rapid.IntRange(0, 6).Draw(t, "kind")
	if depth == 0 {
		kind = rapid.IntRange(5, 6).Draw(t, "root") // arguments are an object or an array
	}
	if depth > 3 && kind >= 5 {
		kind = 0
	}
	// Wide containers only near the top, to reach the caps without
	// generating huge documents.
	maxElems, maxKeys := 4, 4
	if depth == 0 {
		maxElems, maxKeys = 40, 70
	}
	switch kind {
	case 0, 1:
		v := valueGen.Draw(t, "value")
		p.values = append(p.values, v)
		return v
	case 2:
		return rapid.Float64().Draw(t, "number")
	case 3:
		return rapid.Bool().Draw(t, "bool")
	case 4:
		return nil
	case 5:
		n := rapid.IntRange(0, maxElems).Draw(t, "len")
		a := make([]any, n)
		for i := range a {
			a[i] = genDoc(t, depth+1, p)
		}
		return a
	default:
		n := rapid.IntRange(0, maxKeys).Draw(t, "keys")
		m := make(map[string]any, n)
		for range n {
			m[keyGen.Draw(t, "key")] = genDoc(t, depth+1, p)
		}
		return m
	}
}

// TestShapeNeverHoldsValues: whatever the arguments, no planted string
// value appears in the shape or in the hash map's keys, raw or JSON-escaped.
func TestShapeNeverHoldsValues(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var p planted
		p.doc = genDoc(t, 0, &p)
		args, err := json.Marshal(p.doc)
		if err != nil {
			t.Fatal(err)
		}
		shape, hashes, err := Shape(args, testKeyed)
		if err != nil {
			t.Fatalf("Shape(%s): %v", args, err)
		}
		if !json.Valid(shape) {
			t.Fatalf("shape is not valid JSON: %s", shape)
		}
		var out bytes.Buffer
		out.Write(shape)
		for k, v := range hashes {
			out.WriteString(k)
			out.WriteString(v)
		}
		for _, v := range p.values {
			if len(v) < 4 {
				continue
			}
			esc, _ := json.Marshal(v)
			for _, form := range []string{v, string(esc[1 : len(esc)-1]), string(appendQuoted(nil, v))} {
				if bytes.Contains(out.Bytes(), []byte(form)) {
					t.Fatalf("value %q appears in the output\nshape %s\nhashes %v", v, shape, hashes)
				}
			}
		}
		if len(hashes) > ShapeMaxHashes {
			t.Fatalf("%d hashes", len(hashes))
		}
	})
}

// FuzzShape: Shape never panics, and what it returns is valid JSON.
func FuzzShape(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",{"b":null}]}`, `"s"`, `[[[]]]`, `{"a b":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		shape, _, err := Shape(in, testKeyed)
		if err == nil && len(shape) > 0 && !json.Valid(shape) {
			t.Fatalf("Shape(%q) = %q, not valid JSON", in, shape)
		}
	})
}

// TestNoValuesAtRest: arguments go through Shape into a Record and onto
// disk; no planted value is in the file (DESIGN rule 2).
func TestNoValuesAtRest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var all []string
	rapid.Check(t, func(t *rapid.T) {
		var p planted
		p.doc = genDoc(t, 0, &p)
		args, _ := json.Marshal(p.doc)
		shape, hashes, err := Shape(args, testKeyed)
		if err != nil {
			t.Fatal(err)
		}
		r := &Record{Session: "s", Server: "srv", Event: "call", Method: "tools/call", Tool: "send", Verdict: "allow", Shape: shape, Hashes: hashes}
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		all = append(all, p.values...)
	})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	for _, v := range all {
		esc, _ := json.Marshal(v)
		for _, form := range [][]byte{[]byte(v), esc[1 : len(esc)-1]} {
			if len(v) >= 4 && bytes.Contains(data, form) {
				t.Fatalf("value %q is in the audit log", v)
			}
		}
	}
}
