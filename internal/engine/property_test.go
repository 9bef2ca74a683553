package engine

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// The engine's properties, over random sessions and calls drawn from the
// texts and tools of the table tests.

var (
	propTexts = []string{noteText, keyNote, pageText, files.text, injected.text,
		"Lunch at noon on Thursday? The usual place by the river.", "jay@evil.example", "US133000000121212121212"}
	propTools = []struct {
		name   string
		labels flow.Labels
	}{
		{"notes/read_note", flow.Private}, {"web/fetch", flow.Untrusted | flow.Sink}, {"files/read_file", flow.Private},
		{"mail/get_inbox", flow.Private | flow.Untrusted}, {"calc/add", 0},
	}
	propSinks = []string{"mail/send_email", "slack/post_message", "web/fetch", "calc/add"}
)

func drawRead(t *rapid.T, label string) read {
	tl := propTools[rapid.IntRange(0, len(propTools)-1).Draw(t, label+".tool")]
	return read{tl.name, tl.labels, propTexts[rapid.IntRange(0, len(propTexts)-1).Draw(t, label+".text")]}
}

func drawCall(t *rapid.T) Call {
	name := propSinks[rapid.IntRange(0, len(propSinks)-1).Draw(t, "sink")]
	server, tool, _ := strings.Cut(name, "/")
	var parts []string
	for i := range rapid.IntRange(0, 3).Draw(t, "pieces") {
		s := propTexts[rapid.IntRange(0, len(propTexts)-1).Draw(t, "piece")]
		if n := len(s); n > 10 {
			a := rapid.IntRange(0, n/2).Draw(t, "from")
			s = s[a:]
		}
		if rapid.Bool().Draw(t, "b64") {
			s = base64.StdEncoding.EncodeToString([]byte(s))
		}
		_ = i
		parts = append(parts, s)
	}
	args, _ := json.Marshal(map[string]string{"to": "x@example.com", "body": strings.Join(parts, " ")})
	labels := flow.Sink
	if tool == "add" {
		labels = 0
	}
	return Call{Server: server, Tool: tool, Labels: ToolLabels{Labels: labels}, Args: args}
}

var propPolicies = []string{
	"version: 1\n",
	"version: 1\npreset: strict\n",
	"version: 1\npreset: dataflow\n",
	"version: 1\npreset: integrity\n",
	"version: 1\nrules:\n  - id: r\n    match: \"mail:*\"\n    when: '\"private\" in session.legs'\n    action: escalate\n",
}

// TestPropertyObservationsOnlyRaise: an observation added to the session
// never lowers the verdict of a call (labels only tighten, DESIGN rule 3).
func TestPropertyObservationsOnlyRaise(t *testing.T) {
	h := hasher(t)
	pols := make([]*policy.Policy, len(propPolicies))
	for i, y := range propPolicies {
		pols[i] = mustPolicy(t, y)
	}
	rapid.Check(t, func(t *rapid.T) {
		pol := pols[rapid.IntRange(0, len(pols)-1).Draw(t, "policy")]
		var reads []read
		for i := range rapid.IntRange(0, 3).Draw(t, "reads") {
			_ = i
			reads = append(reads, drawRead(t, "read"))
		}
		c := drawCall(t)
		before := decide(pol, h, session(t, h, reads...), c)
		more := append(reads, drawRead(t, "added"))
		after := decide(pol, h, session(t, h, more...), c)
		if after.Verdict < before.Verdict {
			t.Fatalf("adding %v lowered the verdict from %s (%s) to %s (%s)", more[len(more)-1], before.Verdict, before.Rule, after.Verdict, after.Rule)
		}
	})
}

// TestPropertyAllowFlowsLoosensOnlyWhatItNames: declassifying a flow
// FROM -> TO never tightens a decision, and leaves decisions on sinks TO
// does not match exactly as they were.
func TestPropertyAllowFlowsLoosensOnlyWhatItNames(t *testing.T) {
	h := hasher(t)
	flows := []string{"notes:* -> mail:*", "files:read_file -> slack:post_message", "web:* -> mail:send_email", "*:* -> calc:*"}
	rapid.Check(t, func(t *rapid.T) {
		base := propPolicies[rapid.IntRange(0, len(propPolicies)-1).Draw(t, "policy")]
		f := flows[rapid.IntRange(0, len(flows)-1).Draw(t, "flow")]
		p0 := mustPolicy(t, base)
		p1 := mustPolicy(t, base+"flow: {allow_flows: [\""+f+"\"]}\n")
		var reads []read
		for i := range rapid.IntRange(0, 3).Draw(t, "reads") {
			_ = i
			reads = append(reads, drawRead(t, "read"))
		}
		c := drawCall(t)
		s := session(t, h, reads...)
		d0, d1 := decide(p0, h, s, c), decide(p1, h, s, c)
		if d1.Verdict > d0.Verdict {
			t.Fatalf("allow_flows %q tightened %s from %s to %s (%s)", f, c.Name(), d0.Verdict, d1.Verdict, d1.Rule)
		}
		_, to, _ := strings.Cut(f, " -> ")
		g, err := policy.CompileGlob(to)
		if err != nil {
			t.Fatal(err)
		}
		if !g.Match(c.Server, c.Tool) && (d0.Verdict != d1.Verdict || d0.Rule != d1.Rule || d0.Reason != d1.Reason) {
			t.Fatalf("allow_flows %q changed the decision on %s, which it does not name: %s %s → %s %s", f, c.Name(), d0.Verdict, d0.Rule, d1.Verdict, d1.Rule)
		}
	})
}

// TestPropertyMonitorDecidesAlike: in monitor mode every event gets the
// verdict, rule, reason and delta enforce mode gives it, and nothing is
// enforced: no rewrite, Enforced false.
func TestPropertyMonitorDecidesAlike(t *testing.T) {
	h := hasher(t)
	rapid.Check(t, func(t *rapid.T) {
		base := propPolicies[rapid.IntRange(0, len(propPolicies)-1).Draw(t, "policy")] + "redact_secrets: true\n"
		enforce, monitor := mustPolicy(t, base), mustPolicy(t, base+"mode: monitor\n")
		var reads []read
		for i := range rapid.IntRange(0, 3).Draw(t, "reads") {
			_ = i
			reads = append(reads, drawRead(t, "read"))
		}
		s := session(t, h, reads...)
		r := drawRead(t, "result")
		server, tool, _ := strings.Cut(r.tool, "/")
		text := r.text + rapid.SampledFrom([]string{"", "\u200b", "<!-- hidden -->", " sk_live_51Hq9ZtW8xKpL3vR"}).Draw(t, "noise")
		events := []Event{
			drawCall(t),
			Result{Server: server, Tool: tool, Labels: r.labels, Raw: textResult(text)},
			Instructions{Server: "srv", Raw: json.RawMessage(`{"instructions":"x"}`), Text: "x"},
		}
		for _, ev := range events {
			de := Decide(Inputs{Policy: enforce, Hasher: h, Session: s}, ev)
			dm := Decide(Inputs{Policy: monitor, Hasher: h, Session: s}, ev)
			if !de.Enforced || dm.Enforced {
				t.Fatalf("%T: enforced %v in enforce mode, %v in monitor mode", ev, de.Enforced, dm.Enforced)
			}
			if dm.Rewrite != nil {
				t.Fatalf("%T: monitor mode rewrote: %s", ev, dm.Rewrite)
			}
			if de.Verdict != dm.Verdict || de.Rule != dm.Rule || de.Reason != dm.Reason || len(de.Delta.Observations) != len(dm.Delta.Observations) {
				t.Fatalf("%T: enforce %s %s %q, monitor %s %s %q", ev, de.Verdict, de.Rule, de.Reason, dm.Verdict, dm.Rule, dm.Reason)
			}
		}
	})
}

// TestHostsAgree: a hosts: rule and a predicate over url_hosts see the same
// host for a URL, www. spelling included, so the two ways a policy can say
// "only corp.example" or "never evil.example" agree (and a deny of
// evil.example covers www.evil.example).
func TestHostsAgree(t *testing.T) {
	h := hasher(t)
	rule := func(c string) string {
		return "version: 1\nrules:\n  - id: r\n    match: \"web:post\"\n" + c
	}
	pairs := []struct{ name, hosts, cel string }{
		{"allow", "    args:\n      url: {hosts: {allow: [corp.example]}}\n", "    when: 'url_hosts.exists(h, h != \"corp.example\")'\n"},
		{"deny", "    args:\n      url: {hosts: {deny: [evil.example]}}\n", "    when: 'url_hosts.exists(h, h == \"evil.example\")'\n"},
		{"www pattern", "    args:\n      url: {hosts: {allow: [www.corp.example]}}\n", "    when: 'url_hosts.exists(h, h != \"corp.example\")'\n"},
	}
	urls := []string{"https://corp.example/a", "https://www.corp.example/a", "https://WWW.Corp.Example./a", "https://a.corp.example",
		"https://evil.example/x", "https://www.evil.example/x", "https://www.www.evil.example", "https://corp.example.evil.example", "https://www.example"}
	for _, p := range pairs {
		byHosts, byCEL := mustPolicy(t, rule(p.hosts)), mustPolicy(t, rule(p.cel))
		for _, u := range urls {
			c := Call{Server: "web", Tool: "post", Labels: ToolLabels{Labels: flow.Sink}, Args: args("url", u)}
			a, b := decide(byHosts, h, &flow.Session{}, c), decide(byCEL, h, &flow.Session{}, c)
			if a.Verdict != b.Verdict {
				t.Errorf("%s, %s: hosts: rule %s, url_hosts predicate %s", p.name, u, a.Verdict, b.Verdict)
			}
		}
	}
	deny := mustPolicy(t, rule(pairs[1].hosts))
	if d := decide(deny, h, &flow.Session{}, Call{Server: "web", Tool: "post", Args: args("url", "https://www.evil.example/")}); d.Verdict != flow.Block {
		t.Errorf("a deny of evil.example let www.evil.example through: %s", d.Verdict)
	}
}

// TestPropertyDigestDecidesAlike: a call decided from its argument digest,
// written to JSON and read back without the arguments (as a replay reads a
// recording, with the policy rules' findings it keeps), gets the decision
// the arguments themselves get: the engine needs no value at rest to
// decide again (DESIGN rule 2).
func TestPropertyDigestDecidesAlike(t *testing.T) {
	h := hasher(t)
	pols := make([]*policy.Policy, len(propPolicies))
	for i, y := range propPolicies {
		pols[i] = mustPolicy(t, y)
	}
	rapid.Check(t, func(t *rapid.T) {
		pol := pols[rapid.IntRange(0, len(pols)-1).Draw(t, "policy")]
		var reads []read
		for i := range rapid.IntRange(0, 4).Draw(t, "reads") {
			_ = i
			reads = append(reads, drawRead(t, "read"))
		}
		c := drawCall(t)
		s := session(t, h, reads...)
		live := decide(pol, h, s, c)
		rec, err := json.Marshal(DigestArgs(h, c.Args))
		if err != nil {
			t.Fatal(err)
		}
		var dg ArgDigest
		if err := json.Unmarshal(rec, &dg); err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{apiKey, "jay@evil.example", "Thursday"} {
			if strings.Contains(string(rec), secret) {
				t.Fatalf("the digest holds %q", secret)
			}
		}
		replayed := c
		replayed.Args, replayed.Digest = nil, &dg
		// A recording keeps the policy rules' findings: they read values.
		for _, f := range live.Findings {
			if strings.HasPrefix(string(f.Rule), policyRulePrefix) {
				replayed.Fired = append(replayed.Fired, f)
			}
		}
		again := decide(pol, h, s, replayed)
		live.Digest, again.Digest = nil, nil
		if !reflect.DeepEqual(live, again) {
			t.Fatalf("decided from the arguments:\n  %+v\nfrom the digest:\n  %+v", live, again)
		}
	})
}
