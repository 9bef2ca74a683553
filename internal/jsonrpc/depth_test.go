package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// nest returns a valid JSON value nesting n levels deep, built from the
// opener and closer of one level around a scalar.
func nest(n int, open, close string) []byte {
	var b bytes.Buffer
	b.Grow(n * (len(open) + len(close)))
	for range n {
		b.WriteString(open)
	}
	b.WriteString("1")
	for range n {
		b.WriteString(close)
	}
	return b.Bytes()
}

// mixed nests n levels alternating arrays and objects.
func mixed(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		if i%2 == 0 {
			b.WriteString(`[0,`)
		} else {
			b.WriteString(`{"k\"[":`)
		}
	}
	b.WriteString(`"]}"`)
	for i := n - 1; i >= 0; i-- {
		if i%2 == 0 {
			b.WriteString(`]`)
		} else {
			b.WriteString(`}`)
		}
	}
	return b.Bytes()
}

// jsonDepth measures nesting with encoding/json's streaming tokenizer, an
// independent reference for valid input.
func jsonDepth(t testing.TB, data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // 1E1000 is valid JSON but no float64
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest
		}
		if err != nil {
			t.Fatalf("reference tokenizer: %v", err)
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

func TestDepthLimit(t *testing.T) {
	shapes := []struct {
		name string
		make func(n int) []byte
	}{
		{"arrays", func(n int) []byte { return nest(n, "[", "]") }},
		{"objects", func(n int) []byte { return nest(n, `{"a":`, "}") }},
		{"spaced", func(n int) []byte { return nest(n, ` [ `, " ] ") }},
		{"mixed", mixed},
	}
	for _, sh := range shapes {
		for _, tc := range []struct {
			depth int
			ok    bool
		}{{1, true}, {MaxDepth - 1, true}, {MaxDepth, true}, {MaxDepth + 1, false}, {2 * MaxDepth, false}} {
			v := sh.make(tc.depth)
			if got := jsonDepth(t, v); got != tc.depth {
				t.Fatalf("%s %d: the fixture nests %d levels", sh.name, tc.depth, got)
			}
			if got := Valid(v); got != tc.ok {
				t.Errorf("%s at depth %d: Valid = %v, want %v", sh.name, tc.depth, got, tc.ok)
			}
			if got := TooDeep(v); got != !tc.ok {
				t.Errorf("%s at depth %d: TooDeep = %v, want %v", sh.name, tc.depth, got, !tc.ok)
			}
			// As arguments the value sits two levels inside the message.
			if tc.depth > 2 {
				msg := append(append([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":`), sh.make(tc.depth-2)...), "}}"...)
				checkParseDepth(t, sh.name, msg, tc.ok)
			}
		}
	}
}

func checkParseDepth(t *testing.T, name string, msg []byte, ok bool) {
	t.Helper()
	m, err := Parse(msg)
	if ok {
		if err != nil || m == nil {
			t.Errorf("%s: Parse of a message %d levels deep: %v", name, jsonDepth(t, msg), err)
		}
		return
	}
	var bad *BadMessageError
	if !errors.As(err, &bad) {
		t.Fatalf("%s: Parse = %v, %v; want a BadMessageError", name, m, err)
	}
	if bad.Code != CodeInvalidRequest || string(bad.ID) != "7" || !strings.Contains(bad.Reason, "more than 1000 levels deep") {
		t.Errorf("%s: got code %d id %q reason %q", name, bad.Code, bad.ID, bad.Reason)
	}
}

func TestDepthStrings(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1)
	tests := []struct {
		name string
		in   string
		deep bool
	}{
		{"brackets in a string", `["` + deep + `"]`, false},
		{"braces in a string", `{"` + strings.Repeat("{", 2*MaxDepth) + `":"` + strings.Repeat("{", 2*MaxDepth) + `"}`, false},
		{"escaped quote keeps the string open", `["\"` + deep + `\""]`, false},
		{"escaped backslash closes it", `["\\",` + deep + strings.Repeat("]", MaxDepth+1) + `]`, true},
		{"three backslashes keep it open", `["\\\"` + deep + `"]`, false},
		{"unicode escape for a quote", `["\u0022` + deep + `"]`, false},
		{"short strings between levels", strings.Repeat(`["ab",`, MaxDepth+1) + "1" + strings.Repeat("]", MaxDepth+1), true},
		{"unclosed", deep, true},
		{"unclosed string hides the rest", `["` + deep, false},
		{"closer first", "]" + deep, false},
		{"flat", strings.Repeat("[],", 5*MaxDepth), false},
	}
	for _, tt := range tests {
		if got := TooDeep([]byte(tt.in)); got != tt.deep {
			t.Errorf("%s: TooDeep = %v, want %v", tt.name, got, tt.deep)
		}
		if json.Valid([]byte(tt.in)) && jsonDepth(t, []byte(tt.in)) > MaxDepth != tt.deep {
			t.Errorf("%s: the reference disagrees", tt.name)
		}
	}
}

// hugeNests are the lines of the reported defect: millions of levels in a
// few megabytes, under DefaultMaxMessage, which overflowed the goroutine
// stack (a fatal error) in the recursive validator.
var hugeNests = sync.OnceValue(func() map[string][]byte {
	const n = 2_000_000
	env := func(v []byte) []byte {
		return append(append([]byte(`{"jsonrpc":"2.0","id":"deep-1","method":"tools/call","params":{"name":"x","arguments":`), v...), "}}"...)
	}
	return map[string][]byte{
		"arrays":           nest(n, "[", "]"),
		"unclosed arrays":  bytes.Repeat([]byte("["), n),
		"objects":          nest(n, `{"a":`, "}"),
		"arrays in params": env(nest(n, "[", "]")),
		"unclosed objects": env(bytes.Repeat([]byte(`{"a":`), n)),
		"id after":         append(append([]byte(`{"jsonrpc":"2.0","method":"tools/call","params":`), nest(n, "[", "]")...), `,"id":9}`...),
	}
})

func TestDeepLines(t *testing.T) {
	for name, line := range hugeNests() {
		t.Run(name, func(t *testing.T) {
			if len(line) > DefaultMaxMessage {
				t.Fatalf("the fixture is %d bytes, over the message limit", len(line))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			m, err := Parse(line)
			valid := Valid(line)
			runtime.ReadMemStats(&after)
			var bad *BadMessageError
			if !errors.As(err, &bad) || m != nil {
				t.Fatalf("Parse = %v, %v; want a BadMessageError", m, err)
			}
			if valid {
				t.Error("Valid accepted it")
			}
			if bad.Code != CodeInvalidRequest || !strings.Contains(bad.Reason, "more than 1000 levels deep; Weir refuses it") {
				t.Errorf("code %d reason %q", bad.Code, bad.Reason)
			}
			wantID := ""
			switch {
			case bytes.Contains(line, []byte(`"id":"deep-1"`)):
				wantID = `"deep-1"`
			case bytes.HasSuffix(line, []byte(`"id":9}`)):
				wantID = "9"
			}
			if string(bad.ID) != wantID {
				t.Errorf("id %q, want %q", bad.ID, wantID)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("Parse and Valid of a %d-byte line allocated %d bytes", len(line), alloc)
			}
			if after.StackInuse > before.StackInuse+1<<20 {
				t.Errorf("the stack grew from %d to %d bytes", before.StackInuse, after.StackInuse)
			}
		})
	}
}

func TestDeepAllocs(t *testing.T) {
	line := hugeNests()["arrays in params"]
	if n := testing.AllocsPerRun(3, func() { _, _ = Parse(line) }); n > 16 {
		t.Errorf("Parse of a deep line: %v allocations", n)
	}
	if n := testing.AllocsPerRun(3, func() { _ = Valid(line) }); n != 0 {
		t.Errorf("Valid of a deep line: %v allocations", n)
	}
}

// The walkers do not recurse either: on a deep (valid but refused) value
// they still find its end.
func TestDeepWalkers(t *testing.T) {
	inner := nest(2_000_000, "[", "]")
	obj := append(append([]byte(`{"id":1,"params":`), inner...), `,"tail":true}`...)
	if end := SkipValue(inner, 0); end != len(inner) {
		t.Errorf("SkipValue = %d, want %d", end, len(inner))
	}
	var names []string
	if err := EachMember(obj, func(n string, v []byte) error {
		names = append(names, n)
		return nil
	}); err != nil || strings.Join(names, ",") != "id,params,tail" {
		t.Errorf("EachMember: %q %v", names, err)
	}
	if err := Members(obj, func(string, []byte) error { return nil }); err != nil {
		t.Errorf("Members: %v", err)
	}
	count := 0
	arr := append(append([]byte("["), inner...), ",2]"...)
	if err := EachElement(arr, func(int, []byte) error { count++; return nil }); err != nil || count != 2 {
		t.Errorf("EachElement: %d elements, %v", count, err)
	}
	out, ok := ReplaceMember(obj, "tail", []byte("false"))
	if !ok || !bytes.HasSuffix(out, []byte(`,"tail":false}`)) || len(out) != len(obj)+1 {
		t.Errorf("ReplaceMember: %v, %d bytes", ok, len(out))
	}
}

func TestDeepReader(t *testing.T) {
	line := hugeNests()["arrays in params"]
	in := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), line...), "\n"...)
	// Under the limit the line comes through whole, and Parse refuses it.
	r := NewReader(bytes.NewReader(in), DefaultMaxMessage)
	if l, err := r.Next(); err != nil || !bytes.Contains(l, []byte("ping")) {
		t.Fatalf("first line: %q %v", l, err)
	}
	l, err := r.Next()
	if err != nil || len(l) != len(line) {
		t.Fatalf("deep line: %d bytes, %v", len(l), err)
	}
	if _, err := Parse(l); err == nil {
		t.Fatal("Parse accepted the deep line")
	}
	// Over the limit the envelope scanner streams it, keeping the id.
	r = NewReader(bytes.NewReader(in), 1<<20)
	_, _ = r.Next()
	_, err = r.Next()
	var over *OversizeError
	if !errors.As(err, &over) || string(over.ID) != `"deep-1"` || over.Method != "tools/call" {
		t.Fatalf("oversize: %v", err)
	}
}
