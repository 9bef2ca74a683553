package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
)

// Call is a tools/call to decide.
type Call struct {
	Server string
	Tool   string
	Labels ToolLabels
	// Args is the raw JSON of params.arguments (may be empty).
	Args json.RawMessage
	// Resolved maps each raw path argument a `within` constraint checks to
	// the path it resolves to on disk (policyfile.ResolveArgs). The caller
	// fills it before deciding, so that the decision itself does no I/O.
	Resolved map[string]string
	// RateExceeded lists the rules whose rate limit this call exceeds, as
	// the state store counted them.
	RateExceeded []string
	// Withheld, when not empty, says why the tool is withheld from the
	// client (its definition changed since approval, or is flagged as tool
	// poisoning): the last tool list's verdict, or the pin store's.
	Withheld string
	// NoID marks a tools/call sent as a notification (no id, or id null):
	// it could not be answered, so it is refused whatever it asks.
	NoID bool
	// Digest, when not nil, is the arguments' digest ([DigestArgs]): the
	// flow checks read it instead of Args. A replay sets it from a record
	// (with Args nil); a caller that has one saves the work.
	Digest *ArgDigest
	// Earlier, for a sink call, is what its tool received in the
	// session's earlier calls (see Earlier); nil for none.
	Earlier *Earlier
	// Fired, for a call decided from its Digest alone, are the findings
	// of the policy's rules: they read argument values, which a recording
	// does not keep, so a replay supplies them.
	Fired []Finding
}

// digest returns the call's argument digest, computing it from Args the
// first time.
func (c *Call) digest(h *fingerprint.Hasher) *ArgDigest {
	if c.Digest == nil {
		c.Digest = DigestCall(h, c.Args, c.Earlier)
	}
	return c.Digest
}

func (c *Call) namesPath() bool {
	if c.Args == nil && c.Digest != nil {
		return c.Digest.NamesPath
	}
	return namesPath(c.Args)
}

func (c *Call) namesDestination() bool {
	if c.Args == nil && c.Digest != nil {
		return c.Digest.NamesDestination
	}
	return namesDestination(c.Args)
}

// Name is the call's tool as "server/tool", the form used for sources.
func (c *Call) Name() string { return c.Server + "/" + c.Tool }

// verdict is what a call makes of a source: whether it counts (the policy
// does not declassify its flow to the call) and whether it is exempt (its
// data may go back to where it was read from).
type verdict struct{ counted, exempt bool }

// judgement is a call's verdict on each source of its session, by kind.
type judgement struct {
	s  *flow.Session
	of map[flow.Kind]verdict
}

func (j *judgement) counted(i int32) bool { return j.verdictOf(i).counted }

func (j *judgement) exempt(i int32) bool { return j.verdictOf(i).exempt }

// verdictOf is source i's verdict. A source of a kind the session did not
// list (its labels changed without Relabel) counts and is not exempt: what
// Weir did not judge is judged as carried (DESIGN rule 1).
func (j *judgement) verdictOf(i int32) verdict {
	if v, ok := j.of[j.s.KindOf(i)]; ok {
		return v
	}
	return verdict{counted: true}
}

// decideCall judges one tools/call.
func decideCall(in Inputs, c Call) Decision {
	p, h, s := in.Policy, in.Hasher, in.Session
	if s == nil {
		s = &flow.Session{}
	}
	var d Decision
	if c.NoID {
		d.add(Finding{RuleProtocol, flow.Block,
			fmt.Sprintf("a tools/call of %s without an id cannot be answered, so Weir does not forward it", c.Name())})
	}
	if c.Withheld != "" {
		d.add(Finding{RuleWithheld, flow.Block, c.Withheld})
	}
	if p.DefaultAction == policy.DefaultDeny && !c.Labels.Listed {
		d.add(Finding{RuleDefaultAction, flow.Block,
			fmt.Sprintf("%s is not listed in the policy, and the policy denies unlisted tools (default_action: deny)", c.Name())})
	}
	sink := c.Labels.Labels.Has(flow.Sink)
	rules := p.RulesFor(c.Server, c.Tool)
	if !sink && len(rules) == 0 && !s.Legs.Any(flow.Legs) {
		d.finish()
		return d
	}
	name := c.Name()
	// Sources whose flow to this tool the policy declassifies do not count.
	// Private data of the call's own server may go back to it (exempt):
	// always for a tool that is not a sink (a secret read from a server and
	// written back to it has not crossed anything), and for a sink when
	// the call writes to a path and names no recipient, host, channel or
	// account to send anything to (saving an edited file where it was read
	// from). A sink with neither sends somewhere Weir cannot see, so it is
	// judged like any other.
	writeback := !sink || c.namesPath() && !c.namesDestination()
	var privSrc, untrustedSrc, foreignPriv, prunedPriv, evictedPriv, unloadedPriv []string
	// What counts about a source follows from its kind (tool and labels),
	// and a session of thousands of results has a few kinds: each is
	// judged once, and a call costs what its kinds and its hits do, not a
	// pass over every source.
	j := judgement{s: s, of: map[flow.Kind]verdict{}}
	for _, k := range s.Kinds() {
		if p.FlowAllowed(k.Tool, name) {
			j.of[k] = verdict{}
			continue
		}
		v := verdict{counted: true}
		if k.Labels.Has(flow.Private) {
			privSrc = append(privSrc, k.Tool)
			if writeback && serverOf(k.Tool) == c.Server {
				v.exempt = true
			} else {
				foreignPriv = append(foreignPriv, k.Tool)
			}
		}
		// What Weir can no longer attribute is judged as carried, but
		// not into a write back to where it was read from.
		if k.Labels.Has(flow.Private|flow.Pruned) && !v.exempt {
			prunedPriv = append(prunedPriv, k.Tool)
		}
		if k.Labels.Has(flow.Private|flow.Evicted) && !v.exempt {
			evictedPriv = append(evictedPriv, k.Tool)
		}
		if k.Labels.Has(flow.Private|flow.Unloaded) && !v.exempt {
			unloadedPriv = append(unloadedPriv, k.Tool)
		}
		if k.Labels.Has(flow.Untrusted) {
			untrustedSrc = append(untrustedSrc, k.Tool)
		}
		j.of[k] = v
	}
	privSrc, untrustedSrc = uniqueSorted(privSrc), uniqueSorted(untrustedSrc)
	if !sink && len(rules) == 0 && len(foreignPriv) == 0 && len(untrustedSrc) == 0 {
		d.finish()
		return d
	}

	// Attribution is the costly part; it is needed when something will
	// read it: an exfiltration or tainted-argument check, or a rule.
	var m attribution
	needAttribution := len(rules) > 0 ||
		len(foreignPriv) > 0 && p.Flow.Exfiltration != flow.Allow ||
		// What a tool that is not a sink is given to keep may come back
		// later: it is attributed, so it keeps its labels (Written).
		!sink && (len(foreignPriv) > 0 || len(untrustedSrc) > 0) ||
		len(untrustedSrc) > 0 && p.Flow.TaintedArgs != flow.Allow ||
		// An escalation needs to know whether an argument was chosen from
		// untrusted content: such a call is never approved for the session.
		sink && len(untrustedSrc) > 0 && (p.Flow.Integrity == flow.Escalate || p.Flow.Trifecta == flow.Escalate)
	if needAttribution && (len(privSrc) > 0 || len(untrustedSrc) > 0) {
		var err error
		if m, err = attribute(s, &j, p.Flow.MinMatches, c.digest(h)); err != nil {
			d.add(Finding{RuleBadArguments, flow.Block,
				fmt.Sprintf("Weir could not read the arguments of %s (%v), so it cannot tell what they carry", name, err)})
		}
	}
	var tainted, taintSrc []string
	if !sink {
		d.Written = written(c, m.provenanceLabels(s))
	}
	if !sink && m.digests > 0 {
		// A secret does not cross servers, even to a tool that keeps data
		// on this machine: an API key read from one server and written
		// into another's local database has left where it was kept.
		d.add(Finding{RuleExfiltration, p.Flow.Exfiltration, secretReason(name, m)})
	}
	if sink {
		switch {
		case m.prints >= p.Flow.MinMatches || m.digests > 0:
			d.add(Finding{RuleExfiltration, p.Flow.Exfiltration, exfilReason(name, m)})
		case m.undecoded != "" && len(foreignPriv) > 0:
			// A bound on decoding ran out: what was not examined could be
			// anything, so it is judged as the private data it may hide
			// (DESIGN rule 1). Never an allow by exhaustion.
			d.add(Finding{RuleExfiltration, p.Flow.Exfiltration, fmt.Sprintf(
				"Weir could not examine all of the arguments of %s within its decoding bound (%s), and this session has read private data (from %s), so it treats what it could not decode as that data",
				name, m.undecoded, list(uniqueSorted(foreignPriv)))})
		case len(prunedPriv) > 0:
			// The session's older observations were pruned past
			// retention: it held private data whose fingerprints are
			// gone, so no call can be shown not to carry it (DESIGN
			// rule 3: eviction widens taint).
			d.add(Finding{RuleExfiltration, p.Flow.Exfiltration, fmt.Sprintf(
				"this session read private data that Weir has since pruned (older than state.retention_days), so it can no longer tell whether the arguments of %s carry it, and treats them as if they do; start a new session to work without this",
				name)})
		case len(evictedPriv) > 0:
			// The session read more than its state bound lets Weir keep
			// fingerprints of, and the oldest were evicted (DESIGN rule 3).
			d.add(Finding{RuleExfiltration, p.Flow.Exfiltration, fmt.Sprintf(
				"this session read more private data (from %s) than Weir keeps fingerprints of (session.max_bytes), and the oldest were evicted, so it can no longer tell whether the arguments of %s carry it, and treats them as if they do; start a new session, or raise session.max_bytes, to work without this",
				strings.Join(uniqueSorted(evictedPriv), ", "), name)})
		case len(unloadedPriv) > 0:
			// This proxy joined a long session and is still reading its
			// fingerprints: until they are in, what it cannot attribute
			// is judged as carried, as evicted data is.
			d.add(Finding{RuleExfiltration, p.Flow.Exfiltration, fmt.Sprintf(
				"this Weir proxy joined a session that had read a lot of private data (from %s) and is still reading its fingerprints, so for now it treats the arguments of %s as carrying that data; retry in a few seconds",
				strings.Join(uniqueSorted(unloadedPriv), ", "), name)})
		}
		tainted, taintSrc = m.tainted(s)
		d.Tainted = tainted
		if len(tainted) > 0 {
			d.add(Finding{RuleTaintedArgs, p.Flow.TaintedArgs, fmt.Sprintf(
				"the %s of %s %s copied from untrusted content read from %s",
				plural(len(tainted), "argument", "arguments")+" "+list(tainted), name, plural(len(tainted), "was", "were"), list(taintSrc))})
		}
		// A person is asked only about a call untrusted text could have
		// steered (see steered); a rule that blocks blocks regardless.
		ask := func(v flow.Verdict) (flow.Verdict, string) {
			if v != flow.Escalate || steered(s, &j, &m, c.Tool, c.digest(h), wordOverflow(h)) {
				return v, ""
			}
			return flow.Warn, "; but nothing in its arguments came from that untrusted content (no recipient, address, passage or short value of it), so nobody is asked"
		}
		if len(privSrc) > 0 && len(untrustedSrc) > 0 {
			v, why := ask(p.Flow.Trifecta)
			d.add(Finding{RuleTrifecta, v, fmt.Sprintf(
				"this session has read private data (from %s) and untrusted content (from %s), and %s can send data out: untrusted text may be steering this call%s",
				list(privSrc), list(untrustedSrc), name, why)})
		}
		if len(untrustedSrc) > 0 {
			v, why := ask(p.Flow.Integrity)
			d.add(Finding{RuleIntegrity, v, fmt.Sprintf(
				"this session has read untrusted content (from %s), and %s acts outside: untrusted text may be steering this call%s",
				list(untrustedSrc), name, why)})
		}
	}
	switch {
	case len(rules) == 0:
	case c.Args == nil && c.Digest != nil:
		// A replay: without values, the rules' findings are what the
		// recording (or the replay's own value-free checks) says.
		for _, f := range c.Fired {
			d.add(f)
		}
	default:
		d.fireRules(p, s, c, rules, &m)
	}
	d.finish()
	d.Digest = c.Digest
	switch d.Rule {
	case RuleExfiltration:
		d.Sources, d.Paths, d.Via = m.sources, m.paths, m.via
		d.Matches = m.prints + m.digests
	case RuleTrifecta:
		d.Sources = uniqueSorted(append(slices.Clone(privSrc), untrustedSrc...))
	case RuleIntegrity:
		d.Sources = untrustedSrc
	case RuleTaintedArgs:
		d.Sources, d.Paths = taintSrc, tainted
	}
	return d
}

// written is what a call to a tool that is not a sink leaves on its
// server, when its arguments carry private or untrusted data: the
// fingerprints and secret digests of the arguments as written, under the
// labels of the sources they came from. A result of that server that
// carries them later takes those labels back (see readBack).
func written(c Call, provenance map[string][]string) *flow.Observation {
	if c.Digest == nil {
		return nil
	}
	var labels flow.Labels
	for _, names := range provenance {
		for _, n := range names {
			if l, err := flow.ParseLabel(n); err == nil {
				labels |= l
			}
		}
	}
	if labels&flow.Legs == 0 {
		return nil
	}
	o := &flow.Observation{Tool: c.Server, Labels: labels & flow.Legs}
	for _, v := range c.Digest.Views {
		// What is stored is the text as written, of the arguments that
		// carry tainted data: the rest of the call is the agent's own.
		if len(v.Via) > 0 || !v.Payload || len(provenance[v.Path]) == 0 {
			continue
		}
		o.Prints = append(o.Prints, v.Prints...)
		for _, t := range v.Tokens {
			o.Digests = append(o.Digests, uint64(t.D))
		}
	}
	o.Digests = fingerprint.SortUnique(o.Digests)
	if len(o.Prints) == 0 && len(o.Digests) == 0 {
		return nil
	}
	return o
}

// fireRules applies the policy's rules for the call.
func (d *Decision) fireRules(p *policy.Policy, s *flow.Session, c Call, rules []*policy.Rule, m *attribution) {
	args, err := argsMap(c.Args)
	if err != nil {
		d.add(Finding{RuleBadArguments, flow.Block,
			fmt.Sprintf("Weir could not read the arguments of %s (%v), so its rules cannot be checked", c.Name(), err)})
		return
	}
	vars := policy.Vars{RateExceeded: c.RateExceeded}
	// The predicates' view of the session costs a scan of the arguments;
	// argument constraints and rate limits do not need it.
	if slices.ContainsFunc(rules, func(r *policy.Rule) bool { return r.When != nil }) {
		vars.Labels = c.Labels.Labels.Names()
		vars.Legs = s.Legs.Names()
		vars.Sources = sourceNames(s)
		vars.Provenance = m.provenanceLabels(s)
		if m.read {
			vars.RecipientDomains, vars.URLHosts = m.domains, m.hosts
		} else {
			vars.RecipientDomains, vars.URLHosts = addressees(c.Args)
		}
	}
	resolved := func(raw string) (string, bool) {
		r, ok := c.Resolved[raw]
		return r, ok
	}
	for _, f := range p.Fire(c.Server, c.Tool, args, vars, resolved) {
		// f.Err is not used: CEL's message can quote argument values, and
		// reasons reach the audit log. f.Reason never does.
		d.add(Finding{Rule: PolicyRule(f.Rule.ID), Verdict: f.Action, Reason: f.Reason})
	}
}

// argsMap decodes the arguments as encoding/json would (numbers as
// float64, the last of repeated members), from bytes already known to be
// valid, without reflection: it runs for every call a rule matches.
func argsMap(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if raw[0] != '{' || !jsonrpc.Valid(raw) {
		return nil, errors.New("arguments are not a JSON object")
	}
	v, err := jsonrpc.Decode(raw)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// addressees returns the domains of the e-mail addresses and the hosts of
// the URLs in the arguments, canonical, sorted and unique.
func addressees(raw json.RawMessage) (domains, hosts []string) {
	var a ArgDigest
	leaves, _ := stringLeaves(raw)
	for _, l := range leaves {
		fingerprint.Identifiers(l.value, a.addressee)
	}
	return uniqueSorted(a.domains), uniqueSorted(a.hosts)
}

// addressee notes the domain of an e-mail address or the host of a URL.
func (a *ArgDigest) addressee(kind fingerprint.IdentKind, canon string) {
	var h string
	switch kind {
	case fingerprint.IdentEmail:
		_, h, _ = strings.Cut(canon, "@")
	case fingerprint.IdentURL:
		h, _, _ = strings.Cut(canon, "/")
	default:
		return
	}
	ch, err := policy.CanonicalHost(h)
	if err != nil {
		return
	}
	if kind == fingerprint.IdentEmail {
		a.domains = append(a.domains, ch)
	} else {
		a.hosts = append(a.hosts, policy.SiteHost(ch))
	}
}

func sourceNames(s *flow.Session) []string {
	var out []string
	for _, k := range s.Kinds() {
		out = append(out, k.Tool)
	}
	return uniqueSorted(out)
}

// secretReason says why a tool that is not a sink may not carry a secret.
func secretReason(tool string, m attribution) string {
	return fmt.Sprintf("the arguments of %s carry a secret read from %s (found in %s); secrets do not cross from one server to another, even to one that keeps data on this machine",
		tool, list(m.sources), list(m.paths))
}

// serverOf is the server of a "server/tool" source name.
func serverOf(source string) string {
	s, _, _ := strings.Cut(source, "/")
	return s
}

// destinationWords name arguments that send something somewhere: a call
// with one is not a write back to where its data came from.
var destinationWords = words("to cc bcc recipient recipients email emails phone number channel channels chat room thread conversation account iban wallet owner org organization repo repository project workspace team url uri link href webhook endpoint host domain")

// namesDestination reports whether a call's arguments name a recipient,
// host, channel or account: an argument so named, or an e-mail address or
// URL anywhere in them.
func namesDestination(args json.RawMessage) bool {
	if len(args) == 0 || args[0] != '{' {
		return false
	}
	found := false
	_ = jsonrpc.Walk(args, func(tok jsonrpc.Token, text string, raw []byte) error {
		switch tok {
		case jsonrpc.Key:
			for _, w := range splitName(text) {
				if destinationWords[w] {
					found = true
					return errStopWalk
				}
			}
		case jsonrpc.Scalar:
			if raw[0] == '"' && len(raw) < 512 {
				if v, err := jsonrpc.Unquote(raw); err == nil && isAddressee(v) {
					found = true
					return errStopWalk
				}
			}
		}
		return nil
	})
	return found
}

var errStopWalk = errors.New("stop")

// pathWords name arguments that say where on the machine a call writes.
var pathWords = words("path paths file files filename filepath dir directory folder")

// urlWords name arguments that hold a URL.
var urlWords = words("url urls uri uris link links href endpoint webhook")

// URLArg reports whether an argument is named as a URL ("url",
// "target_url", "webhookUri"): where learn writes hosts rules.
func URLArg(name string) bool {
	for _, w := range splitName(name) {
		if urlWords[w] {
			return true
		}
	}
	return false
}

// PathArg reports whether an argument is named as a path ("path",
// "file_path", "targetDir"): what a recording resolves, for learn.
func PathArg(name string) bool {
	for _, w := range splitName(name) {
		if pathWords[w] {
			return true
		}
	}
	return false
}

// namesPath reports whether one of a call's arguments is named as a path.
func namesPath(args json.RawMessage) bool {
	if len(args) == 0 || args[0] != '{' {
		return false
	}
	found := false
	_ = jsonrpc.Walk(args, func(tok jsonrpc.Token, text string, raw []byte) error {
		if tok == jsonrpc.Key {
			for _, w := range splitName(text) {
				if pathWords[w] {
					found = true
					return errStopWalk
				}
			}
		}
		return nil
	})
	return found
}

// isAddressee reports a string that is one e-mail address or one URL.
func isAddressee(v string) bool {
	v = strings.TrimSpace(v)
	if strings.ContainsAny(v, " \t\n") {
		return false
	}
	l := strings.ToLower(v)
	if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		return true
	}
	at := strings.IndexByte(v, '@')
	return at > 0 && strings.Contains(v[at:], ".")
}

func exfilReason(sink string, m attribution) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the arguments of %s carry private data read from %s", sink, list(m.sources))
	if len(m.paths) > 0 {
		fmt.Fprintf(&b, " (found in %s", list(m.paths))
		if len(m.via) > 0 {
			fmt.Fprintf(&b, ", hidden via %s", list(m.via))
		}
		b.WriteString(")")
	}
	return b.String()
}

// tainted returns the argument paths whose value was chosen from counted
// untrusted sources — an identifier or secret of theirs makes up most of
// it — and those sources. Prose quoted from untrusted content (a summary
// of a web page) is provenance, not taint: it is the data of the call, not
// its control.
func (m *attribution) tainted(s *flow.Session) (paths, sources []string) {
	for path, srcs := range m.control {
		for _, i := range srcs {
			if s.Sources[i].Labels.Has(flow.Untrusted) {
				paths = append(paths, path)
				sources = append(sources, s.Sources[i].Tool)
			}
		}
	}
	return uniqueSorted(paths), uniqueSorted(sources)
}

// provenanceLabels maps each attributed argument path to the labels of its
// sources, as policy predicates see it.
func (m *attribution) provenanceLabels(s *flow.Session) map[string][]string {
	out := make(map[string][]string, len(m.provenance))
	for path, srcs := range m.provenance {
		var l flow.Labels
		for _, i := range srcs {
			l |= s.Sources[i].Labels & flow.Legs
		}
		out[path] = l.Names()
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func list(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	case 2:
		return xs[0] + " and " + xs[1]
	}
	if len(xs) > 5 {
		return strings.Join(xs[:4], ", ") + fmt.Sprintf(" and %d more", len(xs)-4)
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func uniqueSorted(xs []string) []string {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// attribution is what a call's arguments carry from earlier results.
type attribution struct {
	// Exfiltration evidence over the whole call: distinct fingerprints and
	// secret digests of counted private sources, the sources, the paths
	// where they were found and the decodings that revealed them.
	prints, digests int
	sources         []string
	paths           []string
	via             []string
	// undecoded lists the argument paths whose decoded views were cut
	// short by the decoder's work bound, or is "".
	undecoded string

	// provenance maps an argument path to the counted sources it derives
	// from: min_matches fingerprints of the source on that path, or one
	// exact secret or identifier (URL, e-mail, IBAN, long id) of it.
	provenance map[string][]int32
	// control maps an argument path to the sources it was chosen from (see
	// pathHits.control): what tainted_args acts on.
	control map[string][]int32

	// read reports that attribution read the arguments themselves; then
	// domains and hosts are the e-mail domains and URL hosts in them.
	read           bool
	domains, hosts []string
}

// pathHits counts, for one argument path, the evidence per source.
type pathHits struct {
	prints map[uint64]bool
	perSrc map[int32]int // fingerprints per source
	exact  map[int32]bool
	// control marks sources an exact identifier or secret of which makes
	// up most of the argument: the value was chosen from that source (a
	// recipient, an account, a URL), not quoted in a longer text.
	control map[int32]bool
}

// attribute looks for the fingerprints, secret digests and identifiers of
// counted sources in every view of a call's arguments, as their digest
// holds them: every decoded view of every string, and the boundaries
// between consecutive strings (text split across fields).
func attribute(s *flow.Session, j *judgement, minMatches int, dg *ArgDigest) (attribution, error) {
	var res attribution
	if dg.Err != "" {
		return res, errors.New(dg.Err)
	}
	res.read = dg.read
	res.domains, res.hosts = dg.domains, dg.hosts
	privPrints := make(map[uint64]bool)
	privDigests := make(map[uint64]bool)
	privSrcs := make(map[int32]bool)
	privPaths := make(map[string]bool)
	vias := make(map[string]bool)
	byPath := make(map[string]*pathHits)
	var scratch []int32

	hitsFor := func(path string) *pathHits {
		ph := byPath[path]
		if ph == nil {
			ph = &pathHits{prints: map[uint64]bool{}, perSrc: map[int32]int{}, exact: map[int32]bool{}, control: map[int32]bool{}}
			byPath[path] = ph
		}
		return ph
	}

	// scan looks for evidence in one view of one argument. A view that is
	// not a payload (an argument that is only an address, see isAddress)
	// tells by what it matches where it came from, but carries no data out.
	scan := func(v *ViewDigest) {
		privHit := false
		ph := hitsFor(v.Path)
		isPrivate := func(i int32) bool {
			return v.Payload && j.counted(i) && !j.exempt(i) && s.Sources[i].Labels.Has(flow.Private)
		}
		dominant := func(n int) bool { return 2*n >= v.Len }
		for _, p := range v.Prints {
			if ph.prints[p] {
				// Counted already; a view that shows it again still tells
				// how it was hidden.
				privHit = privHit || privPrints[p]
				continue
			}
			scratch = s.PrintSources(scratch[:0], p)
			found := false
			for _, i := range scratch {
				if !j.counted(i) {
					continue
				}
				found = true
				ph.perSrc[i]++
				if isPrivate(i) {
					privPrints[p], privSrcs[i], privHit = true, true, true
				}
			}
			if found {
				ph.prints[p] = true
			}
		}
		for _, tok := range v.Tokens {
			scratch = s.DigestSources(scratch[:0], uint64(tok.D))
			for _, i := range scratch {
				if !j.counted(i) {
					continue
				}
				ph.exact[i] = true
				if dominant(tok.N) {
					ph.control[i] = true
				}
				if isPrivate(i) {
					privDigests[uint64(tok.D)], privSrcs[i], privHit = true, true, true
				}
			}
		}
		for _, id := range v.Idents {
			scratch = s.IdentSources(scratch[:0], uint64(id.D))
			for _, i := range scratch {
				if j.counted(i) {
					ph.exact[i] = true
					if dominant(id.N) {
						ph.control[i] = true
					}
				}
			}
		}
		if privHit && v.Path != "" {
			privPaths[v.Path] = true
			if len(v.Via) > 0 {
				vias[strings.Join(v.Via, " → ")] = true
			}
		}
	}
	for i := range dg.Views {
		scan(&dg.Views[i])
	}
	if len(dg.Undecoded) > 0 {
		res.undecoded = list(dg.Undecoded)
	}
	res.prints, res.digests = len(privPrints), len(privDigests)
	for i := range privSrcs {
		res.sources = append(res.sources, s.Sources[i].Tool)
	}
	res.sources = uniqueSorted(res.sources)
	res.paths = sortedKeys(privPaths)
	res.via = sortedKeys(vias)

	for path, ph := range byPath {
		if path == "" {
			continue
		}
		var srcs []int32
		for i, n := range ph.perSrc {
			if n >= minMatches {
				srcs = append(srcs, i)
			}
		}
		for i := range ph.exact {
			if ph.perSrc[i] < minMatches {
				srcs = append(srcs, i)
			}
		}
		if len(srcs) > 0 {
			slices.Sort(srcs)
			if res.provenance == nil {
				res.provenance = make(map[string][]int32)
			}
			res.provenance[path] = srcs
		}
		if len(ph.control) > 0 {
			if res.control == nil {
				res.control = make(map[string][]int32)
			}
			for i := range ph.control {
				res.control[path] = append(res.control[path], i)
			}
			slices.Sort(res.control[path])
		}
	}
	return res, nil
}

// isAddress reports whether an argument is one e-mail address or one
// IBAN and nothing else. Such a value says where something goes; it is
// attributed (a recipient copied from an untrusted page is tainted) but is
// not data leaving: paying a landlord whose IBAN is in the user's files, or
// inviting the participants of a meeting, is not exfiltration.
func isAddress(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) < 6 || len(v) > 254 {
		return false
	}
	whole := false
	fingerprint.Identifiers(v, func(kind fingerprint.IdentKind, canon string) {
		switch kind {
		case fingerprint.IdentEmail:
			whole = whole || strings.EqualFold(canon, v)
		case fingerprint.IdentIBAN:
			whole = whole || canon == strings.ToUpper(strings.ReplaceAll(v, " ", ""))
		}
	})
	return whole
}

// identDigest keys an identifier by its kind as well as its text.
func identDigest(h *fingerprint.Hasher, kind fingerprint.IdentKind, canon string) uint64 {
	return h.Digest(kind.String() + ":" + canon)
}

// edgeBytes is how much of each side of a boundary is joined: enough for
// K+W-1 normalised characters even in punctuation-heavy text.
const edgeBytes = 4 * (fingerprint.K + fingerprint.W)

// edges joins the end of a and the start of b.
func edges(a, b string) string {
	if len(a) > edgeBytes {
		a = a[len(a)-edgeBytes:]
	}
	if len(b) > edgeBytes {
		b = b[:edgeBytes]
	}
	return a + b
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type leaf struct{ path, value string }

// stringLeaves returns every string in a JSON value with its JSON path, in
// document order, duplicate members included (a server may read either).
// Object keys of 12 bytes or more are leaves too: an agent can smuggle data
// in a key. So are long numbers (card and account numbers).
func stringLeaves(raw json.RawMessage) ([]leaf, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if !jsonrpc.Valid(raw) {
		return nil, errors.New("arguments are not valid JSON")
	}
	var out []leaf
	// One pass over the arguments (jsonrpc.Walk), keeping the path of the
	// container each value is in.
	type frame struct {
		path string
		arr  bool
		n    int    // the next element's index, in an array
		next string // the next member's path, in an object
	}
	var stack []frame
	valuePath := func() string {
		if len(stack) == 0 {
			return "$"
		}
		top := &stack[len(stack)-1]
		if !top.arr {
			return top.next
		}
		p := top.path + "[" + strconv.Itoa(top.n) + "]"
		top.n++
		return p
	}
	err := jsonrpc.Walk(raw, func(tok jsonrpc.Token, text string, v []byte) error {
		switch tok {
		case jsonrpc.ObjectStart, jsonrpc.ArrayStart:
			stack = append(stack, frame{path: valuePath(), arr: tok == jsonrpc.ArrayStart})
		case jsonrpc.ObjectEnd, jsonrpc.ArrayEnd:
			stack = stack[:len(stack)-1]
		case jsonrpc.Key:
			top := &stack[len(stack)-1]
			top.next = childPath(top.path, text)
			if len(text) >= 12 {
				out = append(out, leaf{top.next, text})
			}
		case jsonrpc.Scalar:
			p := valuePath()
			switch v[0] {
			case '"':
				s, err := jsonrpc.Unquote(v)
				if err != nil {
					return err
				}
				out = append(out, leaf{p, s})
			case 't', 'f', 'n':
			default:
				if len(v) >= 12 {
					out = append(out, leaf{p, string(v)})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("arguments could not be read: %w", err)
	}
	return out, nil
}

func childPath(parent, key string) string {
	ident := key != ""
	for i, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ident = false
			break
		}
	}
	if ident {
		return parent + "." + key
	}
	q, _ := json.Marshal(key)
	return parent + "[" + string(q) + "]"
}
