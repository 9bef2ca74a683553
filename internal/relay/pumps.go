package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

// clientPump reads the client's messages until its input ends.
func (r *Relay) clientPump(ctx context.Context, in io.Reader) {
	rd := jsonrpc.NewReader(in, r.opts.MaxMessage)
	for ctx.Err() == nil {
		line, err := rd.Next()
		var over *jsonrpc.OversizeError
		switch {
		case errors.As(err, &over):
			r.log.Warn("client message over the size limit", "bytes", over.Size, "limit", over.Limit, "method", over.Method)
			if over.ID != nil {
				r.replyError(over.ID, jsonrpc.CodeMessageTooLarge,
					fmt.Sprintf("%v; Weir refused it (raise the limit with weir run --max-message-bytes)", over))
			}
			continue
		case err != nil:
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				r.log.Debug("client input ended", "err", err)
			}
			return
		}
		r.fromClient(ctx, line)
	}
}

func (r *Relay) fromClient(ctx context.Context, line []byte) {
	msg, err := jsonrpc.Parse(line)
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
	if !ok || !req.ID.IsValid() {
		// Notifications and the client's responses to server requests.
		r.forwardToServer(line, nil)
		return
	}
	p := pending{id: req.ID, rawID: jsonrpc.EncodeID(req.ID), method: req.Method}
	if req.Method == "tools/call" {
		params, err := readCallParams(req.Params)
		if err != nil {
			// A call Weir cannot read unambiguously is not forwarded: the
			// server might read it differently (fail closed).
			r.replyError(p.rawID, jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid tools/call params: %v", err))
			return
		}
		if params.Name == "" {
			// Let the server answer a call without a tool name.
			r.forwardToServer(line, &p)
			return
		}
		p.tool, p.modern = params.Name, params.modern
		p.labels = r.toolLabels(params.Name)
		if why, ok := r.withheldTool(ctx, params.Name); ok {
			enforced := r.enforcing()
			r.record(&audit.Record{Event: "call", Method: "tools/call", Tool: p.tool, Labels: p.labels.Labels.Names(),
				Verdict: "block", Enforced: enforced, Rule: "pin.withheld", Reason: why}, params.Arguments)
			if enforced {
				r.replyResult(&p, r.withheldMessage(p.tool, why))
				return
			}
		}
		if r.decideCall(ctx, &p, params.Arguments) {
			return
		}
	}
	r.forwardToServer(line, &p)
}

// forwardToServer forwards a line; p, when not nil, is a request that
// awaits the server's answer.
func (r *Relay) forwardToServer(line []byte, p *pending) {
	if p != nil {
		r.mu.Lock()
		gone := r.serverGone
		if gone == nil {
			r.pending[p.id] = *p
		}
		r.mu.Unlock()
		if gone != nil {
			r.replyError(p.rawID, jsonrpc.CodeServerUnavailable,
				fmt.Sprintf("the MCP server %q is no longer running (%v)", r.opts.Server, gone))
			return
		}
	}
	if err := r.toServer.WriteLine(line); err != nil {
		r.log.Debug("writing to server", "err", err)
		if p != nil {
			r.answerPending(p, jsonrpc.CodeServerUnavailable,
				fmt.Sprintf("the MCP server %q is not accepting input (%v)", r.opts.Server, err))
		}
	}
}

// answerPending answers a request the relay forwarded, if it is still
// waiting, so it is never answered twice.
func (r *Relay) answerPending(p *pending, code int, msg string) {
	r.mu.Lock()
	_, waiting := r.pending[p.id]
	delete(r.pending, p.id)
	r.mu.Unlock()
	if waiting {
		r.replyError(p.rawID, code, msg)
	}
}

// decideCall decides a tools/call. It reports whether the relay answered
// the call itself (so it must not be forwarded).
func (r *Relay) decideCall(ctx context.Context, p *pending, args json.RawMessage) (answered bool) {
	pol := r.policy.Load()
	call := engine.Call{Server: r.opts.Server, Tool: p.tool, Labels: p.labels, Args: args}
	d, err := r.decide(ctx, call)
	if err != nil {
		// Fail closed: a sink call Weir cannot judge does not run.
		d = engine.Decision{Verdict: flow.Block, Rule: "internal", Reason: err.Error()}
	}
	enforced := pol.Mode == policy.Enforce
	rec := &audit.Record{
		Event: "call", Method: "tools/call", Tool: p.tool,
		Labels:  p.labels.Labels.Names(),
		Verdict: d.Verdict.String(), Enforced: enforced,
		Rule: d.Rule, Reason: d.Reason, Sources: d.Sources, Prints: d.Matches,
	}
	r.record(rec, args)
	if d.Verdict != flow.Allow {
		r.log.Info("decision", "tool", call.Name(), "verdict", d.Verdict.String(), "rule", d.Rule, "enforced", enforced)
	}
	if !enforced || !d.Verdict.Stops() {
		return false
	}
	r.replyResult(p, engine.BlockMessage(d, call.Name()))
	return true
}

// decide runs the engine for a call, syncing the session mirror first when
// the decision depends on it. A panic in the engine is an error, not a crash.
func (r *Relay) decide(ctx context.Context, call engine.Call) (d engine.Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the engine failed while deciding %s (%v), so the call was blocked", call.Name(), v)
		}
	}()
	pol := r.policy.Load()
	if call.Labels.Labels.Has(flow.Sink) || len(pol.RulesFor(call.Server, call.Tool)) > 0 {
		// Results already forwarded may still be being scanned; what the
		// scan finds belongs in the session this call is judged against.
		// Only sinks and rules read the session, so only they wait.
		r.scans.Wait()
	}
	// The I/O a decision needs happens here, so the engine stays pure:
	// path arguments are resolved on disk, and rate limits are counted in
	// the shared store.
	call.Resolved = r.resolvePaths(pol, call)
	for _, rule := range pol.RateLimits(call.Server, call.Tool) {
		ok, _, err := r.opts.Store.Take(ctx, r.opts.Session, rule.ID, rule.RateLimit.N, rule.RateLimit.Per, r.opts.Now())
		if err != nil {
			return d, fmt.Errorf("the rate limit of rule %s could not be counted (%v)", rule.ID, err)
		}
		if !ok {
			call.RateExceeded = append(call.RateExceeded, rule.ID)
		}
	}
	r.mirrorMu.Lock()
	defer r.mirrorMu.Unlock()
	if call.Labels.Labels.Has(flow.Sink) {
		if err := r.opts.Store.Sync(ctx, r.opts.Session, &r.mirror); err != nil {
			return d, fmt.Errorf("the session state could not be read (%v), so Weir cannot tell what %s would send", err, call.Name())
		}
	}
	return engine.Decide(pol, r.opts.Hasher, &r.mirror, call), nil
}

// resolvePaths resolves the path arguments the policy's `within` rules
// check for this tool. A path that cannot be resolved is left out, which
// the rule treats as a violation.
func (r *Relay) resolvePaths(pol *policy.Policy, call engine.Call) map[string]string {
	if len(pol.PathArgs(call.Server, call.Tool)) == 0 {
		return nil
	}
	var args map[string]any
	if json.Unmarshal(call.Args, &args) != nil {
		return nil
	}
	return policyfile.ResolveArgs(pol, call.Server, call.Tool, args, r.opts.Home, r.opts.Cwd)
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
		r.replyError(p.rawID, jsonrpc.CodeInternalError, text)
		return
	}
	if err := r.toClient.WriteLine(jsonrpc.ResultResponse(p.rawID, b)); err != nil {
		r.log.Debug("writing to client", "err", err)
	}
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// serverPump reads the server's messages until its output ends.
func (r *Relay) serverPump(ctx context.Context, in io.Reader) error {
	rd := jsonrpc.NewReader(in, r.opts.MaxMessage)
	for ctx.Err() == nil {
		line, err := rd.Next()
		var over *jsonrpc.OversizeError
		switch {
		case errors.As(err, &over):
			r.log.Warn("server message over the size limit", "bytes", over.Size, "limit", over.Limit)
			r.dropServerMessage(over.ID, fmt.Sprintf("the MCP server %q sent a response of %d bytes, over Weir's limit of %d (raise it with weir run --max-message-bytes)", r.opts.Server, over.Size, over.Limit))
			continue
		case err != nil:
			return err
		}
		r.fromServer(ctx, line)
	}
	return ctx.Err()
}

// dropServerMessage answers the client request a dropped server message
// was the response to, if it can be identified.
func (r *Relay) dropServerMessage(rawID []byte, why string) {
	if rawID == nil {
		return
	}
	id, err := jsonrpc.ParseID(rawID)
	if err != nil {
		return
	}
	r.mu.Lock()
	p, ok := r.pending[id]
	delete(r.pending, id)
	r.mu.Unlock()
	if ok {
		r.replyError(p.rawID, jsonrpc.CodeBadServerMessage, why)
	}
}

func (r *Relay) fromServer(ctx context.Context, line []byte) {
	msg, err := jsonrpc.Parse(line)
	if err != nil {
		var bad *jsonrpc.BadMessageError
		errors.As(err, &bad)
		r.log.Warn("malformed message from server; dropped", "server", r.opts.Server, "reason", err)
		if bad != nil && bad.ID != nil {
			r.dropServerMessage(bad.ID, fmt.Sprintf("the MCP server %q sent a malformed response (%s)", r.opts.Server, bad.Reason))
		}
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "notifications/tools/list_changed" {
			r.log.Debug("server tool list changed", "server", r.opts.Server)
		}
	case *jsonrpc.Response:
		r.mu.Lock()
		p, ok := r.pending[m.ID]
		delete(r.pending, m.ID)
		r.mu.Unlock()
		if ok && m.Error == nil {
			switch p.method {
			case "tools/call":
				if line, ok = r.observe(ctx, &p, line, m.Result); !ok {
					return
				}
			case "tools/list":
				line = r.guardList(ctx, line, m.Result)
			case "initialize", "server/discover":
				line = r.guardInstructions(line, m.Result)
			}
		}
	}
	if err := r.toClient.WriteLine(line); err != nil {
		r.log.Debug("writing to client", "err", err)
	}
}

// observe applies result hygiene to a tools/call result and records what
// it adds to the session before the client sees it. It returns the line to
// forward, and false when the result must not be forwarded: when recording
// fails the client gets an error result instead (fail closed: data Weir
// cannot track does not reach the model).
//
// The injection detectors run after the result is forwarded, on a
// goroutine the relay owns: they cost more than the rest of the relay
// together. The next decision of this relay waits for them (see decide),
// so what they find — a result that tries to steer the model becomes
// untrusted — is in the session before any later call is judged.
func (r *Relay) observe(ctx context.Context, p *pending, line []byte, result json.RawMessage) ([]byte, bool) {
	if resultType(result) == "input_required" {
		return line, true // not a result yet: the client will call again
	}
	pol := r.policy.Load()
	h := clean(result, pol.RedactSecrets)
	labels := p.labels.Labels
	var obs *flow.Observation
	if labels.Any(flow.Legs) {
		var err error
		if obs, err = r.record0(ctx, labels, p.tool, result); err != nil {
			r.record(&audit.Record{Event: "result", Method: "tools/call", Tool: p.tool, Labels: labels.Names(),
				Verdict: "block", Enforced: true, Rule: "internal", Reason: fmt.Sprintf("could not record the result's labels: %v", err)}, nil)
			r.log.Error("recording a tool result failed; result withheld", "tool", p.tool, "err", err)
			r.replyResult(p, fmt.Sprintf("Weir withheld the result of %s/%s: it could not record where this data came from (%v), and data it cannot track does not reach the model. This is a problem with Weir's state store, not with the tool; tell the user.", r.opts.Server, p.tool, err))
			return nil, false
		}
	}
	// The raw result is kept for the scan: its bytes alias the reader's
	// buffer, which the next message overwrites.
	raw := bytes.Clone(result)
	r.scans.Add(1)
	go func() {
		defer r.scans.Done()
		r.scanResult(context.WithoutCancel(ctx), p.tool, labels, raw, obs, h)
	}()
	if h.result != nil {
		if out, ok := jsonrpc.ReplaceMember(line, "result", h.result); ok {
			return out, true
		}
	}
	return line, true
}

// resultType returns a result's resultType (2026-07-28), or "".
func resultType(result json.RawMessage) string {
	var t string
	_ = jsonrpc.EachMember(result, func(name string, v []byte) error {
		if name == "resultType" && len(v) > 0 && v[0] == '"' {
			t, _ = jsonrpc.Unquote(v)
		}
		return nil
	})
	return t
}

// record0 fingerprints a result under labels and records it in the store,
// then brings the session mirror up to date.
func (r *Relay) record0(ctx context.Context, labels flow.Labels, tool string, result json.RawMessage) (*flow.Observation, error) {
	// Fingerprints come from the result as the server sent it, so a
	// redacted secret is still recognised if it leaks.
	res := engine.Result{Server: r.opts.Server, Tool: tool, Labels: labels, Raw: result, At: r.now()}
	obs, err := engine.Observe(r.opts.Hasher, res)
	if err != nil || obs == nil {
		return obs, err
	}
	if _, err := r.opts.Store.Append(ctx, r.opts.Session, obs); err != nil {
		return nil, err
	}
	r.mirrorMu.Lock()
	defer r.mirrorMu.Unlock()
	return obs, r.opts.Store.Sync(ctx, r.opts.Session, &r.mirror)
}

// scanResult runs the injection detectors over a forwarded result, records
// the untrusted leg when they find an attempt to steer the model, and
// audits the result. A result already untrusted is not scanned: the
// detectors could add nothing to how it is treated.
func (r *Relay) scanResult(ctx context.Context, tool string, labels flow.Labels, result json.RawMessage, obs *flow.Observation, h hygiene) {
	if !labels.Has(flow.Untrusted) {
		h.scan()
	}
	raised := h.labels(labels)
	var err error
	if raised != labels {
		var o *flow.Observation
		if o, err = r.record0(ctx, raised, tool, result); err == nil && obs == nil {
			obs = o
		}
		if err != nil {
			r.log.Error("recording an injection-bearing result as untrusted failed", "tool", tool, "err", err)
		}
	}
	verdict := h.verdict()
	if obs == nil && verdict == flow.Allow && err == nil {
		return // nothing to record
	}
	rec := &audit.Record{Event: "result", Method: "tools/call", Tool: tool, Labels: raised.Names(), Verdict: verdict.String(), Enforced: true}
	if obs != nil {
		rec.Prints = len(obs.Prints) + len(obs.Digests)
	}
	if len(h.findings) > 0 {
		rec.Rule = "detect." + h.findings[0].Detector
		rec.Reason = "findings: " + strings.Join(detectorIDs(h.findings, detect.Low), ", ")
		if raised != labels {
			rec.Reason += "; the result is treated as untrusted"
		}
	}
	if h.redacted > 0 {
		rec.Rule = "redact_secrets"
		rec.Reason = strings.TrimPrefix(rec.Reason+fmt.Sprintf("; %d secret(s) redacted", h.redacted), "; ")
	}
	if err != nil {
		rec.Verdict, rec.Rule = "block", "internal"
		rec.Reason = fmt.Sprintf("could not record the result as untrusted: %v", err)
	}
	r.record(rec, nil)
}
