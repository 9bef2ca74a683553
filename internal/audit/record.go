package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Record is one decision in the audit log: one line of JSON.
//
// It holds labels, shapes and keyed hashes, never argument values or result
// text. Time, Session, Server, Event and Verdict are the caller's; Seq, Prev
// and Hash are set by [Log.Append].
type Record struct {
	Seq      int64             `json:"seq"`               // 1-based position in the chain; set by Append
	Time     string            `json:"time"`              // RFC 3339 UTC with milliseconds (see FormatTime); set by the caller
	Session  string            `json:"session"`           // session key
	Server   string            `json:"server"`            // proxy --name
	Event    string            `json:"event"`             // "call" | "result" | "list" | "error" | other short words
	Method   string            `json:"method,omitempty"`  // JSON-RPC method
	Tool     string            `json:"tool,omitempty"`    // tool name
	Labels   []string          `json:"labels,omitempty"`  // labels of the event
	Verdict  string            `json:"verdict"`           // allow|warn|redact|escalate|block
	Enforced bool              `json:"enforced"`          // false in monitor mode: decided, not applied
	Rule     string            `json:"rule,omitempty"`    // e.g. "flow.exfiltration"
	Reason   string            `json:"reason,omitempty"`  // product copy built only from tool names, labels, argument paths, encodings
	Sources  []string          `json:"sources,omitempty"` // e.g. ["notes/read_note"]
	Shape    json.RawMessage   `json:"shape,omitempty"`   // see the Shape function
	Hashes   map[string]string `json:"hashes,omitempty"`  // JSON path → keyed hash of that string value
	Prints   int               `json:"prints,omitempty"`  // number of fingerprints recorded/matched
	// An escalation put to a person (event "approval"): the request id,
	// the channel (elicitation, input_required, cli, memory, repeat), the
	// answer (approved, approved_session, declined, cancelled, timeout,
	// error, client_gone, pending, refused), who or what gave it (person,
	// timeout, client, session_approval, earlier_refusal, weir), how long
	// it took once answered, and how many prompts the session has put to a
	// person so far.
	Approval   string `json:"approval,omitempty"`
	Channel    string `json:"channel,omitempty"`
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answered_by,omitempty"`
	LatencyMS  *int64 `json:"latency_ms,omitempty"`
	Prompts    int    `json:"prompts,omitempty"`
	// Declassify, on a result of a tool with a declassify entry, says
	// whether it validated against the schema and which labels it entered
	// the session without ("declassified by schema amount: entered without
	// untrusted"), or where it failed ("not declassified by schema amount:
	// structuredContent: $.price fails type").
	Declassify string `json:"declassify,omitempty"`
	Prev       string `json:"prev"` // Hash of the previous record; 64 zeros for the first
	Hash       string `json:"hash"` // hex SHA-256 of this record's canonical encoding with Hash ""
}

// Genesis is the Prev of the first record in a chain.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// TimeLayout is the layout of Record.Time: RFC 3339 in UTC with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t as a Record.Time: UTC, RFC 3339, milliseconds.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// hashTail is how every canonical encoding with Hash "" ends: Hash is the
// last field of Record and is never omitted.
var hashTail = []byte(`,"hash":""}`)

// canonical returns the canonical encoding of r with Hash "" (whatever
// r.Hash holds), the line r is written as once its hash is known, and that
// hash. See the package documentation for the definition.
func canonical(r *Record) (unhashed, line []byte, sum string, err error) {
	c := *r
	c.Hash = ""
	unhashed, err = json.Marshal(&c)
	if err != nil {
		return nil, nil, "", fmt.Errorf("encode record: %w", err)
	}
	if !bytes.HasSuffix(unhashed, hashTail) {
		// Unreachable while Hash is the last field of Record.
		return nil, nil, "", fmt.Errorf("encode record: encoding does not end in %s", hashTail)
	}
	h := sha256.Sum256(unhashed)
	sum = hex.EncodeToString(h[:])
	line = make([]byte, 0, len(unhashed)+len(sum))
	line = append(line, unhashed[:len(unhashed)-2]...) // up to and including `"hash":"`
	line = append(line, sum...)
	line = append(line, '"', '}')
	return unhashed, line, sum, nil
}

// normalise makes r a fixed point of decoding and re-encoding, so that a
// verifier that decodes its line and encodes it again gets the same bytes.
// encoding/json writes invalid UTF-8 in a string as the escape \ufffd, which
// decodes to U+FFFD, which re-encodes as raw bytes; one round trip settles
// it. Encodings without that escape are already fixed points, so the round
// trip is skipped for them. It reports whether r changed.
func normalise(r *Record, unhashed []byte) (bool, error) {
	if !bytes.Contains(unhashed, []byte(`\ufffd`)) {
		return false, nil
	}
	var n Record
	if err := json.Unmarshal(unhashed, &n); err != nil {
		return false, fmt.Errorf("normalise record: %w", err)
	}
	*r = n
	return true, nil
}

// isHexHash reports whether s looks like a hex SHA-256.
func isHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Tenant is the tenant whose chain a record of session belongs to, where a
// state store keeps one chain per tenant: the principal a gateway's HTTP
// front scoped the session key with ("acme" for "acme/env:build-42"), or ""
// for a session of no principal (weir run, a gateway on loopback without
// tokens), whose keys start with a kind and a colon ("env:", "http:",
// "pid:") before any slash. Tenant names hold no colon or slash.
func Tenant(session string) string {
	i := strings.IndexByte(session, '/')
	if i <= 0 || strings.IndexByte(session[:i], ':') >= 0 {
		return ""
	}
	return session[:i]
}
