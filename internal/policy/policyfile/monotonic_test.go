package policyfile

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// Building blocks for random rules. Predicates include ones that fail to
// evaluate on some calls (missing keys, wrong types), since an evaluation
// error must also only ever add severity.
var (
	genMatches = []string{"*", "mail:*", "mail:send", "*send*", "fs:read_file", "web:fetch", "*:*_file", "slack:post_message"}
	genWhens   = []string{
		`true`, `false`,
		`"private" in session.legs`,
		`session.legs.size() == 2`,
		`recipient_domains.exists(d, !(d in config.allowed))`,
		`url_hosts.all(h, h.endsWith(".corp.example"))`,
		`args.to.endsWith("@corp.example")`, // errors without args.to
		`has(args.amount) && args.amount > config.limit`,
		`args.amount > 10`, // errors on strings
		`"untrusted" in provenance["$.to"]`,
		`tool.startsWith("send") || server == "fs"`,
		`size(args) > 2`,
	}
	genArgs = []string{
		`{within: ["/srv"]}`,
		`{within: ["/srv", "/tmp"], deny: ['\.env$']}`,
		`{deny: ['(^|/)\.ssh(/|$)']}`,
		`{allow: ['^[a-z]+$']}`,
		`{one_of: ["a", "b", 1, true]}`,
		`{hosts: {allow: ["*.corp.example"]}}`,
		`{hosts: {deny: ["evil.example"]}}`,
		`{max_length: 4}`,
		`{min: 0, max: 100}`,
		`{min: 5}`,
	}
	genArgNames = []string{"path", "to", "url", "amount", "channel"}
	genActions  = []string{"allow", "warn", "block", "escalate"}
	genValues   = []any{
		"/srv/a", "/srv/.env", "/etc/passwd", "~/.ssh/id_rsa", "a", "abc", "ABC", "b", "https://x.corp.example/",
		"https://evil.example/", "ftp://x", "me@corp.example", "you@evil.example", 1.0, 50.0, 500.0, -1.0, true, false, nil,
		[]any{"a", "b"}, []any{"a", 7.0}, map[string]any{"k": "v"}, "",
	}
)

// genRule draws one rule, as policy YAML, with the given id.
func genRule(t *rapid.T, id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - id: %s\n    match: %q\n", id, rapid.SampledFrom(genMatches).Draw(t, "match"))
	has := false
	if rapid.Bool().Draw(t, "hasWhen") {
		fmt.Fprintf(&b, "    when: '%s'\n", strings.ReplaceAll(rapid.SampledFrom(genWhens).Draw(t, "when"), "'", "''"))
		has = true
	}
	if rapid.Bool().Draw(t, "hasArgs") || !has {
		b.WriteString("    args:\n")
		names := rapid.SliceOfNDistinct(rapid.SampledFrom(genArgNames), 1, 3, rapid.ID[string]).Draw(t, "argNames")
		for _, n := range names {
			fmt.Fprintf(&b, "      %s: %s\n", n, rapid.SampledFrom(genArgs).Draw(t, "constraint"))
		}
	}
	if rapid.Bool().Draw(t, "hasRate") {
		b.WriteString("    rate_limit: 5/minute\n")
	}
	if rapid.Bool().Draw(t, "hasAction") {
		fmt.Fprintf(&b, "    action: %s\n", rapid.SampledFrom(genActions).Draw(t, "action"))
	}
	if rapid.Bool().Draw(t, "hasBecause") {
		b.WriteString("    because: a reason\n")
	}
	return b.String()
}

func genPolicy(t *rapid.T, rules []string) *policy.Policy {
	text := "version: 1\nconfig: {allowed: [corp.example], limit: 20}\nrules:\n" + strings.Join(rules, "")
	p, err := Parse("p.yaml", []byte(text))
	if err != nil {
		t.Fatalf("generated policy does not parse: %v\n%s", err, text)
	}
	return p
}

type genCall struct {
	server, tool string
	args         map[string]any
	vars         policy.Vars
}

func drawCall(t *rapid.T, ids []string) genCall {
	c := genCall{
		server: rapid.SampledFrom([]string{"mail", "fs", "web", "slack", "calc"}).Draw(t, "server"),
		tool:   rapid.SampledFrom([]string{"send", "read_file", "fetch", "post_message", "send_bulk", "add"}).Draw(t, "tool"),
		args:   map[string]any{},
	}
	for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(genArgNames), rapid.ID[string]).Draw(t, "args") {
		c.args[n] = rapid.SampledFrom(genValues).Draw(t, "value")
	}
	c.vars = policy.Vars{
		Legs:             rapid.SliceOfDistinct(rapid.SampledFrom([]string{"private", "untrusted"}), rapid.ID[string]).Draw(t, "legs"),
		RecipientDomains: rapid.SliceOf(rapid.SampledFrom([]string{"corp.example", "evil.example"})).Draw(t, "domains"),
		URLHosts:         rapid.SliceOf(rapid.SampledFrom([]string{"a.corp.example", "evil.example"})).Draw(t, "hosts"),
		Provenance:       map[string][]string{"$.to": rapid.SliceOf(rapid.SampledFrom([]string{"private", "untrusted"})).Draw(t, "prov")},
	}
	if len(ids) > 0 {
		c.vars.RateExceeded = rapid.SliceOfDistinct(rapid.SampledFrom(ids), rapid.ID[string]).Draw(t, "over")
	}
	return c
}

func resolveForTest(s string) (string, bool) {
	r, err := ResolvePath(s, "/home/u", "/srv")
	return r, err == nil
}

// TestAddingARuleNeverLoosens is the monotonicity property: for any policy,
// any call and any rule added anywhere among its rules, the most severe
// action among the firing rules is at least what it was without the rule,
// and every firing without it is still there. (allow_flows, the one key
// that loosens, is not a rule; the engine tests it.)
func TestAddingARuleNeverLoosens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "rules")
		var rules, ids []string
		for i := range n {
			id := fmt.Sprintf("r%d", i)
			rules = append(rules, genRule(t, id))
			ids = append(ids, id)
		}
		extra := genRule(t, "extra")
		at := rapid.IntRange(0, n).Draw(t, "insertAt")
		before := genPolicy(t, rules)
		after := genPolicy(t, slices.Insert(slices.Clone(rules), at, extra))

		call := drawCall(t, append(ids, "extra"))
		fb := before.Fire(call.server, call.tool, call.args, call.vars, resolveForTest)
		fa := after.Fire(call.server, call.tool, call.args, call.vars, resolveForTest)
		if policy.MostSevere(fa) < policy.MostSevere(fb) {
			t.Fatalf("adding a rule lowered the verdict from %v to %v\nbefore: %+v\nafter: %+v", policy.MostSevere(fb), policy.MostSevere(fa), fb, fa)
		}
		key := func(f policy.Firing) string { return f.Rule.ID + "|" + f.Action.String() + "|" + f.Detail }
		have := map[string]int{}
		for _, f := range fa {
			have[key(f)]++
		}
		for _, f := range fb {
			if have[key(f)] == 0 {
				t.Fatalf("firing %s disappeared when a rule was added", key(f))
			}
			have[key(f)]--
		}
		// Firing is deterministic.
		again := after.Fire(call.server, call.tool, call.args, call.vars, resolveForTest)
		if len(again) != len(fa) {
			t.Fatalf("Fire is not deterministic")
		}
		for i := range again {
			if key(again[i]) != key(fa[i]) {
				t.Fatalf("Fire is not deterministic: %s vs %s", key(again[i]), key(fa[i]))
			}
		}
	})
}

// TestFileRulesOnAPresetNeverLoosen checks the same through layering: a
// file's rules on a base with rules never lower what the base's rules
// decide.
func TestFileRulesOnAPresetNeverLoosen(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var baseRules, fileRules, ids []string
		for i := range rapid.IntRange(1, 4).Draw(t, "baseRules") {
			id := fmt.Sprintf("b%d", i)
			baseRules = append(baseRules, genRule(t, id))
			ids = append(ids, id)
		}
		for i := range rapid.IntRange(0, 4).Draw(t, "fileRules") {
			id := fmt.Sprintf("f%d", i)
			fileRules = append(fileRules, genRule(t, id))
			ids = append(ids, id)
		}
		base := genPolicy(t, baseRules)
		l, errs := decode("f.yaml", []byte("version: 1\nconfig: {allowed: [corp.example], limit: 20}\nrules:\n"+strings.Join(fileRules, "")))
		if len(errs) > 0 {
			t.Fatal(ErrorList(errs))
		}
		layered := l.apply(base, "f.yaml")
		call := drawCall(t, ids)
		fb := base.Fire(call.server, call.tool, call.args, call.vars, resolveForTest)
		fl := layered.Fire(call.server, call.tool, call.args, call.vars, resolveForTest)
		if policy.MostSevere(fl) < policy.MostSevere(fb) {
			t.Fatalf("layering lowered the verdict from %v to %v", policy.MostSevere(fb), policy.MostSevere(fl))
		}
		if policy.MostSevere(fl) == flow.Allow && len(fb) > 0 && policy.MostSevere(fb) != flow.Allow {
			t.Fatal("a block became an allow")
		}
	})
}
