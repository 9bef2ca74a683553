package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/weir-sec/weir/internal/detect"
)

// A Pin is what the state store remembers of one tool of one server: the
// definition the user approved (or that was trusted on first sight) and,
// when the server now shows something else, that definition awaiting
// approval. Definitions are the server's own tool metadata, not user data.
type Pin struct {
	// Identity is the server's identity ([Identity]), so two different
	// servers under one name do not share pins.
	Identity string
	Tool     string
	// Server is the server's name (weir run --name), for people.
	Server string
	// Hash and Definition are the approved definition ([Encode]); Hash is
	// "" when nothing was approved yet (a tool quarantined on first sight).
	Hash       string
	Definition []byte
	// PendingHash, PendingDef and PendingWhy hold a definition that is
	// withheld until approved: "changed", or "quarantined: …" with the
	// detectors that flagged it. PendingHash is "" when nothing waits.
	PendingHash string
	PendingDef  []byte
	PendingWhy  string
	// FirstSeen and Updated are Unix milliseconds.
	FirstSeen, Updated int64
}

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

// State is what the engine decided for a listed tool's definition.
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
	// Unchecked: the pin could not be checked (the store failed, or the
	// server lists two tools under one name); withheld.
	Unchecked
)

var stateNames = [...]string{Unchanged: "unchanged", Pinned: "new", Changed: "changed", Quarantined: "quarantined", Unchecked: "unchecked"}

func (s State) String() string { return stateNames[s] }

// Withheld reports whether the tool must not reach the model.
func (s State) Withheld() bool { return s >= Changed }
