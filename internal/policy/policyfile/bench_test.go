package policyfile

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// benchPolicy is 50 rules, 10 of them CEL predicates; a mail:send call
// matches 10 of them (4 predicates, 6 argument rules), as a large real
// policy would.
func benchPolicy(tb testing.TB) *policy.Policy {
	tb.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nconfig:\n  allowed_domains: [corp.example, corp.example.org]\n  max_recipients: 20\nrules:\n")
	matching := []string{
		`  - {match: "mail:*", when: 'recipient_domains.exists(d, !(d in config.allowed_domains))', action: escalate}`,
		`  - {match: "*send*", when: '"private" in session.legs && "untrusted" in session.legs && "sink" in labels', action: warn}`,
		`  - {match: "mail:send", when: 'has(args.cc) && size(args.cc) > config.max_recipients'}`,
		`  - {match: "*", when: 'provenance.exists(p, "untrusted" in provenance[p]) && url_hosts.exists(h, h.endsWith(".evil.example"))'}`,
		`  - {match: "mail:send", args: {to: {allow: ['^[^@]+@[a-z0-9.-]+$']}}}`,
		`  - {match: "mail:send", args: {subject: {max_length: 200, deny: ['(?i)password', '(?i)secret']}}}`,
		`  - {match: "mail:*", args: {cc: {max_length: 100}}}`,
		`  - {match: "*send*", args: {priority: {one_of: [low, normal, high]}}}`,
		`  - {match: "mail:send", args: {body: {max_length: 100000}}, rate_limit: 30/minute}`,
		`  - {match: "mail:send", args: {link: {hosts: {allow: ["*.corp.example"], deny: ["admin.corp.example"]}}}}`,
	}
	for _, r := range matching {
		b.WriteString(r + "\n")
	}
	for i := range 6 { // other predicates, other servers
		fmt.Fprintf(&b, "  - {match: \"srv%d:*\", when: 'args.amount > %d.0 || tool == \"x%d\"'}\n", i, i*10, i)
	}
	for i := range 34 { // other argument rules, other servers
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "  - {match: \"fs%d:read_*\", args: {path: {within: [\"/srv/%d\"], deny: ['\\.env$']}}}\n", i, i)
		case 1:
			fmt.Fprintf(&b, "  - {match: \"chat%d:post_message\", args: {channel: {one_of: [\"#c%d\", \"#d%d\"]}}}\n", i, i, i)
		case 2:
			fmt.Fprintf(&b, "  - {match: \"web%d:fetch\", args: {url: {hosts: {deny: [\"evil%d.example\"]}}}}\n", i, i)
		case 3:
			fmt.Fprintf(&b, "  - {match: \"bank%d:transfer\", args: {amount: {min: 0, max: %d}}}\n", i, i*100)
		}
	}
	p, err := Parse("bench.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	if len(p.Rules) != 50 {
		tb.Fatalf("%d rules", len(p.Rules))
	}
	return p
}

func benchCall() (map[string]any, policy.Vars) {
	args := map[string]any{
		"to":       "alice@corp.example",
		"cc":       []any{"bob@corp.example", "carol@corp.example", "dave@corp.example"},
		"subject":  "Quarterly numbers",
		"body":     strings.Repeat("The numbers for the quarter are attached. ", 20),
		"priority": "normal",
		"link":     "https://docs.corp.example/q3",
	}
	vars := policy.Vars{
		Labels:           []string{"sink"},
		Legs:             []string{"private"},
		Sources:          []string{"notes/read_note", "drive/get_file"},
		Provenance:       map[string][]string{"$.body": {"private"}},
		RecipientDomains: []string{"corp.example"},
		URLHosts:         []string{"docs.corp.example"},
	}
	return args, vars
}

func identity(s string) (string, bool) { return s, true }

// benchFire runs Fire in a loop on one OS thread and reports its CPU time
// per call next to the wall-clock ns/op: on a shared machine other
// processes inflate the latter.
func benchFire(b *testing.B, p *policy.Policy, server, tool string, args map[string]any, vars policy.Vars, check func([]policy.Firing)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	n := 0
	start := threadCPU()
	for b.Loop() {
		check(p.Fire(server, tool, args, vars, identity))
		n++
	}
	if cpu := threadCPU() - start; cpu > 0 && n > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	}
}

func TestBenchPolicyMatches(t *testing.T) {
	p := benchPolicy(t)
	if n := len(p.RulesFor("mail", "send")); n != 10 {
		t.Errorf("the call matches %d rules, want 10", n)
	}
	args, vars := benchCall()
	if f := p.Fire("mail", "send", args, vars, identity); len(f) != 0 {
		t.Errorf("the benign call fired %+v", f)
	}
}

// BenchmarkFire measures the rules' share of a decision: a 50-rule policy
// with 10 predicates, a benign call matching 10 rules (nothing fires, so
// every matching rule is evaluated in full).
func BenchmarkFire(b *testing.B) {
	p := benchPolicy(b)
	args, vars := benchCall()
	benchFire(b, p, "mail", "send", args, vars, func(f []policy.Firing) {
		if f != nil {
			b.Fatal(f)
		}
	})
}

// BenchmarkFireOneMatch is the same policy and a call only the catch-all
// "*" predicate matches: the cost of matching 50 patterns and one
// predicate.
func BenchmarkFireOneMatch(b *testing.B) {
	p := benchPolicy(b)
	args, vars := benchCall()
	benchFire(b, p, "calc", "add", args, vars, func([]policy.Firing) {})
}

// BenchmarkFireNoRules is the floor: a policy without rules.
func BenchmarkFireNoRules(b *testing.B) {
	p := mustParse(b, "")
	args, vars := benchCall()
	benchFire(b, p, "mail", "send", args, vars, func([]policy.Firing) {})
}

// BenchmarkFireBlocked is a call that breaks rules (so firings and their
// reasons are built).
func BenchmarkFireBlocked(b *testing.B) {
	p := benchPolicy(b)
	args, vars := benchCall()
	args["priority"] = "urgent"
	vars.RecipientDomains = []string{"corp.example", "evil.example"}
	benchFire(b, p, "mail", "send", args, vars, func(f []policy.Firing) {
		if policy.MostSevere(f) != flow.Block {
			b.Fatal(f)
		}
	})
}

// TestFireConcurrent shares one policy between goroutines, as the proxies'
// request handlers do (run with -race).
func TestFireConcurrent(t *testing.T) {
	p := benchPolicy(t)
	done := make(chan []policy.Firing)
	for i := range 8 {
		go func() {
			args, vars := benchCall()
			if i%2 == 1 {
				args["priority"] = "urgent"
				vars.RecipientDomains = []string{"evil.example"}
			}
			var last []policy.Firing
			for range 200 {
				last = p.Fire("mail", "send", args, vars, identity)
			}
			done <- last
		}()
	}
	for range 8 {
		f := <-done
		if len(f) != 0 && policy.MostSevere(f) != flow.Block {
			t.Errorf("fired %+v", f)
		}
	}
}
