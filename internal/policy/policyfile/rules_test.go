package policyfile

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

const rulesPolicy = `version: 1
config:
  allowed_domains: [corp.example]
rules:
  - id: ssh-guard
    match: "*read_file*"
    args:
      path: {within: ["~/projects", "/srv/data/"], deny: ['(^|/)\.ssh(/|$)', '\.env$']}
  - match: "slack:post_message"
    rate_limit: 10/minute
    args:
      channel: {one_of: ["#eng-bots", 7, true]}
  - match: "mail:send"
    when: 'recipient_domains.exists(d, !(d in config.allowed_domains))'
    action: escalate
    because: "mail outside   the company
      needs a human"
  - id: amounts
    match: "bank:*"
    action: warn
    args:
      amount: {min: 0.5, max: 100}
      memo: {max_length: 5, allow: ['^[a-z ]*$']}
  - id: web
    match: "web:fetch"
    action: allow
    args:
      url: {hosts: {allow: ["*.Corp.Example", "bücher.example"], deny: [admin.corp.example]}}
`

func TestParseRules(t *testing.T) {
	t.Setenv("HOME", "/home/tester")
	p := mustParse(t, rulesPolicy)
	if len(p.Rules) != 5 {
		t.Fatalf("%d rules", len(p.Rules))
	}
	ssh, slack, mail, bank, web := &p.Rules[0], &p.Rules[1], &p.Rules[2], &p.Rules[3], &p.Rules[4]

	if ssh.ID != "ssh-guard" || ssh.Action != flow.Block || ssh.Line != 5 || ssh.Source != "p.yaml" || ssh.When != nil || ssh.RateLimit != nil {
		t.Errorf("ssh rule %+v", ssh)
	}
	a := ssh.Args[0]
	if a.Name != "path" || !slices.Equal(a.Within, []string{"/home/tester/projects", "/srv/data"}) || len(a.Deny) != 2 || a.Line != 8 {
		t.Errorf("ssh args %+v", a)
	}
	if slack.ID != "rules[1]" || slack.RateLimit == nil || *slack.RateLimit != (policy.RateLimit{N: 10, Per: time.Minute, Text: "10/minute"}) {
		t.Errorf("slack rule %+v", slack)
	}
	if !slices.Equal(slack.Args[0].OneOf, []any{"#eng-bots", 7.0, true}) {
		t.Errorf("one_of = %#v", slack.Args[0].OneOf)
	}
	if mail.ID != "rules[2]" || mail.Action != flow.Escalate || mail.Because != "mail outside the company needs a human" ||
		mail.When == nil || mail.When.Source() != "recipient_domains.exists(d, !(d in config.allowed_domains))" {
		t.Errorf("mail rule %+v", mail)
	}
	if b := bank.Args; *b[0].Min != 0.5 || *b[0].Max != 100 || b[1].MaxLength != 5 || len(b[1].Allow) != 1 || bank.Action != flow.Warn {
		t.Errorf("bank rule %+v", bank)
	}
	h := web.Args[0].Hosts
	if !slices.Equal(h.Allow, []string{"*.corp.example", "xn--bcher-kva.example"}) || !slices.Equal(h.Deny, []string{"admin.corp.example"}) || web.Action != flow.Allow {
		t.Errorf("web hosts %+v", h)
	}
	if d, ok := p.Config["allowed_domains"].([]any); !ok || !slices.Equal(d, []any{"corp.example"}) {
		t.Errorf("config %#v", p.Config)
	}
}

func TestParseConfigValues(t *testing.T) {
	p := mustParse(t, `version: 1
config:
  s: text
  q: "42"
  i: 42
  h: 0x10
  f: 1.5
  b: true
  n: null
  d: 2024-01-02
  l: [1, two, {three: 3}]
  m: {a: {b: [true]}}
  anchor: &x [1, 2]
  alias: *x
`)
	want := map[string]any{
		"s": "text", "q": "42", "i": int64(42), "h": int64(16), "f": 1.5, "b": true, "n": nil, "d": "2024-01-02",
		"l":      []any{int64(1), "two", map[string]any{"three": int64(3)}},
		"m":      map[string]any{"a": map[string]any{"b": []any{true}}},
		"anchor": []any{int64(1), int64(2)},
		"alias":  []any{int64(1), int64(2)},
	}
	got, _ := json.Marshal(p.Config)
	w, _ := json.Marshal(want)
	if string(got) != string(w) {
		t.Errorf("config\n got %s\nwant %s", got, w)
	}
	if _, ok := p.Config["i"].(int64); !ok {
		t.Errorf("whole numbers are %T, want int64", p.Config["i"])
	}
}

// TestPresetLayering checks the precedence rules of the package doc for the
// preset: key, config and rules.
func TestPresetLayering(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		edit func(*summary)
	}{
		{"preset strict", "version: 1\npreset: strict\n", func(s *summary) {
			s.Preset = "strict"
			s.Trifecta, s.Integrity, s.TaintedArgs = flow.Block, flow.Warn, flow.Block
		}},
		{"file keys win over the preset, one by one", "version: 1\npreset: strict\nflow: {integrity: allow}\n", func(s *summary) {
			s.Preset = "strict"
			s.Trifecta, s.TaintedArgs = flow.Block, flow.Block
		}},
		{"preset monitor", "version: 1\npreset: monitor\n", func(s *summary) { s.Preset, s.Mode = "monitor", policy.Monitor }},
		{"the file's mode wins over preset monitor", "version: 1\npreset: monitor\nmode: enforce\n", func(s *summary) { s.Preset = "monitor" }},
		{"preset dataflow with tools", "version: 1\npreset: dataflow\ntools: [{match: x, labels: [sink]}]\n", func(s *summary) {
			s.Preset = "dataflow"
			s.Trifecta, s.TaintedArgs = flow.Escalate, flow.Block
			s.Tools = []string{"x sink"}
		}},
		{"preset integrity", "version: 1\npreset: integrity\n", func(s *summary) {
			s.Preset = "integrity"
			s.Trifecta, s.Integrity, s.TaintedArgs = flow.Escalate, flow.Escalate, flow.Escalate
		}},
		{"tainted_args alone", "version: 1\nflow: {tainted_args: escalate}\n", func(s *summary) { s.TaintedArgs = flow.Escalate }},
		{"config and rules", "version: 1\nconfig: {a: 1, b: [x]}\nrules: [{match: x, rate_limit: 1/sec}, {id: r, match: y, when: 'true', action: warn}]\n", func(s *summary) {
			s.Config = []string{"a", "b"}
			s.Rules = []string{"rules[0] x block", "r y warn"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.yaml)
			want := defaults
			tt.edit(&want)
			want.Source = "p.yaml"
			if got := summarize(p); !equalSummary(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestRuleAndConfigLayering checks that a base's rules come first, that
// config keys are merged with the file's winning, and that the base's
// predicates read the merged config.
func TestRuleAndConfigLayering(t *testing.T) {
	base := mustParse(t, `version: 1
config: {limit: 10, domains: [corp.example]}
rules:
  - id: base-limit
    match: "bank:transfer"
    when: 'args.amount > config.limit'
`)
	base.Source = "preset:test"
	l, errs := decode("p.yaml", []byte(`version: 1
config: {limit: 1000, extra: true}
rules:
  - match: "bank:transfer"
    when: 'config.extra && args.amount > 5000'
    action: escalate
`))
	if len(errs) > 0 {
		t.Fatal(ErrorList(errs))
	}
	p := l.apply(base, "p.yaml")
	if ids := []string{p.Rules[0].ID, p.Rules[1].ID}; !slices.Equal(ids, []string{"base-limit", "rules[0]"}) {
		t.Errorf("rule order %v", ids)
	}
	if p.Config["limit"] != int64(1000) || p.Config["extra"] != true || p.Config["domains"] == nil {
		t.Errorf("config %v", p.Config)
	}
	// The base rule now reads the file's limit: 500 is under it.
	fired := p.Fire("bank", "transfer", map[string]any{"amount": 500.0}, policy.Vars{}, nil)
	if len(fired) != 0 {
		t.Errorf("fired %+v", fired)
	}
	fired = p.Fire("bank", "transfer", map[string]any{"amount": 6000.0}, policy.Vars{}, nil)
	if len(fired) != 2 || fired[0].Rule.ID != "base-limit" || fired[1].Action != flow.Escalate {
		t.Errorf("fired %+v", fired)
	}
	// The base is unchanged and still reads its own config.
	if base.Config["limit"] != int64(10) || len(base.Rules) != 1 {
		t.Errorf("base changed: %v", base.Config)
	}
	if f := base.Fire("bank", "transfer", map[string]any{"amount": 500.0}, policy.Vars{}, nil); len(f) != 1 {
		t.Errorf("base fired %+v", f)
	}
}

func TestParseRateLimit(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		per  time.Duration
		fail string
	}{
		{"10/minute", 10, time.Minute, ""},
		{"5/second", 5, time.Second, ""},
		{"100/hour", 100, time.Hour, ""},
		{"5/sec", 5, time.Second, ""},
		{"2/min", 2, time.Minute, ""},
		{"1/hr", 1, time.Hour, ""},
		{" 3 / minute ", 3, time.Minute, ""},
		{"1000000/second", 1000000, time.Second, ""},
		{"0/minute", 0, 0, "at least 1 call"},
		{"-1/minute", 0, 0, "at least 1 call"},
		{"+5/minute", 0, 0, "not a whole number"},
		{"ten/minute", 0, 0, "not a whole number"},
		{"1.5/minute", 0, 0, "not a whole number"},
		{"5/fortnight", 0, 0, "unknown unit"},
		{"5/day", 0, 0, "unknown unit"},
		{"5/m", 0, 0, "unknown unit"},
		{"5/Minute", 0, 0, "unknown unit"},
		{"5/minutes", 0, 0, `did you mean "minute"`},
		{"5", 0, 0, `has no "/"`},
		{"/minute", 0, 0, "not a whole number"},
		{"1000001/second", 0, 0, "more than the largest limit"},
	}
	for _, tt := range tests {
		r, err := ParseRateLimit(tt.in)
		if tt.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tt.fail) {
				t.Errorf("ParseRateLimit(%q) = %+v, %v; want an error containing %q", tt.in, r, err, tt.fail)
			}
			continue
		}
		if err != nil || r.N != tt.n || r.Per != tt.per || r.Text != tt.in {
			t.Errorf("ParseRateLimit(%q) = %+v, %v", tt.in, r, err)
		}
	}
}

// TestArgRuleCheck is the table of what each constraint accepts and
// refuses, with the violation a person reads.
func TestArgRuleCheck(t *testing.T) {
	num := func(f float64) *float64 { return &f }
	re := mustRegexps
	id := func(s string) (string, bool) { return s, true }
	tests := []struct {
		name  string
		rule  policy.ArgRule
		value any
		want  string
	}{
		{"one_of string", policy.ArgRule{Name: "channel", OneOf: []any{"#eng"}}, "#eng", ""},
		{"one_of other string", policy.ArgRule{Name: "channel", OneOf: []any{"#eng"}}, "#general", "$.channel is not one of the allowed values"},
		{"one_of number equals", policy.ArgRule{Name: "n", OneOf: []any{1.0}}, 1.0, ""},
		{"one_of json.Number", policy.ArgRule{Name: "n", OneOf: []any{1.0}}, json.Number("1.0"), ""},
		{"one_of int", policy.ArgRule{Name: "n", OneOf: []any{1.0}}, 1, ""},
		{"one_of number is not its string", policy.ArgRule{Name: "n", OneOf: []any{1.0}}, "1", "$.n is not one of the allowed values"},
		{"one_of bool", policy.ArgRule{Name: "b", OneOf: []any{true}}, true, ""},
		{"one_of bool is not 1", policy.ArgRule{Name: "b", OneOf: []any{true}}, 1.0, "$.b is not one of the allowed values"},
		{"one_of null", policy.ArgRule{Name: "b", OneOf: []any{"x"}}, nil, "$.b is not one of the allowed values"},
		{"one_of object", policy.ArgRule{Name: "b", OneOf: []any{"x"}}, map[string]any{"x": 1.0}, "$.b is not one of the allowed values"},
		{"array: each element", policy.ArgRule{Name: "to", OneOf: []any{"a", "b"}}, []any{"a", "b", "a"}, ""},
		{"array: one bad element", policy.ArgRule{Name: "to", OneOf: []any{"a", "b"}}, []any{"a", "c"}, "$.to[1] is not one of the allowed values"},
		{"nested arrays", policy.ArgRule{Name: "to", OneOf: []any{"a"}}, []any{[]any{"a"}, []any{"a", "z"}}, "$.to[1][1] is not one of the allowed values"},
		{"[]string", policy.ArgRule{Name: "to", OneOf: []any{"a"}}, []string{"a", "z"}, "$.to[1] is not one of the allowed values"},
		{"empty array", policy.ArgRule{Name: "to", OneOf: []any{"a"}}, []any{}, ""},
		{"deny", policy.ArgRule{Name: "cmd", Deny: re(t, `rm\s+-rf`)}, "rm -rf /", `$.cmd matches the denied pattern "rm\s+-rf"`},
		{"deny passes", policy.ArgRule{Name: "cmd", Deny: re(t, `rm\s+-rf`)}, "ls", ""},
		{"deny on a number", policy.ArgRule{Name: "cmd", Deny: re(t, `x`)}, 3.0, "$.cmd is a number, not a string"},
		{"allow", policy.ArgRule{Name: "branch", Allow: re(t, `^feature/`, `^fix/`)}, "fix/x", ""},
		{"allow fails", policy.ArgRule{Name: "branch", Allow: re(t, `^feature/`, `^fix/`)}, "main", "$.branch matches none of the allowed patterns"},
		{"max_length in characters", policy.ArgRule{Name: "s", MaxLength: 3}, "ééé", ""},
		{"max_length over", policy.ArgRule{Name: "s", MaxLength: 3}, "abcd", "$.s is longer than 3 characters"},
		{"max_length on a bool", policy.ArgRule{Name: "s", MaxLength: 3}, true, "$.s is true or false, not a string"},
		{"min", policy.ArgRule{Name: "amount", Min: num(1)}, 1.0, ""},
		{"under min", policy.ArgRule{Name: "amount", Min: num(1)}, 0.5, "$.amount is less than 1"},
		{"over max", policy.ArgRule{Name: "amount", Max: num(99.5)}, 100, "$.amount is more than 99.5"},
		{"max on a string", policy.ArgRule{Name: "amount", Max: num(10)}, "5", "$.amount is a string, not a number"},
		{"max on null", policy.ArgRule{Name: "amount", Max: num(10)}, nil, "$.amount is null, not a number"},
		{"within on a number", policy.ArgRule{Name: "path", Within: []string{"/srv"}}, 42.0, "$.path is a number, not a string"},
		{"within, unresolved", policy.ArgRule{Name: "path", Within: []string{"/srv"}}, "/srv/x", "$.path is outside /srv"}, // resolved by id
		{"within, resolver says no", policy.ArgRule{Name: "path", Within: []string{"/srv"}}, "\x00", "$.path is not a path Weir could resolve"},
		{"within, several dirs", policy.ArgRule{Name: "path", Within: []string{"/srv", "/data"}, WithinText: []string{"/srv", "~/data"}}, "/etc", "$.path is outside /srv and ~/data"},
		{"deny on the resolved form", policy.ArgRule{Name: "path", Within: []string{"/"}, Deny: re(t, `^/home/u/\.ssh/`)}, "~/.ssh/id_rsa", `$.path matches the denied pattern "^/home/u/\.ssh/"`},
		{"deny on the written form", policy.ArgRule{Name: "path", Within: []string{"/"}, Deny: re(t, `^~`)}, "~/x", `$.path matches the denied pattern "^~"`},
		{"allow needs both forms", policy.ArgRule{Name: "path", Within: []string{"/"}, Allow: re(t, `^~/`)}, "~/x", "$.path matches none of the allowed patterns"},
		{"odd argument name", policy.ArgRule{Name: "file-name", MaxLength: 1}, "ab", `$["file-name"] is longer than 1 characters`},
	}
	resolve := func(s string) (string, bool) {
		switch {
		case strings.ContainsRune(s, 0):
			return "", false
		case strings.HasPrefix(s, "~/"):
			return "/home/u/" + s[2:], true
		}
		return id(s)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "within, unresolved" {
				tt.value = "/etc/x"
			}
			got := tt.rule.Check(tt.value, resolve)
			if got != tt.want {
				t.Errorf("Check(%#v) = %q, want %q", tt.value, got, tt.want)
			}
		})
	}
	// No resolver: a within value cannot be checked, so it is refused.
	r := policy.ArgRule{Name: "path", Within: []string{"/"}}
	if got := r.Check("/x", nil); got != "$.path is not a path Weir could resolve" {
		t.Errorf("Check without resolver = %q", got)
	}
}

func mustRegexps(t *testing.T, exprs ...string) []*regexp.Regexp {
	t.Helper()
	var out []*regexp.Regexp
	for _, e := range exprs {
		out = append(out, regexp.MustCompile(e))
	}
	return out
}

// TestViolationsNeverQuoteValues plants a secret in every kind of argument
// and checks that no violation repeats it.
func TestViolationsNeverQuoteValues(t *testing.T) {
	t.Setenv("HOME", "/home/tester")
	p := mustParse(t, rulesPolicy+`  - match: "*"
    args:
      a: {one_of: [x]}
      b: {deny: ['.']}
      c: {allow: ['^$']}
      d: {max_length: 1}
      e: {min: 0, max: 1}
      f: {hosts: {allow: [corp.example]}}
      g: {within: ["/srv"]}
`)
	const secret = "sk-SECRET-8f9a7b6c5d4e"
	values := []any{
		secret, "/" + secret, "https://" + secret + "/", "https://corp.example@" + secret + ".example/",
		secret + "://corp.example/", "ftp://" + secret, []any{secret}, map[string]any{secret: secret},
	}
	names := []string{"path", "channel", "amount", "memo", "url", "a", "b", "c", "d", "e", "f", "g"}
	for _, v := range values {
		args := map[string]any{}
		for _, n := range names {
			args[n] = v
		}
		for _, tool := range []string{"read_file", "post_message", "transfer", "fetch"} {
			for _, server := range []string{"fs", "slack", "bank", "web"} {
				for _, f := range p.Fire(server, tool, args, policy.Vars{}, func(s string) (string, bool) { return filepath.Clean("/" + s), true }) {
					for _, text := range []string{f.Reason, f.Detail} {
						if strings.Contains(text, "SECRET") {
							t.Errorf("%s %s: %q quotes the value", server, tool, text)
						}
					}
				}
			}
		}
	}
}

func TestFire(t *testing.T) {
	t.Setenv("HOME", "/home/tester")
	p := mustParse(t, rulesPolicy+`  - id: broken
    match: "mail:send"
    when: 'args.subject.size() > 100'
  - id: record
    match: "mail:*"
    when: 'true'
    action: allow
`)
	resolve := func(s string) (string, bool) {
		r, err := ResolvePath(s, "/home/tester", "/")
		return r, err == nil
	}
	type fired struct {
		id     string
		action flow.Verdict
		reason string
	}
	tests := []struct {
		name         string
		server, tool string
		args         map[string]any
		vars         policy.Vars
		want         []fired
	}{
		{"nothing matches", "calc", "add", map[string]any{"a": 1.0}, policy.Vars{}, nil},
		{"path inside", "fs", "read_file", map[string]any{"path": "~/projects/a.go"}, policy.Vars{}, nil},
		{"path outside", "fs", "read_file", map[string]any{"path": "/etc/passwd"}, policy.Vars{},
			[]fired{{"ssh-guard", flow.Block, "$.path is outside ~/projects and /srv/data/"}}},
		{"path denied inside", "fs", "read_file", map[string]any{"path": "~/projects/.env"}, policy.Vars{},
			[]fired{{"ssh-guard", flow.Block, `$.path matches the denied pattern "\.env$"`}}},
		{"absent argument is not checked", "fs", "read_file", map[string]any{"file": "/etc/passwd"}, policy.Vars{}, nil},
		{"channel allowed", "slack", "post_message", map[string]any{"channel": "#eng-bots", "text": "hi"}, policy.Vars{}, nil},
		{"channel not allowed", "slack", "post_message", map[string]any{"channel": "#general"}, policy.Vars{},
			[]fired{{"rules[1]", flow.Block, "$.channel is not one of the allowed values"}}},
		{"over the rate limit", "slack", "post_message", map[string]any{"channel": "#eng-bots"}, policy.Vars{RateExceeded: []string{"rules[1]"}},
			[]fired{{"rules[1]", flow.Block, "this call is over the rate limit of rule rules[1] (10/minute)"}}},
		{"rate limit and violation", "slack", "post_message", map[string]any{"channel": "#x"}, policy.Vars{RateExceeded: []string{"rules[1]", "other"}},
			[]fired{{"rules[1]", flow.Block, "this call is over the rate limit of rule rules[1] (10/minute)"}, {"rules[1]", flow.Block, "$.channel is not one of the allowed values"}}},
		{"rate limit of a rule that does not match", "slack", "other", nil, policy.Vars{RateExceeded: []string{"rules[1]"}}, nil},
		{"mail inside the company", "mail", "send", map[string]any{"subject": "hi"}, policy.Vars{RecipientDomains: []string{"corp.example"}},
			[]fired{{"record", flow.Allow, "when: true"}}},
		{"mail outside: because is the reason", "mail", "send", map[string]any{"subject": "hi"}, policy.Vars{RecipientDomains: []string{"corp.example", "x.example"}},
			[]fired{{"rules[2]", flow.Escalate, "mail outside the company needs a human"}, {"record", flow.Allow, "when: true"}}},
		{"predicate error fails closed", "mail", "send", map[string]any{}, policy.Vars{},
			[]fired{{"broken", flow.Block, "rule broken could not be evaluated, so the call is blocked (when: args.subject.size() > 100)"}, {"record", flow.Allow, "when: true"}}},
		{"amount in range", "bank", "transfer", map[string]any{"amount": 50.0, "memo": "rent"}, policy.Vars{}, nil},
		{"amount out of range warns", "bank", "transfer", map[string]any{"amount": 500.0}, policy.Vars{},
			[]fired{{"amounts", flow.Warn, "$.amount is more than 100"}}},
		{"first violation only", "bank", "transfer", map[string]any{"amount": 500.0, "memo": "TOO LONG"}, policy.Vars{},
			[]fired{{"amounts", flow.Warn, "$.amount is more than 100"}}},
		{"allow rule records", "web", "fetch", map[string]any{"url": "https://evil.example/"}, policy.Vars{},
			[]fired{{"web", flow.Allow, "$.url host is not allowed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []fired
			for _, f := range p.Fire(tt.server, tt.tool, tt.args, tt.vars, resolve) {
				got = append(got, fired{f.Rule.ID, f.Action, f.Reason})
				if f.Detail == "" {
					t.Errorf("firing of %s has no detail", f.Rule.ID)
				}
				if (f.Err != nil) != strings.Contains(f.Reason, "could not be evaluated") {
					t.Errorf("firing of %s: Err = %v", f.Rule.ID, f.Err)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestFireSeesTheCall checks that predicates read the server, tool and
// arguments Fire is given, whatever vars says.
func TestFireSeesTheCall(t *testing.T) {
	p := mustParse(t, "version: 1\nrules:\n  - {match: \"*\", when: 'server == \"a\" && tool == \"b\" && args.x == 1'}\n")
	f := p.Fire("a", "b", map[string]any{"x": 1.0}, policy.Vars{Server: "z", Tool: "z", Args: map[string]any{"x": 2.0}}, nil)
	if len(f) != 1 {
		t.Errorf("fired %+v", f)
	}
}

func TestFireCostLimit(t *testing.T) {
	p := mustParse(t, "version: 1\nrules:\n  - {id: slow, match: \"*\", when: 'args.l.all(a, args.l.all(b, a == b))'}\n")
	big := make([]any, 1000)
	for i := range big {
		big[i] = 1.0
	}
	f := p.Fire("s", "t", map[string]any{"l": big}, policy.Vars{}, nil)
	if len(f) != 1 || f[0].Action != flow.Block || f[0].Reason != "rule slow needed more than its evaluation budget, so the call is blocked (when: args.l.all(a, args.l.all(b, a == b)))" {
		t.Errorf("fired %+v", f)
	}
}

func TestRuleLookups(t *testing.T) {
	t.Setenv("HOME", "/home/tester")
	p := mustParse(t, rulesPolicy+`  - match: "fs:*"
    rate_limit: 100/hour
    args:
      dest: {within: ["/tmp"]}
      path: {within: ["/var"]}
`)
	ids := func(rs []*policy.Rule) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(p.RulesFor("fs", "read_file")); !slices.Equal(got, []string{"ssh-guard", "rules[5]"}) {
		t.Errorf("RulesFor = %v", got)
	}
	if got := ids(p.RulesFor("calc", "add")); got != nil {
		t.Errorf("RulesFor = %v", got)
	}
	if got := p.PathArgs("fs", "read_file"); !slices.Equal(got, []string{"path", "dest"}) {
		t.Errorf("PathArgs = %v", got)
	}
	if got := p.PathArgs("slack", "post_message"); got != nil {
		t.Errorf("PathArgs = %v", got)
	}
	if got := ids(p.RateLimits("fs", "read_file")); !slices.Equal(got, []string{"rules[5]"}) {
		t.Errorf("RateLimits = %v", got)
	}
	if got := ids(p.RateLimits("slack", "post_message")); !slices.Equal(got, []string{"rules[1]"}) {
		t.Errorf("RateLimits = %v", got)
	}
	var nilp *policy.Policy
	if nilp.RulesFor("a", "b") != nil || nilp.PathArgs("a", "b") != nil || nilp.RateLimits("a", "b") != nil || nilp.Fire("a", "b", nil, policy.Vars{}, nil) != nil {
		t.Error("nil policy has rules")
	}
	if policy.MostSevere(nil) != flow.Allow || policy.MostSevere([]policy.Firing{{Action: flow.Warn}, {Action: flow.Block}, {Action: flow.Escalate}}) != flow.Block {
		t.Error("MostSevere")
	}
}

func TestWithinNeedsHome(t *testing.T) {
	t.Setenv("HOME", "")
	_, err := Parse("p.yaml", []byte("version: 1\nrules:\n  - match: x\n    args: {path: {within: [\"~/projects\", /srv]}}\n"))
	want := `p.yaml:4:28: rules[0].args.path.within[0]: cannot expand "~/projects": the home directory is not known ($HOME is not set); write an absolute path`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestPresetRulesNeedIDs checks what the preset loader demands of rules.
func TestPresetRulesNeedIDs(t *testing.T) {
	_, errs := decodeAs("preset:x", []byte("version: 1\npreset: strict\nrules: [{match: x, when: 'true'}]\n"), true)
	got := ErrorList(errs).Error()
	want := "preset:x:2:1: preset: a preset cannot layer on another preset; set every key instead\n" +
		"preset:x:3:9: rules[0]: a preset's rule needs an id, so that user files cannot collide with it"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
