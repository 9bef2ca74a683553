package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
)

// Rule names, as they appear in block messages and the audit log.
const (
	RuleExfiltration  = "flow.exfiltration"
	RuleTrifecta      = "flow.trifecta"
	RuleIntegrity     = "flow.integrity"
	RuleDefaultAction = "default_action"
	RuleBadArguments  = "arguments"
)

// Call is a tools/call to decide.
type Call struct {
	Server string
	Tool   string
	Labels ToolLabels
	// Args is the raw JSON of params.arguments (may be empty).
	Args json.RawMessage
}

// Name is the call's tool as "server/tool", the form used for sources.
func (c *Call) Name() string { return c.Server + "/" + c.Tool }

// A Finding is one rule that applies to a call.
type Finding struct {
	Rule    string
	Verdict flow.Verdict
	Reason  string
}

// Decision is the engine's answer for one call.
type Decision struct {
	// Verdict is the most severe verdict among the findings (Allow if none).
	Verdict flow.Verdict
	// Rule and Reason are those of the most severe finding.
	Rule   string
	Reason string
	// Sources are the observations the decision rests on ("server/tool"),
	// sorted: the private sources the arguments matched for exfiltration,
	// else the sources of the legs held.
	Sources []string
	// Paths are the argument JSON paths where private data was found.
	Paths []string
	// Via lists the decodings that revealed it ("base64", "url → hex").
	Via []string
	// Matches counts the distinct private fingerprints and digests found.
	Matches int
	// Findings lists every rule that applied, most severe first.
	Findings []Finding
}

// Decide judges one tools/call. It is pure: the same policy, key, session
// and call give the same decision.
func Decide(p *policy.Policy, h *fingerprint.Hasher, s *flow.Session, c Call) Decision {
	var d Decision
	if p.DefaultAction == policy.DefaultDeny && !c.Labels.Listed {
		d.add(Finding{RuleDefaultAction, flow.Block,
			fmt.Sprintf("%s is not listed in the policy, and the policy denies unlisted tools (default_action: deny)", c.Name())})
	}
	if !c.Labels.Labels.Has(flow.Sink) {
		d.finish()
		return d
	}
	sink := c.Name()
	// Sources whose flow to this sink the policy declassifies do not count.
	counted := make([]bool, len(s.Sources))
	var privSrc, untrustedSrc []string
	for i, src := range s.Sources {
		if p.FlowAllowed(src.Tool, sink) {
			continue
		}
		counted[i] = true
		if src.Labels.Has(flow.Private) {
			privSrc = append(privSrc, src.Tool)
		}
		if src.Labels.Has(flow.Untrusted) {
			untrustedSrc = append(untrustedSrc, src.Tool)
		}
	}
	privSrc, untrustedSrc = uniqueSorted(privSrc), uniqueSorted(untrustedSrc)

	var m matchResult
	if len(privSrc) > 0 {
		var err error
		m, err = match(h, s, counted, c.Args)
		if err != nil {
			d.add(Finding{RuleBadArguments, flow.Block,
				fmt.Sprintf("Weir could not read the arguments of %s (%v), so it cannot tell whether they carry private data", sink, err)})
		} else if m.prints >= p.Flow.MinMatches || m.digests > 0 {
			d.add(Finding{RuleExfiltration, p.Flow.Exfiltration, exfilReason(sink, m)})
		}
	}
	if len(privSrc) > 0 && len(untrustedSrc) > 0 {
		d.add(Finding{RuleTrifecta, p.Flow.Trifecta, fmt.Sprintf(
			"this session has read private data (from %s) and untrusted content (from %s), and %s can send data out: untrusted text may be steering this call",
			list(privSrc), list(untrustedSrc), sink)})
	}
	if len(untrustedSrc) > 0 {
		d.add(Finding{RuleIntegrity, p.Flow.Integrity, fmt.Sprintf(
			"this session has read untrusted content (from %s), and %s acts outside: untrusted text may be steering this call",
			list(untrustedSrc), sink)})
	}
	d.finish()
	switch d.Rule {
	case RuleExfiltration:
		d.Sources, d.Paths, d.Via = m.sources, m.paths, m.via
		d.Matches = m.prints + m.digests
	case RuleTrifecta:
		d.Sources = uniqueSorted(append(slices.Clone(privSrc), untrustedSrc...))
	case RuleIntegrity:
		d.Sources = untrustedSrc
	}
	return d
}

func (d *Decision) add(f Finding) {
	d.Findings = append(d.Findings, f)
}

// finish orders the findings and promotes the most severe. Allow findings
// are dropped: a rule whose action is allow does not apply.
func (d *Decision) finish() {
	d.Findings = slices.DeleteFunc(d.Findings, func(f Finding) bool { return f.Verdict == flow.Allow })
	sort.SliceStable(d.Findings, func(i, j int) bool { return d.Findings[i].Verdict > d.Findings[j].Verdict })
	if len(d.Findings) > 0 {
		top := d.Findings[0]
		d.Verdict, d.Rule, d.Reason = top.Verdict, top.Rule, top.Reason
	}
}

func exfilReason(sink string, m matchResult) string {
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

type matchResult struct {
	prints, digests int
	sources         []string
	paths           []string
	via             []string
}

// match looks for fingerprints and digests of counted private sources in
// every decoded view of every string in the arguments, and across the
// boundaries between consecutive strings (text split across fields).
func match(h *fingerprint.Hasher, s *flow.Session, counted []bool, args json.RawMessage) (matchResult, error) {
	var res matchResult
	leaves, err := stringLeaves(args)
	if err != nil {
		return res, err
	}
	seenPrint := make(map[uint64]bool)
	seenDigest := make(map[uint64]bool)
	srcs := make(map[int32]bool)
	paths := make(map[string]bool)
	vias := make(map[string]bool)
	var prints []uint64
	var scratch []int32

	// private returns the counted private sources holding a hash, adding
	// them to srcs; it reports whether there was any.
	private := func(found []int32) bool {
		ok := false
		for _, i := range found {
			if counted[i] && s.Sources[i].Labels.Has(flow.Private) {
				srcs[i] = true
				ok = true
			}
		}
		return ok
	}
	scan := func(path, text string, via []fingerprint.Encoding, tokens bool) {
		hit := false
		prints = h.Prints(prints[:0], text)
		for _, p := range prints {
			if seenPrint[p] {
				hit = true // already counted; still marks this path
				continue
			}
			scratch = s.PrintSources(scratch[:0], p)
			if private(scratch) {
				seenPrint[p] = true
				hit = true
			}
		}
		if tokens {
			fingerprint.Tokens(text, func(tok string) {
				dg := h.Digest(tok)
				if seenDigest[dg] {
					hit = true
					return
				}
				scratch = s.DigestSources(scratch[:0], dg)
				if private(scratch) {
					seenDigest[dg] = true
					hit = true
				}
			})
		}
		if hit && path != "" {
			paths[path] = true
			if len(via) > 0 {
				vias[viaString(via)] = true
			}
		}
	}
	for i, leaf := range leaves {
		fingerprint.Expand(leaf.value, func(v fingerprint.View) {
			scan(leaf.path, v.Text, v.Via, true)
		})
		if i > 0 {
			// Text split across two fields: only windows that straddle the
			// boundary are new, so scan just the two edges, joined.
			scan("", edges(leaves[i-1].value, leaf.value), nil, false)
		}
	}
	res.prints, res.digests = len(seenPrint), len(seenDigest)
	for i := range srcs {
		res.sources = append(res.sources, s.Sources[i].Tool)
	}
	res.sources = uniqueSorted(res.sources)
	res.paths = sortedKeys(paths)
	res.via = sortedKeys(vias)
	return res, nil
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

func viaString(via []fingerprint.Encoding) string {
	parts := make([]string, len(via))
	for i, e := range via {
		parts[i] = e.String()
	}
	return strings.Join(parts, " → ")
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
	var walk func(path string, v []byte) error
	walk = func(path string, v []byte) error {
		switch v[0] {
		case '"':
			s, err := jsonrpc.Unquote(v)
			if err != nil {
				return err
			}
			out = append(out, leaf{path, s})
		case '{':
			return jsonrpc.EachMember(v, func(k string, mv []byte) error {
				p := childPath(path, k)
				if len(k) >= 12 {
					out = append(out, leaf{p, k})
				}
				return walk(p, mv)
			})
		case '[':
			return jsonrpc.EachElement(v, func(i int, ev []byte) error {
				return walk(path+"["+strconv.Itoa(i)+"]", ev)
			})
		case 't', 'f', 'n':
		default:
			if len(v) >= 12 {
				out = append(out, leaf{path, string(v)})
			}
		}
		return nil
	}
	if err := walk("$", raw); err != nil {
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
