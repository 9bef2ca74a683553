package policy_test

import (
	"fmt"

	"github.com/weir-sec/weir/internal/policy"
)

func Example() {
	p, err := policy.Parse("policy.yaml", []byte(`
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
	_, err := policy.Parse("policy.yaml", []byte(`version: 1
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
	p, _ := policy.Preset("monitor")
	fmt.Println(p.Source, p.Mode, p.Flow.Exfiltration)
	fmt.Println(policy.PresetNames())
	// Output:
	// preset:monitor monitor block
	// [default strict dataflow integrity monitor]
}
