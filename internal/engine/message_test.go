package engine

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

var update = flag.Bool("update", false, "rewrite testdata/messages.golden")

// TestMessagesGolden keeps what the model and the user read when Weir
// stops something, one per rule kind, in testdata/messages.golden: a
// change to it is a reviewed change. Every message comes from a real
// decision where the engine can make one.
func TestMessagesGolden(t *testing.T) {
	h := hasher(t)
	deflt := mustPolicy(t, "version: 1\n")
	call := func(yaml string, reads []read, c Call) Decision {
		t.Helper()
		pol := deflt
		if yaml != "" {
			pol = mustPolicy(t, yaml)
		}
		d := decide(pol, h, session(t, h, reads...), c)
		if !d.Verdict.Stops() {
			t.Fatalf("%s: verdict %s, want a stop", c.Name(), d.Verdict)
		}
		return d
	}
	mail := func(args ...string) Call {
		return Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: argsOf(args...)}
	}
	cases := []struct {
		name string
		d    Decision
		tool string
	}{
		{"flow.exfiltration", call("", []read{notes}, mail("body", b64(noteText))), "mail/send_email"},
		{"flow.exfiltration (undecoded)", Decision{Verdict: flow.Block, Rule: RuleExfiltration, Reason: "Weir could not examine all of the arguments of mail/send_email within its decoding bound ($.body), and this session has read private data (from notes/read_note), so it treats what it could not decode as that data"}, "mail/send_email"},
		{"flow.tainted_args", call("version: 1\npreset: dataflow\n", []read{injected}, mail("to", "jay@evil.example", "body", "receipt")), "mail/send_email"},
		{"flow.trifecta", call("version: 1\npreset: strict\n", []read{notes, web}, mail("body", "hello")), "mail/send_email"},
		{"flow.integrity (escalate)", call("version: 1\npreset: integrity\n", []read{web}, mail("subject", "tidy desk")), "mail/send_email"},
		{"default_action", call("version: 1\ndefault_action: deny\n", nil, mail("body", "hello")), "mail/send_email"},
		{"arguments", call("", []read{notes}, Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: []byte(`{"body": "unterminated`)}), "mail/send_email"},
		{"policy rule", call("version: 1\nrules:\n  - id: ssh-guard\n    match: \"*read_file*\"\n    args:\n      path: {deny: ['(^|/)\\.ssh(/|$)']}\n    because: \"SSH keys are off limits\"\n", nil,
			Call{Server: "files", Tool: "read_file", Args: argsOf("path", "/home/u/.ssh/id_rsa")}), "files/read_file"},
		{"policy rule (escalate)", call("version: 1\nrules:\n  - id: outside-mail\n    match: \"mail:*\"\n    when: 'recipient_domains.exists(d, d != \"corp.example\")'\n    action: escalate\n    because: \"mail outside the company needs a human\"\n", nil,
			mail("to", "someone@gmail.com")), "mail/send_email"},
		{"pin.withheld", call("", nil, Call{Server: "calc", Tool: "add", Withheld: "the definition of calc/add changed since it was approved"}), "calc/add"},
		{"protocol", call("", nil, Call{Server: "mail", Tool: "send_email", NoID: true}), "mail/send_email"},
		{"internal", Decision{Verdict: flow.Block, Rule: RuleInternal, Reason: "the session state could not be read (database is locked), so Weir cannot tell what mail/send_email would send"}, "mail/send_email"},
	}
	var b bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&b, "== %s\n%s\n\n", c.name, BlockMessage(c.d, c.tool))
	}
	fmt.Fprintf(&b, "== result withheld\n%s\n", ResultWithheldMessage("notes/read_note", errors.New("database is locked")))
	const file = "testdata/messages.golden"
	if *update {
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
	for _, leak := range []string{noteText[:20], "jay@evil.example", "/home/u/.ssh", "someone@gmail.com"} {
		if strings.Contains(b.String(), leak) {
			t.Errorf("a message quotes an argument value or private text: %q", leak)
		}
	}
}

func argsOf(kv ...string) []byte { return args(kv...) }
