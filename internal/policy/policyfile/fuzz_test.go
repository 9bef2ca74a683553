package policyfile

import (
	"errors"
	"slices"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// FuzzParse checks that no input makes Parse panic, that every failure is an
// ErrorList of *Error that each carry a line (or belong to the whole file),
// and that every policy that parses holds only valid values.
func FuzzParse(f *testing.F) {
	for _, name := range PresetNames() {
		text, err := PresetText(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	if a, err := parseArchiveFile("testdata/malformed.txtar"); err == nil {
		for _, file := range a.Files {
			f.Add(file.Data)
		}
	}
	if a, err := parseArchiveFile("testdata/valid.txtar"); err == nil {
		for _, file := range a.Files {
			f.Add(file.Data)
		}
	}
	f.Add([]byte(labelsPolicy))
	f.Add([]byte("version: 1\nflow: {allow_flows: [\"a\\\\:b:* -> *:c?d\"]}\n"))
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Add([]byte("version: 1\ntools: &t\n  - {match: x, labels: &l [private]}\n  - {match: y, labels: *l}\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if err != nil {
			if p != nil {
				t.Fatal("Parse returned a policy and an error")
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 || len(list) > maxErrors {
				t.Fatalf("error is not an ErrorList of 1..%d: %T %v", maxErrors, err, err)
			}
			for _, e := range list {
				if e == nil || e.Msg == "" || e.File != "f.yaml" {
					t.Fatalf("bad *Error %#v", e)
				}
				// A key error always has a position; only whole-file
				// problems (YAML the parser cannot place) lack one.
				if e.Line < 1 && (e.Key != "" || e.Column != 0) {
					t.Fatalf("error without a line: %v", e)
				}
			}
			_ = err.Error()
			return
		}
		// The schema never refuses what the loader accepts.
		if v, err := yamlToJSON(data); err == nil {
			if err := mustSchema(t).Validate(v); err != nil {
				t.Fatalf("Parse accepts a policy the schema refuses: %v", err)
			}
		}
		if p.Version != CurrentVersion || p.Flow.MinMatches < 1 || p.Source != "f.yaml" {
			t.Fatalf("invalid policy: %+v", p)
		}
		if p.Mode > policy.Monitor || p.DefaultAction > policy.DefaultDeny {
			t.Fatalf("invalid enum: %+v", p)
		}
		for _, v := range []flow.Verdict{p.Flow.Exfiltration, p.Flow.Trifecta, p.Flow.Integrity, p.Flow.TaintedArgs} {
			if !slices.Contains(policy.FlowActions(), v) {
				t.Fatalf("invalid action %v", v)
			}
		}
		for _, e := range p.Tools {
			if e.Match.String() == "" || e.Line < 1 {
				t.Fatalf("invalid tool entry %+v", e)
			}
			p.ToolLabels("s", e.Match.String())
		}
		for i := range p.Rules {
			r := &p.Rules[i]
			if r.ID == "" || r.Match.String() == "" || r.Line < 1 || !slices.Contains(policy.FlowActions(), r.Action) {
				t.Fatalf("invalid rule %+v", r)
			}
			if len(r.Args) == 0 && r.When == nil && r.RateLimit == nil {
				t.Fatalf("rule %s does nothing", r.ID)
			}
			p.Fire("s", r.Match.String(), map[string]any{"path": "/x", "n": 1.0}, policy.Vars{}, nil)
		}
		for _, r := range p.Flow.AllowFlows {
			if r.From.String() == "" || r.To.String() == "" || r.Line < 1 {
				t.Fatalf("invalid flow rule %+v", r)
			}
			p.FlowAllowed("s/"+r.From.String(), "s/"+r.To.String())
		}
	})
}

// FuzzGlob checks that compiling and matching never panic, that a literal
// pattern matches exactly itself, and that "*" matches every name.
func FuzzGlob(f *testing.F) {
	f.Add("notes:*", "notes", "read")
	f.Add(`a\*b?c`, "s", "a*bxc")
	f.Add(`my\:srv:*`, "my:srv", "x")
	f.Add("**a**b", "s", "xaxxb")
	f.Fuzz(func(t *testing.T, pat, server, tool string) {
		g, err := policy.CompileGlob(pat)
		if err != nil {
			return
		}
		g.Match(server, tool)
		if g.String() != pat {
			t.Fatalf("String() = %q, want %q", g.String(), pat)
		}
		star, _ := policy.CompileGlob("*")
		if !star.Match(server, tool) {
			t.Fatalf("* did not match %q", tool)
		}
	})
}
