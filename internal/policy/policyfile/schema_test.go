package policyfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "policy.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

func mustSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	s, err := compiledSchema()
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return s
}

var errNotJSON = errors.New("the YAML has no JSON form")

// yamlToJSON converts a policy to the JSON value an editor's YAML language
// server would check against the schema.
func yamlToJSON(data []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	if hasNonFinite(v) {
		return nil, errNotJSON
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errNotJSON
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func hasNonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsInf(x, 0) || math.IsNaN(x)
	case []any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	}
	return false
}

func TestSchemaIsValidJSON(t *testing.T) {
	mustSchema(t)
	var m map[string]any
	if err := json.Unmarshal(Schema(), &m); err != nil {
		t.Fatal(err)
	}
	if m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", m["$schema"])
	}
	// Schema returns a copy.
	Schema()[0] = 'x'
	if Schema()[0] != '{' {
		t.Error("Schema returned shared bytes")
	}
	// Every key the loader knows is in the schema.
	for _, lvl := range levels {
		for _, k := range lvl.keys {
			if !bytes.Contains(Schema(), []byte(`"`+k+`"`)) {
				t.Errorf("key %s (%s) is not in the schema", k, lvl.where)
			}
		}
	}
	for _, name := range PresetNames() {
		if !bytes.Contains(Schema(), []byte(`"`+name+`"`)) {
			t.Errorf("preset %s is not in the schema", name)
		}
	}
}

func TestSchemaAcceptsPresets(t *testing.T) {
	s := mustSchema(t)
	for _, name := range PresetNames() {
		text, err := PresetText(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := yamlToJSON(text)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}

func TestSchemaAcceptsValidPolicies(t *testing.T) {
	s := mustSchema(t)
	a, err := parseArchiveFile("testdata/valid.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		v, err := yamlToJSON(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

// TestSchemaRefusesMalformed checks that the schema catches the malformed
// policies it can see (not glob syntax, regular expressions or CEL, which
// only the loader checks).
func TestSchemaRefusesMalformed(t *testing.T) {
	s := mustSchema(t)
	a, err := parseArchiveFile("testdata/malformed.txtar")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, f := range a.Files {
		byName[f.Name] = f.Data
	}
	for _, name := range []string{
		"unknown-key-typo.yaml", "unknown-flow-key.yaml", "mode-typo.yaml", "default-action-block.yaml",
		"trifecta-redact.yaml", "min-matches-zero.yaml", "min-matches-quoted.yaml", "version-2.yaml",
		"version-missing.yaml", "allow-flows-no-arrow.yaml", "allow-flows-two-arrows.yaml", "allow-flows-empty-side.yaml",
		"labels-typo.yaml", "labels-duplicate.yaml", "tool-missing-labels.yaml", "match-space.yaml",
		"preset-typo.yaml", "preset-list.yaml", "tainted-args-typo.yaml", "tainted-args-misplaced.yaml",
		"rules-mapping.yaml", "rule-missing-match.yaml", "rule-unknown-key-typo.yaml", "rule-bad-id.yaml",
		"rule-does-nothing.yaml", "rule-action-redact.yaml", "because-empty.yaml", "within-string.yaml",
		"within-relative.yaml", "within-empty.yaml", "within-and-hosts.yaml", "hosts-list.yaml", "hosts-typo.yaml",
		"hosts-empty.yaml", "hosts-bad-patterns.yaml", "one-of-empty.yaml", "one-of-bad-items.yaml",
		"max-length-negative.yaml", "min-quoted.yaml", "text-and-number.yaml", "args-list.yaml", "args-empty.yaml",
		"args-json-path.yaml", "arg-no-constraints.yaml", "arg-constraint-typo.yaml", "arg-constraint-string.yaml",
		"rate-limit-zero.yaml", "rate-limit-word.yaml", "rate-limit-unit.yaml", "rate-limit-number.yaml",
		"rate-limit-negative.yaml", "cel-unquoted-bool.yaml", "cel-empty.yaml", "config-list.yaml",
	} {
		data, ok := byName[name]
		if !ok {
			t.Errorf("%s is not in malformed.txtar", name)
			continue
		}
		v, err := yamlToJSON(data)
		if errors.Is(err, errNotJSON) {
			continue // .inf: no JSON form, nothing for an editor to check
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := s.Validate(v); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}

// TestSchemaPatterns checks the schema's string patterns on their own.
func TestSchemaPatterns(t *testing.T) {
	s := mustSchema(t)
	tests := []struct {
		yaml string
		ok   bool
	}{
		{"version: 1\nflow: {allow_flows: ['a -> b']}", true},
		{"version: 1\nflow: {allow_flows: ['a-->b']}", true},
		{"version: 1\nflow: {allow_flows: ['a->-b']}", true},
		{"version: 1\nflow: {allow_flows: ['a -> b -> c']}", false},
		{"version: 1\nflow: {allow_flows: ['a ->']}", false},
		{"version: 1\nflow: {allow_flows: ['a b']}", false},
		{"version: 1\nrules: [{match: x, rate_limit: 10/minute}]", true},
		{"version: 1\nrules: [{match: x, rate_limit: 5/sec}]", true},
		{"version: 1\nrules: [{match: x, rate_limit: 1/hr}]", true},
		{"version: 1\nrules: [{match: x, rate_limit: 010/min}]", true},
		{"version: 1\nrules: [{match: x, rate_limit: 0/minute}]", false},
		{"version: 1\nrules: [{match: x, rate_limit: 5/day}]", false},
		{"version: 1\nrules: [{match: x, rate_limit: 5/minutes}]", false},
		{"version: 1\nrules: [{match: 'a\\ b', when: 'true'}]", true},
		{"version: 1\nrules: [{match: 'a b', when: 'true'}]", false},
		{"version: 1\nrules: [{match: x, args: {p: {min: 1, max: 2, one_of: [1]}}}]", true},
		{"version: 1\nrules: [{match: x, args: {p: {min: 1, deny: [x]}}}]", false},
		{"version: 1\nrules: [{match: x, args: {p: {hosts: {deny: ['*.evil.example', '::1', '[fe80::1]', 'a.b']}}}}]", true},
		{"version: 1\nrules: [{match: x, args: {p: {hosts: {deny: ['a/b']}}}}]", false},
		{"version: 1\nrules: [{match: x, id: 'rules[0]', when: 'true'}]", false},
	}
	for _, tt := range tests {
		v, err := yamlToJSON([]byte(tt.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tt.yaml, err)
		}
		err = s.Validate(v)
		if (err == nil) != tt.ok {
			t.Errorf("%s: valid = %v, want %v (%v)", tt.yaml, err == nil, tt.ok, err)
		}
		// The loader agrees wherever the schema refuses.
		if !tt.ok && !strings.Contains(tt.yaml, "010") {
			if _, perr := Parse("p.yaml", []byte(tt.yaml)); perr == nil {
				t.Errorf("%s: the schema refuses it but Parse accepts it", tt.yaml)
			}
		}
	}
}
