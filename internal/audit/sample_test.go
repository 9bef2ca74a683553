package audit

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// sampleBase is when the sample log starts.
var sampleBase = time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)

// sampleRecords are the records the relay writes for three sessions over
// three hours, one of each kind a report and an export show:
//
//   - pid:4242 reads a private note and a web page (untrusted), then tries
//     to mail the note out twice: blocked as exfiltration, then as the
//     trifecta; its mail server listed a poisoned tool, and a tool whose
//     name is markup.
//   - pid:5151 reads a private file (one secret redacted), then a mail that
//     a policy rule escalates is approved by a person.
//   - pid:6161, in monitor mode, sends private data (blocked, not enforced),
//     then a call held for approval is declined from the CLI.
//
// Times are set when at is not nil (at(i) is record i's time), else left
// for Append to stamp.
func sampleRecords(at func(i int) time.Time) []*Record {
	ms := func(n int64) *int64 { return &n }
	recs := []*Record{
		{Session: "pid:4242", Server: "mail", Event: "list", Method: "tools/list", Verdict: "allow", Enforced: true, Reason: "3 tools: 0 private, 0 untrusted, 1 sink"},
		{Session: "pid:4242", Server: "mail", Event: "definition", Method: "tools/list", Tool: "helper", Verdict: "block", Enforced: true, Rule: "detect.hidden-instructions", Reason: "quarantined: the description of mail/helper hides instructions from people (<IMPORTANT> markup)"},
		{Session: "pid:4242", Server: "notes", Event: "call", Method: "tools/call", Tool: "read_note", Labels: []string{"private"}, Verdict: "allow", Enforced: true,
			Shape: json.RawMessage(`{"name":"string(7)"}`), Hashes: map[string]string{"$.name": "9f2c61b0a4d3e5f7"}},
		{Session: "pid:4242", Server: "notes", Event: "result", Method: "tools/call", Tool: "read_note", Labels: []string{"private"}, Verdict: "allow", Enforced: true, Prints: 14},
		{Session: "pid:4242", Server: "web", Event: "call", Method: "tools/call", Tool: "fetch", Labels: []string{"untrusted"}, Verdict: "allow", Enforced: true,
			Shape: json.RawMessage(`{"url":"string(31)"}`), Hashes: map[string]string{"$.url": "0c8e1f7a2b3d4c5e"}},
		{Session: "pid:4242", Server: "web", Event: "result", Method: "tools/call", Tool: "fetch", Labels: []string{"untrusted"}, Verdict: "allow", Enforced: true, Prints: 40},
		{Session: "pid:4242", Server: "mail", Event: "call", Method: "tools/call", Tool: "send_email", Labels: []string{"sink"}, Verdict: "block", Enforced: true,
			Rule: "flow.exfiltration", Reason: "the arguments of mail/send_email carry private data read from notes/read_note (found in $.body, hidden via base64)",
			Sources: []string{"notes/read_note"}, Shape: json.RawMessage(`{"body":"string(188)","to":"string(17)"}`), Hashes: map[string]string{"$.body": "5a1d9e2c7b3f4a60", "$.to": "e4b2c9d1f0a3b576"}, Prints: 3},
		{Session: "pid:4242", Server: "mail", Event: "call", Method: "tools/call", Tool: "send_email", Labels: []string{"sink"}, Verdict: "block", Enforced: true,
			Rule: "flow.trifecta", Reason: "mail/send_email is a sink, and this session holds private data (notes/read_note) and untrusted input (web/fetch)",
			Sources: []string{"notes/read_note", "web/fetch"}, Shape: json.RawMessage(`{"body":"string(12)","to":"string(17)"}`), Hashes: map[string]string{"$.body": "77aa01c2d3e4f5a6", "$.to": "e4b2c9d1f0a3b576"}},
		{Session: "pid:4242", Server: "mail", Event: "call", Method: "tools/call", Tool: `<img src=x onerror=alert(1)>`, Verdict: "allow", Enforced: true},

		{Session: "pid:5151", Server: "files", Event: "call", Method: "tools/call", Tool: "read_text_file", Labels: []string{"private"}, Verdict: "allow", Enforced: true,
			Shape: json.RawMessage(`{"path":"string(24)"}`), Hashes: map[string]string{"$.path": "1b2c3d4e5f607182"}},
		{Session: "pid:5151", Server: "files", Event: "result", Method: "tools/call", Tool: "read_text_file", Labels: []string{"private"}, Verdict: "redact", Enforced: true,
			Rule: "redact_secrets", Reason: "1 secret in the result of files/read_text_file replaced (an API key)", Prints: 9},
		{Session: "pid:5151", Server: "mail", Event: "call", Method: "tools/call", Tool: "send_email", Labels: []string{"sink"}, Verdict: "escalate", Enforced: true,
			Rule: "rule mail-review", Reason: "rule mail-review: mail/send_email asks a person first", Sources: []string{"files/read_text_file"},
			Shape: json.RawMessage(`{"body":"string(40)","to":"string(15)"}`), Hashes: map[string]string{"$.body": "99aa88bb77cc66dd", "$.to": "aa11bb22cc33dd44"}},
		{Session: "pid:5151", Server: "mail", Event: "approval", Method: "tools/call", Tool: "send_email", Verdict: "escalate", Enforced: true,
			Rule: "rule mail-review", Sources: []string{"files/read_text_file"}, Approval: "ap_7Q2x", Channel: "elicitation", Answer: "approved", AnsweredBy: "person", LatencyMS: ms(4200), Prompts: 1},
		{Session: "pid:5151", Server: "mail", Event: "call", Method: "tools/call", Tool: "send_email", Labels: []string{"sink"}, Verdict: "warn", Enforced: true,
			Rule: "rule after-hours", Reason: "rule after-hours: mail/send_email is called outside working hours"},

		{Session: "pid:6161", Server: "everything", Event: "call", Method: "tools/call", Tool: "echo", Labels: []string{"sink"}, Verdict: "block", Enforced: false,
			Rule: "flow.exfiltration", Reason: "the arguments of everything/echo carry private data read from files/read_text_file (found in $.message)",
			Sources: []string{"files/read_text_file"}, Shape: json.RawMessage(`{"message":"string(140)"}`), Hashes: map[string]string{"$.message": "0f1e2d3c4b5a6978"}},
		{Session: "pid:6161", Server: "everything", Event: "approval", Method: "tools/call", Tool: "echo", Verdict: "escalate", Enforced: true,
			Rule: "flow.exfiltration", Approval: "ap_9kLm", Channel: "cli", Answer: "declined", AnsweredBy: "person", LatencyMS: ms(61000)},
	}
	if at != nil {
		for i, r := range recs {
			r.Time = FormatTime(at(i))
		}
	}
	return recs
}

// sampleTime spreads the sample over three hours.
func sampleTime(i int) time.Time {
	return sampleBase.Add(time.Duration(i) * 11 * time.Minute).Add(time.Duration(i) * 1234 * time.Millisecond)
}

// writeSample writes the sample records to a new log and returns its path.
func writeSample(t *testing.T, at func(int) time.Time) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AppendAll(sampleRecords(at)); err != nil {
		t.Fatal(err)
	}
	return path
}
