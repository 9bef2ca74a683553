package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
)

// Result is a tool result to observe.
type Result struct {
	Server, Tool string
	Labels       flow.Labels
	// Raw is the JSON-RPC result object of the tools/call response.
	Raw json.RawMessage
	// At is when the result was read, in Unix milliseconds.
	At int64
}

// Observe turns a result into the observation the session keeps, or nil
// when the result adds nothing (its tool is neither private nor untrusted).
// Its text is fingerprinted and its secrets and identifiers digested; the
// text itself goes nowhere.
func Observe(h *fingerprint.Hasher, r Result) (*flow.Observation, error) {
	legs := r.Labels & flow.Legs
	if legs == 0 {
		return nil, nil
	}
	o := &flow.Observation{Tool: r.Server + "/" + r.Tool, Labels: r.Labels, At: r.At}
	// Untrusted results are fingerprinted too: a later argument copied from
	// one (a recipient, an account number, a paragraph) is then attributed
	// to it, which dataflow rules act on.
	text, err := ResultText(r.Raw)
	if err != nil {
		return nil, err
	}
	// Prints stay in emission order: sorting 150k of them per megabyte cost
	// more than computing them, and the mirror's index dedupes anyway.
	o.Prints = h.Prints(nil, text)
	fingerprint.Tokens(text, func(tok string) {
		o.Digests = append(o.Digests, h.Digest(tok))
	})
	o.Digests = fingerprint.SortUnique(o.Digests)
	fingerprint.Identifiers(text, func(kind fingerprint.IdentKind, canon string) {
		o.Idents = append(o.Idents, identDigest(h, kind, canon))
	})
	o.Idents = fingerprint.SortUnique(o.Idents)
	return o, nil
}

// binaryKeys hold base64 payloads (images, audio, blobs) or protocol
// vocabulary rather than text a model reads.
var binaryKeys = map[string]bool{"data": true, "blob": true, "type": true, "mimeType": true}

// ResultText returns every string a model could read in a result, one per
// line: text content, embedded resource text, structured content, error
// text. Binary payloads are left out.
func ResultText(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("result is not valid JSON: %w", err)
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			// Sorted keys: prints span string boundaries, so the order of
			// the strings must not depend on map iteration.
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if !binaryKeys[k] {
					walk(v[k])
				}
			}
		}
	}
	walk(v)
	return b.String(), nil
}

// BlockMessage is the text the client, and through it the model and the
// user, reads when Weir stops a call. It names the rule, the tool and the
// sources, and asks the model not to work around it. It is product copy:
// a change to it is a reviewed change (golden tests).
func BlockMessage(d Decision, tool string) string {
	var b strings.Builder
	if d.Verdict == flow.Escalate {
		fmt.Fprintf(&b, "Weir stopped this call to %s (rule %s): %s. ", tool, d.Rule, d.Reason)
		b.WriteString("It needs a person's approval, and this session has no way to ask for one, so the call was not made.\n")
	} else {
		fmt.Fprintf(&b, "Weir blocked this call to %s (rule %s): %s. The call was not made.\n", tool, d.Rule, d.Reason)
	}
	b.WriteString("This is a security decision, not a transient error. Do not retry the call, split it, encode the data differently or send it through another tool. ")
	b.WriteString("Tell the user what you were trying to do and that Weir stopped it; if the flow is intended, the user can allow it in the Weir policy.")
	return b.String()
}
