package jsonrpc

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

func TestMemberAndReplaceAt(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","method":"m","params":{"_meta":{"k":1,"j":"x"},"a":[1]}}`)
	if got := string(Member(msg, "method")); got != `"m"` {
		t.Errorf("Member(method) = %s", got)
	}
	if Member(msg, "nope") != nil || Member([]byte(`[1]`), "a") != nil {
		t.Error("Member found what is not there")
	}
	out, ok := ReplaceAt(msg, []byte(`"y"`), "params", "_meta", "j")
	if !ok || string(out) != `{"jsonrpc":"2.0","method":"m","params":{"_meta":{"k":1,"j":"y"},"a":[1]}}` {
		t.Errorf("ReplaceAt = %s, %v", out, ok)
	}
	if out, ok := ReplaceAt(msg, []byte(`1`), "params", "missing", "j"); ok || string(out) != string(msg) {
		t.Errorf("ReplaceAt on a missing path = %s, %v", out, ok)
	}
}

// TestFoldName: two member names fold alike exactly when strings.EqualFold
// says they match, including the runes whose orbits have three members
// (k, K and the Kelvin sign; s, S and the long s).
func TestFoldName(t *testing.T) {
	variant := func(t *rapid.T, s string) string {
		var b strings.Builder
		for _, r := range s {
			for n := rapid.IntRange(0, 3).Draw(t, "fold steps"); n > 0; n-- {
				r = unicode.SimpleFold(r)
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	alphabet := rapid.StringOf(rapid.SampledFrom([]rune("aAkKsSſ\u212aµΜμßẞǅǄǆ1_ ")))
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.OneOf(alphabet, rapid.String()).Draw(t, "a")
		b := rapid.OneOf(alphabet, rapid.Just(variant(t, a))).Draw(t, "b")
		if got, want := FoldKey(a) == FoldKey(b), strings.EqualFold(a, b); got != want {
			t.Fatalf("FoldKey(%q) == FoldKey(%q) is %v; strings.EqualFold says %v", a, b, got, want)
		}
	})
}

// ReplaceValue splices exactly as ReplaceMember does when v is the
// member's value as Member or Parse read it, and refuses a v that is not
// a slice of obj (a copy, another buffer, an empty value).
func TestReplaceValue(t *testing.T) {
	for _, obj := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"result":[1,2,3],"id":"x","jsonrpc":"2.0"}`,
		`{ "id" : 7 , "result" : "a\"b" , "jsonrpc" : "2.0" }`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"} \"result\": ]"}]},"x":null}`,
	} {
		b := []byte(obj)
		v := Member(b, "result")
		want, ok := ReplaceMember(b, "result", []byte(`{"new":true}`))
		if !ok {
			t.Fatalf("%s: ReplaceMember refused", obj)
		}
		got, ok := ReplaceValue(b, v, []byte(`{"new":true}`))
		if !ok || string(got) != string(want) {
			t.Errorf("%s: ReplaceValue = %s, %v; want %s", obj, got, ok, want)
		}
		if m, err := Parse(b); err != nil {
			t.Fatal(err)
		} else if got, ok := ReplaceValue(b, m.(*Response).Result, []byte(`0`)); !ok || !bytes.Contains(got, []byte(`"result":0`)) && !bytes.Contains(got, []byte(`"result" : 0`)) {
			t.Errorf("%s: with Parse's span: %s, %v", obj, got, ok)
		}
		if _, ok := ReplaceValue(b, bytes.Clone(v), []byte(`0`)); ok {
			t.Errorf("%s: a copy of the value was spliced", obj)
		}
		if _, ok := ReplaceValue(b, nil, []byte(`0`)); ok {
			t.Errorf("%s: an empty value was spliced", obj)
		}
		if _, ok := ReplaceValue(b, []byte(obj)[3:5], []byte(`0`)); ok {
			t.Errorf("%s: another buffer's bytes were spliced", obj)
		}
	}
}

// TestParseRawID: the id ParseRaw returns is the line's own id member, a
// slice of the line, so splicing at it (ReplaceValue) gives what
// ReplaceMember gives after scanning for it, wherever the id stands.
func TestParseRawID(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"result":{"content":[{"type":"text","text":"a \"quoted\" id: 9, \"id\": 3"}]},"jsonrpc":"2.0","id":7}`,
		`{"method":"tools/call","params":{"name":"x","arguments":{"id":1}},"jsonrpc":"2.0","id":"abc\"d"}`,
		` { "id" : -12 , "jsonrpc":"2.0", "method":"ping" } `,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		b := []byte(line)
		_, id, err := ParseRaw(b)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if !bytes.Equal(id, Member(bytes.TrimSpace(b), "id")) {
			t.Errorf("%s: id %q, member %q", line, id, Member(b, "id"))
		}
		if id == nil {
			continue
		}
		got, ok := ReplaceValue(b, id, []byte("42"))
		want, _ := ReplaceMember(b, "id", []byte("42"))
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%s: spliced %s, ReplaceMember %s", line, got, want)
		}
		// a slice of another line is no slice of this one
		other := bytes.Clone(b)
		if _, ok := ReplaceValue(other, id, []byte("42")); ok {
			t.Errorf("%s: spliced into a copy", line)
		}
	}
}
