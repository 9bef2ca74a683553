package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r *Reader) (lines []string, errs []error) {
	t.Helper()
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return lines, errs
		}
		if err != nil {
			var over *OversizeError
			if !errors.As(err, &over) {
				t.Fatalf("Next: %v", err)
			}
			errs = append(errs, err)
			continue
		}
		lines = append(lines, string(line))
	}
}

func TestReaderLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "{\"a\":1}\n{\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}},
		{"crlf", "{\"a\":1}\r\n", []string{`{"a":1}`}},
		{"no final newline", "{\"a\":1}\n{\"b\":2}", []string{`{"a":1}`, `{"b":2}`}},
		{"blank lines skipped", "\n  \n{\"a\":1}\n\n", []string{`{"a":1}`}},
		{"empty", "", nil},
		{"inner spaces kept", "{ \"a\" : 1 }\n", []string{`{ "a" : 1 }`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time exercises every chunk boundary.
			got, errs := readAll(t, NewReader(iotest.OneByteReader(strings.NewReader(tt.in)), 100))
			if len(errs) > 0 {
				t.Fatalf("unexpected errors %v", errs)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReaderOversize(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"tools/call","params":{"x":"` + strings.Repeat("a", 200_000) + `"},"id":"req-7"}`
	in := `{"a":1}` + "\n" + big + "\n" + `{"b":2}` + "\n"
	r := NewReader(strings.NewReader(in), 1024)
	lines, errs := readAll(t, r)
	if strings.Join(lines, "|") != `{"a":1}|{"b":2}` {
		t.Errorf("lines around the oversized one = %q", lines)
	}
	if len(errs) != 1 {
		t.Fatalf("got %d oversize errors, want 1", len(errs))
	}
	var over *OversizeError
	errors.As(errs[0], &over)
	if string(over.ID) != `"req-7"` || over.Method != "tools/call" || over.Size != int64(len(big)) || over.Limit != 1024 {
		t.Errorf("oversize = %+v (id %s)", over, over.ID)
	}
	if !errors.Is(errs[0], ErrTooLarge) {
		t.Error("not ErrTooLarge")
	}
}

func TestReaderExactLimit(t *testing.T) {
	msg := `{"a":"` + strings.Repeat("x", 90) + `"}`
	lines, errs := readAll(t, NewReader(strings.NewReader(msg+"\n"), len(msg)))
	if len(errs) != 0 || len(lines) != 1 {
		t.Fatalf("a message of exactly the limit must pass: lines %d errs %v", len(lines), errs)
	}
	_, errs = readAll(t, NewReader(strings.NewReader(msg+"\n"), len(msg)-5))
	if len(errs) != 1 {
		t.Fatalf("a message over the limit must fail")
	}
}

func TestEnvelopeScanner(t *testing.T) {
	tests := []struct {
		in     string
		id     string
		method string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"x"}`, `1`, "x"},
		{`{"method":"tools/call","params":{"id":99,"method":"nested"},"id":"abc"}`, `"abc"`, "tools/call"},
		{`{"id" : -3 , "method" : "m" }`, `-3`, "m"},
		{`{"id":{"bad":1},"method":"m"}`, ``, "m"},
		{`{"id":null}`, ``, ""},
		{`{"params":"he said \"id\":5","id":7}`, `7`, ""},
		{`[{"id":1}]`, ``, ""},
		{`{"id":"a\"b"}`, `"a\"b"`, ""},
		{`not json at all`, ``, ""},
	}
	for _, tt := range tests {
		var s envelopeScanner
		s.feed([]byte(tt.in))
		if got := string(s.id()); got != tt.id {
			t.Errorf("%s: id = %q, want %q", tt.in, got, tt.id)
		}
		if got := s.method(); got != tt.method {
			t.Errorf("%s: method = %q, want %q", tt.in, got, tt.method)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		code int
		id   string
		kind string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0, "", "call"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", "notification"},
		{`{"jsonrpc":"2.0","id":"x","result":{}}`, 0, "", "response"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","extra":{"unknown":true}}`, 0, "", "call"},
		{`{"jsonrpc":"2.0","id":1,"method":`, CodeParseError, "1", ""},
		{`{"jsonrpc":"2.0","method":"x","id":`, CodeParseError, "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, CodeInvalidRequest, "", ""},
		{`42`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"1.0","id":5,"method":"x"}`, CodeInvalidRequest, "5", ""},
		{`{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, "", ""},
	}
	for _, tt := range tests {
		m, err := Parse([]byte(tt.in))
		if tt.code != 0 {
			var bad *BadMessageError
			if !errors.As(err, &bad) {
				t.Errorf("%s: err = %v, want BadMessageError", tt.in, err)
				continue
			}
			if bad.Code != tt.code || string(bad.ID) != tt.id {
				t.Errorf("%s: code %d id %q, want %d %q", tt.in, bad.Code, bad.ID, tt.code, tt.id)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		kind := "response"
		if r, ok := m.(*Request); ok {
			kind = "notification"
			if r.ID.IsValid() {
				kind = "call"
			}
		}
		if kind != tt.kind {
			t.Errorf("%s: kind %s, want %s", tt.in, kind, tt.kind)
		}
	}
}

func TestResponses(t *testing.T) {
	got := string(ErrorResponse([]byte(`"a"`), CodeServerUnavailable, `server "x" <gone>`))
	want := `{"jsonrpc":"2.0","id":"a","error":{"code":-32001,"message":"server \"x\" <gone>"}}`
	if got != want {
		t.Errorf("ErrorResponse = %s\nwant %s", got, want)
	}
	if got := string(ErrorResponse(nil, CodeParseError, "p")); !strings.Contains(got, `"id":null`) {
		t.Errorf("nil id: %s", got)
	}
	for _, b := range [][]byte{ErrorResponse([]byte("7"), 1, "m"), ResultResponse([]byte("7"), []byte(`{"ok":true}`))} {
		if _, err := Parse(b); err != nil {
			t.Errorf("%s does not parse: %v", b, err)
		}
	}
}

func TestWriterLines(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteLine([]byte(`{"a":1}`))
	w.WriteLine([]byte(`{"b":2}`))
	if buf.String() != "{\"a\":1}\n{\"b\":2}\n" {
		t.Errorf("got %q", buf.String())
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"id\":1}\n{\"id\":2}"), 16)
	f.Add([]byte("\r\n\n{\"method\":\"x\",\"id\":\""+strings.Repeat("z", 100)+"\"}\n"), 8)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit <= 0 || limit > 1<<20 {
			limit = 64
		}
		r := NewReader(bytes.NewReader(in), limit)
		total := 0
		for {
			line, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var over *OversizeError
			if errors.As(err, &over) {
				total += int(over.Size)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(line) > limit {
				t.Fatalf("line of %d bytes passed a limit of %d", len(line), limit)
			}
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatal("line contains a newline")
			}
			total += len(line)
		}
		if total > len(in) {
			t.Fatalf("read %d bytes from %d", total, len(in))
		}
	})
}

// checkScanner compares the envelope scanner's fast path for nested
// values with plain step-by-step scanning, fed whole and in pieces.
func checkScanner(t *testing.T, in []byte) {
	t.Helper()
	var slow envelopeScanner
	for _, c := range in {
		slow.step(c)
	}
	for _, piece := range []int{len(in) + 1, 7, 1} {
		var fast envelopeScanner
		for rest := in; len(rest) > 0; {
			n := min(piece, len(rest))
			fast.feed(rest[:n])
			rest = rest[n:]
		}
		if string(fast.id()) != string(slow.id()) || fast.method() != slow.method() || fast.depth != slow.depth {
			t.Fatalf("%q in pieces of %d: id %q method %q depth %d, stepwise %q %q %d", in, piece,
				fast.id(), fast.method(), fast.depth, slow.id(), slow.method(), slow.depth)
		}
	}
}

func TestEnvelopeScannerNested(t *testing.T) {
	for _, in := range []string{
		`{"params":{"a":"x\"y\\","id":2},"id":3,"method":"m"}`,
		`{"params":[["]","\\"],{"id":"z"}],"method":"tools/call","id":"q\"r"}`,
		`{"a":[[[1]]]]]],"id":4}`,
		`{"a":{"b":"unterminated,"id":5}`,
		`]]]{"id":6}`,
	} {
		checkScanner(t, []byte(in))
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"id":`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"m","params":{"a":"[{\"}"}}`))
	// Nesting at the depth limit, one past it, and past encoding/json's
	// own limit. (The 2,000,000 levels of the reported stack overflow are
	// in TestDeepLines: seeds that size would stall the fuzzer.)
	f.Add(append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":`), nest(MaxDepth-2, "[", "]")...), '}'))
	f.Add(append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":`), nest(MaxDepth-1, `{"a":`, "}")...), '}'))
	f.Add(append(append([]byte(`{"jsonrpc":"2.0","id":"d","method":"x","params":`), nest(12_000, "[", "]")...), '}'))
	f.Add(bytes.Repeat([]byte(`{"a":`), 3*MaxDepth))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Parse(in)
		if err == nil && m == nil {
			t.Fatal("nil message without error")
		}
		if err == nil && !Valid(in) {
			t.Fatalf("Parse accepted %q, which Valid refuses", in)
		}
		if len(in) < 1<<16 {
			checkScanner(t, in)
		}
		var bad *BadMessageError
		if err != nil && !errors.As(err, &bad) {
			t.Fatalf("error %T is not a BadMessageError", err)
		}
		if bad != nil {
			// go-sdk refuses responses with a null id, which JSON-RPC allows
			// for unreadable requests, so check validity, not Parse.
			resp := ErrorResponse(bad.ID, bad.Code, bad.Reason)
			if !json.Valid(resp) {
				t.Fatalf("the error response to %q is not JSON: %s", in, resp)
			}
			if bad.ID != nil {
				if _, err := Parse(resp); err != nil {
					t.Fatalf("the error response to %q does not parse: %v", in, err)
				}
			}
		}
	})
}

// FuzzSkipValue checks the hand-written skipper against encoding/json on
// every valid JSON value: it must end exactly where the value ends.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`"a\\\"b"`, `{"a":[1,{"b":"}"}]}`, `"\\"`, `[ "x" , 2 ]`, `-1.5e3`, `true`, `{"k":"\u0022"}`, `[["\"[",{"]":[]}]]`} {
		f.Add([]byte(s))
	}
	f.Add(nest(MaxDepth, "[", "]"))
	f.Add(nest(MaxDepth+1, `{"a":`, "}"))
	f.Add(mixed(MaxDepth + 1))
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		// The depth bound agrees with encoding/json's tokenizer, at small
		// limits so the fuzzer reaches them.
		depth := jsonDepth(t, in)
		for limit := range 6 {
			if got := nestsDeeper(in, limit); got != (depth > limit) {
				t.Fatalf("nestsDeeper(%q, %d) = %v; the value nests %d levels", in, limit, got, depth)
			}
		}
		if Valid(in) == (depth > MaxDepth) {
			t.Fatalf("Valid(%q) = %v at depth %d", in, Valid(in), depth)
		}
		dec := json.NewDecoder(bytes.NewReader(in))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		want := int(dec.InputOffset())
		start := SkipSpace(in, 0)
		if got := SkipValue(in, start); got != want {
			t.Fatalf("SkipValue(%q) = %d, want %d", in, got, want)
		}
	})
}

func TestMembersExact(t *testing.T) {
	var got []string
	err := Members([]byte(` {"a":1, "b" : {"x":"}"} ,"c\u0041":"v"} `), func(n string, v []byte) error {
		got = append(got, n+"="+string(v))
		return nil
	})
	if err != nil || strings.Join(got, " ") != `a=1 b={"x":"}"} cA="v"` {
		t.Errorf("got %q, %v", got, err)
	}
	for _, dup := range []string{`{"a":1,"a":2}`, `{"name":"x","n\u0061me":"y"}`, `{"name":"a","NAME":"b"}`, `{"ask":1,"a\u017fk":2}`} {
		if err := Members([]byte(dup), func(string, []byte) error { return nil }); !errors.Is(err, ErrDuplicateKey) {
			t.Errorf("%s: err %v, want ErrDuplicateKey", dup, err)
		}
	}
}

func TestReplaceMember(t *testing.T) {
	obj := []byte(`{"jsonrpc":"2.0", "id":1, "result" : {"tools":[1,2]} ,"x":"result"}`)
	got, ok := ReplaceMember(obj, "result", []byte(`{"tools":[]}`))
	if !ok || string(got) != `{"jsonrpc":"2.0", "id":1, "result" : {"tools":[]} ,"x":"result"}` {
		t.Errorf("got %s %v", got, ok)
	}
	if _, ok := ReplaceMember(obj, "nope", []byte(`1`)); ok {
		t.Error("replaced a missing member")
	}
	if string(obj) != `{"jsonrpc":"2.0", "id":1, "result" : {"tools":[1,2]} ,"x":"result"}` {
		t.Error("the input was modified")
	}
}
