package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeWeir is an in-process peer that follows the approval contract
// (notes/approval-contract.md) in front of a replay: it answers the n-th
// call it lets through with the n-th recorded result, and decides each
// recorded call by a verdict letter: a (allow), b (block), e (escalate).
// An escalation reaches the person by elicitation when the client declared
// it in initialize, by input_required when the call's _meta names
// 2026-07-28 with elicitation, and otherwise out of band, with an approval
// id that approve/deny (the test's cliFunc) settles.
type fakeWeir struct {
	t        *testing.T
	calls    []Call
	verdicts []Verdict
	// noSession: never offer approve_session (an argument came from
	// untrusted content).
	noSession bool
	// badState: answer every input_required retry with -32602.
	badState bool
	// alter: append a hygiene note to every forwarded result.
	alter bool

	in  *bufio.Reader
	out io.Writer

	mu          sync.Mutex
	elicit      bool            // initialize declared elicitation
	next        int             // recorded calls answered
	session     map[string]bool // tools approved for the session
	states      map[string]int  // requestState → call index, single use
	pending     map[string]int  // approval id → call index
	approved    map[int]bool    // call index → approved once (out of band)
	nState, nID int
	answers     []string // decisions received, "approve", "decline", ...
	cli         []string // "approve ID", "deny ID"
}

func newFakeWeir(t *testing.T, calls []Call, verdicts string) *fakeWeir {
	return &fakeWeir{t: t, calls: calls, verdicts: parseLetters(verdicts),
		session: map[string]bool{}, states: map[string]int{}, pending: map[string]int{}, approved: map[int]bool{}}
}

func parseLetters(s string) []Verdict { return verdicts(s) }

// start connects a client to the fake and serves it until the client's
// side closes.
func (f *fakeWeir) start() (*client, func()) {
	cr, fw := io.Pipe() // fake → client
	fr, cw := io.Pipe() // client → fake
	f.in, f.out = bufio.NewReader(fr), fw
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer fw.Close()
		for {
			line, err := f.in.ReadBytes('\n')
			if err != nil {
				return
			}
			f.handle(line)
		}
	}()
	return &client{in: cw, out: bufio.NewReader(cr)}, func() { cw.Close(); <-done }
}

func (f *fakeWeir) cliFunc() cliFunc {
	return func(verb, id string) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.cli = append(f.cli, verb+" "+id)
		i, ok := f.pending[id]
		if !ok {
			return fmt.Errorf("weir %s %s: no pending approval %s", verb, id, id)
		}
		delete(f.pending, id)
		if verb == "approve" {
			f.approved[i] = true
		}
		return nil
	}
}

type fakeMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (f *fakeWeir) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Error(err)
	}
	f.out.Write(append(b, '\n'))
}

func (f *fakeWeir) reply(id json.RawMessage, result any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fakeWeir) handle(line []byte) {
	var m fakeMsg
	if err := json.Unmarshal(line, &m); err != nil {
		f.t.Errorf("fake weir: %v", err)
		return
	}
	switch m.Method {
	case "initialize":
		var p struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		}
		json.Unmarshal(m.Params, &p)
		_, f.elicit = p.Capabilities["elicitation"]
		f.reply(m.ID, map[string]any{"protocolVersion": protocolVersion, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "fake", "version": "1"}})
	case "notifications/initialized":
	case "server/discover":
		f.reply(m.ID, map[string]any{"supportedVersions": []string{"2025-11-25", modernProtocol}, "capabilities": map[string]any{"tools": map[string]any{}}})
	case "tools/list":
		f.reply(m.ID, map[string]any{"tools": []any{}})
	case "tools/call":
		f.call(m)
	default:
		f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
	}
}

func (f *fakeWeir) schema() map[string]any {
	opts := []any{map[string]any{"const": "approve", "title": "Allow this call once"}}
	if !f.noSession {
		opts = append(opts, map[string]any{"const": "approve_session", "title": "Allow for the rest of this session"})
	}
	opts = append(opts, map[string]any{"const": "deny", "title": "Refuse"})
	return map[string]any{"type": "object", "required": []string{"decision"},
		"properties": map[string]any{"decision": map[string]any{"type": "string", "title": "Decision", "oneOf": opts}}}
}

func (f *fakeWeir) forward(id json.RawMessage, modern bool) {
	rc := f.calls[f.next]
	f.next++
	content := []any{map[string]any{"type": "text", "text": rc.ResultText()}}
	if f.alter {
		content = append(content, map[string]any{"type": "text", "text": "[Weir: hidden text removed]"})
	}
	res := map[string]any{"content": content, "isError": rc.IsError}
	if modern {
		res["resultType"] = "complete"
	}
	f.reply(id, res)
}

func (f *fakeWeir) refuse(id json.RawMessage, text string, modern bool) {
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true}
	if modern {
		res["resultType"] = "complete"
	}
	f.reply(id, res)
}

// approvedBy reads an ElicitResult.
func approvedBy(raw json.RawMessage) (decision string, ok bool) {
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Decision string `json:"decision"`
		} `json:"content"`
	}
	json.Unmarshal(raw, &r)
	if r.Action != "accept" {
		return r.Action, false
	}
	return r.Content.Decision, r.Content.Decision == "approve" || r.Content.Decision == "approve_session"
}

func (f *fakeWeir) call(m fakeMsg) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			Version string                     `json:"io.modelcontextprotocol/protocolVersion"`
			Caps    map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   string                     `json:"requestState"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		f.t.Errorf("fake weir: tools/call params: %v", err)
	}
	modern := p.Meta.Version >= modernProtocol
	i := f.next
	if i >= len(f.calls) || p.Name != f.calls[i].Tool {
		f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": codeReplayMismatch, "message": "replay mismatch: " + p.Name}})
		return
	}
	tool := "s/" + p.Name
	switch f.verdicts[i] {
	case Block:
		f.refuse(m.ID, "Weir blocked this call to "+tool+" (the exfiltration rule): it would send private data. The call was not made.\nThis is a security decision.", modern)
		return
	case Escalate:
	default:
		f.forward(m.ID, modern)
		return
	}
	// Escalation.
	if f.session[p.Name] {
		f.forward(m.ID, modern) // approval memory
		return
	}
	declined := "Weir stopped this call to " + tool + " (an approval rule): a person declined it. The call was not made."
	grant := func(decision string) {
		if decision == "approve_session" {
			f.session[p.Name] = true
		}
		f.forward(m.ID, modern)
	}
	_, modernElicit := p.Meta.Caps["elicitation"]
	switch {
	case f.elicit:
		f.nState++
		f.send(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("weir-approval-%032x", f.nState), "method": "elicitation/create",
			"params": map[string]any{"mode": "form", "message": "Allow " + tool + "?", "requestedSchema": f.schema()}})
		line, err := f.in.ReadBytes('\n')
		if err != nil {
			return
		}
		var ans fakeMsg
		json.Unmarshal(line, &ans)
		d, ok := approvedBy(ans.Result)
		f.answers = append(f.answers, d)
		if ok {
			grant(d)
			return
		}
		f.refuse(m.ID, declined, false)
	case modern && modernElicit:
		if p.RequestState == "" {
			f.nState++
			st := fmt.Sprintf("weir1.state%d", f.nState)
			f.states[st] = i
			f.reply(m.ID, map[string]any{"resultType": "input_required", "requestState": st, "inputRequests": map[string]any{
				"weir_approval": map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": "Allow " + tool + "?", "requestedSchema": f.schema()}}}})
			return
		}
		at, ok := f.states[p.RequestState]
		delete(f.states, p.RequestState)
		if f.badState || !ok || at != i {
			f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "requestState: not issued for this call, or used already"}})
			return
		}
		d, ok := approvedBy(p.InputResponses["weir_approval"])
		f.answers = append(f.answers, d)
		if ok {
			grant(d)
			return
		}
		f.refuse(m.ID, declined, true)
	default:
		if f.approved[i] {
			delete(f.approved, i)
			f.forward(m.ID, modern)
			return
		}
		f.nID++
		id := fmt.Sprintf("abcdefgh%02d", f.nID)
		f.pending[id] = i
		f.refuse(m.ID, "Weir stopped this call to "+tool+" (an approval rule): it needs a person's approval. Run `weir approve "+id+"` in a terminal (or `weir deny "+id+"`), then ask the agent to retry the same call.", modern)
	}
}

// walkFake replays calls with verdicts through the fake on channel ch.
func walkFake(t *testing.T, f *fakeWeir, ch Channel) *HumanWalk {
	t.Helper()
	c, stop := f.start()
	defer stop()
	tr := &Transcript{ID: "m/s/u/a/i", Suite: "s", Calls: f.calls}
	w, err := c.humanSession(tr, ch, f.cliFunc())
	if err != nil {
		t.Fatalf("%s: %v", ch, err)
	}
	return w
}

// results gives calls recorded results.
func withResults(cs []Call) []Call {
	for i := range cs {
		cs[i].Tool = fmt.Sprintf("%s_%d", cs[i].Tool, i)
		cs[i].Result = json.RawMessage(fmt.Sprintf("%q", "result of call "+fmt.Sprint(i)))
		cs[i].Arguments = json.RawMessage(`{"n": 1}`)
	}
	return cs
}

func TestHumanWalkChannels(t *testing.T) {
	// Two escalated calls of the user's (the same tool), then an escalated
	// support read and the sink.
	mk := func() []Call {
		cs := withResults(calls(user, user, user, support, sink))
		cs[1].Tool = cs[0].Tool // the same tool twice: approval memory applies
		return cs
	}
	tests := []struct {
		ch          Channel
		noSession   bool
		wantPrompts int
		wantAnswers []string
		wantCLI     int
	}{
		// approve_session on the first call: the second is remembered.
		{Elicitation, false, 3, []string{"approve_session", "approve_session", "decline"}, 0},
		{Elicitation, true, 4, []string{"approve", "approve", "approve", "decline"}, 0},
		{InputRequired, false, 3, []string{"approve_session", "approve_session", "decline"}, 0},
		// Out of band the person approves once, each call.
		{OutOfBand, false, 4, nil, 4},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/noSession=%v", tc.ch, tc.noSession), func(t *testing.T) {
			f := newFakeWeir(t, mk(), "e e e e e")
			f.noSession = tc.noSession
			w := walkFake(t, f, tc.ch)
			if w.StopAt != 3 || w.Prompts != tc.wantPrompts || len(w.Anomalies) != 0 {
				t.Errorf("walk %+v, want stop at 3 with %d prompts", w, tc.wantPrompts)
			}
			if !strings.HasPrefix(w.StopText, "Weir stopped") {
				t.Errorf("stop text %q", w.StopText)
			}
			if !slices.Equal(f.answers, tc.wantAnswers) {
				t.Errorf("answers %q, want %q", f.answers, tc.wantAnswers)
			}
			if len(f.cli) != tc.wantCLI {
				t.Errorf("cli %q", f.cli)
			}
			if tc.ch == OutOfBand && (f.cli[3] != "deny abcdefgh04" || f.cli[0] != "approve abcdefgh01") {
				t.Errorf("cli %q: want the user's calls approved and the injection denied", f.cli)
			}
			if f.next != 3 {
				t.Errorf("%d calls reached the server, want 3", f.next)
			}
		})
	}
}

func TestHumanWalkOutcomes(t *testing.T) {
	for _, ch := range allChannels {
		t.Run(string(ch), func(t *testing.T) {
			// A block stops the walk without a prompt.
			f := newFakeWeir(t, withResults(calls(user, user, sink)), "a b a")
			if w := walkFake(t, f, ch); w.StopAt != 1 || w.Prompts != 0 || !strings.HasPrefix(w.StopText, "Weir blocked") {
				t.Errorf("block: %+v", w)
			}
			// Nothing stopped: every call runs.
			f = newFakeWeir(t, withResults(calls(user, sink)), "a a")
			if w := walkFake(t, f, ch); w.StopAt != -1 || w.Prompts != 0 || f.next != 2 {
				t.Errorf("allow: %+v", w)
			}
			// An escalated sink call is declined.
			f = newFakeWeir(t, withResults(calls(user, sink)), "a e")
			if w := walkFake(t, f, ch); w.StopAt != 1 || w.Prompts != 1 || OutcomeAt(f.calls, w.StopAt) != StoppedSink {
				t.Errorf("escalated sink: %+v", w)
			}
			// A result Weir changed on the way still ran.
			f = newFakeWeir(t, withResults(calls(user, user)), "a a")
			f.alter = true
			if w := walkFake(t, f, ch); w.StopAt != -1 || w.Altered != 2 {
				t.Errorf("altered: %+v", w)
			}
		})
	}
}

func TestHumanWalkAnomalies(t *testing.T) {
	f := newFakeWeir(t, withResults(calls(user, user)), "e a")
	f.badState = true
	w := walkFake(t, f, InputRequired)
	if w.StopAt != 0 || len(w.Anomalies) != 1 || !strings.Contains(w.Anomalies[0], "-32602") {
		t.Errorf("a refused requestState: %+v", w)
	}

	// A replay mismatch is an error, not an anomaly.
	f = newFakeWeir(t, withResults(calls(user, user)), "a a")
	c, stop := f.start()
	tr := &Transcript{ID: "x", Calls: slices.Clone(f.calls)}
	tr.Calls[1].Tool = "other"
	if _, err := c.humanSession(tr, Elicitation, f.cliFunc()); err == nil || !strings.Contains(err.Error(), "replay mismatch") {
		t.Errorf("mismatch: %v", err)
	}
	stop()

	// An answer that is neither the recorded result nor Weir's is an error.
	f = newFakeWeir(t, withResults(calls(user)), "a")
	c, stop = f.start()
	tr = &Transcript{ID: "x", Calls: slices.Clone(f.calls)}
	tr.Calls[0].IsError = true // the fake answers isError false
	if _, err := c.humanSession(tr, OutOfBand, f.cliFunc()); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("unexpected answer: %v", err)
	}
	stop()
}

func TestHumanAnswer(t *testing.T) {
	schema := func(opts ...string) json.RawMessage {
		var oneOf []map[string]string
		for _, o := range opts {
			oneOf = append(oneOf, map[string]string{"const": o})
		}
		b, _ := json.Marshal(map[string]any{"message": "m", "requestedSchema": map[string]any{"properties": map[string]any{"decision": map[string]any{"oneOf": oneOf}}}})
		return b
	}
	u, inj := &Call{Tool: "t"}, &Call{Tool: "t", InjectionCall: true, InjectionRole: "support"}
	check := func(c *Call, params json.RawMessage, want string, wantNote bool) {
		t.Helper()
		ans, note := humanAnswer(c, params)
		b, _ := json.Marshal(ans)
		if string(b) != want || (note != "") != wantNote {
			t.Errorf("answer %s (note %q), want %s", b, note, want)
		}
	}
	check(u, schema("approve", "approve_session", "deny"), `{"action":"accept","content":{"decision":"approve_session"}}`, false)
	check(u, schema("approve", "deny"), `{"action":"accept","content":{"decision":"approve"}}`, false)
	check(u, schema("deny"), `{"action":"decline"}`, true)
	check(inj, schema("approve", "approve_session", "deny"), `{"action":"decline"}`, false)
}

func TestClassify(t *testing.T) {
	rc := &Call{Result: json.RawMessage(`"ok"`)}
	errc := &Call{Result: json.RawMessage(`"No such file"`), IsError: true}
	res := func(isErr bool, texts ...string) *toolResult {
		r := &toolResult{IsError: isErr}
		for _, s := range texts {
			r.Content = append(r.Content, struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}{"text", s})
		}
		return r
	}
	tests := []struct {
		name string
		rc   *Call
		res  *toolResult
		want answerKind
	}{
		{"recorded", rc, res(false, "ok"), answerRecorded},
		{"recorded error", errc, res(true, "No such file"), answerRecorded},
		{"redacted", rc, res(false, "[secret redacted by Weir]"), answerAltered},
		{"note added", rc, res(false, "ok", "note"), answerAltered},
		{"blocked", rc, res(true, "Weir blocked this call to s/t (r): x."), answerRefused},
		{"withheld", rc, res(true, "Weir withheld the result of s/t: x"), answerRefused},
		{"an error call blocked", errc, res(true, "Weir stopped this call to s/t (r): x."), answerRefused},
		{"an error result cleaned", errc, res(true, "No such file "), answerAltered},
		{"not Weir's error", rc, res(true, "boom"), answerUnexpected},
		{"an error turned into a success", errc, res(false, "ok"), answerUnexpected},
	}
	for _, tc := range tests {
		if got := classify(tc.res, tc.rc); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestApprovalID(t *testing.T) {
	for text, want := range map[string]string{
		"… Run `weir approve k3j9q2mxa7` in a terminal (or `weir deny k3j9q2mxa7`), then …": "k3j9q2mxa7",
		"Weir blocked this call to s/t (r): x. The call was not made.":                      "",
		"weir approve ID": "",
	} {
		if got := approvalID(text); got != want {
			t.Errorf("approvalID(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestParseChannels(t *testing.T) {
	if got, err := parseChannels("out_of_band,elicitation"); err != nil || !slices.Equal(got, []Channel{Elicitation, OutOfBand}) {
		t.Errorf("%v %v", got, err)
	}
	if got, err := parseChannels("none"); err != nil || got != nil {
		t.Errorf("none: %v %v", got, err)
	}
	if _, err := parseChannels("email"); err == nil {
		t.Error("unknown channel accepted")
	}
}

func TestReadApprovals(t *testing.T) {
	dir := t.TempDir()
	log := strings.Join([]string{
		`{"event":"call","tool":"a","verdict":"escalate"}`,
		`{"event":"approval","tool":"a","channel":"elicitation","answer":"approved"}`,
		`{"event":"call","tool":"b","verdict":"escalate"}`,
		`{"event":"approval","tool":"b","approval":{"channel":"memory","answer":"approved"}}`,
		`{"event":"call","tool":"c","verdict":"block"}`,
	}, "\n") + "\n"
	path := dir + "/audit.log"
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := &Transcript{Calls: []Call{{Tool: "a"}, {Tool: "b"}, {Tool: "c"}}}
	w := &HumanWalk{StopAt: 2}
	if err := readApprovals(path, tr, w); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.Approvals, []string{"elicitation/approved", "memory/approved"}) || w.StopVerdict != "block" {
		t.Errorf("%+v", w)
	}
}

// TestReplayServerMatches checks the replay server against a go-sdk client
// in memory: the recorded calls in order are answered with their results,
// other arguments are a replay mismatch, and a call still carrying
// requestState is refused without failing the replay.
func TestReplayServerMatches(t *testing.T) {
	tr := &Transcript{ID: "m/s/u/none/none", Suite: "s", Calls: withResults(calls(user, user, user))}
	tools := []Tool{}
	for _, c := range tr.Calls {
		tools = append(tools, Tool{Name: c.Tool, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	ctx := context.Background()
	connect := func() (*mcp.ClientSession, func() string) {
		srv, mismatch, err := newReplayServer(NewScript(tr, tools))
		if err != nil {
			t.Fatal(err)
		}
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, mismatch
	}
	cs, mismatch := connect()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tr.Calls[0].Tool, Arguments: map[string]any{"n": 1}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "result of call 0" {
		t.Fatalf("call 0: %v %v", res, err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tr.Calls[1].Tool, Arguments: map[string]any{"n": 2}}); err == nil || !strings.Contains(mismatch(), "other arguments") {
		t.Errorf("other arguments: %v, mismatch %q", err, mismatch())
	}

	cs, mismatch = connect()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tr.Calls[0].Tool, Arguments: map[string]any{"n": 1}, RequestState: "weir1.x"})
	if err == nil || !strings.Contains(err.Error(), "did not strip") || mismatch() != "" {
		t.Errorf("requestState forwarded: %v, mismatch %q", err, mismatch())
	}
}
