package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// declassifyPolicy labels two real server-everything tools untrusted and
// declassifies each by a schema: get-structured-content's weather report
// (numbers and a short conditions phrase), and get-sum by the named
// schema amount, which its sentence ("The sum of 2 and 3 is 5.") does not
// satisfy. server-memory's create_entities is the sink.
const declassifyPolicy = `version: 1
preset: integrity
tools:
  - match: "everything:get-structured-content"
    labels: [untrusted]
    declassify:
      schema:
        type: object
        properties:
          temperature: {type: number}
          humidity: {type: number}
          conditions: {type: string, pattern: '^[A-Za-z /-]+$', maxLength: 40}
        required: [temperature, humidity, conditions]
        additionalProperties: false
  - {match: "everything:get-sum", labels: [untrusted], declassify: {schema: amount}}
  - {match: "memory:create_entities", labels: [sink]}
`

// TestDeclassifyThroughProxies: under integrity, with a client that
// cannot elicit, a sink call after an untrusted result is put to a person
// (here: refused with an approval id). After a declassified result of the
// same kind, it goes through; after a result outside its schema, it does
// not. The result is read through one proxy and the sink called through
// another of the same session, and the audit log says which happened.
func TestDeclassifyThroughProxies(t *testing.T) {
	ctx := ctxT(t, 90*time.Second)
	f := newFixture(t)
	if err := os.WriteFile(f.policy, []byte(declassifyPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
		allowed    bool
	}{
		{"structured weather validates", "get-structured-content", map[string]any{"location": "Chicago"}, true},
		{"a sentence is not an amount", "get-sum", map[string]any{"a": 2, "b": 3}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			session := "declassify-" + tt.tool
			every := f.connect(t, ctx, "everything", f.every, session)
			memory := f.connect(t, ctx, "memory", serverMemory(t), session)
			if text, isErr := call(t, ctx, every, tt.tool, tt.args); isErr {
				t.Fatalf("%s: %s", tt.tool, text)
			}
			text, isErr := call(t, ctx, memory, "create_entities", map[string]any{"entities": []map[string]any{
				{"name": "weather", "entityType": "note", "observations": []string{"the sum is 5"}}}})
			if blocked := isErr && strings.Contains(text, "weir approve"); blocked == tt.allowed {
				t.Errorf("sink call after %s: isError %v, want allowed %v: %s", tt.tool, isErr, tt.allowed, text)
			}
		})
	}
	var accounts []string
	for _, r := range auditRecords(t, f.env.home) {
		if s, ok := r["declassify"].(string); ok {
			accounts = append(accounts, r["tool"].(string)+": "+s)
		}
	}
	want := []string{
		"get-structured-content: declassified by schema inline: entered without untrusted",
		"get-sum: not declassified by schema amount: result.content[0].text: $ fails type",
	}
	if strings.Join(accounts, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log declassify records:\n%s\nwant:\n%s", strings.Join(accounts, "\n"), strings.Join(want, "\n"))
	}
}
