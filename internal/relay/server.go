package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/recording"
	"github.com/weir-sec/weir/internal/store"
)

// serverPump reads the server's messages until its output ends.
func (r *Relay) serverPump(ctx context.Context) error {
	for ctx.Err() == nil {
		line, err := r.server.Read(ctx)
		var over *jsonrpc.OversizeError
		switch {
		case errors.As(err, &over):
			r.log.Warn("server message over the size limit", "bytes", over.Size, "limit", over.Limit)
			r.dropAnswer(over.ID, fmt.Sprintf("the MCP server %q sent a response of %d bytes, over Weir's limit of %d (raise it with --max-message-bytes)", r.opts.Server, over.Size, over.Limit))
		case err != nil:
			return err
		default:
			r.fromServer(ctx, line)
		}
		r.traced("server")
	}
	return ctx.Err()
}

// dropAnswer answers the client request a dropped server message was the
// answer to, if its id can be read.
func (r *Relay) dropAnswer(rawID []byte, why string) {
	id, ok := rawWeirID(rawID)
	if !ok {
		return
	}
	if p := r.ids.take(id); p != nil {
		r.replyError(p.clientID, jsonrpc.CodeBadServerMessage, why)
	}
}

// fromServer handles one server message. An answer is matched to the
// request it answers by Weir's id, decided (a tools/call result, a tool
// list, instructions), and sent to the client under the client's id; a
// server request or notification is forwarded as it is. A panic while
// handling an answer is recovered here and the request is answered with
// an error, so it never goes unanswered and the result is not relayed
// unjudged.
func (r *Relay) fromServer(ctx context.Context, line []byte) {
	var (
		p    *pending
		done bool
	)
	defer func() {
		if p != nil {
			startScan(p)
		}
		if v := recover(); v != nil {
			r.log.Error("Weir failed while handling a server message", "panic", v)
			if p != nil && !done {
				r.replyError(p.clientID, jsonrpc.CodeInternalError,
					fmt.Sprintf("Weir failed while handling the answer of %q to %s (%v); the answer was not relayed", r.opts.Server, p.method, v))
			}
		}
	}()
	msg, lineID, err := jsonrpc.ParseRaw(line)
	if err != nil {
		var bad *jsonrpc.BadMessageError
		errors.As(err, &bad)
		if e := jsonrpc.Member(line, "error"); bad.Code == jsonrpc.CodeInvalidRequest && e != nil && string(jsonrpc.Member(line, "id")) == "null" {
			// An error the server could not tie to a request.
			r.unmatchedError(e)
			return
		}
		r.log.Warn("malformed message from server; dropped", "server", r.opts.Server, "reason", err)
		if bad.ID != nil {
			r.dropAnswer(bad.ID, fmt.Sprintf("the MCP server %q sent a malformed response (%s)", r.opts.Server, bad.Reason))
		}
		return
	}
	m, ok := msg.(*jsonrpc.Response)
	if !ok {
		req := msg.(*jsonrpc.Request)
		if req.Method == "notifications/tools/list_changed" {
			r.log.Debug("server tool list changed", "server", r.opts.Server)
		}
		r.toClient(r.mapSubscription(line, req))
		return
	}
	if id, ok := weirID(m.ID); ok {
		p = r.ids.take(id)
	}
	if p == nil {
		r.log.Warn("dropped an answer to no waiting request (a second answer, or an id Weir did not send)", "server", r.opts.Server, "id", m.ID.Raw())
		return
	}
	if m.Error == nil {
		switch p.method {
		case "tools/call":
			line, ok = r.onResult(ctx, p, m.Result, line)
		case "tools/list":
			line, ok = r.onList(ctx, p, m.Result, line)
		case "initialize", "server/discover":
			line, ok = r.onInstructions(ctx, p, m.Result, line)
		}
		if !ok {
			done = true // answered by the handler
			return
		}
	}
	out := replaceID(line, lineID, p.clientID)
	done = true
	r.toClient(out)
}

// mapSubscription gives a notification's subscription id (the
// subscriptions/listen request it belongs to, 2026-07-28) back in the
// client's terms: the server knows the listen request by Weir's id.
func (r *Relay) mapSubscription(line []byte, req *jsonrpc.Request) []byte {
	if !bytes.Contains(req.Params, []byte(jsonrpc.MetaSubscriptionID)) {
		return line
	}
	id, err := jsonrpc.ParseID(jsonrpc.Member(jsonrpc.Member(req.Params, "_meta"), jsonrpc.MetaSubscriptionID))
	if err != nil {
		return line
	}
	n, ok := weirID(id)
	if !ok {
		return line
	}
	p := r.ids.peek(n)
	if p == nil || p.method != "subscriptions/listen" {
		return line
	}
	out, _ := jsonrpc.ReplaceAt(line, p.clientID, "params", "_meta", jsonrpc.MetaSubscriptionID)
	return out
}

// unmatchedError handles an error the server sent with "id": null, having
// failed to read a request. When exactly one request is waiting, it can
// only be that request's answer, and it is relayed as one; otherwise it is
// dropped and logged, and the request timeout answers what waits.
func (r *Relay) unmatchedError(errObj []byte) {
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(errObj, &e)
	if id, p := r.ids.only(); p != nil {
		if p = r.ids.take(id); p != nil {
			r.replyError(p.clientID, jsonrpc.CodeBadServerMessage,
				fmt.Sprintf("the MCP server %q could not read this request (%s)", r.opts.Server, e.Message))
			return
		}
	}
	r.log.Warn("dropped an error the server could not tie to a request", "server", r.opts.Server, "message", e.Message)
}

// refuseAnswer answers p with an error instead of the server's answer,
// which Weir cannot relay unambiguously (enforce mode), and audits it.
func (r *Relay) refuseAnswer(p *pending, event, reason string, d engine.Decision) bool {
	r.record(&audit.Record{Event: event, Method: p.method, Tool: p.tool, Verdict: d.Verdict.String(), Enforced: d.Enforced,
		Rule: string(d.Rule), Reason: reason}, nil)
	if !d.Enforced {
		return true
	}
	r.flushAudit()
	r.replyError(p.clientID, jsonrpc.CodeBadServerMessage, reason)
	return false
}

// protocolRefusal is the decision on an answer Weir cannot read.
func (r *Relay) protocolRefusal(reason string) engine.Decision {
	return engine.Decision{Verdict: flow.Block, Rule: engine.RuleProtocol, Reason: reason, Enforced: r.enforcing()}
}

// persist writes a decision's delta to the store, then brings the mirror
// up to date with it.
func (r *Relay) persist(ctx context.Context, delta engine.Delta) error {
	seqs := make([]int64, len(delta.Observations))
	for i, o := range delta.Observations {
		var err error
		if seqs[i], err = r.opts.Store.Append(ctx, r.opts.Session, o); err != nil {
			return err
		}
	}
	if len(delta.Pins) > 0 {
		if err := r.opts.Store.PutPin(ctx, delta.Pins...); err != nil {
			return err
		}
	}
	if len(delta.Observations) == 0 {
		return nil
	}
	r.mirrorMu.Lock()
	defer r.mirrorMu.Unlock()
	r.mirror.MaxBytes = r.policy.Load().SessionMaxBytes
	if st, ok := r.opts.Store.(appendSyncer); ok {
		for i, o := range delta.Observations {
			if err := st.SyncAppended(ctx, r.opts.Session, &r.mirror, seqs[i], o); err != nil {
				return err
			}
		}
		return nil
	}
	return r.opts.Store.Sync(ctx, r.opts.Session, &r.mirror)
}

// appendSyncer is a store that brings a mirror up to date after an append
// without reading the appended row back (see store.SQLite.SyncAppended).
type appendSyncer interface {
	SyncAppended(ctx context.Context, session string, mirror *flow.Session, seq int64, o *flow.Observation) error
}

var _ appendSyncer = (*store.SQLite)(nil)

// onResult decides a tools/call result: hygiene, and the labels and
// fingerprints it adds to the session, recorded before the client sees
// it. It returns the line to relay, or false when it answered the request
// itself: when the result cannot be read unambiguously, or its labels
// cannot be recorded (fail closed: data Weir cannot track does not reach
// the model).
//
// The injection detectors run after the result is relayed, on a goroutine
// the relay owns: they cost more than the rest of the relay together. The
// next decision that reads the session waits for them (see decide), so what
// they find — a result that tries to steer the model becomes untrusted —
// is in the session before any later call is judged.
func (r *Relay) onResult(ctx context.Context, p *pending, result []byte, line []byte) ([]byte, bool) {
	pol := r.policy.Load()
	res := engine.Result{Server: r.opts.Server, Tool: p.tool, Labels: p.labels.Labels, Raw: result, At: r.now(), Written: r.syncWritten(ctx)}
	in := engine.Inputs{Policy: pol, Hasher: r.opts.Hasher}
	d := engine.Decide(in, res)
	if d.Rule == engine.RuleProtocol {
		return line, r.refuseAnswer(p, "result", d.Reason, d)
	}
	if err := r.persist(ctx, d.Delta); err != nil {
		r.log.Error("recording a tool result failed; result withheld", "tool", p.tool, "err", err)
		reason := fmt.Sprintf("could not record the result's labels: %v", err)
		r.record(&audit.Record{Event: "result", Method: "tools/call", Tool: p.tool, Labels: p.labels.Labels.Names(),
			Verdict: "block", Enforced: true, Rule: string(engine.RuleInternal), Reason: reason}, nil)
		r.flushAudit()
		r.replyResult(p, engine.ResultWithheldMessage(r.opts.Server+"/"+p.tool, err))
		return nil, false
	}
	if d.Rewrite != nil {
		if out, ok := jsonrpc.ReplaceMember(line, "result", d.Rewrite); ok {
			line = out
		}
	}
	var table string
	if r.stores(p.tool) {
		// Stored after its labels are recorded: the session holds the
		// whole result's fingerprints, whatever the client is shown.
		labels := d.ResultLabels(res.Labels)
		for _, o := range d.Delta.Observations {
			labels |= o.Labels
		}
		line, table = r.materialise(ctx, p, labels, line)
	}
	if len(d.Texts) > 0 || len(d.Delta.Observations) > 0 || d.Verdict != flow.Allow {
		// The raw result is kept for the scan: it aliases the reader's
		// buffer, which the next message overwrites.
		// At most maxScans run at once: past that the server's next
		// message waits for one to finish, so a burst of large results
		// costs time, not memory without bound.
		// It is counted before the answer is forwarded, so a sink call
		// that follows waits for it, and started after (see pending.scan).
		r.scanSlots <- struct{}{}
		res.Raw = bytes.Clone(result)
		r.scans.Add(1)
		p.scan = func() {
			go func() {
				defer func() { <-r.scanSlots }()
				defer r.scans.Done()
				r.scanResult(context.WithoutCancel(ctx), in, res, d, table)
			}()
		}
	}
	return line, true
}

// scanResult runs the injection detectors over a relayed result, decides
// what they found, records the labels they raise, and audits the result.
// A result already untrusted is not scanned: the detectors could add
// nothing to how it is treated.
//
// table, when not "", is the scratch table the result was stored in: the
// labels the scan raises are added to it too.
func (r *Relay) scanResult(ctx context.Context, in engine.Inputs, res engine.Result, arrival engine.Decision, table string) {
	var findings []detect.Finding
	if !arrival.ResultLabels(res.Labels).Has(flow.Untrusted) {
		for _, t := range arrival.Texts {
			findings = append(findings, detect.ScanText(t.Field, t.Text)...)
		}
	}
	d := engine.Decide(in, engine.Scanned{Result: res, Findings: findings, Arrival: arrival})
	if table != "" {
		for _, o := range d.Delta.Observations {
			r.opts.Scratch.AddLabels(table, o.Labels)
		}
	}
	err := r.persist(ctx, d.Delta)
	if err != nil {
		r.log.Error("recording an injection-bearing result as untrusted failed", "tool", res.Tool, "err", err)
	}
	if len(arrival.Delta.Observations) == 0 && d.Verdict == flow.Allow && err == nil && arrival.Declassify == nil {
		return // nothing to record
	}
	labels := arrival.ResultLabels(res.Labels)
	for _, o := range d.Delta.Observations {
		labels |= o.Labels
	}
	rec := &audit.Record{Event: "result", Method: "tools/call", Tool: res.Tool, Labels: labels.Names(),
		Verdict: d.Verdict.String(), Enforced: true, Rule: string(d.Rule), Reason: d.Reason}
	if arrival.Declassify != nil {
		rec.Declassify = arrival.Declassify.String()
	}
	for _, o := range arrival.Delta.Observations {
		rec.Prints += len(o.Prints) + len(o.Digests)
	}
	if err != nil {
		rec.Verdict, rec.Rule = "block", string(engine.RuleInternal)
		rec.Reason = fmt.Sprintf("could not record the result as untrusted: %v", err)
	}
	pol, at := in.Policy, r.now()
	r.recordWith(rec, nil, func() (store.Rec, *policy.Policy) {
		return recording.NewResult(r.opts.Session, r.opts.Server, res.Tool, at, labels, &arrival), pol
	}, nil)
}

// startScan starts the scan onResult left on p, if any. The scan was
// counted in r.scans before the answer left, so it must run whatever
// happened since, or sink decisions would wait forever.
func startScan(p *pending) {
	if f := p.scan; f != nil {
		p.scan = nil
		f()
	}
}

// onList decides a tools/list result: every definition is read, pinned
// and judged; withheld tools are left out of what the client gets.
func (r *Relay) onList(ctx context.Context, p *pending, result []byte, line []byte) ([]byte, bool) {
	pol, at := r.policy.Load(), r.now()
	key := r.listKeyOf(ctx, result, pol)
	if out, ok := r.memoList(key, at, result, line); ok {
		return out, true
	}
	tools, elems, err := engine.ReadToolList(r.opts.Server, result)
	if err != nil {
		reason := fmt.Sprintf("the MCP server %q sent a tool list Weir cannot read unambiguously (%v), so Weir does not relay it", r.opts.Server, err)
		return line, r.refuseAnswer(p, "list", reason, r.protocolRefusal(reason))
	}
	defs := r.defsOf(tools, elems)
	r.updateCatalog(defs)
	r.mu.Lock()
	l := engine.List{Raw: result, Tools: tools, Elems: elems, Instructions: r.instructions}
	r.mu.Unlock()
	r.gather.List(ctx, &l, nil, nil, nil)
	in := engine.Inputs{Policy: pol, Hasher: r.opts.Hasher}
	d := engine.Decide(in, l)
	if err := r.persist(ctx, d.Delta); err != nil {
		// Fail closed: without pins Weir cannot tell a rug pull from a tool
		// it knows, so nothing new reaches the model.
		r.log.Error("tool pins could not be written; withholding the tool list", "err", err)
		l.PinsErr = err.Error()
		d = engine.Decide(in, l)
	}
	r.mu.Lock()
	for _, tv := range d.Tools {
		if tv.Withheld() {
			r.withheld[tv.Name] = tv.Reason
		} else {
			delete(r.withheld, tv.Name)
		}
	}
	r.mu.Unlock()
	var private, untrusted, sink int
	// A definition is recorded when its pin is written — first sight, a
	// change, a quarantine, a new command — so each definition's findings
	// are logged once, not on every list.
	written := map[string]bool{}
	for _, p := range d.Delta.Pins {
		written[p.Tool] = true
	}
	for _, tv := range d.Tools {
		l := r.toolLabels(tv.Name).Labels
		private += b2i(l.Has(flow.Private))
		untrusted += b2i(l.Has(flow.Untrusted))
		sink += b2i(l.Has(flow.Sink))
		if tv.Verdict == flow.Allow && len(tv.Findings) == 0 || !written[tv.Name] && tv.State != pin.Unchecked {
			continue
		}
		reason := tv.Reason
		if len(tv.Findings) > 0 {
			reason = strings.TrimPrefix(reason+"; "+engine.FindingEvidence(tv.Findings), "; ")
		}
		r.record(&audit.Record{Event: "definition", Method: "tools/list", Tool: tv.Name, Verdict: tv.Verdict.String(),
			Enforced: d.Enforced, Rule: string(tv.Rule), Reason: reason}, nil)
		if tv.Withheld() {
			r.log.Warn("tool withheld", "tool", r.opts.Server+"/"+tv.Name, "why", tv.Reason, "enforced", d.Enforced)
		}
	}
	for _, f := range d.Findings {
		if f.Rule == engine.RuleCommandChanged {
			r.log.Warn("server command changed", "server", r.opts.Server, "why", f.Reason)
			r.record(&audit.Record{Event: "list", Method: "tools/list", Verdict: f.Verdict.String(), Enforced: d.Enforced,
				Rule: string(f.Rule), Reason: f.Reason}, nil)
		}
	}
	labels := make([]engine.ToolLabels, len(tools))
	for i := range tools {
		labels[i] = r.toolLabels(defs[i].Name)
	}
	var rec func() (store.Rec, *policy.Policy)
	if r.listChanged(key, at) {
		rec = func() (store.Rec, *policy.Policy) {
			return recording.NewList(r.opts.Session, r.opts.Server, at, in.Policy, defs, labels), in.Policy
		}
	}
	reason := fmt.Sprintf("%d tools: %d private, %d untrusted, %d sink", len(d.Tools), private, untrusted, sink)
	r.recordWith(&audit.Record{Event: "list", Method: "tools/list", Verdict: "allow", Enforced: true, Reason: reason}, nil, rec, nil)
	if d.Rewrite != nil {
		if out, ok := jsonrpc.ReplaceMember(line, "result", d.Rewrite); ok {
			line = out
		}
	}
	line = r.scratchList(line)
	r.keepList(key, len(d.Delta.Pins) == 0 && l.PinsErr == "", result, line, reason)
	return line, true
}

// onInstructions decides the instructions of an initialize or
// server/discover result: flagged ones are replaced with a notice.
func (r *Relay) onInstructions(ctx context.Context, p *pending, result []byte, line []byte) ([]byte, bool) {
	text, err := engine.ReadInstructions(result)
	if err != nil {
		reason := fmt.Sprintf("the MCP server %q sent a %s result Weir cannot read unambiguously (%v), so Weir does not relay it", r.opts.Server, p.method, err)
		return line, r.refuseAnswer(p, "instructions", reason, r.protocolRefusal(reason))
	}
	r.mu.Lock()
	r.instructions = text
	r.mu.Unlock()
	if text == "" {
		return line, true
	}
	ins := engine.Instructions{Raw: result, Text: text}
	r.gather.Instructions(ctx, &ins)
	d := engine.Decide(engine.Inputs{Policy: r.policy.Load(), Hasher: r.opts.Hasher}, ins)
	if d.Verdict != flow.Allow {
		r.record(&audit.Record{Event: "instructions", Method: p.method, Verdict: d.Verdict.String(), Enforced: d.Enforced,
			Rule: string(d.Rule), Reason: d.Reason}, nil)
	}
	if d.Rewrite != nil {
		if out, ok := jsonrpc.ReplaceMember(line, "result", d.Rewrite); ok {
			return out, true
		}
	}
	return line, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
