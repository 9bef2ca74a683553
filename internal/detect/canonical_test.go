package detect

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// refCanonicalJSON is CanonicalJSON as it was first written, on
// encoding/json's Decoder: the definition of the canonical encoding, which
// pins and their hashes depend on. CanonicalJSON must agree with it byte
// for byte and on what is an error.
// CanonicalJSON returns the canonical encoding DefinitionHash uses for a
// JSON value, or an error if raw is not one valid JSON value.
func refCanonicalJSON(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := refCanonical(&b, dec, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return b.Bytes(), nil
}

// canonical writes the next JSON value of dec canonically.
func refCanonical(b *bytes.Buffer, dec *json.Decoder, depth int) error {
	if depth > 1000 {
		return errDepth
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			type kv struct {
				k string
				v []byte
			}
			var kvs []kv
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, ok := kt.(string)
				if !ok {
					return errSyntax
				}
				var vb bytes.Buffer
				if err := refCanonical(&vb, dec, depth+1); err != nil {
					return err
				}
				kvs = append(kvs, kv{k, vb.Bytes()})
			}
			if _, err := dec.Token(); err != nil { // '}'
				return err
			}
			sort.SliceStable(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
			b.WriteByte('{')
			for i, e := range kvs {
				if i > 0 {
					b.WriteByte(',')
				}
				writeJSONString(b, e.k)
				b.WriteByte(':')
				b.Write(e.v)
			}
			b.WriteByte('}')
		case '[':
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := refCanonical(b, dec, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			b.WriteByte(']')
		default:
			return errSyntax
		}
	case string:
		writeJSONString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
	return nil
}

// sameAsRefCanonical reports how CanonicalJSON and refCanonicalJSON
// differ on raw, "" if they do not.
func sameAsRefCanonical(raw []byte) string {
	got, err := CanonicalJSON(raw)
	want, werr := refCanonicalJSON(raw)
	switch {
	case (err == nil) != (werr == nil):
		return "error " + strconv.Quote(errString(err)) + ", reference " + strconv.Quote(errString(werr))
	case err == nil && !bytes.Equal(got, want):
		return "got " + strconv.Quote(string(got)) + "\nwant " + strconv.Quote(string(want))
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

// canonCases are JSON texts at the edges of the grammar and of string
// decoding: escapes, surrogates, invalid UTF-8, numbers, white space,
// duplicate and unordered keys, trailing data, nesting.
var canonCases = []string{
	`{"b":1,"a":[true,null,"x\u0001"],"c":{"z":1.50,"y":"é"}}`, `{} {}`, `{}`, `[]`, `""`, `0`, `-0`, `-`, `01`, `1.`, `1.e5`, `1e`, `1E+2`, `1e-07`, `-12.5E3`,
	`  {"a" : 1 }  `, "\t[1,\n2]\r\n", `{"a":1,}`, `[1,]`, `{,}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `[1 2]`, `{"a":1 "b":2}`, `{1:2}`,
	`"\ud800"`, `"\ud800\udc00"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud800x"`, `"\uD83D\uDE00"`, `"\u00e9"`, `"\/\b\f\n\r\t\"\\"`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"\xff\xfe\"", "\"a\xc3\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"", `"abc`, `"abc\"`, `tru`, `true`, `false`, `null`, `nul`, `truex`, `[truefalse]`, `NaN`, `Infinity`,
	`{"b":1,"a":2,"b":3,"a":4}`, `{"é":1,"e":2,"E":3,"":4}`, `{"a\u0000b":1,"a":2}`, `[{"b":[{"d":1,"c":2}],"a":{}}]`, "\ufeff{}", `1 2`, `[1]]`, `{}}`, `12a`,
	strings.Repeat("[", 1001) + strings.Repeat("]", 1001), strings.Repeat("[", 1002) + strings.Repeat("]", 1002), strings.Repeat("[", 1001) + "1" + strings.Repeat("]", 1001),
	strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000), strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001),
}

// TestCanonicalJSONAsReference: the one-pass canonicaliser agrees with
// the encoding/json one on the edge cases and on random JSON values.
func TestCanonicalJSONAsReference(t *testing.T) {
	for _, c := range canonCases {
		if d := sameAsRefCanonical([]byte(c)); d != "" {
			t.Errorf("%q: %s", c, d)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		v := randomJSON(t, 0)
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if d := sameAsRefCanonical(raw); d != "" {
			t.Fatalf("%s: %s", raw, d)
		}
		// and with white space, and one byte changed
		ind, _ := json.MarshalIndent(v, " ", "\t")
		if d := sameAsRefCanonical(ind); d != "" {
			t.Fatalf("%s: %s", ind, d)
		}
		if len(raw) > 0 {
			m := bytes.Clone(raw)
			m[rapid.IntRange(0, len(m)-1).Draw(t, "at")] = rapid.SampledFrom([]byte(`{}[]",:\ 0-.eEtfn\x80\xff`)).Draw(t, "byte")
			if d := sameAsRefCanonical(m); d != "" {
				t.Fatalf("%q: %s", m, d)
			}
		}
	})
}

func randomJSON(t *rapid.T, depth int) any {
	kinds := 7
	if depth > 4 {
		kinds = 4
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		return rapid.SampledFrom([]any{nil, true, false}).Draw(t, "literal")
	case 1:
		return json.Number(rapid.SampledFrom([]string{"0", "-0", "1", "12.50", "1e5", "-3.25E-7", "123456789012345678901234567890"}).Draw(t, "number"))
	case 2, 3:
		return rapid.StringOf(rapid.SampledFrom([]rune{'a', 'é', '"', '\\', '/', '\n', 0, 0x1f, 0x7f, 0xfffd, 0x2028, 0x1f600, '<', '&'})).Draw(t, "string")
	case 4, 5:
		n := rapid.IntRange(0, 4).Draw(t, "members")
		m := map[string]any{}
		for range n {
			m[rapid.StringOf(rapid.SampledFrom([]rune{'a', 'b', 'B', 'é', '_', 0})).Draw(t, "key")] = randomJSON(t, depth+1)
		}
		return m
	default:
		n := rapid.IntRange(0, 4).Draw(t, "elements")
		a := make([]any, n)
		for i := range a {
			a[i] = randomJSON(t, depth+1)
		}
		return a
	}
}

// FuzzCanonicalJSON: on any bytes, the one-pass canonicaliser agrees with
// the reference.
func FuzzCanonicalJSON(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if d := sameAsRefCanonical(raw); d != "" {
			t.Fatalf("%q: %s", raw, d)
		}
	})
}

// BenchmarkCanonicalJSON canonicalises the input schemas of a real
// catalogue, one-pass and reference side by side.
func BenchmarkCanonicalJSON(b *testing.B) {
	c, _ := catalogue100(b)
	for _, impl := range []struct {
		name string
		fn   func([]byte) ([]byte, error)
	}{{"reference", refCanonicalJSON}, {"one-pass", CanonicalJSON}} {
		b.Run(impl.name, func(b *testing.B) {
			n := 0
			for i := range c.Tools {
				n += len(c.Tools[i].InputSchema)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				for i := range c.Tools {
					if _, err := impl.fn(c.Tools[i].InputSchema); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestCanonicalJSONLinear: canonicalising 1 MB nested 1,000 objects deep
// (keys in order, keys out of order, and arrays) allocates a few times the
// input, not the input once per level: sorting by copying each object into
// its parent did that, seconds of work on a schema a server may send.
func TestCanonicalJSONLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what is allocated")
	}
	big := `"` + strings.Repeat("x", 1<<20) + `"`
	for name, in := range map[string]string{
		"objects in order":     strings.Repeat(`{"a":`, 1000) + big + strings.Repeat(`}`, 1000),
		"objects out of order": strings.Repeat(`{"b":0,"a":`, 1000) + big + strings.Repeat(`}`, 1000),
		"arrays of objects":    strings.Repeat(`[{"b":0},{"a":`, 500) + big + strings.Repeat(`}]`, 500),
	} {
		raw := []byte(in)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := CanonicalJSON(raw)
		runtime.ReadMemStats(&after)
		if err != nil || len(out) < 1<<20 {
			t.Fatalf("%s: %d bytes, %v", name, len(out), err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 8*uint64(len(raw)) {
			t.Errorf("%s: canonicalising %d bytes allocated %d", name, len(raw), n)
		}
	}
}
