package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestWalk(t *testing.T) {
	for _, in := range []string{`{}`, `[]`, `1`, `"x"`, ` {"a" : [1, {"b":null}, "c\"]"], "d":{}, "e":[]} `, `[[[]],[{}]]`,
		`{"a":1,"a":2}`, `{"k":"\u00e9\n"}`, `-1.5e3`, `true`} {
		got, err := Decode([]byte(in))
		var want any
		json.Unmarshal([]byte(in), &want)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, %v; want %#v", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `{`, `[1,`, `{"a"}`, `{"a":1,}`, `[1]]`, `{"a":1]`, `[1 2]`, `{1:2}`, `"open`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestWalkSkip(t *testing.T) {
	var keys []string
	err := Walk([]byte(`{"a":{"x":[1,2]},"b":"y","c":[{"z":1}]}`), func(tok Token, text string, raw []byte) error {
		if tok == Key {
			keys = append(keys, text)
			if text == "a" || text == "c" {
				return ErrSkip
			}
		}
		return nil
	})
	if err != nil || strings.Join(keys, ",") != "a,b,c" {
		t.Errorf("keys %v, %v", keys, err)
	}
}

// TestWalkLinear: a value nested MaxDepth levels, megabytes long, is
// walked in one pass. Recursing through EachMember cost size × depth: tens
// of seconds for this input.
func TestWalkLinear(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(strings.Repeat(`{"k":[`, MaxDepth/2-1))
	b.WriteString(`"` + strings.Repeat("x", 8<<20) + `"`)
	b.WriteString(strings.Repeat(`]}`, MaxDepth/2-1))
	v := b.Bytes()
	if !Valid(v) {
		t.Fatal("test input is not valid")
	}
	start := time.Now()
	n := 0
	if err := Walk(v, func(Token, string, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("walking %d bytes %d deep took %s", len(v), MaxDepth, d)
	}
	if n != 5*(MaxDepth/2-1)+1 { // {, "k", [ and ], } per level, and the string
		t.Errorf("%d tokens", n)
	}
}

// FuzzWalk: for any valid JSON, walking it rebuilds what encoding/json
// decodes; for anything else Walk errors, never panics.
func FuzzWalk(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}],"c":"d"}`, `[[],{}]`, `{"a":1,"a":2}`, `"x"`, `{"a":`, `[1]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Decode(in)
		if !Valid(in) {
			return
		}
		var want any
		if json.Unmarshal(in, &want) != nil {
			return
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, %v; want %#v", in, got, err, want)
		}
	})
}

// TestMembersManyNames: an object with a hundred thousand members is
// checked for repeats in linear time, case-folded repeats included.
func TestMembersManyNames(t *testing.T) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range 100_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	obj := append(bytes.Clone(b.Bytes()), '}')
	start := time.Now()
	if err := Members(obj, func(string, []byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("100,000 members took %s", d)
	}
	dup := append(bytes.Clone(b.Bytes()), []byte(`,"K99999":2}`)...)
	if err := Members(dup, func(string, []byte) error { return nil }); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("a case-folded repeat after many members: %v", err)
	}
	if FoldKey("\u212a") != FoldKey("k") || FoldKey("ſ") != FoldKey("S") {
		t.Error("FoldKey disagrees with strings.EqualFold")
	}
}
