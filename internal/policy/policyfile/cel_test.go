package policyfile

import (
	"testing"

	"github.com/weir-sec/weir/internal/policy"
)

func TestConfigIsThePolicys(t *testing.T) {
	p := mustParse(t, `version: 1
config: {allowed: [corp.example]}
rules:
  - match: "mail:send"
    when: '!(args.domain in config.allowed)'
`)
	call := func(args map[string]any) bool {
		return len(p.Fire("mail", "send", args, policy.Vars{}, nil)) > 0
	}
	if call(map[string]any{"domain": "corp.example"}) {
		t.Error("allowed domain fired")
	}
	if !call(map[string]any{"domain": "evil.example"}) {
		t.Error("other domain did not fire")
	}
	// An argument called config changes nothing.
	if !call(map[string]any{"domain": "evil.example", "config": map[string]any{"allowed": []any{"evil.example"}}}) {
		t.Error("an argument named config replaced the policy's config")
	}
}

// TestPredicateCompileErrors checks load errors for predicates, with CEL's
// message and the position in the file.
func TestPredicateCompileErrors(t *testing.T) {
	tests := []struct{ when, want string }{
		{`'tool ==' `, `p.yaml:4:19: rules[0].when: invalid CEL: Syntax error: mismatched input '<EOF>' expecting an expression`},
		{`'tool + 1 == 2'`, `p.yaml:4:17: rules[0].when: invalid CEL: found no matching overload for '_+_' applied to '(string, int)'`},
		{`'size(labels)'`, `p.yaml:4:12: rules[0].when: invalid CEL: the expression gives a number; when must give true or false (compare the value, e.g. args.count > 10)`},
		{`'tool'`, `p.yaml:4:12: rules[0].when: invalid CEL: the expression gives a string; when must give true or false (compare the value, e.g. tool == "send")`},
		{`'labels'`, `p.yaml:4:12: rules[0].when: invalid CEL: the expression gives a list; when must give true or false (compare the value, e.g. "private" in session.legs, or size(labels) > 0)`},
		{`'args'`, `p.yaml:4:12: rules[0].when: invalid CEL: the expression gives a map; when must give true or false (compare the value, e.g. "to" in args)`},
		{`'sesion.legs.size() > 0'`, `p.yaml:4:12: rules[0].when: unknown name "sesion"; the variables are server, tool, args, labels, session, provenance, recipient_domains, url_hosts and config; did you mean "session"?`},
		{`"config.nope"`, `p.yaml:4:18: rules[0].when: config has no key "nope"; add it under config:, e.g. config: {nope: ...}`},
		{`"has(config.nope)"`, ``},                              // a presence test is how to ask
		{`'[{"nope": 1}].exists(config, config.nope > 0)'`, ``}, // config shadowed
	}
	for _, tt := range tests {
		_, err := Parse("p.yaml", []byte("version: 1\nrules:\n  - match: x\n    when: "+tt.when+"\n"))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("when: %s\n got %s\nwant %s", tt.when, got, tt.want)
		}
	}
}
