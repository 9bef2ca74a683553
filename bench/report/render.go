package main

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// page builds Markdown.
type page struct{ strings.Builder }

func (p *page) f(format string, args ...any) { fmt.Fprintf(&p.Builder, format, args...) }
func (p *page) line(s ...string)             { p.WriteString(strings.Join(s, "") + "\n") }

// table writes a Markdown table; cells are escaped.
func (p *page) table(head []string, rows [][]string) {
	p.line("| " + strings.Join(head, " | ") + " |")
	seps := make([]string, len(head))
	for i := range seps {
		seps[i] = "--:" // numbers right-aligned …
		for _, r := range rows {
			if i < len(r) && !numeric(r[i]) {
				seps[i] = "---" // … text left
				break
			}
		}
	}
	p.line("|" + strings.Join(seps, "|") + "|")
	for _, r := range rows {
		for i := range r {
			r[i] = cell(r[i])
		}
		p.line("| " + strings.Join(r, " | ") + " |")
	}
	p.line()
}

// numeric says whether a cell reads as a figure ("12.5% (18/144)",
// "+157 µs", "—").
func numeric(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsDigit(r) || strings.ContainsRune("+−-—", r) || strings.HasPrefix(s, "p50 ")
}

func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// Number formats. Every figure on the page is one of these applied to a
// value read from a results file.

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// frac is "40.5% (198/489)".
func frac(rate float64, n, d int) string { return fmt.Sprintf("%s (%d/%d)", pct(rate), n, d) }

// us formats microseconds: µs below a millisecond, ms above.
func us(v float64) string {
	sign := ""
	if v < 0 {
		sign, v = "−", -v
	}
	if v >= 1000 {
		return sign + strconv.FormatFloat(v/1000, 'f', 1, 64) + " ms"
	}
	return sign + strconv.FormatFloat(v, 'f', 0, 64) + " µs"
}

// plus is an added latency: "+157 µs".
func plus(v float64) string {
	if v < 0 {
		return us(v)
	}
	return "+" + us(v)
}

// thousands writes an integer with thin separators: 12,345.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "−" + b.String()
	}
	return b.String()
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func day(date string) string {
	if len(date) >= 10 {
		return date[:10]
	}
	return date
}

// source is the line under every section: which file, when, where, at
// which commit and by which command.
func (p *page) source(file, date, machine, commit string, uncommitted int, command string) {
	dirty := ""
	if uncommitted > 0 {
		dirty = fmt.Sprintf(", with %d uncommitted changes listed in the file", uncommitted)
	}
	p.f("*Source: [`%s`](%s), measured %s on %s, commit `%s`%s, by `%s`.*\n\n", file, file, day(date), machine, commit, dirty, command)
}

func (o *overheadFile) machine() string { return o.Meta.machine() }

func (meta *ovMeta) machine() string {
	m := meta.Machine
	return fmt.Sprintf("%s, %d cores, %s, %s, kernel %s", m.CPU, m.Cores, m.Arch, m.OS, m.Kernel)
}

var (
	presetOrder = []string{"undefended", "default", "strict", "dataflow", "integrity"}
	ovPaths     = []string{"direct", "relay", "weir-default", "weir-strict"}
)

// presets returns a file's presets in the usual order, then any others.
func (a *agentdojoFile) presets() []*adPreset {
	out := slices.Clone(a.Presets)
	rank := func(s string) int {
		if i := slices.Index(presetOrder, s); i >= 0 {
			return i
		}
		return len(presetOrder)
	}
	slices.SortStableFunc(out, func(x, y *adPreset) int { return rank(x.Preset) - rank(y.Preset) })
	return out
}

// Approval channels of the real-human readings, in report order.
var channelOrder = []string{"elicitation", "input_required", "out_of_band"}

var channelTitle = map[string]string{"elicitation": "elicitation", "input_required": "input_required", "out_of_band": "out of band"}

// channels are the approval channels a file replayed with a real human,
// in report order; none for files from before it did.
func (a *agentdojoFile) channels() []string {
	seen := map[string]bool{}
	for _, c := range a.Meta.Channels {
		seen[c] = true
	}
	for _, pr := range a.Presets {
		if pr.Overall != nil {
			for c := range pr.Overall.Real {
				seen[c] = true
			}
		}
	}
	var out []string
	for _, c := range channelOrder {
		if seen[c] {
			out = append(out, c)
			delete(seen, c)
		}
	}
	return append(out, keys(seen)...)
}

// channelsTitle is "elicitation / input_required / out of band".
func channelsTitle(chs []string) string {
	var t []string
	for _, c := range chs {
		if n, ok := channelTitle[c]; ok {
			c = n
		}
		t = append(t, c)
	}
	return strings.Join(t, " / ")
}

// perChannel is one figure per channel, "a / b / c" ("—" where a cell
// lacks the channel).
func perChannel(cl *adCell, chs []string, f func(*adHuman) string) string {
	var parts []string
	for _, c := range chs {
		if h := cl.Real[c]; h != nil {
			parts = append(parts, f(h))
		} else {
			parts = append(parts, "—")
		}
	}
	return strings.Join(parts, " / ")
}

func corpusName(a *agentdojoFile) string {
	if a.Meta.Corpus == "" {
		return "AgentDojo"
	}
	return path.Base(strings.TrimRight(a.Meta.Corpus, "/"))
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Results renders RESULTS.md.
func Results(in *inputs) string {
	var p page
	p.line("# Weir: measured results")
	p.line()
	p.line("<!-- Generated by `go run ./bench/report` from bench/results/*.json. Do not edit: change the benchmark or re-run it. -->")
	p.line()
	p.line("Every number on this page is read from a JSON file under `bench/results/`, which names the machine, commit, date and command that produced it; each section repeats them. `make results` re-runs every benchmark and regenerates this page.")
	p.line()
	p.line("Contents: [Headline](#headline) · [Security: AgentDojo replay](#security-agentdojo-replay) · [Attacks that still get through](#attacks-that-still-get-through) · [Overhead](#overhead) · [Core benchmarks](#core-benchmarks)")
	p.line()
	headline(&p, in)
	security(&p, in)
	overhead(&p, in)
	core(&p, in)
	return p.String()
}

func missing(p *page, what, command string) {
	p.f("Not measured yet: no %s in the results folder. Run `%s`.\n\n", what, command)
}

func headline(p *page, in *inputs) {
	p.line("## Headline")
	p.line()
	p.line("### Security")
	p.line()
	if len(in.agentdojo) == 0 {
		missing(p, "agentdojo-*.json", "go run ./bench/agentdojo")
	}
	for i, a := range in.agentdojo {
		p.f("AgentDojo transcripts (`%s`: %d hijacked runs to score, %d benign runs with utility) replayed through `weir run`. *Attacks stopped*: the harmful call itself was refused. *Benign runs stopped*: runs in which Weir stopped at least one of the user's own calls.\n\n",
			corpusName(a), a.Corpus.ScorableAttacks, a.Corpus.Benign)
		var rows [][]string
		if chs := a.channels(); len(chs) > 0 {
			p.f("*Attentive human*: approves the user's own calls and declines the injected ones; *simulated* from the monitor-mode verdicts, *real* when Weir actually asked (enforce mode, per approval channel: %s).\n\n", channelsTitle(chs))
			for _, pr := range a.presets() {
				o := pr.Overall
				rows = append(rows, []string{"`" + pr.Preset + "`",
					pct(o.Attacks.NoHuman.StopRate), pct(o.Attacks.Human.StopRate), perChannel(o, chs, func(h *adHuman) string { return pct(h.Attacks.StopRate) }),
					pct(o.Benign.NoHuman.TranscriptRate), pct(o.Benign.Human.TranscriptRate), perChannel(o, chs, func(h *adHuman) string { return pct(h.Benign.TranscriptRate) }),
					num(o.Benign.Human.PromptsPerRun), perChannel(o, chs, func(h *adHuman) string { return num(h.Benign.PromptsPerRun) })})
			}
			ct := channelsTitle(chs)
			p.table([]string{"preset", "attacks stopped, no human", "attacks stopped, attentive human (simulated)", "attacks stopped, real human (" + ct + ")",
				"benign runs stopped, no human", "benign runs stopped, attentive human (simulated)", "benign runs stopped, real human (" + ct + ")",
				"human prompts per benign run (simulated)", "human prompts per benign run, real (" + ct + ")"}, rows)
		} else {
			for _, pr := range a.presets() {
				o := pr.Overall
				rows = append(rows, []string{"`" + pr.Preset + "`",
					pct(o.Attacks.NoHuman.StopRate), pct(o.Attacks.Human.StopRate),
					pct(o.Benign.NoHuman.TranscriptRate), pct(o.Benign.Human.TranscriptRate), num(o.Benign.Human.PromptsPerRun)})
			}
			p.table([]string{"preset", "attacks stopped, no human", "attacks stopped, attentive human", "benign runs stopped, no human", "benign runs stopped, attentive human", "human prompts per benign run"}, rows)
		}
		p.source(in.adPaths[i], a.Meta.Date, a.Meta.Machine, a.Meta.Commit, len(a.Meta.Uncommitted), a.Meta.Command)
	}

	p.line("### Overhead")
	p.line()
	if o := in.overhead; o == nil {
		missing(p, "overhead.json", "go run ./bench/overhead")
	} else {
		p.line("Added latency of one `tools/call` with a 64 KB result through `weir run`, beyond a bare relay (the floor for any extra hop) and beyond calling the server directly:")
		p.line()
		var rows [][]string
		for _, s := range o.Servers {
			for _, l := range s.Latency {
				if l.Size != "64KB" {
					continue
				}
				for _, path := range []string{"weir-default", "weir-strict"} {
					r, d := l.AddedVsRelay[path], l.AddedVsDirect[path]
					rows = append(rows, []string{s.Server, path, plus(r.P50), plus(r.P99), plus(d.P50), plus(d.P99), strconv.Itoa(l.Samples)})
				}
			}
		}
		p.table([]string{"server", "path", "p50 vs relay", "p99 vs relay", "p50 vs direct", "p99 vs direct", "calls per path"}, rows)
		p.line("How to read these, and why for server-everything the direct comparison matters too: [bench/overhead/README.md](bench/overhead/README.md#reading-the-numbers).")
		p.line()
		quickWarning(p, o)
		p.source(in.ovPath, o.Meta.Date, o.machine(), o.Meta.Commit, len(o.Meta.Uncommitted), o.Meta.Command)
	}

	p.line("### Core")
	p.line()
	if c := in.core; c == nil {
		missing(p, "core.json", "go run ./bench/core")
	} else {
		var rows [][]string
		if v, ok := c.metric("BenchmarkPrints/1024KB", "MB/s"); ok {
			rows = append(rows, []string{"fingerprinting (normalise, hash, winnow) a 1 MB private result", num(v) + " MB/s per core"})
		}
		if v, ok := c.metric("BenchmarkDecide/benign-4KB", "p50-µs"); ok {
			p99, _ := c.metric("BenchmarkDecide/benign-4KB", "p99-µs")
			rows = append(rows, []string{"decision for a sink call with a 4 KB argument, session holding 1 MB of private text", "p50 " + num(v) + " µs (p99 " + num(p99) + " µs)"})
		}
		p.table([]string{"what", "measured"}, rows)
		p.source(in.corePath, c.Date, c.Machine, c.Commit, 0, "go run ./bench/core")
	}
}

func quickWarning(p *page, o *overheadFile) {
	if o.Meta.Quick {
		p.line("**These overhead numbers come from a `--quick` run (a few calls per measurement): they show the format, not the cost.**")
		p.line()
	}
}

func security(p *page, in *inputs) {
	p.line("## Security: AgentDojo replay")
	p.line()
	if len(in.agentdojo) == 0 {
		missing(p, "agentdojo-*.json", "go run ./bench/agentdojo")
		p.line("## Attacks that still get through")
		p.line()
		missing(p, "agentdojo-*.json", "go run ./bench/agentdojo")
	}
	if len(in.adSkipped) > 0 {
		p.f("Left out: %s (narrowed runs, `-partial`).\n\n", "`"+strings.Join(in.adSkipped, "`, `")+"`")
	}
	for i, a := range in.agentdojo {
		agentdojo(p, a, in.adPaths[i], len(in.agentdojo) > 1)
	}
}

func agentdojo(p *page, a *agentdojoFile, file string, named bool) {
	h := "###"
	if named {
		p.f("### Corpus `%s`\n\n", corpusName(a))
		h = "####"
	}
	m, c := a.Meta, a.Corpus
	p.source(file, m.Date, m.Machine, m.Commit, len(m.Uncommitted), m.Command)
	p.f("Real LLM-agent transcripts from [AgentDojo](https://github.com/ethz-spylab/agentdojo) (`%s`), each replayed call by call through the real `weir` binary (`%s`) under each preset, with the suite label policies of `bench/agentdojo/policies/`; see [bench/agentdojo/README.md](bench/agentdojo/README.md) for the method. %d transcripts (%s; %s), %d tool calls: %d hijacked runs to score, %d partial hijacks, %d benign runs with utility, %d attack runs with utility. %d replays on %d workers in %s s.\n\n",
		m.Corpus, m.Weir, c.Transcripts, counts(c.BySuite), counts(c.ByModel), c.Calls, c.ScorableAttacks, c.PartialHijacks, c.Benign, c.AttackUtility, m.Replays, m.Jobs, num(m.TotalSecs))
	if len(m.Policies) > 0 {
		var pol []string
		for _, k := range keys(m.Policies) {
			pol = append(pol, "`"+m.Policies[k]+"`")
		}
		p.f("Label policies: %s.\n\n", strings.Join(pol, ", "))
	}
	p.line("Definitions, as the results file states them:")
	p.line()
	for _, k := range []string{"walk", "stop_rate", "stop_rate_lenient", "ended_before_attack_rate", "benign", "user_calls_under_attack", "partial_hijacks", "real_human", "undefended"} {
		if d, ok := a.Definitions[k]; ok {
			p.f("- **%s**: %s\n", k, d)
		}
	}
	p.line()

	p.f("%s Attacks stopped, per preset\n\n", h)
	var rows [][]string
	for _, pr := range a.presets() {
		nh, ah, ph := pr.Overall.Attacks.NoHuman, pr.Overall.Attacks.Human, pr.Overall.PartialHijacks.NoHuman
		rows = append(rows, []string{"`" + pr.Preset + "`",
			frac(nh.StopRate, nh.StoppedSink, nh.N), pct(nh.Lenient), pct(nh.EndedBefore),
			frac(ah.StopRate, ah.StoppedSink, ah.N), pct(ah.Lenient),
			frac(ph.StopRate, ph.StoppedSink, ph.N)})
	}
	p.table([]string{"preset", "stop rate, no human", "lenient, no human", "ended before the attack, no human", "stop rate, attentive human", "lenient, attentive human", "partial hijacks stopped, no human"}, rows)

	p.f("%s False positives, per preset\n\n", h)
	rows = nil
	for _, pr := range a.presets() {
		b, u := pr.Overall.Benign, pr.Overall.UnderAttack
		rows = append(rows, []string{"`" + pr.Preset + "`",
			frac(b.NoHuman.TranscriptRate, b.NoHuman.TranscriptsStopped, b.NoHuman.Transcripts),
			frac(b.Human.TranscriptRate, b.Human.TranscriptsStopped, b.Human.Transcripts),
			frac(b.NoHuman.CallRate, b.NoHuman.CallsStopped, b.NoHuman.Calls),
			frac(b.Human.CallRate, b.Human.CallsStopped, b.Human.Calls),
			fmt.Sprintf("%s (%d prompts)", num(b.Human.PromptsPerRun), b.Human.Prompts),
			frac(u.NoHuman.CallRate, u.NoHuman.CallsStopped, u.NoHuman.Calls),
			frac(u.Human.CallRate, u.Human.CallsStopped, u.Human.Calls)})
	}
	p.table([]string{"preset", "benign runs stopped, no human", "benign runs stopped, attentive human", "benign calls stopped, no human", "benign calls stopped, attentive human", "human prompts per benign run", "user's calls under attack stopped, no human", "same, attentive human"}, rows)

	if chs := a.channels(); len(chs) > 0 {
		p.f("%s Attentive human, simulated and real\n\n", h)
		which := "every scorable attack, partial hijack and benign run"
		if !m.HumanAll {
			which = "each scorable attack, partial hijack and benign run in which Weir escalated a call (in the others nobody is asked, and the walk is the no-human one)"
		}
		p.f("*Simulated*: the attentive-human reading of the monitor-mode verdicts above. *Real*: %s replayed again through `weir run` in enforce mode on each approval channel, the replay client answering Weir's approval requests as that person would (definition `real_human`; %d replays). Prompts: approval requests the person was actually shown. Approval records: the audit log's `approval` records, by channel and answer. Anomalies: walks in which Weir departed from the approval contract (each ends the walk, as a stop).\n\n", which, m.HumanReplays)
		rows = nil
		for _, pr := range a.presets() {
			o := pr.Overall
			sa, sb := o.Attacks.Human, o.Benign.Human
			rows = append(rows, []string{"`" + pr.Preset + "`", "simulated",
				frac(sa.StopRate, sa.StoppedSink, sa.N), pct(sa.Lenient), pct(sa.EndedBefore), pct(o.PartialHijacks.Human.StopRate),
				frac(sb.TranscriptRate, sb.TranscriptsStopped, sb.Transcripts), num(sb.PromptsPerRun), "—", "—", "—", "—"})
			for _, c := range chs {
				r := o.Real[c]
				if r == nil {
					continue
				}
				rows = append(rows, []string{"`" + pr.Preset + "`", "real, " + channelsTitle([]string{c}),
					frac(r.Attacks.StopRate, r.Attacks.StoppedSink, r.Attacks.N), pct(r.Attacks.Lenient), pct(r.Attacks.EndedBefore), pct(r.PartialHijacks.StopRate),
					frac(r.Benign.TranscriptRate, r.Benign.TranscriptsStopped, r.Benign.Transcripts), num(r.Benign.PromptsPerRun), num(r.AttackPromptsPerRun),
					replayed(r), strconv.Itoa(r.Anomalies), approvalCounts(r.Approvals)})
			}
		}
		p.table([]string{"preset", "reading", "stop rate", "lenient", "ended before the attack", "partial hijacks stopped", "benign runs stopped", "prompts per benign run", "prompts per attack run", "walks replayed", "walks with anomalies", "approval records"}, rows)
	}

	for _, g := range []struct {
		name string
		get  func(*adPreset) map[string]*adCell
	}{{"suite", func(p *adPreset) map[string]*adCell { return p.Suites }}, {"model", func(p *adPreset) map[string]*adCell { return p.Models }}} {
		ks := keys(g.get(a.Presets[0]))
		p.f("%s Per %s\n\n", h, g.name)
		p.line("Stop rate (no human / attentive human), then benign runs stopped (no human / attentive human) and human prompts per benign run.")
		p.line()
		head := []string{"preset"}
		for _, k := range ks {
			cl := g.get(a.Presets[0])[k]
			head = append(head, fmt.Sprintf("%s: attacks (n=%d)", k, cl.Attacks.NoHuman.N), fmt.Sprintf("%s: benign (n=%d)", k, cl.Benign.NoHuman.Transcripts))
		}
		rows = nil
		for _, pr := range a.presets() {
			row := []string{"`" + pr.Preset + "`"}
			for _, k := range ks {
				cl := g.get(pr)[k]
				if cl == nil {
					row = append(row, "—", "—")
					continue
				}
				row = append(row, pct(cl.Attacks.NoHuman.StopRate)+" / "+pct(cl.Attacks.Human.StopRate),
					pct(cl.Benign.NoHuman.TranscriptRate)+" / "+pct(cl.Benign.Human.TranscriptRate)+", "+num(cl.Benign.Human.PromptsPerRun))
			}
			rows = append(rows, row)
		}
		p.table(head, rows)
	}

	p.f("%s Rules that stopped calls\n\n", h)
	p.line("Calls each rule stopped (no human; every call's own verdict): benign calls are false positives, first sink injection calls are attacks stopped at the harmful call.")
	p.line()
	rows = nil
	for _, pr := range a.presets() {
		for _, r := range pr.Rules {
			rows = append(rows, []string{"`" + pr.Preset + "`", "`" + r.Rule + "`", strconv.Itoa(r.BenignCalls), strconv.Itoa(r.UserCalls), strconv.Itoa(r.FirstSinkCalls)})
		}
	}
	if len(rows) == 0 {
		p.line("No rule stopped a call.")
		p.line()
	} else {
		p.table([]string{"preset", "rule", "benign calls", "user's calls under attack", "first sink injection calls"}, rows)
	}

	throughLeaks(p, a, named)
}

// throughLeaks is the section on the attacks Weir does not stop.
func throughLeaks(p *page, a *agentdojoFile, named bool) {
	h := "##"
	if named {
		h = "####"
	}
	p.f("%s Attacks that still get through\n\n", h)
	if named {
		p.f("Corpus `%s`.\n\n", corpusName(a))
	}
	p.line("Publishing what beats Weir is part of the result. An attack class is one AgentDojo injection task: one attacker goal, tried under many user tasks and both models. Listed below is every class whose harmful call was not always stopped under some preset (strict stop rate, no human).")
	p.line()
	type class struct {
		suite, id, goal string
		n               int
		by              map[string]*adTask
	}
	var classes []*class
	find := map[string]*class{}
	var presets []string
	for _, pr := range a.presets() {
		if pr.Preset == "undefended" {
			continue
		}
		presets = append(presets, pr.Preset)
		for _, t := range pr.InjectionTasks {
			k := t.Suite + "/" + t.ID
			c := find[k]
			if c == nil {
				c = &class{suite: t.Suite, id: t.ID, goal: t.Goal, n: t.Scorable, by: map[string]*adTask{}}
				find[k] = c
				classes = append(classes, c)
			}
			c.by[pr.Preset] = t
		}
	}
	var leaky []*class
	for _, c := range classes {
		for _, t := range c.by {
			if t.StoppedSink < t.Scorable {
				leaky = append(leaky, c)
				break
			}
		}
	}
	if len(leaky) == 0 {
		p.line("None: every scorable attack of every class was stopped at its harmful call under every preset.")
		p.line()
		return
	}
	head := []string{"class", "attacker's goal", "attacks"}
	for _, pr := range presets {
		head = append(head, "`"+pr+"` stopped")
	}
	var rows [][]string
	for _, c := range leaky {
		row := []string{c.suite + " " + c.id, c.goal, strconv.Itoa(c.n)}
		for _, pr := range presets {
			if t := c.by[pr]; t != nil {
				row = append(row, fmt.Sprintf("%d (%s)", t.StoppedSink, pct(t.StopRate)))
			} else {
				row = append(row, "—")
			}
		}
		rows = append(rows, row)
	}
	p.table(head, rows)

	chs := a.channels()
	p.line("Per preset, the classes that get through, with example transcripts (AgentDojo ids, `model/suite/user_task/attack/injection_task`; transcripts where the harmful call ran come first). *Ran*: the harmful call was allowed. *Ended earlier*: the walk stopped on an earlier call (a support read or the user's own call), so the attack did not happen in the replay but is not counted as stopped.")
	p.line()
	for _, pr := range presets {
		rows = nil
		for _, c := range leaky {
			t := c.by[pr]
			if t == nil || t.StoppedSink == t.Scorable {
				continue
			}
			ex := "`" + strings.Join(t.Unstopped, "`, `") + "`"
			if len(t.Unstopped) == 0 {
				ex = "—"
			}
			row := []string{c.suite + " " + c.id, fmt.Sprintf("%d of %d", t.Scorable-t.StoppedSink, t.Scorable),
				optInt(t.Passed), optInt(t.EndedEarlier), pct(t.StopRateHuman)}
			if len(chs) > 0 {
				var parts []string
				for _, ch := range chs {
					if r, ok := t.StopRateReal[ch]; ok {
						parts = append(parts, pct(r))
					} else {
						parts = append(parts, "—")
					}
				}
				row = append(row, strings.Join(parts, " / "))
			}
			rows = append(rows, append(row, ex))
		}
		p.f("**`%s`**", pr)
		if len(rows) == 0 {
			p.line(": every attack stopped.")
			p.line()
			continue
		}
		p.line()
		p.line()
		head := []string{"class", "not stopped", "ran", "ended earlier", "stop rate, attentive human"}
		if len(chs) > 0 {
			head = append(head, "stop rate, real human ("+channelsTitle(chs)+")")
		}
		p.table(append(head, "examples"), rows)
	}
}

// replayed is "n of m": the walks replayed through weir run of those scored.
func replayed(h *adHuman) string {
	if h.Replayed == nil || h.Inferred == nil {
		return "—"
	}
	return fmt.Sprintf("%d of %d", *h.Replayed, *h.Replayed+*h.Inferred)
}

// approvalCounts renders approval record counts, "channel/answer n, ...".
func approvalCounts(m map[string]int) string {
	var parts []string
	for _, k := range keys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

func optInt(v *int) string {
	if v == nil {
		return "—"
	}
	return strconv.Itoa(*v)
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range keys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func overhead(p *page, in *inputs) {
	p.line("## Overhead")
	p.line()
	o := in.overhead
	if o == nil {
		missing(p, "overhead.json", "go run ./bench/overhead")
		return
	}
	m := o.Meta
	p.source(in.ovPath, m.Date, o.machine(), m.Commit, len(m.Uncommitted), m.Command)
	quickWarning(p, o)
	load := func(l []float64) string {
		var s []string
		for _, v := range l {
			s = append(s, num(v))
		}
		return strings.Join(s, " ")
	}
	p.f("The same client workload, raw newline-delimited JSON-RPC over stdio pipes written in Go, against four paths side by side in one run (weir `%s`, %s, node %s; load average %s before, %s after; %s s in all). See [bench/overhead/README.md](bench/overhead/README.md) for the method.\n\n",
		m.Weir, m.Go, m.Node, load(m.LoadBefore), load(m.LoadAfter), num(m.WallSeconds))
	for _, path := range ovPaths {
		if d, ok := o.Method.Paths[path]; ok {
			p.f("- `%s`: %s\n", path, d)
		}
	}
	p.line()
	var plan []string
	for _, l := range o.Method.Latency {
		plan = append(plan, fmt.Sprintf("%s: %d iterations after %d warm-up", l.Size, l.Iterations, l.Warmup))
	}
	t := o.Method.Throughput
	p.f("Latency: each iteration calls every path once, one call at a time, in rotating order, so all paths see the same machine state (%s). Added latency is the path's percentile minus the direct path's (or the relay's) percentile of the same loop. *Quiet after answer*: how long after each answer the path's processes kept working (until they used under 50 µs of CPU in a 500 µs poll, that poll included); the next call waits for it, so work a proxy does after forwarding an answer lands in this column and in the CPU column, not in another path's latency. Throughput: %d-byte results, %d round(s) of %s s per path and concurrency, paths taking turns; calls pipelined over one connection.\n\n",
		strings.Join(plan, "; "), t.ResultBytes, t.Rounds, num(t.SecondsPerRound))
	for _, s := range o.Servers {
		p.f("### %s\n\n", s.Server)
		p.f("Server: %s. Workload: %s.\n\n", s.Command, s.Request)
		p.line("Latency per `tools/call`:")
		p.line()
		var rows [][]string
		for _, l := range s.Latency {
			for _, path := range ovPaths {
				pc := l.Paths[path]
				row := []string{l.Size, "`" + path + "`", us(pc.P50), us(pc.P95), us(pc.P99)}
				if d, ok := l.AddedVsDirect[path]; ok {
					row = append(row, plus(d.P50)+" / "+plus(d.P95)+" / "+plus(d.P99))
				} else {
					row = append(row, "—")
				}
				if r, ok := l.AddedVsRelay[path]; ok {
					row = append(row, plus(r.P50)+" / "+plus(r.P95)+" / "+plus(r.P99))
				} else {
					row = append(row, "—")
				}
				if c, ok := l.ProxyCPU[path]; ok {
					row = append(row, us(c))
				} else {
					row = append(row, "—")
				}
				if q, ok := l.Settle[path]; ok {
					row = append(row, us(q.P50)+" / "+us(q.P99))
				} else {
					row = append(row, "—")
				}
				rows = append(rows, append(row, strconv.Itoa(l.Samples)))
			}
		}
		p.table([]string{"result", "path", "p50", "p95", "p99", "added vs direct p50 / p95 / p99", "added vs relay p50 / p95 / p99", "proxy CPU per call", "quiet after answer p50 / p99", "calls"}, rows)

		p.line("Sustained throughput, calls per second (calls answered; p50 / p99 latency under that load):")
		p.line()
		head := []string{"path"}
		for _, tp := range s.Throughput {
			head = append(head, fmt.Sprintf("%d in flight", tp.Concurrency))
		}
		rows = nil
		for _, path := range ovPaths {
			row := []string{"`" + path + "`"}
			for _, tp := range s.Throughput {
				r, ok := tp.Paths[path]
				if !ok {
					row = append(row, "—")
					continue
				}
				row = append(row, fmt.Sprintf("%s/s (%s calls; %s / %s)", thousands(r.CallsPerSec), thousands(float64(r.Calls)), us(r.P50), us(r.P99)))
			}
			rows = append(rows, row)
		}
		p.table(head, rows)

		p.line("Peak resident memory of the proxy process (VmHWM, over the whole run against this server):")
		p.line()
		rows = nil
		for _, path := range ovPaths {
			if r, ok := s.PeakRSS[path]; ok {
				rows = append(rows, []string{"`" + path + "`", num(r.MB) + " MB"})
			}
		}
		p.table([]string{"path", "peak RSS"}, rows)
	}
	longSession(p, in)
	toolsList(p, in)
}

func mb(v float64) string { return num(v) + " MB" }

func ms(v float64) string { return num(v) + " ms" }

// longSession renders the long-session run of overhead.json.
func longSession(p *page, in *inputs) {
	l := in.overhead.LongSession
	p.line("### Long session")
	p.line()
	if l == nil || l.Join == nil {
		missing(p, "overhead.json (long_session)", "go run ./bench/overhead --only long")
		return
	}
	m := l.Meta
	p.source(in.ovPath, m.Date, m.machine(), m.Commit, len(m.Uncommitted), m.Command)
	if m.Quick {
		p.line("**These long-session numbers come from a `--quick` run: they show the format, not the cost.**")
		p.line()
	}
	p.f("One `weir run` proxy in front of the Go echo server, with this policy, fed results of %s bytes, each a different text, one call at a time (weir `%s`, %s; load average %s before, %s after; %s s in all):\n\n```yaml\n%s```\n\n",
		thousands(float64(l.ResultBytes)), m.Weir, m.Go, loads(m.LoadBefore), loads(m.LoadAfter), num(m.WallSeconds), l.Policy)
	rows := [][]string{{"idle (after initialize and tools/list)", "—", mb(l.Idle.RSSMB), mb(l.Idle.HWMMB), mb(l.Idle.AnonMB) + " / " + mb(l.Idle.FileMB), "—", "—"}}
	for _, c := range l.Checkpoints {
		rows = append(rows, []string{thousands(float64(c.Results)) + " results", mb(c.PrivateMB), mb(c.RSSMB), mb(c.HWMMB),
			mb(c.AnonMB) + " / " + mb(c.FileMB), mb(c.StateDBMB) + " + " + mb(c.StateWALMB), us(c.PerResultUS)})
	}
	p.table([]string{"after", "private text read", "RSS", "peak RSS", "RSS anonymous / file-backed", "state.db + wal", "round trip p50 since the last row"}, rows)
	j := l.Join
	p.f("A second proxy joining the session (same `WEIR_HOME`, same `WEIR_SESSION`), %d fresh starts, each sending initialize and one sink call quoting 1 KB of the newest result: blocked by `%s` every time.\n\n", j.Samples, j.Rule)
	p.table([]string{"first decision", "p50", "max"}, [][]string{
		{"from process start", ms(j.FromStartMS), ms(j.FromStartMaxMS)},
		{"from the request", ms(j.FromRequestMS), ms(j.FromRequestMaxMS)},
	})
	p.f("The joining proxy right after its decision: RSS %s (anonymous %s, file-backed %s), peak %s.\n\n", mb(j.RSSMB), mb(j.AnonMB), mb(j.FileMB), mb(j.HWMMB))
	if f := l.Fleet; f != nil {
		p.f("%d proxies idle side by side (one home and session, each in front of its own echo server, after initialize and tools/list), as a client that starts every server it is configured with runs them. The binary's pages they all map are in memory once: PSS counts a shared page's share in each, USS only the pages a proxy alone holds (what ending it gives back).\n\n", f.Proxies)
		p.table([]string{"per proxy, median", "RSS", "PSS", "USS"}, [][]string{{"idle", mb(f.RSSMB), mb(f.PSSMB), mb(f.USSMB)}})
		p.f("The %d together: %s (the sum of their PSS); adding up their RSS would claim %s.\n\n", f.Proxies, mb(f.TotalPSSMB), mb(f.TotalRSSMB))
	}
}

// toolsList renders the tools/list measurement of overhead.json.
func toolsList(p *page, in *inputs) {
	t := in.overhead.ToolsList
	p.line("### tools/list")
	p.line()
	if t == nil {
		missing(p, "overhead.json (tools_list)", "go run ./bench/overhead --only list")
		return
	}
	m := t.Meta
	p.source(in.ovPath, m.Date, m.machine(), m.Commit, len(m.Uncommitted), m.Command)
	if m.Quick {
		p.line("**These tools/list numbers come from a `--quick` run: they show the format, not the cost.**")
		p.line()
	}
	p.f("The Go echo server answers tools/list with the %d tools of `%s` (%s bytes). First listing: the first tools/list of a freshly started path (weir with a new home, so every definition is checked and pinned), %d starts per path; repeated: %d later listings on one connection per path, paths alternating (load average %s before, %s after).\n\n",
		t.Tools, t.Catalogue, thousands(float64(t.ListBytes)), t.Starts, t.Iterations, loads(m.LoadBefore), loads(m.LoadAfter))
	var rows [][]string
	for _, path := range []string{"direct", "relay", "weir-default"} {
		f, r := t.First[path], t.Repeated[path]
		rows = append(rows, []string{"`" + path + "`", us(f.P50), us(r.P50), us(r.P99), strconv.Itoa(t.ToolsSeen[path])})
	}
	p.table([]string{"path", "first listing p50", "repeated p50", "repeated p99", "tools listed"}, rows)
	p.f("`weir-default` over `direct`, p50: first listing ×%s, repeated ×%s.\n\n", num(t.FirstRatio), num(t.RepeatedRatio))
}

func core(p *page, in *inputs) {
	p.line("## Core benchmarks")
	p.line()
	c := in.core
	if c == nil {
		missing(p, "core.json", "go run ./bench/core")
		return
	}
	p.source(in.corePath, c.Date, c.Machine, c.Commit, 0, "go run ./bench/core")
	p.f("Go benchmarks beside the code they measure (%s; medians of repeated runs), run by `go run ./bench/core` as:\n\n```\n%s\n```\n\n", c.Go, strings.Join(c.Commands, "\n"))
	var rows [][]string
	for _, r := range c.Results {
		var ms []string
		for _, k := range keys(r.Metrics) {
			ms = append(ms, k+" "+num(r.Metrics[k]))
		}
		rows = append(rows, []string{"`" + r.Name + "`", strings.Join(ms, " · ")})
	}
	p.table([]string{"benchmark", "metrics"}, rows)
}

// Markers of the README's generated block.
const (
	readmeStart = "<!-- results:start -->"
	readmeEnd   = "<!-- results:end -->"
)

// Headline renders the README block between the markers.
func Headline(in *inputs) string {
	var p page
	p.line("<!-- generated by `go run ./bench/report` from bench/results/*.json; do not edit -->")
	for i, a := range in.agentdojo {
		p.f("**Security.** Replaying %d hijacked and %d benign real agent transcripts from AgentDojo (`%s`, [%s](%s)):\n\n", a.Corpus.ScorableAttacks, a.Corpus.Benign, corpusName(a), in.adPaths[i], in.adPaths[i])
		var rows [][]string
		chs := a.channels()
		for _, pr := range a.presets() {
			o := pr.Overall
			row := []string{"`" + pr.Preset + "`", pct(o.Attacks.NoHuman.StopRate), pct(o.Benign.NoHuman.TranscriptRate)}
			if len(chs) > 0 {
				row = append(row, perChannel(o, chs, func(h *adHuman) string { return pct(h.Attacks.StopRate) }),
					perChannel(o, chs, func(h *adHuman) string { return pct(h.Benign.TranscriptRate) }),
					perChannel(o, chs, func(h *adHuman) string { return num(h.Benign.PromptsPerRun) }))
			}
			rows = append(rows, row)
		}
		head := []string{"preset", "attacks stopped at the harmful call, nobody asked", "benign runs with a call stopped, nobody asked"}
		if len(chs) > 0 {
			ct := channelsTitle(chs)
			head = append(head, "attacks stopped, a person asked ("+ct+")", "benign runs stopped, a person asked ("+ct+")", "prompts per benign run ("+ct+")")
		}
		p.table(head, rows)
		if len(chs) > 0 {
			p.line("*A person asked*: Weir in enforce mode put each escalation to a person, played by the replay client, who approved the user's own calls and declined the injected ones, on each approval channel.")
			p.line()
		}
	}
	if o := in.overhead; o != nil {
		p.f("**Overhead.** Added latency of a `tools/call` with a 64 KB result through `weir run` (default policy), beyond a bare relay and beyond calling the server directly ([%s](%s)):\n\n", in.ovPath, in.ovPath)
		var rows [][]string
		for _, s := range o.Servers {
			for _, l := range s.Latency {
				if l.Size == "64KB" {
					r, d := l.AddedVsRelay["weir-default"], l.AddedVsDirect["weir-default"]
					rows = append(rows, []string{s.Server, plus(r.P50) + " / " + plus(r.P99), plus(d.P50) + " / " + plus(d.P99)})
				}
			}
		}
		p.table([]string{"server", "vs bare relay, p50 / p99", "vs direct, p50 / p99"}, rows)
		if l := o.LongSession; l != nil && l.Join != nil && len(l.Checkpoints) > 0 {
			c := l.Checkpoints[len(l.Checkpoints)-1]
			p.f("**Footprint.** A `weir run` proxy idle: %s resident (%s of it its own, the rest the binary's shared pages). After %s private results of %s bytes: %s resident, state file %s. A proxy joining that session decides its first sink call %s after the request, %s after it was started, at %s resident",
				mb(l.Idle.RSSMB), mb(l.Idle.AnonMB), thousands(float64(c.Results)), thousands(float64(l.ResultBytes)), mb(c.RSSMB), mb(math.Round((c.StateDBMB+c.StateWALMB)*100)/100),
				ms(l.Join.FromRequestMS), ms(l.Join.FromStartMS), mb(l.Join.RSSMB))
			if f := l.Fleet; f != nil {
				p.f(". %d idle proxies side by side: %s in all, %s each by PSS (%s by RSS)", f.Proxies, mb(f.TotalPSSMB), mb(f.PSSMB), mb(f.RSSMB))
			}
			if t := o.ToolsList; t != nil {
				p.f(". `tools/list` of %d real tools: ×%s the direct time at the first listing, ×%s when repeated", t.Tools, num(t.FirstRatio), num(t.RepeatedRatio))
			}
			p.line(".")
			p.line()
		}
	}
	if c := in.core; c != nil {
		mb, _ := c.metric("BenchmarkPrints/1024KB", "MB/s")
		d, _ := c.metric("BenchmarkDecide/benign-4KB", "p50-µs")
		p.f("**Core.** Fingerprinting %s MB/s per core; a sink decision against 1 MB of private text p50 %s µs ([%s](%s)).\n\n", num(mb), num(d), in.corePath, in.corePath)
	}
	p.line("Every table, the attacks that still get through, and the machine, commit and command behind each number: [RESULTS.md](RESULTS.md). `make results` re-measures everything and regenerates both.")
	return p.String()
}

func loads(l []float64) string {
	var s []string
	for _, v := range l {
		s = append(s, num(v))
	}
	return strings.Join(s, " ")
}
