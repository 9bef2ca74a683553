package engine

import "strings"

// Rule names what decided an event, as the audit log, block messages and
// `weir policy check` show it. It is one of the constants below, a policy
// rule ([PolicyRule]) or a detector ([DetectorRule]); the empty Rule means
// nothing applied.
type Rule string

// The rules the engine itself applies. doc.go lists which event each one
// decides.
const (
	// RuleExfiltration: a sink's arguments carry private data (or could:
	// arguments the decoder could not fully examine are judged as if they
	// did).
	RuleExfiltration Rule = "flow.exfiltration"
	// RuleTaintedArgs: a sink's argument was chosen from untrusted content.
	RuleTaintedArgs Rule = "flow.tainted_args"
	// RuleTrifecta: a sink call while the session holds private data and
	// untrusted input.
	RuleTrifecta Rule = "flow.trifecta"
	// RuleIntegrity: a sink call after untrusted input.
	RuleIntegrity Rule = "flow.integrity"
	// RuleDefaultAction: default_action deny and no tools: entry matches.
	RuleDefaultAction Rule = "default_action"
	// RuleBadArguments: a call's arguments cannot be read.
	RuleBadArguments Rule = "arguments"
	// RuleWithheld: a call to a tool withheld from the client (changed
	// since approval, or flagged as tool poisoning).
	RuleWithheld Rule = "pin.withheld"
	// RulePinChanged: a listed tool's definition changed since approval.
	RulePinChanged Rule = "pin.changed"
	// RulePinUnchecked: a listed tool's pin could not be checked.
	RulePinUnchecked Rule = "pin.unchecked"
	// RuleCommandChanged: the server's command line changed since its
	// tools were pinned (a notice; changed definitions are withheld).
	RuleCommandChanged Rule = "pin.command"
	// RuleRedact: secrets in a result were replaced (redact_secrets).
	RuleRedact Rule = "redact_secrets"
	// RuleHidden: a result hides text from people or carries data in an
	// image URL; a note says so.
	RuleHidden Rule = "hygiene.hidden"
	// RuleReadBack: a result carries text an agent wrote to its server
	// while holding private or untrusted data, and takes those labels.
	RuleReadBack Rule = "flow.read_back"
	// RuleProtocol: a message Weir cannot read unambiguously (a repeated
	// or case-variant member, a request without a usable id) is refused.
	RuleProtocol Rule = "protocol"
	// RuleInternal: Weir itself failed (the state store, a panic) while
	// deciding; the event fails closed.
	RuleInternal Rule = "internal"
)

const (
	policyRulePrefix = "rule "
	detectorPrefix   = "detect."
)

// PolicyRule is the Rule of the policy rule with the given id ("rule ssh-guard").
func PolicyRule(id string) Rule { return Rule(policyRulePrefix + id) }

// DetectorRule is the Rule of a tool-poisoning or injection detector
// ("detect.hidden-html").
func DetectorRule(id string) Rule { return Rule(detectorPrefix + id) }

// PolicyID returns the id of a policy rule, and whether r is one.
func (r Rule) PolicyID() (string, bool) { return strings.CutPrefix(string(r), policyRulePrefix) }

// Detector returns the detector id of a detector rule, and whether r is one.
func (r Rule) Detector() (string, bool) { return strings.CutPrefix(string(r), detectorPrefix) }

// Phrase is how a message names the rule: "rule flow.exfiltration",
// "policy rule ssh-guard", "detector hidden-html".
func (r Rule) Phrase() string {
	if id, ok := r.PolicyID(); ok {
		return "policy rule " + id
	}
	if id, ok := r.Detector(); ok {
		return "detector " + id
	}
	return "rule " + string(r)
}

func (r Rule) String() string { return string(r) }
