package approval

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		id := NewID()
		if !ValidID(id) {
			t.Fatalf("NewID() = %q, not a valid id", id)
		}
		if strings.ContainsAny(id, "0o1li") {
			t.Fatalf("NewID() = %q has a character people confuse", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"abcdefghjk":    true,
		"2345678923":    true,
		"zzzzzzzzzz":    true,
		"":              false,
		"abcdefghj":     false,
		"abcdefghjkm":   false,
		"abcdefghjK":    false,
		"abcdefghj0":    false,
		"abcdefghj1":    false,
		"abcdefghjo":    false,
		"abcdefghjl":    false,
		"abcdefghji":    false,
		"abcdefghj ":    false,
		"abcdefghjé":    false, // 11 bytes
		"abcdefgh\x00k": false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		if ValidID(s) && (len(s) != IDLen || strings.Trim(s, idAlphabet) != "") {
			t.Fatalf("ValidID(%q) accepted", s)
		}
	})
}

func TestAnswerBy(t *testing.T) {
	for _, c := range []struct {
		a    Answer
		ch   Channel
		want string
	}{
		{Pending, CLI, ""},
		{TimedOut, Elicitation, "timeout"},
		{Failed, Elicitation, "client"},
		{Gone, Elicitation, "client"},
		{ApprovedSession, Memory, "session_approval"},
		{Declined, Repeat, "earlier_refusal"},
		{Approved, CLI, "person"},
		{Approved, Elicitation, "person"},
		{ApprovedSession, InputRequired, "person"},
		{Declined, CLI, "person"},
		{Cancelled, Elicitation, "person"},
	} {
		if got := c.a.By(c.ch); got != c.want {
			t.Errorf("%s.By(%s) = %q, want %q", c.a, c.ch, got, c.want)
		}
	}
}

func TestRequestMarshalJSON(t *testing.T) {
	r := Request{Row: Row{ID: "abcdefghjk", Session: "s1", Server: "mail", Tool: "send_email", Rule: "flow.integrity",
		Digest: "secret-digest", Dest: "secret-dest", Sealed: []byte("sealed-bytes"),
		Created: t0.UnixMilli(), Expires: t0.Add(DefaultTTL).UnixMilli(), Status: StatusPending, Channel: CLI},
		Details: Details{Reason: "why"}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"id": "abcdefghjk", "session": "s1", "server": "mail", "tool": "send_email", "rule": "flow.integrity",
		"reason": "why", "status": "pending", "channel": "cli", "session_scope": false,
		"created": t0.UTC().Format(time.RFC3339), "expires": t0.Add(DefaultTTL).UTC().Format(time.RFC3339)} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	for _, k := range []string{"sources", "paths", "facts"} {
		if l, ok := m[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %v, want []", k, m[k])
		}
	}
	for _, leak := range []string{"secret-digest", "secret-dest", "c2VhbGVk", "sealed"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the JSON shows %q: %s", leak, b)
		}
	}
	r.Facts = Facts(json.RawMessage(`{"to":"a@b.example"}`))
	b, _ = json.Marshal(r)
	if !strings.Contains(string(b), `"facts":[{"kind":"recipient","path":"to","value":"a@b.example"}]`) || strings.Contains(string(b), "recipient:a@b.example") {
		t.Errorf("facts in JSON: %s", b)
	}
}
