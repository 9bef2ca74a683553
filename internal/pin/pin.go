package pin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/store"
)

// Store is where pins are kept.
type Store interface {
	Pins(ctx context.Context, identity string) (map[string]store.Pin, error)
	PutPin(ctx context.Context, p store.Pin) error
}

var _ Store = (*store.SQLite)(nil)

// Identity names a server for pinning: its name and its command line (for
// stdio) or URL, hashed, so that two different servers under one name, or
// one name pointed at a new command, do not share pins.
func Identity(name string, command []string, url string) string {
	h := sha256.New()
	fmt.Fprintf(h, "weir-server-identity-v1\n%s\n%s\n", name, url)
	for _, a := range command {
		fmt.Fprintf(h, "%d:%s\n", len(a), a)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Definition is a tool definition as it is pinned and shown in diffs.
type Definition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Instructions string          `json:"instructions,omitempty"`
}

// Encode returns a definition's canonical encoding and its hash (hex).
func Encode(t detect.Tool, instructions string) (enc []byte, hash string) {
	d := Definition{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: canonical(t.InputSchema), OutputSchema: canonical(t.OutputSchema),
		Annotations: canonical(t.Annotations), Instructions: instructions}
	enc, _ = json.Marshal(d) // fields are strings and canonical JSON: cannot fail
	tool := detect.DefinitionHash(t)
	sum := sha256.Sum256(append(append(tool[:], "\ninstructions\n"...), instructions...))
	return enc, hex.EncodeToString(sum[:])
}

func canonical(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	c, err := detect.CanonicalJSON(raw)
	if err != nil {
		b, _ := json.Marshal(map[string]string{"$invalid": string(raw)})
		return b
	}
	return c
}

// State is what Check decided for a tool.
type State uint8

const (
	// Unchanged: the tool matches its approved pin.
	Unchanged State = iota
	// Pinned: first sight, no high finding: trusted on first use.
	Pinned
	// Changed: the definition differs from the approved one; withheld.
	Changed
	// Quarantined: a high-severity finding on a definition not approved;
	// withheld.
	Quarantined
)

var stateNames = [...]string{Unchanged: "unchanged", Pinned: "new", Changed: "changed", Quarantined: "quarantined"}

func (s State) String() string { return stateNames[s] }

// Withheld reports whether the tool must not reach the model.
func (s State) Withheld() bool { return s >= Changed }

// Result is Check's answer for one tool.
type Result struct {
	State    State
	Hash     string
	Findings []detect.Finding // of the current definition
	// Why is one sentence for the person and the model when withheld.
	Why string
}

// Check compares a server's tools with their pins, pins what is new, and
// records what must wait for approval. findings are the detectors' findings
// per tool name. Tools are checked independently; a store error fails the
// whole check (the caller withholds everything: fail closed).
func Check(ctx context.Context, st Store, identity, server string, tools []detect.Tool, instructions string, findings map[string][]detect.Finding, now int64) (map[string]Result, error) {
	pins, err := st.Pins(ctx, identity)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Result, len(tools))
	for _, t := range tools {
		enc, hash := Encode(t, instructions)
		fs := findings[t.Name]
		r := Result{Hash: hash, Findings: fs}
		p, seen := pins[t.Name]
		if !seen {
			p = store.Pin{Identity: identity, Tool: t.Name, Server: server, FirstSeen: now}
		}
		p.Updated = now
		switch {
		case p.Hash == hash:
			r.State = Unchanged
			if p.PendingHash == "" {
				out[t.Name] = r
				continue
			}
			// The server went back to the approved definition: drop what
			// was waiting.
			p.PendingHash, p.PendingDef, p.PendingWhy = "", nil, ""
		case p.Hash != "":
			r.State = Changed
			r.Why = fmt.Sprintf("the definition of %s/%s changed since it was approved", server, t.Name)
			if ids := highDetectors(fs); len(ids) > 0 {
				r.Why += fmt.Sprintf(", and the new one is flagged (%s)", strings.Join(ids, ", "))
			}
			p.PendingHash, p.PendingDef, p.PendingWhy = hash, enc, "changed"
		default:
			if ids := highDetectors(fs); len(ids) > 0 {
				r.State = Quarantined
				r.Why = fmt.Sprintf("the definition of %s/%s is flagged as tool poisoning (%s)", server, t.Name, strings.Join(ids, ", "))
				p.PendingHash, p.PendingDef, p.PendingWhy = hash, enc, "quarantined: "+strings.Join(ids, ", ")
			} else {
				r.State = Pinned
				p.Hash, p.Definition = hash, enc
				p.PendingHash, p.PendingDef, p.PendingWhy = "", nil, ""
			}
		}
		if seen && p.PendingHash == pins[t.Name].PendingHash && r.State.Withheld() {
			// Already waiting for approval: nothing to write.
			out[t.Name] = r
			continue
		}
		if err := st.PutPin(ctx, p); err != nil {
			return nil, err
		}
		out[t.Name] = r
	}
	return out, nil
}

func highDetectors(fs []detect.Finding) []string {
	var ids []string
	for _, f := range fs {
		if f.Severity >= detect.High && !slices.Contains(ids, f.Detector) {
			ids = append(ids, f.Detector)
		}
	}
	return ids
}
