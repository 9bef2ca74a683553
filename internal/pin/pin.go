package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

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
	// Command is the server's command line when the pin was last written
	// ([CommandLine]): a pin of an older command says the command changed.
	Command string
}

// Identity names a server for pinning: the name the user gave it (weir run
// --name, the client's entry), hashed. The command line is not part of it:
// a server pointed at a new command (a version bump, a changed argument)
// keeps its pins, so definitions that changed with the command are shown
// and withheld like any rug pull, not trusted anew.
func Identity(name string) string {
	sum := sha256.Sum256([]byte("weir-server-identity-v2\n" + name))
	return hex.EncodeToString(sum[:])[:32]
}

// secretFlag matches command-line flags and KEY=VALUE names whose value is
// a credential: such values are masked in CommandLine.
var secretFlag = regexp.MustCompile(`(?i)(key|token|secret|passw|pwd|auth|credential|bearer|cookie|session)`)

// CommandLine renders a server's command (or URL) for people, as pins keep
// it to say "server command changed from … to …". Values that look like
// credentials are masked: the value after a --token style flag, the value
// of a TOKEN=... argument, and long opaque words.
func CommandLine(command []string, url string) string {
	if url != "" {
		if i := strings.IndexAny(url, "?#"); i >= 0 {
			url = url[:i] + "?…"
		}
		return url
	}
	out := make([]string, len(command))
	for i, a := range command {
		switch {
		case i > 0 && strings.HasPrefix(command[i-1], "-") && !strings.Contains(command[i-1], "=") && secretFlag.MatchString(command[i-1]):
			a = "***"
		case strings.Contains(a, "="):
			if k, _, _ := strings.Cut(a, "="); secretFlag.MatchString(k) {
				a = k + "=***"
			}
		case opaque(a):
			a = "***"
		}
		if strings.ContainsAny(a, " \t\"'") || a == "" {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// opaque reports a long word of letters and digits with no path or
// package shape: an API key passed as an argument.
func opaque(a string) bool {
	if len(a) < 24 || strings.ContainsAny(a, "/@.:") {
		return false
	}
	digits, letters := 0, 0
	for _, r := range a {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters++
		case r == '-' || r == '_':
		default:
			return false
		}
	}
	return digits > 0 && letters > 0
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

// Encoded is a definition's pin encoding and hash, as Encode returns them.
type Encoded struct {
	Enc  []byte
	Hash string
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

// Tool decodes a pinned definition back into the tool the detectors read
// (its server's instructions apart).
func Tool(server string, enc []byte) (detect.Tool, string, error) {
	var d Definition
	if err := json.Unmarshal(enc, &d); err != nil {
		return detect.Tool{}, "", err
	}
	return detect.Tool{Server: server, Name: d.Name, Title: d.Title, Description: d.Description,
		InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, Annotations: d.Annotations}, d.Instructions, nil
}
