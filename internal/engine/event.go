package engine

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
)

// Inputs are what every decision reads besides its event: the compiled
// policy, the install's key for fingerprints, and the session as the state
// store last showed it. The caller gathers them (syncing the session
// first); the engine only reads them.
type Inputs struct {
	Policy  *policy.Policy
	Hasher  *fingerprint.Hasher
	Session *flow.Session
}

// An Event is something Weir acts on: [Call], [Result], [Scanned], [List]
// or [Instructions]. Each holds everything about the event that the
// decision reads, including what the caller gathered for it (resolved
// paths, rate-limit counts, pins, detector findings).
type Event interface{ event() }

func (Call) event()         {}
func (Result) event()       {}
func (Scanned) event()      {}
func (List) event()         {}
func (Instructions) event() {}

// Decision is the engine's answer to one event.
type Decision struct {
	// Verdict is the most severe verdict among the findings (Allow if none).
	Verdict flow.Verdict
	// Rule and Reason are those of the most severe finding. Reason is
	// built from tool names, labels, argument paths and encodings only,
	// never from argument values or result text: it goes to the audit log.
	Rule   Rule
	Reason string
	// Enforced reports that the policy is in enforce mode. The caller
	// applies an enforced decision: it answers a call whose verdict Stops
	// itself, and relays Rewrite instead of the original. In monitor mode
	// the decision is the same, Rewrite is nil and nothing is applied.
	Enforced bool
	// Findings lists every rule that applied, most severe first.
	Findings []Finding

	// Sources are the observations a call's decision rests on
	// ("server/tool"), sorted: the private sources the arguments matched
	// for exfiltration, else the sources of the legs held.
	Sources []string
	// Paths are the argument JSON paths where private data was found.
	Paths []string
	// Via lists the decodings that revealed it ("base64", "url → hex").
	Via []string
	// Matches counts the distinct private fingerprints and digests found.
	Matches int
	// Tainted are the argument paths of a sink call whose values were
	// chosen from untrusted content (a recipient copied from a web page),
	// whatever the policy does about it: an approval of such a call covers
	// that call only, never the session.
	Tainted []string

	// Rewrite, when not nil, is the JSON-RPC result to relay in place of
	// the server's: a cleaned tool result, a tool list without the tools
	// withheld, an initialize result without poisoned instructions.
	Rewrite json.RawMessage
	// Texts are the texts a model reads in a result, with their fields:
	// what the injection detectors scan before the [Scanned] event.
	Texts []FieldText
	// Tools are the verdicts on the tools of a [List], in list order.
	Tools []ToolVerdict
	// Digest, for a [Call] whose arguments the flow checks read, is their
	// digest: what a recording keeps so the decision can be made again.
	Digest *ArgDigest
	// Written, for a call to a tool that is not a sink whose arguments
	// carry private or untrusted data, is what it leaves on its server
	// (Tool is the server): the caller keeps it, across sessions, for
	// [Result].Written.
	Written *flow.Observation
	// Declassify, for a [Result] of a tool with a declassify entry, says
	// whether it validated and which labels it entered without.
	Declassify *Declassification

	// Delta is what the decision adds to the state the store keeps.
	Delta Delta
}

// Delta is the state a decision adds. The caller persists it before the
// decision is applied, so a result's labels are in the session before the
// client sees the result.
type Delta struct {
	// Observations are what results leave in the session (labels, keyed
	// fingerprints), in order.
	Observations []*flow.Observation
	// Pins are the tool-definition pins to write.
	Pins []pin.Pin
}

// A Finding is one rule that applies to an event.
type Finding struct {
	Rule    Rule
	Verdict flow.Verdict
	Reason  string
}

// Decide decides one event. It is pure: the same inputs and event give the
// same decision, it does no I/O and reads no clock (an event carries its
// own time), so decisions can be replayed and tested as properties.
func Decide(in Inputs, ev Event) Decision {
	var d Decision
	switch e := ev.(type) {
	case Call:
		d = decideCall(in, e)
	case Result:
		d = decideResult(in, e)
	case Scanned:
		d = decideScanned(in, e)
	case List:
		d = decideList(in, e)
	case Instructions:
		d = decideInstructions(in, e)
	}
	d.Enforced = in.Policy.Mode == policy.Enforce
	if !d.Enforced {
		d.Rewrite = nil
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
