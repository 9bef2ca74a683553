package engine

import (
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/flow"
)

// The texts below are what the client, and through it the model and the
// user, read when Weir stops something. They are product copy: a change to
// them is a reviewed change (golden tests in testdata/messages.golden).

const (
	doNotWorkAround = "This is a security decision, not a transient error. Do not retry the call, split it, encode the data differently or send it through another tool. "
	tellUser        = "Tell the user what you were trying to do and that Weir stopped it; if the flow is intended, the user can allow it in the Weir policy."
)

// BlockMessage is the isError text that answers a call Weir stopped. tool
// is "server/tool". It names the rule, the tool and the reason (never an
// argument value), and asks the model not to work around it.
func BlockMessage(d Decision, tool string) string {
	var b strings.Builder
	switch {
	case d.Rule == RuleWithheld:
		server, name, _ := strings.Cut(tool, "/")
		fmt.Fprintf(&b, "Weir withheld the tool %s: %s. It will not run until a person reviews it "+
			"(`weir pins diff %s` shows what changed; `weir pins approve %s:%s` approves it). "+
			"Do not retry; tell the user that this tool needs their review.", tool, d.Reason, server, server, name)
	case d.Rule == RuleInternal:
		fmt.Fprintf(&b, "Weir blocked this call to %s: %s. The call was not made.\n", tool, d.Reason)
		b.WriteString("This is a problem with Weir's own state, not with the tool or the request, and Weir does not let a call it cannot judge through. Tell the user; retrying later may work once Weir's state store is back.")
	case d.Verdict == flow.Escalate:
		b.WriteString(EscalationHead(d, tool) + " ")
		b.WriteString("It needs a person's approval, and this session has no way to ask for one, so the call was not made.\n")
		b.WriteString(doNotWorkAround + tellUser)
	default:
		fmt.Fprintf(&b, "Weir blocked this call to %s (%s): %s. The call was not made.\n", tool, d.Rule.Phrase(), d.Reason)
		b.WriteString(doNotWorkAround + tellUser)
	}
	return b.String()
}

// EscalationHead is the first sentence of every answer to an escalated
// call that did not run: the tool, the rule and the reason.
func EscalationHead(d Decision, tool string) string {
	return fmt.Sprintf("Weir stopped this call to %s (%s): %s.", tool, d.Rule.Phrase(), d.Reason)
}

// ResultWithheldMessage is the isError text that replaces a result whose
// labels Weir could not record: data it cannot track does not reach the
// model (fail closed).
func ResultWithheldMessage(tool string, err error) string {
	return fmt.Sprintf("Weir withheld the result of %s: it could not record where this data came from (%v), and data it cannot track does not reach the model. "+
		"This is a problem with Weir's state store, not with the tool; tell the user.", tool, err)
}
