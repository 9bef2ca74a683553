package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"pgregory.net/rapid"
)

func hasher(t testing.TB, key []byte) *fingerprint.Hasher {
	t.Helper()
	h, err := fingerprint.NewHasher(key)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// jnode is a JSON value the property tests generate, render in many
// spellings and canonicalise by hand.
type jnode struct {
	kind byte   // 'o' object, 'a' array, 's' string, 'n' number or literal
	text string // the string's value, or the number's or literal's JSON
	keys []string
	vals []*jnode
}

var numbers = []string{"0", "-0", "1", "-1", "1.0", "10", "1.5e3", "2E-7", "-0.000001", "123456789012345678901234567890", "true", "false", "null"}

func genNode(t *rapid.T, depth int) *jnode {
	max := 3
	if depth >= 4 {
		max = 1 // scalars only
	}
	switch rapid.IntRange(0, max).Draw(t, "kind") {
	case 0:
		return &jnode{kind: 's', text: rapid.String().Draw(t, "string")}
	case 1:
		return &jnode{kind: 'n', text: rapid.SampledFrom(numbers).Draw(t, "number")}
	case 2:
		n := &jnode{kind: 'a'}
		for i, k := 0, rapid.IntRange(0, 3).Draw(t, "elems"); i < k; i++ {
			n.vals = append(n.vals, genNode(t, depth+1))
		}
		return n
	default:
		return genObject(t, depth)
	}
}

func genObject(t *rapid.T, depth int) *jnode {
	n := &jnode{kind: 'o', keys: rapid.SliceOfNDistinct(rapid.String(), 0, 4, jsonrpc.FoldKey).Draw(t, "keys")}
	for range n.keys {
		n.vals = append(n.vals, genNode(t, depth+1))
	}
	return n
}

// canon is the canonical form of n by hand: members sorted bytewise,
// strings as encoding/json writes them, numbers as written.
func canon(n *jnode) string {
	switch n.kind {
	case 's':
		q, _ := json.Marshal(n.text)
		return string(q)
	case 'n':
		return n.text
	case 'a':
		parts := make([]string, len(n.vals))
		for i, v := range n.vals {
			parts[i] = canon(v)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	idx := make([]int, len(n.keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(n.keys[a], n.keys[b]) })
	parts := make([]string, len(idx))
	for i, j := range idx {
		k, _ := json.Marshal(n.keys[j])
		parts[i] = string(k) + ":" + canon(n.vals[j])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func genSpace(t *rapid.T) string {
	return rapid.SampledFrom([]string{"", "", " ", "\n", "\t", "\r\n  ", "  \t "}).Draw(t, "space")
}

// renderString spells s as a JSON string, each character raw, as a \u
// escape (a surrogate pair past the BMP) or as a short escape, at random.
func renderString(t *rapid.T, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	short := map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}
	for _, r := range s {
		mode := rapid.IntRange(0, 2).Draw(t, "escape")
		raw := r >= 0x20 && r != '"' && r != '\\'
		switch {
		case mode == 0 && raw:
			b.WriteRune(r)
		case mode == 1 && short[r] != "":
			b.WriteString(short[r])
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04X`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// render spells n with its members in a random order, random whitespace
// and random string escapes.
func render(t *rapid.T, n *jnode) string {
	var b strings.Builder
	var w func(n *jnode)
	w = func(n *jnode) {
		b.WriteString(genSpace(t))
		switch n.kind {
		case 's':
			b.WriteString(renderString(t, n.text))
		case 'n':
			b.WriteString(n.text)
		case 'a':
			b.WriteByte('[')
			for i, v := range n.vals {
				if i > 0 {
					b.WriteByte(',')
				}
				w(v)
			}
			b.WriteString(genSpace(t) + "]")
		case 'o':
			idx := make([]int, len(n.keys))
			for i := range idx {
				idx[i] = i
			}
			idx = rapid.Permutation(idx).Draw(t, "order")
			b.WriteByte('{')
			for i, j := range idx {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(genSpace(t) + renderString(t, n.keys[j]) + genSpace(t) + ":")
				w(n.vals[j])
			}
			b.WriteString(genSpace(t) + "}")
		}
		b.WriteString(genSpace(t))
	}
	w(n)
	return b.String()
}

// TestCanonicalSpellings: any order of members, any whitespace and any
// escaping of the same value give one canonical form and one digest, and
// that form is the value written canonically by hand.
func TestCanonicalSpellings(t *testing.T) {
	h := hasher(t, testKey)
	rapid.Check(t, func(t *rapid.T) {
		n := genObject(t, 0)
		if rapid.Bool().Draw(t, "any root") {
			n = genNode(t, 0)
		}
		a, b := render(t, n), render(t, n)
		ca, err := Canonical(json.RawMessage(a))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", a, err)
		}
		cb, err := Canonical(json.RawMessage(b))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", b, err)
		}
		want := canon(n)
		if want == "null" {
			want = "{}" // null arguments are no arguments
		}
		if string(ca) != want || string(cb) != want {
			t.Fatalf("canonical forms\n%s\n%s\nof\n%s\n%s\nwant %s", ca, cb, a, b, want)
		}
		if !json.Valid(ca) {
			t.Fatalf("the canonical form %s is not valid JSON", ca)
		}
		if again, err := Canonical(ca); err != nil || string(again) != string(ca) {
			t.Fatalf("Canonical is not idempotent: %s → %s, %v", ca, again, err)
		}
		da, err1 := Digest(h, "mail", "send_email", json.RawMessage(a))
		db, err2 := Digest(h, "mail", "send_email", json.RawMessage(b))
		if err1 != nil || err2 != nil || da != db {
			t.Fatalf("digests %s, %s (%v, %v) of two spellings of one value", da, db, err1, err2)
		}
	})
}

// TestCanonicalRepeatedMember: a member repeated in any object at any
// depth, however its name is spelled, makes the arguments ambiguous.
func TestCanonicalRepeatedMember(t *testing.T) {
	h := hasher(t, testKey)
	rapid.Check(t, func(t *rapid.T) {
		root := genObject(t, 0)
		var objs []*jnode
		var collect func(n *jnode)
		collect = func(n *jnode) {
			if n.kind == 'o' {
				objs = append(objs, n)
			}
			for _, v := range n.vals {
				collect(v)
			}
		}
		collect(root)
		o := objs[rapid.IntRange(0, len(objs)-1).Draw(t, "object")]
		if len(o.keys) == 0 {
			o.keys, o.vals = append(o.keys, rapid.String().Draw(t, "key")), append(o.vals, genNode(t, 4))
		}
		o.keys = append(o.keys, o.keys[rapid.IntRange(0, len(o.keys)-1).Draw(t, "repeat")])
		o.vals = append(o.vals, genNode(t, 4))
		args := render(t, root)
		if _, err := Canonical(json.RawMessage(args)); !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("Canonical(%s) = %v, want ErrAmbiguous", args, err)
		}
		if _, err := Digest(h, "s", "t", json.RawMessage(args)); !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("Digest(%s) = %v, want ErrAmbiguous", args, err)
		}
	})
}

func TestCanonical(t *testing.T) {
	cases := []struct {
		name, args, want string
	}{
		{"empty", ``, `{}`},
		{"space", " \n\t", `{}`},
		{"null", `null`, `{}`},
		{"null with space", " null\n", `{}`},
		{"empty object", `{ }`, `{}`},
		{"sorted", `{"b":1,"a":2,"c":{"z":[],"y":{}}}`, `{"a":2,"b":1,"c":{"y":{},"z":[]}}`},
		{"bytewise order", `{"b":1,"C":2,"é":3,"a":4}`, `{"C":2,"a":4,"b":1,"é":3}`},
		{"\\u0041 is A", `{"a":"\u0041"}`, `{"a":"A"}`},
		{"escaped name", `{"\u0074o":"x"}`, `{"to":"x"}`},
		{"escaped slash", `{"url":"https:\/\/example.com"}`, `{"url":"https://example.com"}`},
		{"non-ASCII escaped", `{"n":"\u00e9\u4e2d"}`, `{"n":"é中"}`},
		{"surrogate pair", `{"e":"\ud83d\ude00"}`, `{"e":"😀"}`},
		{"control characters escaped", "{\"c\":\"a\\u0001\\n\"}", `{"c":"a\u0001\n"}`},
		{"numbers as written", `{"a":1.0,"b":1e2,"c":-0,"d":100000000000000000000000}`, `{"a":1.0,"b":1e2,"c":-0,"d":100000000000000000000000}`},
		{"array order kept", `[3, 1, 2]`, `[3,1,2]`},
		{"scalar root", ` "x" `, `"x"`},
		{"literals", `{"t":true,"f":false,"n":null}`, `{"f":false,"n":null,"t":true}`},
	}
	for _, c := range cases {
		got, err := Canonical(json.RawMessage(c.args))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: Canonical(%q) = %s, %v; want %s", c.name, c.args, got, err, c.want)
		}
	}
}

func TestCanonicalRefuses(t *testing.T) {
	deep := strings.Repeat("[", jsonrpc.MaxDepth+1) + strings.Repeat("]", jsonrpc.MaxDepth+1)
	cases := []struct {
		name, args string
		ambiguous  bool
	}{
		{"case variants, as a struct decoder reads them", `{"to":"a","To":"b"}`, true},
		{"case variants, nested", `{"x":{"Cc":"a","cc":"b"}}`, true},
		{"unterminated object", `{`, false},
		{"unterminated string", `{"body": "unterminated`, false},
		{"no value", `{"a":}`, false},
		{"trailing comma", `{"a":1,}`, false},
		{"trailing comma in array", `[1,]`, false},
		{"missing comma", `{"a":1 "b":2}`, false},
		{"single quotes", `{'a':1}`, false},
		{"data after the value", `{"a":1}x`, false},
		{"two values", `{"a":1}{"b":2}`, false},
		{"NaN", `{"a":NaN}`, false},
		{"leading zero", `{"a":01}`, false},
		{"bad escape", `{"a":"\x"}`, false},
		{"raw control character", "{\"a\":\"\x01\"}", false},
		{"bare word", `undefined`, false},
		{"nested past the depth bound", deep, false},
		{"repeated member", `{"to":"a@x.example","to":"b@y.example"}`, true},
		{"repeated member, escaped", `{"to":"a@x.example","\u0074o":"b@y.example"}`, true},
		{"repeated member, same value", `{"a":1,"a":1}`, true},
		{"repeated member, nested", `{"msg":{"to":"a","cc":"b","to":"c"}}`, true},
		{"repeated member, in an array", `{"list":[{"a":1},{"b":1,"b":2}]}`, true},
		{"repeated member, deep", strings.Repeat(`{"x":`, 50) + `{"k":1,"k":2}` + strings.Repeat(`}`, 50), true},
	}
	for _, c := range cases {
		_, err := Canonical(json.RawMessage(c.args))
		if err == nil {
			t.Errorf("%s: Canonical(%.40q) accepted", c.name, c.args)
			continue
		}
		if errors.Is(err, ErrAmbiguous) != c.ambiguous {
			t.Errorf("%s: Canonical(%.40q) = %v; ErrAmbiguous %v, want %v", c.name, c.args, err, errors.Is(err, ErrAmbiguous), c.ambiguous)
		}
	}
}

// TestCanonicalDeep: nesting up to the jsonrpc depth bound canonicalises,
// past it is refused, and nothing panics however deep.
func TestCanonicalDeep(t *testing.T) {
	h := hasher(t, testKey)
	n := jsonrpc.MaxDepth
	for _, c := range []struct {
		name, args string
		ok         bool
	}{
		{"arrays at the bound", strings.Repeat("[", n) + strings.Repeat("]", n), true},
		{"objects at the bound", strings.Repeat(`{"to":`, n-1) + `{"to":"a@x.example"}` + strings.Repeat("}", n-1), true},
		{"mixed at the bound", strings.Repeat(`{"a":[`, n/2) + `1` + strings.Repeat("]}", n/2), true},
		{"arrays past the bound", strings.Repeat("[", n+1) + strings.Repeat("]", n+1), false},
		{"objects past the bound", strings.Repeat(`{"a":`, n+1) + `1` + strings.Repeat("}", n+1), false},
		{"very deep", strings.Repeat("[", 200000) + strings.Repeat("]", 200000), false},
		{"very deep, unclosed", strings.Repeat(`{"a":[`, 100000), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Canonical(json.RawMessage(c.args))
			if c.ok != (err == nil) {
				t.Fatalf("Canonical: %v; want ok %v", err, c.ok)
			}
			if c.ok && string(got) != c.args {
				t.Fatalf("the compact value was changed: %.60s…", got)
			}
			if _, err := Digest(h, "s", "t", json.RawMessage(c.args)); c.ok != (err == nil) {
				t.Fatalf("Digest: %v; want ok %v", err, c.ok)
			}
			facts := Facts(json.RawMessage(c.args))
			if !c.ok && facts != nil {
				t.Fatalf("Facts of refused arguments: %v", facts)
			}
		})
	}
}

func TestDigest(t *testing.T) {
	h, other := hasher(t, testKey), hasher(t, otherKey)
	calls := []struct{ server, tool, args string }{
		{"mail", "send_email", `{"to":"alice@example.com","body":"hi"}`},
		{"mail", "send_email", `{"to":"bob@example.com","body":"hi"}`},
		{"mail", "send_email", `{"to":"alice@example.com","body":"hi!"}`},
		{"mail", "send_email", `{"to":"alice@example.com","body":"hi","cc":"carol@example.com"}`},
		{"mail", "send_email", `{"to":["alice@example.com"],"body":"hi"}`},
		{"mail", "send_email", `{"To":"alice@example.com","body":"hi"}`},
		{"mail", "send_email", `{}`},
		{"mail", "send_mail", `{"to":"alice@example.com","body":"hi"}`},
		{"mail2", "send_email", `{"to":"alice@example.com","body":"hi"}`},
		{"mai", "lsend_email", `{"to":"alice@example.com","body":"hi"}`},
		{"bank", "send_money", `{"recipient":"GB29NWBK60161331926819","amount":100}`},
		{"bank", "send_money", `{"recipient":"GB29NWBK60161331926819","amount":100.0}`},
		{"bank", "send_money", `{"recipient":"GB29NWBK60161331926819","amount":"100"}`},
		{"bank", "send_money", `{"recipient":"GB29NWBK60161331926819","amount":1000}`},
		{"files", "write_file", `{"path":"/tmp/a","content":"x"}`},
		{"files", "write_file", `{"path":"/tmp/a","content":"x","extra":null}`},
		{"files", "write_file", `["/tmp/a","x"]`},
		{"files", "write_file", `["x","/tmp/a"]`},
	}
	seen := map[string]int{}
	for i, c := range calls {
		d, err := Digest(h, c.server, c.tool, json.RawMessage(c.args))
		if err != nil {
			t.Fatalf("Digest(%s/%s %s): %v", c.server, c.tool, c.args, err)
		}
		if j, dup := seen[d]; dup {
			t.Errorf("calls %d and %d have one digest %s: %+v %+v", j, i, d, calls[j], c)
		}
		seen[d] = i
		if o, _ := Digest(other, c.server, c.tool, json.RawMessage(c.args)); o == d {
			t.Errorf("call %d has the same digest under another install key", i)
		}
		if strings.Contains(d, "alice") || strings.Contains(d, c.tool) || len(d) < 16 {
			t.Errorf("digest %q is short or shows the call", d)
		}
		again, _ := Digest(h, c.server, c.tool, json.RawMessage(" "+c.args+"\n"))
		if again != d {
			t.Errorf("call %d: the digest depends on surrounding whitespace", i)
		}
	}
	var empty []string
	for _, args := range []string{"", "null", " null ", "{}", "{ }", " \n"} {
		d, err := Digest(h, "mail", "send_email", json.RawMessage(args))
		if err != nil {
			t.Fatalf("Digest(%q): %v", args, err)
		}
		empty = append(empty, d)
	}
	if d, _ := Digest(h, "mail", "send_email", nil); d != empty[0] {
		t.Errorf("nil arguments digest %s, want %s", d, empty[0])
	}
	if len(slices.Compact(slices.Clone(empty))) != 1 {
		t.Errorf("empty arguments spelled %d ways have several digests: %v", len(empty), empty)
	}
	if _, err := Digest(h, "mail", "send_email", json.RawMessage(`{"to":`)); err == nil {
		t.Error("Digest of invalid JSON succeeded")
	}
}

func TestDestKey(t *testing.T) {
	h, other := hasher(t, testKey), hasher(t, otherKey)
	keys := map[string]string{}
	for name, k := range map[string]string{
		"one":          DestKey(h, "mail", "send_email", []string{"recipient:alice@example.com"}),
		"another":      DestKey(h, "mail", "send_email", []string{"recipient:bob@example.com"}),
		"both":         DestKey(h, "mail", "send_email", []string{"recipient:alice@example.com", "recipient:bob@example.com"}),
		"other tool":   DestKey(h, "mail", "send_draft", []string{"recipient:alice@example.com"}),
		"other server": DestKey(h, "mail2", "send_email", []string{"recipient:alice@example.com"}),
		"other kind":   DestKey(h, "mail", "send_email", []string{"account:alice@example.com"}),
		"none":         DestKey(h, "mail", "send_email", nil),
		"other key":    DestKey(other, "mail", "send_email", []string{"recipient:alice@example.com"}),
	} {
		for n2, k2 := range keys {
			if k == k2 {
				t.Errorf("destination keys %q and %q are equal", name, n2)
			}
		}
		keys[name] = k
	}
	if DestKey(h, "mail", "send_email", []string{}) != keys["none"] {
		t.Error("no destinations, nil or empty, give two keys")
	}
	if DestKey(h, "mail", "send_email", []string{"recipient:alice@example.com"}) != keys["one"] {
		t.Error("DestKey is not deterministic")
	}
}

// TestGeneratorSpellsValidJSON checks the generator the properties rely
// on: every spelling is valid JSON with the value of the hand-canonical
// form.
func TestGeneratorSpellsValidJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := genNode(t, 0)
		s := render(t, n)
		if !utf8.ValidString(s) || !json.Valid([]byte(s)) {
			t.Fatalf("the generator wrote invalid JSON: %q", s)
		}
		var a, b any
		if json.Unmarshal([]byte(s), &a) != nil || json.Unmarshal([]byte(canon(n)), &b) != nil {
			t.Fatalf("does not decode: %q / %q", s, canon(n))
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("the spelling %s and the hand-canonical form %s differ in value", s, canon(n))
		}
	})
}

// TestCanonicalWideObject: an object of many members, as a hostile model
// might send, is checked for case-folded repeats without comparing every
// pair; 200,000 members would take minutes pairwise.
func TestCanonicalWideObject(t *testing.T) {
	var b strings.Builder
	b.WriteByte('{')
	for i := range 200_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	wide := b.String()
	if _, err := Canonical(json.RawMessage(wide + "}")); err != nil {
		t.Fatalf("Canonical of a wide object: %v", err)
	}
	if _, err := Canonical(json.RawMessage(wide + `,"K7":0}`)); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("Canonical with K7 after k7 = %v, want ErrAmbiguous", err)
	}
}
