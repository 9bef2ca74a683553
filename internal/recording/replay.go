package recording

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

// Source is where replay reads recordings: the state store.
type Source interface {
	Records(ctx context.Context, since int64, session string, fn func(store.Rec) error) error
	Observations(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error
	Policy(ctx context.Context, hash string) (source string, text []byte, err error)
}

var (
	_ Source = (*store.SQLite)(nil)
	_ Source = (*store.Postgres)(nil)
)

// ReplayOptions say what to replay and against what.
type ReplayOptions struct {
	// Candidate, when not nil, is the policy to replay against; nil
	// re-derives each decision under the policy it was made under.
	Candidate *policy.Policy
	// Since (Unix ms) and Session select the records.
	Since   int64
	Session string
}

// The ways a replayed call can compare with its recording.
const (
	Unchanged       = "unchanged"
	Mismatch        = "mismatch" // the recorded policy gave another decision: a bug or a tampered record
	NewlyBlocked    = "newly blocked"
	NewlyEscalated  = "newly escalated"
	NewlyAllowed    = "newly allowed"
	OtherwiseChange = "changed" // same verdict, another rule or reason
)

// Outcome is one replayed call.
type Outcome struct {
	Seq     int64  `json:"seq"`
	Session string `json:"session"`
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	At      string `json:"at"`
	Change  string `json:"change"`

	RecordedVerdict string `json:"recorded_verdict"`
	RecordedRule    string `json:"recorded_rule,omitempty"`
	RecordedReason  string `json:"recorded_reason,omitempty"`
	Verdict         string `json:"verdict"`
	Rule            string `json:"rule,omitempty"`
	Reason          string `json:"reason,omitempty"`
	// NotReevaluated names the candidate's rules that read argument values
	// the recording does not keep, so replay could not check them.
	NotReevaluated []string `json:"not_reevaluated,omitempty"`
}

// Report is what a replay found.
type Report struct {
	Candidate string    `json:"candidate,omitempty"` // the candidate policy's source
	Calls     int       `json:"calls"`
	Sessions  int       `json:"sessions"`
	Counts    Counts    `json:"counts"`
	Outcomes  []Outcome `json:"outcomes"` // every call whose decision is not unchanged
	// Notes say what the replay could not do exactly.
	Notes []string `json:"notes,omitempty"`
}

// Counts tallies the outcomes.
type Counts struct {
	Unchanged      int `json:"unchanged"`
	Mismatch       int `json:"mismatch"`
	NewlyBlocked   int `json:"newly_blocked"`
	NewlyEscalated int `json:"newly_escalated"`
	NewlyAllowed   int `json:"newly_allowed"`
	Changed        int `json:"changed"`
	NotReevaluated int `json:"not_reevaluated"`
}

// Replay decides every recorded call again. Without a candidate it uses
// the policy each call was decided under, and any difference is a
// mismatch; with one, it lists what the candidate would decide otherwise.
func Replay(ctx context.Context, src Source, h *fingerprint.Hasher, o ReplayOptions) (*Report, error) {
	sessions := map[string][]store.Rec{}
	var order []string
	err := src.Records(ctx, o.Since, o.Session, func(r store.Rec) error {
		if _, ok := sessions[r.Session]; !ok {
			order = append(order, r.Session)
		}
		sessions[r.Session] = append(sessions[r.Session], r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rp := &replayer{src: src, h: h, cand: o.Candidate, policies: map[string]*policy.Policy{}, notes: map[string]bool{}}
	rep := &Report{}
	if o.Candidate != nil {
		rep.Candidate = o.Candidate.Source
	}
	for _, s := range order {
		n, err := rp.session(ctx, s, sessions[s], rep)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			rep.Sessions++
		}
	}
	for n := range rp.notes {
		rep.Notes = append(rep.Notes, n)
	}
	sort.Strings(rep.Notes)
	return rep, nil
}

type replayer struct {
	src      Source
	h        *fingerprint.Hasher
	cand     *policy.Policy
	policies map[string]*policy.Policy // recorded policies by hash
	notes    map[string]bool
}

// recorded returns the policy a record names, built again from its text.
func (rp *replayer) recorded(ctx context.Context, hash string) (*policy.Policy, error) {
	if p, ok := rp.policies[hash]; ok {
		return p, nil
	}
	source, text, err := rp.src.Policy(ctx, hash)
	if err != nil {
		return nil, err
	}
	var p *policy.Policy
	if name, ok := strings.CutPrefix(source, "preset:"); ok && len(text) == 0 {
		p, err = policyfile.Preset(name)
	} else {
		p, err = policyfile.Parse(source, text)
	}
	if err != nil {
		return nil, fmt.Errorf("the recorded policy %s (%s) no longer loads: %w", hash, source, err)
	}
	rp.policies[hash] = p
	return p, nil
}

// session replays one session's calls and returns how many it replayed.
func (rp *replayer) session(ctx context.Context, session string, recs []store.Rec, rep *Report) (int, error) {
	type obs struct {
		seq int64
		o   flow.Observation
	}
	var all []obs
	if err := rp.src.Observations(ctx, session, func(seq int64, o *flow.Observation) {
		all = append(all, obs{seq, *o})
	}); err != nil {
		return 0, err
	}
	// The mirror as it stood at a call, under the bound of the policy
	// that decides it, so that what it evicted is evicted again.
	mirror := func(watermark, maxBytes int64) *flow.Session {
		s := flow.Session{MaxBytes: maxBytes}
		for _, x := range all {
			if x.seq > watermark {
				break
			}
			o := x.o
			s.Apply(x.seq, &o)
		}
		return &s
	}
	defs := map[string]engine.ToolDef{} // "server/tool" → its latest definition
	rates := map[string][]int64{}       // rule id → times of the calls it let through
	n := 0
	for _, r := range recs {
		switch r.Kind {
		case KindList:
			var l List
			if err := json.Unmarshal(r.Body, &l); err != nil {
				return n, fmt.Errorf("record %d: %w", r.Seq, err)
			}
			for _, t := range l.Tools {
				defs[r.Server+"/"+t.Def.Name] = t.Def
			}
		case KindCall:
			var c Call
			if err := json.Unmarshal(r.Body, &c); err != nil {
				return n, fmt.Errorf("record %d: the record is damaged (%v)", r.Seq, err)
			}
			if c.Digest == nil {
				return n, fmt.Errorf("record %d: the record has no argument digest; it is damaged", r.Seq)
			}
			if c.Rule == string(engine.RuleInternal) {
				// Weir failed while deciding (a store it could not read):
				// the failure is not in the recording to replay.
				rp.notes["calls Weir could not decide when they were made (rule internal) are not replayed"] = true
				continue
			}
			out, err := rp.call(ctx, r, &c, defs, rates, func(maxBytes int64) *flow.Session { return mirror(c.Watermark, maxBytes) })
			if err != nil {
				return n, err
			}
			n++
			rep.Calls++
			rep.Counts.add(out)
			if out.Change != Unchanged || len(out.NotReevaluated) > 0 {
				rep.Outcomes = append(rep.Outcomes, out)
			}
		}
	}
	return n, nil
}

func (c *Counts) add(o Outcome) {
	switch o.Change {
	case Unchanged:
		c.Unchanged++
	case Mismatch:
		c.Mismatch++
	case NewlyBlocked:
		c.NewlyBlocked++
	case NewlyEscalated:
		c.NewlyEscalated++
	case NewlyAllowed:
		c.NewlyAllowed++
	default:
		c.Changed++
	}
	if len(o.NotReevaluated) > 0 {
		c.NotReevaluated++
	}
}

// call decides one recorded call again.
func (rp *replayer) call(ctx context.Context, r store.Rec, c *Call, defs map[string]engine.ToolDef, rates map[string][]int64, mirror func(maxBytes int64) *flow.Session) (Outcome, error) {
	recPol, err := rp.recorded(ctx, c.Policy)
	if err != nil {
		return Outcome{}, fmt.Errorf("record %d: %w", r.Seq, err)
	}
	dg, err := c.Digest.Digest()
	if err != nil {
		return Outcome{}, fmt.Errorf("record %d: the argument digest is damaged (%w)", r.Seq, err)
	}
	ec := engine.Call{Server: r.Server, Tool: r.Tool, Digest: dg, NoID: c.NoID, Withheld: c.Withheld, RateExceeded: c.RateExceeded}
	pol := recPol
	if rp.cand != nil {
		pol = rp.cand
	}
	s := mirror(pol.SessionMaxBytes)
	var notRe []string
	if rp.cand == nil {
		labels, err := parseLabels(c.Labels)
		if err != nil {
			return Outcome{}, fmt.Errorf("record %d: %w", r.Seq, err)
		}
		ec.Labels = engine.ToolLabels{Labels: labels, Listed: c.Listed}
		for _, f := range c.Findings {
			if strings.HasPrefix(f.Rule, "rule ") {
				v, err := flow.ParseVerdict(f.Verdict)
				if err != nil {
					return Outcome{}, fmt.Errorf("record %d: %w", r.Seq, err)
				}
				ec.Fired = append(ec.Fired, engine.Finding{Rule: engine.Rule(f.Rule), Verdict: v, Reason: f.Reason})
			}
		}
	} else {
		def, ok := defs[r.Server+"/"+r.Tool]
		if !ok {
			def = engine.ToolDef{Name: r.Tool}
		}
		ec.Labels = engine.Label(pol, r.Server, def)
		ec.RateExceeded = nil
		ec.Fired, notRe = rp.fire(recPol, c, r, ec, rates)
		if dg.Unread && (ec.Labels.Labels.Has(flow.Sink) || s.Legs != 0) {
			// Recorded when neither the tool was a sink nor anything was
			// there to attribute: what the arguments carry is unknown.
			notRe = append(notRe, "flow checks")
			rp.notes["calls recorded without their argument views (not a sink, nothing to attribute when made) were not judged by the flow checks: flow checks"] = true
		}
	}
	d := engine.Decide(engine.Inputs{Policy: pol, Hasher: rp.h, Session: s}, ec)
	out := Outcome{
		Seq: r.Seq, Session: r.Session, Server: r.Server, Tool: r.Tool, At: time.UnixMilli(r.At).UTC().Format(time.RFC3339),
		RecordedVerdict: c.Verdict, RecordedRule: c.Rule, RecordedReason: c.Reason,
		Verdict: d.Verdict.String(), Rule: string(d.Rule), Reason: d.Reason, NotReevaluated: notRe,
	}
	out.Change = compare(c, d, rp.cand == nil)
	return out, nil
}

// compare says how a decision differs from its recording.
func compare(c *Call, d engine.Decision, exact bool) string {
	same := c.Verdict == d.Verdict.String() && c.Rule == string(d.Rule) && c.Reason == d.Reason
	if exact {
		if !same || len(c.Findings) != len(d.Findings) {
			return Mismatch
		}
		for i, f := range d.Findings {
			if c.Findings[i] != (Finding{string(f.Rule), f.Verdict.String(), f.Reason}) {
				return Mismatch
			}
		}
		return Unchanged
	}
	was, _ := flow.ParseVerdict(c.Verdict)
	stops := func(v flow.Verdict) bool { return v == flow.Block }
	switch {
	case same:
		return Unchanged
	case d.Verdict == flow.Block && !stops(was):
		return NewlyBlocked
	case d.Verdict == flow.Escalate && was != flow.Escalate && was != flow.Block:
		return NewlyEscalated
	case !d.Verdict.Stops() && was.Stops():
		return NewlyAllowed
	case d.Verdict == was:
		return OtherwiseChange
	}
	return OtherwiseChange
}

func parseLabels(names []string) (flow.Labels, error) {
	var l flow.Labels
	for _, n := range names {
		x, err := flow.ParseLabel(n)
		if err != nil {
			return 0, err
		}
		l |= x
	}
	return l, nil
}

// fire gives the candidate's rules' findings for a recorded call: a rule
// the recorded policy had unchanged keeps its recorded finding; another is
// checked from the call's value-free facts where it can be, and named in
// notRe where it cannot.
func (rp *replayer) fire(recPol *policy.Policy, c *Call, r store.Rec, ec engine.Call, rates map[string][]int64) (fired []engine.Finding, notRe []string) {
	old := map[string]string{}
	for _, rule := range recPol.RulesFor(r.Server, r.Tool) {
		old[rule.ID] = ruleKey(rule)
	}
	recorded := map[string]Finding{}
	for _, f := range c.Findings {
		recorded[f.Rule] = f
	}
	for _, rule := range rp.cand.RulesFor(r.Server, r.Tool) {
		name := "rule " + rule.ID
		if k, ok := old[rule.ID]; ok && k == ruleKey(rule) {
			if f, ok := recorded[name]; ok {
				v, _ := flow.ParseVerdict(f.Verdict)
				fired = append(fired, engine.Finding{Rule: engine.Rule(name), Verdict: v, Reason: f.Reason})
			}
			continue
		}
		if rule.RateLimit != nil {
			if rateExceeded(rates, rule, r.At) {
				d := fmt.Sprintf("this call is over the rate limit of rule %s (%s)", rule.ID, rule.RateLimit.Text)
				fired = append(fired, engine.Finding{Rule: engine.Rule(name), Verdict: flow.Block, Reason: d})
			}
		}
		if rule.When != nil {
			notRe = append(notRe, rule.ID)
			continue
		}
		violation, ok := checkFacts(rp.h, rule, c.Facts)
		if !ok {
			notRe = append(notRe, rule.ID)
			continue
		}
		if violation != "" {
			f := rule.Fired(violation)
			fired = append(fired, engine.Finding{Rule: engine.Rule(name), Verdict: f.Action, Reason: f.Reason})
		}
	}
	if len(notRe) > 0 {
		rp.notes["rules that read argument values (deny/allow patterns, one_of, min/max, when) were not re-evaluated: "+strings.Join(notRe, ", ")] = true
	}
	return fired, notRe
}

// rateExceeded counts a call against a rule's limit the way the store
// does: a sliding window over the calls the limit let through.
func rateExceeded(rates map[string][]int64, rule *policy.Rule, at int64) bool {
	per := rule.RateLimit.Per.Milliseconds()
	times := slices.DeleteFunc(rates[rule.ID], func(t int64) bool { return t <= at-per })
	if len(times) >= rule.RateLimit.N {
		rates[rule.ID] = times
		return true
	}
	rates[rule.ID] = append(times, at)
	return false
}

// checkFacts checks a rule's argument constraints against a call's facts:
// the first violation, and whether every constraint could be checked.
func checkFacts(h *fingerprint.Hasher, rule *policy.Rule, facts []Fact) (violation string, ok bool) {
	for i := range rule.Args {
		a := &rule.Args[i]
		if len(a.Deny) > 0 || len(a.Allow) > 0 || len(a.OneOf) > 0 || a.Min != nil || a.Max != nil {
			return "", false
		}
		for _, f := range facts {
			if f.Arg != a.Name {
				continue
			}
			if f.Kind != "" {
				return f.Path + " is " + f.Kind + ", not a string", true
			}
			if len(a.Within) > 0 {
				switch {
				case f.Unresolved:
					return f.Path + " is not a path Weir could resolve", true
				case len(f.Dirs) == 0:
					return "", false
				}
				in := slices.ContainsFunc(a.Within, func(dir string) bool {
					return slices.Contains(f.Dirs, engine.Hash(h.Digest("dir:"+dir)))
				})
				if !in {
					names := a.WithinText
					if names == nil {
						names = a.Within
					}
					return f.Path + " is outside " + policy.List(names, " and "), true
				}
			}
			if a.Hosts != nil {
				if v := checkHosts(h, a.Hosts, f); v != "" {
					return v, true
				}
			}
			if a.MaxLength > 0 && f.Runes > a.MaxLength {
				return fmt.Sprintf("%s is longer than %d characters", f.Path, a.MaxLength), true
			}
		}
	}
	return "", true
}

func checkHosts(h *fingerprint.Hasher, hr *policy.HostRule, f Fact) string {
	switch {
	case f.NotURL:
		return f.Path + " is not an absolute URL with a host"
	case f.Scheme != "http" && f.Scheme != "https":
		return f.Path + " scheme is not http or https"
	}
	matches := func(patterns []string) bool {
		for _, p := range patterns {
			if rest, wild := strings.CutPrefix(p, "*."); wild {
				if len(f.Hosts) > 1 && slices.Contains(f.Hosts[1:], engine.Hash(h.Digest("host:"+rest))) {
					return true
				}
			} else if len(f.Hosts) > 0 && f.Hosts[0] == engine.Hash(h.Digest("host:"+p)) {
				return true
			}
		}
		return false
	}
	if matches(hr.Deny) || len(hr.Allow) > 0 && !matches(hr.Allow) {
		return f.Path + " host is not allowed"
	}
	return ""
}

// ruleKey is what makes two rules the same rule.
func ruleKey(r *policy.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s|%s", r.ID, r.Match.String(), r.Action, r.Because, r.When.String())
	if r.RateLimit != nil {
		b.WriteString("|" + r.RateLimit.Text)
	}
	for _, a := range r.Args {
		fmt.Fprintf(&b, "|%s %v %v %v %v %v %d %v %v", a.Name, a.Within, a.Deny, a.Allow, a.OneOf, a.Hosts, a.MaxLength, a.Min, a.Max)
	}
	return b.String()
}
