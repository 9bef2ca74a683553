package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/common/types/ref"

	"github.com/weir-sec/weir/internal/flow"
)

// Mode says whether decisions are enforced or only recorded.
type Mode uint8

const (
	// Enforce keeps blocked calls from the server. It is the zero value, so
	// a forgotten mode fails closed.
	Enforce Mode = iota
	// Monitor makes and logs every decision but blocks nothing.
	Monitor
)

var modeNames = []string{Enforce: "enforce", Monitor: "monitor"}

// ModeNames lists the modes by value, as a policy writes them.
func ModeNames() []string { return slices.Clone(modeNames) }

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", m)
}

// DefaultAction says what happens to a tool that no `tools:` entry matches.
type DefaultAction uint8

const (
	// DefaultAllow labels an unlisted tool from its MCP annotations and the
	// name heuristics, and decides its calls like any other.
	DefaultAllow DefaultAction = iota
	// DefaultDeny refuses every call to an unlisted tool (allowlist mode).
	DefaultDeny
)

var defaultActionNames = []string{DefaultAllow: "allow", DefaultDeny: "deny"}

// DefaultActionNames lists the default actions by value, as a policy writes
// them.
func DefaultActionNames() []string { return slices.Clone(defaultActionNames) }

func (a DefaultAction) String() string {
	if int(a) < len(defaultActionNames) {
		return defaultActionNames[a]
	}
	return fmt.Sprintf("default_action(%d)", a)
}

// flowActions are the verdicts a flow key may name. Redact is a verdict the
// engine reaches on results, not an action a policy can ask for.
var flowActions = []flow.Verdict{flow.Allow, flow.Warn, flow.Block, flow.Escalate}

// FlowActions lists the verdicts a flow key or a rule's action may name.
func FlowActions() []flow.Verdict { return slices.Clone(flowActions) }

// Policy is a compiled policy: one file layered on a preset, or a preset on
// its own. A Policy is not changed after it is built, so it can be shared
// between goroutines.
type Policy struct {
	Version       int
	Mode          Mode
	DefaultAction DefaultAction
	// RedactSecrets replaces the secrets (API keys, passwords, tokens) in
	// tool results with a labelled placeholder before the model reads them;
	// they are still fingerprinted, so a leak of the original is caught.
	RedactSecrets bool
	Flow          Flow
	// Approval bounds how escalations are put to a person.
	Approval Approval
	// Record says whether sessions are recorded for weir replay and weir
	// learn, and for how long.
	Record Record
	// StateRetentionDays is how long a session's observations are kept
	// after its last activity; older ones are pruned to a tombstone that
	// keeps their labels (state.retention_days).
	StateRetentionDays int
	// SessionMaxBytes bounds the memory one session's fingerprints, digests
	// and identifiers take in each proxy's mirror (session.max_bytes);
	// past it the oldest are evicted, and private data they attributed is
	// then treated as carried by every sink call (DESIGN rule 3).
	SessionMaxBytes int64
	// Scratch says which tools' large results become tables of the
	// scratch database, queried with weir_query.
	Scratch Scratch
	// AuditMaxSize is the size in bytes at which the audit log rotates
	// (0: never); WEIR_AUDIT_MAX_SIZE overrides it.
	AuditMaxSize int64
	Tools        []ToolEntry
	// Rules are the argument, predicate and rate-limit rules, the preset's
	// first, then the file's, each in file order.
	Rules []Rule
	// Config holds the named values `when` predicates compare against, as
	// plain Go values: string, int64 (whole numbers), float64, bool, nil,
	// []any and map[string]any. It is the preset's config with the file's
	// keys replacing the preset's. Predicates read it as compiled; do not
	// change it.
	Config map[string]any
	// Preset names the preset the policy is layered on (for a preset, its
	// own name).
	Preset string
	Source string // file path, or "preset:NAME" for an embedded preset
	// Text is the policy file as read (nil for a preset on its own): what
	// a recording keeps, so that replay can build the same policy again.
	Text []byte

	// celConfig is Config as a CEL value, built once, that every predicate
	// of the policy reads as `config`.
	celConfig ref.Val
}

// Flow holds the information-flow actions: what to do with a sink call given
// what the session has seen.
type Flow struct {
	// Exfiltration is the action when private data is found in a sink
	// call's arguments.
	Exfiltration flow.Verdict
	// Trifecta is the action for a sink call while the session holds both
	// private data and untrusted input.
	Trifecta flow.Verdict
	// Integrity is the action for a sink call after any untrusted input.
	Integrity flow.Verdict
	// TaintedArgs is the action for a sink call whose arguments derive from
	// the results of untrusted (or, for the dataflow preset's reading,
	// private) sources, as argument attribution finds them.
	TaintedArgs flow.Verdict
	// MinMatches is how many fingerprint hits from private sources make a
	// leak (at least 1).
	MinMatches int
	// AllowFlows are declassified flows: data from a matching source may
	// reach a matching sink.
	AllowFlows []FlowRule
}

// Approval bounds the questions an escalation puts to a person.
type Approval struct {
	// Timeout is how long an escalated call waits for a person's answer
	// to an elicitation before it is refused.
	Timeout time.Duration
	// TTL is how long an out-of-band approval request (weir approve) and
	// an input_required state stay valid.
	TTL time.Duration
}

// Record configures the recordings weir replay and weir learn read.
type Record struct {
	// Enabled records every session's decisions (labels, shapes and keyed
	// hashes, never values).
	Enabled bool
	// RetentionDays is how long a session's records are kept after its
	// last one.
	RetentionDays int
}

// Scratch configures the scratch database (package scratch): the results
// of matching tools that hold a large JSON array of objects become tables,
// and the proxy adds the weir_query tool. The zero value is off; a zero
// bound means the scratch package's default.
type Scratch struct {
	// Tools are the tool patterns whose results are stored; none is off.
	Tools []Glob
	// MinRows, MaxPayloadBytes, MaxSessionBytes and MaxSessionCalls are
	// min_rows, max_payload_bytes, max_session_bytes and
	// max_session_calls.
	MinRows         int
	MaxPayloadBytes int64
	MaxSessionBytes int64
	MaxSessionCalls int
}

// Stores reports whether results of tool on server are stored as tables.
func (s *Scratch) Stores(server, tool string) bool {
	for _, g := range s.Tools {
		if g.Match(server, tool) {
			return true
		}
	}
	return false
}

// FlowRule is one allow_flows entry, "FROM -> TO".
type FlowRule struct {
	From, To Glob
	Text     string // the entry as written
	Line     int    // where it was written (in Source)
	Source   string // the file or preset the entry came from
}

// ToolEntry is one `tools:` entry: tools matching Match carry Labels.
type ToolEntry struct {
	Match  Glob
	Labels flow.Labels
	// Declassify, when not nil, lets results that validate against a
	// schema without free text enter the session without some labels.
	Declassify *Declassify
	Line       int    // where it was written (in Source)
	Source     string // the file or preset the entry came from
}

// ToolLabels returns the union of the labels of every `tools:` entry that
// matches tool on server, and the first matching entry (to explain a
// decision), or nil when none matches.
func (p *Policy) ToolLabels(server, tool string) (labels flow.Labels, entry *ToolEntry) {
	if p == nil {
		return 0, nil
	}
	for i := range p.Tools {
		e := &p.Tools[i]
		if e.Match.Match(server, tool) {
			labels |= e.Labels
			if entry == nil {
				entry = e
			}
		}
	}
	return labels, entry
}

// Listed reports whether some `tools:` entry matches tool on server. Under
// default_action: deny, a tool that is not listed is refused.
func (p *Policy) Listed(server, tool string) bool {
	if p == nil {
		return false
	}
	for i := range p.Tools {
		if p.Tools[i].Match.Match(server, tool) {
			return true
		}
	}
	return false
}

// FlowAllowed reports whether an allow_flows rule lets data from source
// reach sink. Both are written "server/tool" and split at the first "/"; a
// name without "/" is a tool on an unnamed server.
func (p *Policy) FlowAllowed(source, sink string) bool {
	if p == nil || len(p.Flow.AllowFlows) == 0 {
		return false
	}
	ss, st := splitQualified(source)
	ks, kt := splitQualified(sink)
	for i := range p.Flow.AllowFlows {
		r := &p.Flow.AllowFlows[i]
		if r.From.Match(ss, st) && r.To.Match(ks, kt) {
			return true
		}
	}
	return false
}

func splitQualified(s string) (server, tool string) {
	if server, tool, ok := strings.Cut(s, "/"); ok {
		return server, tool
	}
	return "", s
}

// Clone returns a copy of p that shares nothing mutable with it. (Compiled
// rules, predicates and config values are never changed once built, so
// they are shared.)
func (p *Policy) Clone() *Policy {
	c := *p
	c.Tools = slices.Clone(p.Tools)
	c.Flow.AllowFlows = slices.Clone(p.Flow.AllowFlows)
	c.Rules = slices.Clone(p.Rules)
	c.Config = maps.Clone(p.Config)
	c.Scratch.Tools = slices.Clone(p.Scratch.Tools)
	return &c
}

// WithMode returns a copy of p in mode m (weir run --monitor).
func (p *Policy) WithMode(m Mode) *Policy {
	c := p.Clone()
	c.Mode = m
	return c
}

// BindConfig compiles p.Config into the value predicates read as `config`
// and binds every rule's predicate to it. A loader calls it once, after the
// last change to Config or Rules: predicates of a preset a file layers on
// then read the file's config.
func (p *Policy) BindConfig() {
	if p.Config == nil {
		p.Config = map[string]any{}
	}
	p.celConfig = celConfigValue(p.Config)
	for i := range p.Rules {
		if w := p.Rules[i].When; w != nil {
			bound := *w
			bound.config = p.celConfig
			p.Rules[i].When = &bound
		}
	}
}
