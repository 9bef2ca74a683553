package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/recording"
	"github.com/weir-sec/weir/internal/store"
)

// clientPump reads the client's messages until its input ends.
func (r *Relay) clientPump(ctx context.Context) {
	for ctx.Err() == nil {
		line, err := r.client.Read(ctx)
		var over *jsonrpc.OversizeError
		switch {
		case errors.As(err, &over):
			r.log.Warn("client message over the size limit", "bytes", over.Size, "limit", over.Limit, "method", over.Method)
			if over.ID != nil {
				r.replyError(over.ID, jsonrpc.CodeMessageTooLarge,
					fmt.Sprintf("%v; Weir refused it (raise the limit with weir run --max-message-bytes)", over))
			}
		case err != nil:
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				r.log.Debug("client input ended", "err", err)
			}
			return
		default:
			r.fromClient(ctx, line)
		}
		r.traced("client")
	}
}

func (r *Relay) traced(side string) {
	if r.opts.trace != nil {
		r.opts.trace(side)
	}
}

// fromClient handles one client message: a request is decided (a
// tools/call) and forwarded under an id of Weir's own, or answered by
// Weir; anything else is forwarded as it is. A panic while handling it is
// recovered here and, unless the request already reached the server, the
// request is answered with an error: it never goes unanswered.
func (r *Relay) fromClient(ctx context.Context, line []byte) {
	var (
		rawID []byte // the request's id, once known
		done  bool   // the request was answered or forwarded
	)
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("Weir failed while handling a client message", "panic", v)
			if rawID != nil && !done {
				r.replyError(rawID, jsonrpc.CodeInternalError,
					fmt.Sprintf("Weir failed while handling this request (%v); it was not forwarded to %q", v, r.opts.Server))
			}
		}
	}()
	msg, lineID, err := jsonrpc.ParseRaw(line)
	if err != nil {
		var bad *jsonrpc.BadMessageError
		if errors.As(err, &bad) {
			r.log.Warn("malformed message from client", "reason", bad.Reason)
			// A request gets its answer; JSON-RPC says unreadable messages
			// are answered with a null id too.
			r.replyError(bad.ID, bad.Code, bad.Reason)
		}
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		// The client's answer to one of Weir's questions, or to a server
		// request: the server's ids pass through unchanged.
		if !r.takeAnswer(msg.(*jsonrpc.Response)) {
			r.toServer(ctx, line)
		}
		return
	}
	rawID = lineID
	if !req.ID.IsValid() {
		if rawID != nil {
			// "id": null. MCP forbids it, and it cannot be told from a
			// notification by every server: refuse it whatever it asks.
			done = true
			if req.Method == "tools/call" {
				r.refuseCall(ctx, req, true)
			}
			r.replyError(nil, jsonrpc.CodeInvalidRequest, "invalid request: the id is null; an MCP request's id is a string or an integer")
			return
		}
		switch req.Method {
		case "tools/call":
			// A call sent as a notification would run with no answer to
			// carry a refusal: Weir refuses and drops it.
			r.refuseCall(ctx, req, false)
			return
		case "notifications/cancelled":
			if r.cancelHeld(req.Params) {
				return // the server never saw the call
			}
			if line = r.mapCancel(line, req.Params); line == nil {
				return
			}
		}
		r.toServer(ctx, line)
		return
	}
	p := &pending{clientID: bytes.Clone(rawID), clientKey: clientKey(req.ID), method: req.Method}
	if req.Method == "initialize" {
		r.noteInitialize(req.Params)
	}
	if req.Method == "tools/call" {
		params, err := readCallParams(req.Params)
		if err != nil {
			// A call Weir cannot read unambiguously is not forwarded: the
			// server might read it differently (fail closed).
			done = true
			r.replyError(p.clientID, jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid tools/call params: %v", err))
			return
		}
		if params.Name != "" {
			p.tool, p.modern = params.Name, params.modern
			p.elicits, p.progress = params.elicits, params.progress
			if approval.IsWeirState(params.State) {
				out, rt, err := r.readRetry(ctx, line, req.Params, params)
				if err != nil {
					done = true
					r.refuseRetry(p, err)
					return
				}
				line, p.retry = out, rt
			}
			if r.answersQuery(params.Name) {
				// Weir's own tool: a read-only query of tables in the
				// proxy's memory, so there is nothing to forward or stop.
				done = true
				r.answerQuery(ctx, p, params.Arguments)
				return
			}
			p.labels = r.toolLabels(params.Name)
			if r.decideCall(ctx, p, params.Arguments, line) {
				done = true
				return
			}
		}
		// A call without a tool name is the server's to refuse.
	}
	done = true
	r.forward(ctx, line, lineID, p)
}

// forward sends a client request to the server under an id of Weir's own,
// and answers it with an error if the server cannot take it. lineID is the
// request's id as Parse found it in line, or nil: a slice of another line
// (line was rewritten since) is found again.
func (r *Relay) forward(ctx context.Context, line, lineID []byte, p *pending) {
	timeout := r.opts.RequestTimeout
	if p.method == "subscriptions/listen" {
		// A listen request is answered only when the subscription ends:
		// it is a stream, not a request that can be late.
		timeout = -1
	}
	id, err := r.ids.add(p, timeout, r.timedOut)
	if err != nil {
		r.replyError(p.clientID, jsonrpc.CodeServerUnavailable,
			fmt.Sprintf("the MCP server %q is no longer running (%v)", r.opts.Server, err))
		return
	}
	out := replaceID(line, lineID, strconv.AppendInt(nil, id, 10))
	if err := r.server.Write(ctx, out); err != nil {
		r.log.Debug("writing to server", "err", err)
		if p := r.ids.take(id); p != nil {
			r.replyError(p.clientID, jsonrpc.CodeServerUnavailable,
				fmt.Sprintf("the MCP server %q is not accepting input (%v)", r.opts.Server, err))
		}
	}
}

func (r *Relay) toServer(ctx context.Context, line []byte) {
	if err := r.server.Write(ctx, line); err != nil {
		r.log.Debug("writing to server", "err", err)
	}
}

// timedOut answers a request the server did not answer in time, and tells
// the server to stop working on it.
func (r *Relay) timedOut(id int64) {
	p := r.ids.take(id)
	if p == nil {
		return
	}
	r.log.Warn("request timed out", "method", p.method, "tool", p.tool, "after", r.opts.RequestTimeout)
	r.replyError(p.clientID, jsonrpc.CodeRequestTimeout,
		fmt.Sprintf("the MCP server %q did not answer %s within %s, so Weir stopped waiting (raise the limit with weir run --request-timeout)", r.opts.Server, p.method, r.opts.RequestTimeout))
	cancel := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"Weir: no answer within %s"}}`, id, r.opts.RequestTimeout)
	r.toServer(context.Background(), []byte(cancel))
}

// mapCancel rewrites a client's notifications/cancelled to name Weir's id
// of the request it cancels. It returns nil, and the notification is
// dropped, when no such request is waiting: the server never saw the
// client's id.
func (r *Relay) mapCancel(line []byte, params json.RawMessage) []byte {
	var reqID []byte
	if len(params) > 0 && params[0] == '{' {
		reqID = jsonrpc.Member(params, "requestId")
	}
	id, err := jsonrpc.ParseID(reqID)
	if reqID == nil || err != nil || !id.IsValid() {
		return nil
	}
	n, ok := r.ids.latest(clientKey(id))
	if !ok {
		return nil
	}
	np, ok := jsonrpc.ReplaceMember(params, "requestId", strconv.AppendInt(nil, n, 10))
	if !ok {
		return nil
	}
	out, _ := jsonrpc.ReplaceMember(line, "params", np)
	return out
}

// refuseCall decides and audits a tools/call that cannot be answered (no
// id, or a null one): it is never forwarded.
func (r *Relay) refuseCall(ctx context.Context, req *jsonrpc.Request, nullID bool) {
	params, _ := readCallParams(req.Params)
	c := engine.Call{Server: r.opts.Server, Tool: params.Name, Labels: r.toolLabels(params.Name), Args: params.Arguments, NoID: true}
	d := engine.Decide(engine.Inputs{Policy: r.policy.Load(), Hasher: r.opts.Hasher, Session: &flow.Session{}}, c)
	r.log.Warn("refused a tools/call without an id", "tool", c.Name(), "null_id", nullID)
	pol := r.policy.Load()
	at := r.now()
	r.recordWith(&audit.Record{Event: "call", Method: "tools/call", Tool: c.Tool, Labels: c.Labels.Labels.Names(),
		Verdict: flow.Block.String(), Enforced: true, Rule: string(engine.RuleProtocol), Reason: d.Reason}, params.Arguments,
		func() (store.Rec, *policy.Policy) {
			return recording.NewCall(r.opts.Hasher, recording.CallInputs{
				Session: r.opts.Session, Server: r.opts.Server, At: at, Policy: pol, Call: c, Decision: d,
			}), pol
		}, nil)
	r.flushAudit()
}

// decideCall decides a tools/call. It reports whether the relay answered
// the call itself (so it must not be forwarded).
func (r *Relay) decideCall(ctx context.Context, p *pending, args json.RawMessage, line []byte) (answered bool) {
	pol := r.callPolicy(p)
	c := engine.Call{Server: r.opts.Server, Tool: p.tool, Labels: p.labels, Args: args}
	if isSink(p.labels) {
		c.Earlier = r.sinks.earlier(p.tool)
	}
	r.withheldTool(ctx, &c)
	start := time.Now()
	d, gathered, watermark, err := r.decide(ctx, pol, c)
	if r.opts.Observe != nil {
		r.opts.Observe(time.Since(start))
	}
	if err != nil {
		// Fail closed: a call Weir cannot judge does not run.
		d = engine.Decision{Verdict: flow.Block, Rule: engine.RuleInternal, Reason: err.Error(), Enforced: pol.Mode == policy.Enforce}
	}
	rec := &audit.Record{
		Event: "call", Method: "tools/call", Tool: p.tool,
		Labels:  p.labels.Labels.Names(),
		Verdict: d.Verdict.String(), Enforced: d.Enforced,
		Rule: string(d.Rule), Reason: d.Reason, Sources: d.Sources, Prints: d.Matches,
	}
	at := r.now()
	var written *flow.Observation
	if d.Written != nil && (!d.Enforced || !d.Verdict.Stops()) {
		// Only what reaches the server is there to come back.
		written = d.Written
		written.At = at
	}
	r.recordWith(rec, args, func() (store.Rec, *policy.Policy) {
		return recording.NewCall(r.opts.Hasher, recording.CallInputs{
			Session: r.opts.Session, Server: r.opts.Server, At: at, Policy: pol,
			Call: gathered, Watermark: watermark, Decision: d, Home: r.opts.Home, Cwd: r.opts.Cwd,
		}), pol
	}, written)
	if d.Verdict != flow.Allow {
		r.log.Info("decision", "tool", c.Name(), "verdict", d.Verdict.String(), "rule", d.Rule, "enforced", d.Enforced)
	}
	if !d.Enforced || !d.Verdict.Stops() {
		if isSink(p.labels) {
			r.sinks.add(p.tool, args)
		}
		return false
	}
	if d.Verdict == flow.Escalate && r.opts.Approvals != nil {
		r.escalate(ctx, pol, p, c, d, line)
		return true
	}
	r.flushAudit() // the record is on disk before the client hears of the block
	r.replyResult(p, engine.BlockMessage(d, c.Name()))
	return true
}

// decide gathers a call's inputs and runs the engine. A panic in either is
// an error, not a crash.
//
// It returns the call as gathered (resolved paths, rate limits, pins) and
// the session watermark it was judged at: what a recording keeps.
func (r *Relay) decide(ctx context.Context, pol *policy.Policy, c engine.Call) (d engine.Decision, gathered engine.Call, watermark int64, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("deciding %s failed inside Weir (%v), so the call was blocked", c.Name(), v)
		}
	}()
	if readsLegs(pol, &c) {
		// Results already forwarded may still be being scanned; what the
		// scan finds belongs in the session this call is judged against.
		r.scans.Wait()
	}
	r.mirrorMu.Lock()
	defer r.mirrorMu.Unlock()
	if err := r.gather.Call(ctx, pol, &c, &r.mirror); err != nil {
		return d, c, r.mirror.Watermark, err
	}
	return engine.Decide(engine.Inputs{Policy: pol, Hasher: r.opts.Hasher, Session: &r.mirror}, c), c, r.mirror.Watermark, nil
}

// replyResult answers a tools/call with an isError tool result.
func (r *Relay) replyResult(p *pending, text string) {
	res := struct {
		Content    []textContent `json:"content"`
		IsError    bool          `json:"isError"`
		ResultType string        `json:"resultType,omitempty"`
	}{Content: []textContent{{Type: "text", Text: text}}, IsError: true}
	if p.modern {
		res.ResultType = "complete"
	}
	b, err := json.Marshal(res)
	if err != nil {
		r.replyError(p.clientID, jsonrpc.CodeInternalError, text)
		return
	}
	r.toClient(jsonrpc.ResultResponse(p.clientID, b))
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// callParams are the fields of a tools/call the relay reads.
type callParams struct {
	Name      string
	Arguments json.RawMessage // a copy: it outlives the line it came from
	modern    bool            // _meta names protocol 2026-07-28 or later
	elicits   bool            // _meta's client capabilities offer form elicitation
	progress  []byte          // _meta.progressToken, raw
	// State and Responses are a 2026-07-28 retry's requestState and
	// inputResponses.
	State     string
	Responses json.RawMessage
}

const metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

// callMembers are the tools/call params members Weir knows.
var callMembers = []string{"name", "arguments", "_meta", "task", "requestState", "inputResponses"}

// readCallParams reads tools/call params with exact member names: a
// repeated member, or one equal to name or arguments but for case, is
// refused, since a server that reads it the other way would run a call
// Weir did not judge.
func readCallParams(raw json.RawMessage) (callParams, error) {
	var p callParams
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	err := jsonrpc.Fields(raw, callMembers, func(name string, v []byte) error {
		switch name {
		case "name":
			if err := json.Unmarshal(v, &p.Name); err != nil {
				return fmt.Errorf("name is not a string")
			}
		case "arguments":
			p.Arguments = bytes.Clone(v)
		case "requestState":
			if err := json.Unmarshal(v, &p.State); err != nil {
				return fmt.Errorf("requestState is not a string")
			}
		case "inputResponses":
			p.Responses = bytes.Clone(v)
		case "_meta":
			if len(v) == 0 || v[0] != '{' {
				return nil
			}
			return jsonrpc.EachMember(v, func(k string, mv []byte) error {
				switch k {
				case jsonrpc.MetaProtocolVersion:
					var ver string
					_ = json.Unmarshal(mv, &ver)
					p.modern = ver >= "2026-07-28"
				case metaClientCapabilities:
					if len(mv) > 0 && mv[0] == '{' {
						p.elicits = formElicitation(jsonrpc.Member(mv, "elicitation"))
					}
				case "progressToken":
					p.progress = bytes.Clone(mv)
				}
				return nil
			})
		}
		return nil
	})
	return p, err
}

// requestTimer starts the timer that answers a request the server leaves
// unanswered; it is stopped when the request is taken.
func requestTimer(d time.Duration, id int64, fire func(int64)) *time.Timer {
	if d <= 0 {
		return nil
	}
	return time.AfterFunc(d, func() { fire(id) })
}

// replaceID is line with its id replaced by id: spliced at lineID, the
// id Parse found, when that is a slice of line (a large message is not
// scanned again), otherwise found by name.
func replaceID(line, lineID, id []byte) []byte {
	if out, ok := jsonrpc.ReplaceValue(line, lineID, id); ok {
		return out
	}
	out, _ := jsonrpc.ReplaceMember(line, "id", id)
	return out
}
