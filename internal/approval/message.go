package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// Ask is what a question to a person is built from: the engine's decision
// on the call, and the facts its arguments name.
type Ask struct {
	Tool    string // "server/tool"
	Rule    string // as a message names it: "rule flow.exfiltration"
	Reason  string
	Sources []string
	Paths   []string
	Facts   []Fact
	// SessionScope offers "allow for the rest of this session".
	SessionScope bool
}

// The texts below are product copy, golden-tested in testdata/messages.golden.

// Message is the text of the question, short enough to decide from in five
// seconds: the tool, what it would do, why Weir asks, where the data came
// from and where it is in the arguments.
func Message(a Ask) string {
	var b strings.Builder
	// Tool, reason, sources and paths are built from names a server or
	// the agent chose: shown with invisible characters escaped, as values.
	esc := func(s string) string { return Shorten(s, 1<<20) }
	escAll := func(xs []string) string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = esc(x)
		}
		return strings.Join(out, ", ")
	}
	fmt.Fprintf(&b, "Weir: allow %s?\n", esc(a.Tool))
	if len(a.Facts) == 0 {
		b.WriteString("Its arguments name no recipient, host, path or amount.\n")
	}
	for _, f := range a.Facts {
		fmt.Fprintf(&b, "%s: %s (%s)\n", f.Kind, f.Value, f.Path)
	}
	if n := len(a.Facts); n > 0 && len(a.Facts[n-1].more) > 0 {
		fmt.Fprintf(&b, "and %d more destinations not shown\n", len(a.Facts[n-1].more))
	}
	fmt.Fprintf(&b, "Why Weir asks (%s): %s.\n", a.Rule, esc(a.Reason))
	if len(a.Sources) > 0 {
		fmt.Fprintf(&b, "Data from: %s", escAll(a.Sources))
		if len(a.Paths) > 0 {
			fmt.Fprintf(&b, "; in the arguments %s", escAll(a.Paths))
		}
		b.WriteString(".\n")
	}
	b.WriteString("Allow it only if you asked the agent to do this.")
	return b.String()
}

// Decision values of the form's one field.
const (
	Field                = "decision"
	ChoiceApprove        = "approve"
	ChoiceApproveSession = "approve_session"
	ChoiceDeny           = "deny"
)

// Schema is the form of the question: one required field, a titled
// single choice. "Allow for this session" is offered only when the call
// may be remembered.
func Schema(a Ask) json.RawMessage {
	type choice struct {
		Const string `json:"const"`
		Title string `json:"title"`
	}
	choices := []choice{{ChoiceApprove, "Allow this call once"}}
	if a.SessionScope {
		choices = append(choices, choice{ChoiceApproveSession, sessionTitle(a)})
	}
	choices = append(choices, choice{ChoiceDeny, "Refuse"})
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			Field: map[string]any{"type": "string", "title": "Decision", "oneOf": choices},
		},
		"required": []string{Field},
	}
	b, _ := json.Marshal(s)
	return b
}

func sessionTitle(a Ask) string {
	var dests []string
	for _, f := range a.Facts {
		if f.dest != "" {
			dests = append(dests, f.Value)
		}
	}
	tool := Shorten(a.Tool, 1<<20)
	if len(dests) == 0 {
		return "Allow " + tool + " with these arguments for the rest of this session"
	}
	return "Allow " + tool + " to " + strings.Join(dests, ", ") + " for the rest of this session, whatever the other arguments"
}

// ElicitParams are the params of elicitation/create for the question;
// form mode is named from protocol 2025-11-25 on.
func ElicitParams(a Ask, namedMode bool) json.RawMessage {
	p := struct {
		Mode            string          `json:"mode,omitempty"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}{Message: Message(a), RequestedSchema: Schema(a)}
	if namedMode {
		p.Mode = "form"
	}
	b, _ := json.Marshal(p)
	return b
}

// ReadAnswer reads an elicitation result: only accept with an approving
// choice approves; a session choice counts only when it was offered.
// Anything else is a refusal (decline or cancel as the person said, an
// unreadable answer as Failed).
func ReadAnswer(result json.RawMessage, sessionScope bool) (Answer, error) {
	var action, choice string
	var content []byte
	if !jsonrpc.Valid(result) {
		return Failed, errors.New("the answer cannot be read: it is not valid JSON")
	}
	err := jsonrpc.Fields(result, []string{"action", "content"}, func(name string, v []byte) error {
		switch name {
		case "action":
			return json.Unmarshal(v, &action)
		case "content":
			content = v
		}
		return nil
	})
	if err != nil {
		return Failed, fmt.Errorf("the answer cannot be read: %w", err)
	}
	switch action {
	case "decline":
		return Declined, nil
	case "cancel":
		return Cancelled, nil
	case "accept":
	default:
		return Failed, fmt.Errorf("the answer's action is %q, not accept, decline or cancel", action)
	}
	if len(content) == 0 || content[0] != '{' {
		return Failed, errors.New("the answer accepts with no decision")
	}
	err = jsonrpc.Fields(content, []string{Field}, func(name string, v []byte) error {
		if name == Field {
			return json.Unmarshal(v, &choice)
		}
		return nil
	})
	if err != nil {
		return Failed, fmt.Errorf("the answer's decision cannot be read: %w", err)
	}
	switch {
	case choice == ChoiceApprove:
		return Approved, nil
	case choice == ChoiceApproveSession && sessionScope:
		return ApprovedSession, nil
	case choice == ChoiceDeny:
		return Declined, nil
	}
	return Failed, fmt.Errorf("the answer's decision %q is not one of the choices offered", choice)
}

const (
	doNotWorkAround = "This is a security decision, not a transient error. Do not retry the call, split it, encode the data differently or send it through another tool. "
	tellUserRefused = "Tell the user what you were trying to do and that it was not done."
)

// Outcome is how a question ended, for the text the client gets when the
// call does not run.
type Outcome struct {
	Answer  Answer
	Channel Channel
	ID      string        // the approval id (out of band)
	Timeout time.Duration // how long Weir waited (TimedOut)
	TTL     time.Duration // how long an out-of-band request stays open
	Age     time.Duration // how long ago a repeated refusal was given
	Err     error         // what the client answered (Failed)
}

// RefusalMessage is the isError text for an escalated call that did not
// run. head is the engine's first sentence: "Weir stopped this call to
// mail/send_email (rule flow.exfiltration): REASON."
func RefusalMessage(head string, o Outcome) string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(" ")
	switch {
	case o.Answer == Pending:
		fmt.Fprintf(&b, "It needs a person's approval, and this client cannot ask for one, so the call was not made. Approval id: %s.\n", o.ID)
		fmt.Fprintf(&b, "To let this exact call through once, the user runs `weir approve %s` in a terminal (or `weir deny %s` to refuse it); then ask the agent to retry the same call. The request expires in %s.\n", o.ID, o.ID, o.TTL)
		b.WriteString("Do not retry before the user says they approved it, and do not split the call, encode the data differently or send it through another tool. Tell the user what you were trying to do and give them the command.")
		return b.String()
	case o.Channel == Repeat:
		fmt.Fprintf(&b, "A person declined this same call %s ago, so Weir did not ask again and the call was not made.\n", o.Age.Round(time.Second))
	case o.Channel == CLI:
		fmt.Fprintf(&b, "A person refused it with `weir deny %s`, so the call was not made.\n", o.ID)
	case o.Answer == Declined:
		b.WriteString("A person was asked and declined it, so the call was not made.\n")
	case o.Answer == Cancelled:
		b.WriteString("A person was asked and dismissed the question, so the call was not made.\n")
	case o.Answer == TimedOut:
		fmt.Fprintf(&b, "A person was asked and did not answer within %s, so the call was not made.\n", o.Timeout)
	default:
		fmt.Fprintf(&b, "Weir asked for a person's approval and could not get an answer (%v), so the call was not made.\n", o.Err)
	}
	b.WriteString(doNotWorkAround + tellUserRefused)
	return b.String()
}
