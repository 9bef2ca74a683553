package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzValid checks the one-pass validator against encoding/json.Valid on
// any bytes: the same verdict wherever the nesting is within MaxDepth, a
// refusal past it, and on a valid value the same end and the same depth
// bound as encoding/json's tokenizer.
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, ` {"a" : [ 1 , 2.5e-3 , -0 , true , false , null ] } `, `"\u00e9\ud83d\ude00"`, `"\x"`, `"\u12"`,
		`01`, `-`, `1.`, `1e`, `1e+`, `.5`, `+1`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `{,}`, `{"a":}`,
		`tru`, `nul`, `falsey`, "\"tab\there\"", "\"\x7f\xff\xfe\"", `"a\"b\\"`, `"unterminated`, `{"a":"b"}}`, `]`, "\"\\\x00\"",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"s":"aaaaaaaaaaaaaaaa\"bbbbbbbb\\cccccccc"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(nest(MaxDepth, "[", "]"))
	f.Add(nest(MaxDepth+1, `{"a":`, "}"))
	f.Add(mixed(MaxDepth + 1))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, want := Valid(in), json.Valid(in)
		if TooDeep(in) {
			if got {
				t.Fatalf("Valid(%q) = true past MaxDepth", in)
			}
			return
		}
		if got != want {
			t.Fatalf("Valid(%q) = %v; encoding/json.Valid says %v", in, got, want)
		}
		if !want {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(in))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if end, err := scanValue(in, 0, MaxDepth); err != nil || end != int(dec.InputOffset()) {
			t.Fatalf("scanValue(%q) = %d, %v; the value ends at %d", in, end, err, dec.InputOffset())
		}
		depth := jsonDepth(t, in)
		for limit := range 6 {
			_, err := scanValue(in, 0, limit)
			if deep := errors.Is(err, errTooDeep); deep != (depth > limit) || err != nil && !deep {
				t.Fatalf("scanValue(%q, limit %d) = %v; the value nests %d levels", in, limit, err, depth)
			}
		}
	})
}

// TestScanStringWords: a quote, a backslash or a control byte is found at
// every offset of the eight-byte words, and bytes of 0x80 and above (which
// borrow nothing) never hide one.
func TestScanStringWords(t *testing.T) {
	for _, filler := range []string{"a", "\xff", "\x80", "é", " "} {
		for n := range 24 {
			body := strings.Repeat(filler, n)
			for _, tc := range []struct {
				tail string
				ok   bool
			}{{`"`, true}, {`\"x"`, true}, {`\u00e9"`, true}, {"\x1f\"", false}, {"\x00\"", false}, {`\q"`, false}, {``, false}} {
				in := []byte(`"` + body + tc.tail + strings.Repeat("z", 9))
				end, ok := ScanString(in, 0)
				if ok != tc.ok || ok != json.Valid(in[:max(end, 1)]) {
					t.Fatalf("ScanString(%q) = %d, %v; want ok %v", in, end, ok, tc.ok)
				}
			}
		}
	}
}
