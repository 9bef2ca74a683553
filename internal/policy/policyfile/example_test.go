package policyfile_test

import (
	"encoding/json"
	"fmt"

	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

func Example() {
	p, err := policyfile.Parse("policy.yaml", []byte(`
version: 1
flow:
  trifecta: block
  allow_flows: ["notes:* -> slack:post_message"]
tools:
  - {match: "notes:*", labels: [private]}
  - {match: "web:fetch", labels: [untrusted, sink]}
  - {match: "*send*", labels: [sink]}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Mode, p.Flow.Exfiltration, p.Flow.Trifecta, p.Flow.MinMatches)

	labels, entry := p.ToolLabels("notes", "send_note")
	fmt.Printf("notes:send_note is %v (first matched by %q on line %d)\n", labels, entry.Match, entry.Line)

	fmt.Println(p.FlowAllowed("notes/read_note", "slack/post_message"))
	fmt.Println(p.FlowAllowed("notes/read_note", "mail/send"))
	// Output:
	// enforce block block 2
	// notes:send_note is private,sink (first matched by "notes:*" on line 7)
	// true
	// false
}

func ExampleParse_errors() {
	_, err := policyfile.Parse("policy.yaml", []byte(`version: 1
mode: enfroce
flow:
  min_matches: 0
tools:
  - {match: "web:fetch", labels: untrusted}
`))
	fmt.Println(err)
	// Output:
	// policy.yaml:2:7: mode: unknown mode "enfroce"; want enforce or monitor; did you mean "enforce"?
	// policy.yaml:4:16: flow.min_matches: must be at least 1, got 0; 1 calls a single fingerprint hit a leak
	// policy.yaml:6:34: tools[0].labels: want a list of labels, e.g. [private, sink], got the string "untrusted" (write [untrusted])
}

func ExamplePreset() {
	p, _ := policyfile.Preset("monitor")
	fmt.Println(p.Source, p.Mode, p.Flow.Exfiltration)
	fmt.Println(policyfile.PresetNames())
	// Output:
	// preset:monitor monitor block
	// [default strict dataflow integrity monitor]
}

func ExamplePolicy_Fire() {
	p, err := policyfile.Parse("policy.yaml", []byte(`version: 1
preset: strict
config:
  allowed_domains: [corp.example]
rules:
  - id: ssh-guard
    match: "*read_file*"
    args:
      path: {within: ["/home/me/projects"], deny: ['(^|/)\.ssh(/|$)']}
  - match: "mail:send"
    when: 'recipient_domains.exists(d, !(d in config.allowed_domains))'
    action: escalate
    because: "mail outside the company needs a human"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The relay resolves path arguments (symlinks, ~, ..) before deciding.
	resolved := func(raw string) (string, bool) {
		r, err := policyfile.ResolvePath(raw, "/home/me", "/home/me/projects")
		return r, err == nil
	}
	for _, c := range []struct {
		server, tool string
		args         map[string]any
		vars         policy.Vars
	}{
		{"fs", "read_file", map[string]any{"path": "notes/todo.md"}, policy.Vars{}},
		{"fs", "read_file", map[string]any{"path": "../.ssh/id_rsa"}, policy.Vars{}},
		{"mail", "send", map[string]any{"to": "x@evil.example"}, policy.Vars{RecipientDomains: []string{"evil.example"}}},
	} {
		fired := p.Fire(c.server, c.tool, c.args, c.vars, resolved)
		fmt.Printf("%s:%s %v", c.server, c.tool, policy.MostSevere(fired))
		for _, f := range fired {
			fmt.Printf(" [%s: %s]", f.Rule.ID, f.Reason)
		}
		fmt.Println()
	}
	// Output:
	// fs:read_file allow
	// fs:read_file block [ssh-guard: $.path is outside /home/me/projects]
	// mail:send escalate [rules[1]: mail outside the company needs a human]
}

func ExampleSchema() {
	var schema struct {
		Schema     string         `json:"$schema"`
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(policyfile.Schema(), &schema); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(schema.Schema)
	fmt.Println(len(schema.Properties), "top-level keys")
	// Output:
	// https://json-schema.org/draft/2020-12/schema
	// 15 top-level keys
}
