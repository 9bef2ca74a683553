package relay

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
)

// An enforced ESCALATE verdict puts the call to a person, by the best
// channel the client has:
//
//   - a client on protocol 2026-07-28 that declares elicitation gets an
//     input_required result, and its retry carries the answer and the
//     sealed state (see readRetry);
//   - a client that declared elicitation in initialize gets an
//     elicitation/create request while the call is held (see hold);
//   - any other client gets a refusal with an approval id that a person
//     settles with `weir approve` or `weir deny` before the agent retries.
//
// Before asking, the book is consulted: a session grant, an out-of-band
// approval of this exact call, or a refusal that still stands answers
// without a prompt.

// approvalPrefix starts the ids of Weir's own requests to the client. The
// rest is 128 random bits, so no server can name one of them.
const approvalPrefix = "weir-approval-"

// defaultProgressEvery is how often a held call whose request carried a
// progress token hears that it is still waiting.
const defaultProgressEvery = 10 * time.Second

// retry is what a 2026-07-28 retry brought back for Weir's question.
type retry struct {
	state  approval.State
	answer approval.Answer
	err    error // why the answer could not be read (answer Failed)
}

// held is a call waiting for the client's answer to Weir's elicitation.
type held struct {
	answer chan *jsonrpc.Response // capacity 1
	cancel chan struct{}          // closed when the client cancels the call
	client string                 // the call's clientKey
}

// approvalBounds are the policy's approval timeout and TTL, or the
// defaults.
func approvalBounds(p *policy.Policy) (timeout, ttl time.Duration) {
	timeout, ttl = p.Approval.Timeout, p.Approval.TTL
	if timeout <= 0 {
		timeout = approval.DefaultTimeout
	}
	if ttl <= 0 {
		ttl = approval.DefaultTTL
	}
	return timeout, ttl
}

// canAsk reports whether a person can be asked about the call through the
// client: it declared elicitation, in initialize or in the call's _meta.
func (r *Relay) canAsk(p *pending) bool {
	if p.modern {
		return p.elicits
	}
	return r.elicits.Load()
}

// callPolicy is the policy a call is decided under: the ask policy when the
// client can put an escalation to a person and one is set, else the policy.
func (r *Relay) callPolicy(p *pending) *policy.Policy {
	if ask := r.askPolicy.Load(); ask != nil && r.opts.Approvals != nil && r.canAsk(p) {
		return ask
	}
	return r.policy.Load()
}

// noteInitialize records what the client's initialize request says about
// elicitation: form mode is `{}` or names form.
func (r *Relay) noteInitialize(params json.RawMessage) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Elicitation json.RawMessage `json:"elicitation"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	r.elicits.Store(formElicitation(p.Capabilities.Elicitation))
	r.namedMode.Store(p.ProtocolVersion >= "2025-11-25")
}

// formElicitation reads an elicitation capability: an object that is
// empty (form, by the 2025-06-18 reading) or has a form member.
func formElicitation(raw json.RawMessage) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, form := m["form"]
	return len(m) == 0 || form
}

// readRetry checks a retried 2026-07-28 call that carries a request state
// of Weir's: the state must open under this install's key, belong to this
// session, have been issued for this exact call, not be expired, and not
// have been used. It spends the state, strips what Weir asked for from the
// call, and returns the call to forward with what the person answered.
func (r *Relay) readRetry(ctx context.Context, line []byte, params json.RawMessage, cp callParams) ([]byte, *retry, error) {
	if r.opts.Approvals == nil {
		return nil, nil, approval.ErrForged
	}
	digest, err := approval.Digest(r.opts.Hasher, r.opts.Server, cp.Name, cp.Arguments)
	if err != nil {
		return nil, nil, err
	}
	st, err := r.opts.Approvals.Sealer.OpenState(cp.State, r.opts.Session, digest, r.opts.Now())
	if err != nil {
		return nil, nil, err
	}
	fresh, err := r.opts.Approvals.Store.SpendNonce(ctx, st.Nonce, st.Expires)
	if err != nil {
		return nil, nil, fmt.Errorf("the state could not be recorded as used (%w)", err)
	}
	if !fresh {
		return nil, nil, approval.ErrReplayed
	}
	rt := &retry{state: st, answer: approval.Failed, err: errors.New("the retry carries no answer to weir_approval")}
	if len(cp.Responses) > 0 && cp.Responses[0] == '{' {
		if v := jsonrpc.Member(cp.Responses, approvalInput); v != nil {
			rt.answer, rt.err = approval.ReadAnswer(v, st.Dest != "")
		}
	}
	stripped := jsonrpc.WithoutMembers(params, "inputResponses", "requestState")
	out, _ := jsonrpc.ReplaceMember(line, "params", stripped)
	return out, rt, nil
}

// approvalInput is the key of Weir's question in inputRequests.
const approvalInput = "weir_approval"

// refuseRetry answers a retry whose state Weir refuses, and audits it.
func (r *Relay) refuseRetry(p *pending, err error) {
	reason := fmt.Sprintf("Weir refused the retried call to %s/%s: %v. The call was not made; retry it without requestState to be asked again", r.opts.Server, p.tool, err)
	r.record(&audit.Record{Event: "approval", Method: "tools/call", Tool: p.tool, Verdict: "block", Enforced: true,
		Rule: string(engine.RuleProtocol), Reason: reason, Channel: string(approval.InputRequired), Answer: "refused", AnsweredBy: "weir"}, nil)
	r.flushAudit()
	r.replyError(p.clientID, jsonrpc.CodeInvalidParams, reason)
}

// escalate puts an escalated call to a person, or settles it from what the
// book already holds. It answers or forwards the call, now or once the
// person has answered.
func (r *Relay) escalate(ctx context.Context, pol *policy.Policy, p *pending, c engine.Call, d engine.Decision, line []byte) {
	book := r.opts.Approvals
	timeout, ttl := approvalBounds(pol)
	now := r.opts.Now()
	head := engine.EscalationHead(d, c.Name())
	note := func(id string, ch approval.Channel, a approval.Answer, latency time.Duration) {
		rec := &audit.Record{Event: "approval", Method: "tools/call", Tool: c.Tool, Verdict: d.Verdict.String(), Enforced: true,
			Rule: string(d.Rule), Sources: d.Sources, Approval: id, Channel: string(ch), Answer: string(a), AnsweredBy: a.By(ch)}
		if a != approval.Pending {
			ms := latency.Milliseconds()
			rec.LatencyMS = &ms
		}
		if n, err := book.Store.CountApprovals(ctx, r.opts.Session); err == nil {
			rec.Prompts = n
		}
		r.record(rec, nil)
	}
	refuse := func(o approval.Outcome) {
		note(o.ID, o.Channel, o.Answer, 0)
		r.flushAudit()
		r.replyResult(p, approval.RefusalMessage(head, o))
	}
	digest, err := approval.Digest(r.opts.Hasher, r.opts.Server, c.Tool, c.Args)
	if err != nil {
		refuse(approval.Outcome{Answer: approval.Failed, Err: fmt.Errorf("its arguments cannot be bound to an approval: %w", err)})
		return
	}
	facts := approval.Facts(c.Args)
	scope := len(d.Tainted) == 0
	dest := ""
	if scope {
		dest = approval.DestKey(r.opts.Hasher, r.opts.Server, c.Tool, approval.SessionScope(c.Args, facts))
	}
	ask := approval.Ask{Tool: c.Name(), Rule: d.Rule.Phrase(), Reason: d.Reason, Sources: d.Sources, Paths: d.Paths, Facts: facts, SessionScope: scope}

	if rt := p.retry; rt != nil {
		r.settle(ctx, rt.state.ID, rt.answer, now)
		latency := now.Sub(time.UnixMilli(rt.state.Issued))
		if rt.answer.Allows() {
			note(rt.state.ID, approval.InputRequired, rt.answer, latency)
			r.forward(ctx, line, nil, p)
			return
		}
		refuse(approval.Outcome{Answer: rt.answer, Channel: approval.InputRequired, ID: rt.state.ID, Err: rt.err})
		return
	}

	prior, err := book.Consult(ctx, r.opts.Session, digest, dest, now)
	if err != nil {
		refuse(approval.Outcome{Answer: approval.Failed, Err: fmt.Errorf("the state store failed: %w", err)})
		return
	}
	switch {
	case prior.Answer.Allows():
		note(prior.ID, prior.Channel, prior.Answer, 0)
		r.forward(ctx, line, nil, p)
		return
	case prior.Answer == approval.Declined:
		refuse(approval.Outcome{Answer: approval.Declined, Channel: prior.Channel, ID: prior.ID, Age: prior.Age})
		return
	}

	row := approval.Row{Session: r.opts.Session, Server: r.opts.Server, Tool: c.Tool, Digest: digest, Dest: dest,
		Rule: string(d.Rule), Created: now.UnixMilli(), Expires: now.Add(ttl).UnixMilli()}
	details := approval.Details{Facts: facts, Reason: d.Reason, Sources: d.Sources, Paths: d.Paths, SessionScope: scope}
	switch {
	case !r.canAsk(p):
		row.Channel = approval.CLI
	case p.modern:
		row.Channel = approval.InputRequired
	default:
		row.Channel = approval.Elicitation
	}
	if row, err = book.Open(ctx, row, details); err != nil {
		refuse(approval.Outcome{Answer: approval.Failed, Err: fmt.Errorf("the state store failed: %w", err)})
		return
	}
	switch row.Channel {
	case approval.InputRequired:
		state, err := book.Sealer.SealState(approval.NewState(r.opts.Session, digest, dest, row.ID, now, ttl))
		if err != nil {
			refuse(approval.Outcome{Answer: approval.Failed, Err: err})
			return
		}
		note(row.ID, row.Channel, approval.Pending, 0)
		r.flushAudit()
		r.replyInputRequired(p, ask, state)
	case approval.Elicitation:
		r.hold(ctx, p, line, ask, row, note, head, timeout)
	default:
		refuse(approval.Outcome{Answer: approval.Pending, Channel: approval.CLI, ID: row.ID, TTL: ttl})
	}
}

// settle records a person's answer in the book; a failure is logged, not
// fatal: the answer still decides this call.
func (r *Relay) settle(ctx context.Context, id string, a approval.Answer, now time.Time) {
	row, err := r.opts.Approvals.Store.Approval(ctx, id)
	if err == nil {
		err = r.opts.Approvals.Settle(ctx, row, a, now)
	}
	if err != nil {
		r.log.Error("recording an approval answer failed", "approval", id, "err", err)
	}
}

// replyInputRequired answers a 2026-07-28 call with Weir's question.
func (r *Relay) replyInputRequired(p *pending, ask approval.Ask, state string) {
	res := struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}{"input_required", map[string]json.RawMessage{}, state}
	req, _ := json.Marshal(struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}{"elicitation/create", approval.ElicitParams(ask, true)})
	res.InputRequests[approvalInput] = req
	b, _ := json.Marshal(res)
	r.toClient(jsonrpc.ResultResponse(p.clientID, b))
}

// hold sends the client Weir's elicitation and waits, on a goroutine the
// relay owns, for the answer, the timeout, the client's cancellation of
// the call, or the client's end. Only an approving answer forwards the
// call; the call is answered exactly once either way, and not at all once
// the client is gone.
func (r *Relay) hold(ctx context.Context, p *pending, line []byte, ask approval.Ask, row approval.Row,
	note func(string, approval.Channel, approval.Answer, time.Duration), head string, timeout time.Duration) {
	line = bytes.Clone(line) // it aliases the reader's buffer, which the next message overwrites
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	id := approvalPrefix + hex.EncodeToString(nonce[:])
	h := &held{answer: make(chan *jsonrpc.Response, 1), cancel: make(chan struct{}), client: p.clientKey}
	r.holdsMu.Lock()
	if r.clientEnded {
		r.holdsMu.Unlock()
		return
	}
	r.asks[id] = h
	r.holds[p.clientKey] = h
	r.held.Add(1)
	r.holdsMu.Unlock()

	quotedID, _ := json.Marshal(id)
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"elicitation/create","params":%s}`, quotedID, approval.ElicitParams(ask, r.namedMode.Load()))
	r.flushAudit()
	r.toClient([]byte(req))
	start := r.opts.Now()
	go func() {
		defer r.held.Done()
		defer func() {
			r.holdsMu.Lock()
			r.asks[id] = nil // answered or not, later answers are dropped
			if r.holds[p.clientKey] == h {
				delete(r.holds, p.clientKey)
			}
			r.holdsMu.Unlock()
		}()
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		var tick <-chan time.Time
		if p.progress != nil {
			t := time.NewTicker(r.opts.progressEvery)
			defer t.Stop()
			tick = t.C
		}
		answer, out := approval.Failed, approval.Outcome{Channel: approval.Elicitation, ID: row.ID}
		for n := 1; ; n++ {
			select {
			case m := <-h.answer:
				if m.Error != nil {
					out.Err = fmt.Errorf("the client answered the question with an error: %v", m.Error)
				} else {
					answer, out.Err = approval.ReadAnswer(m.Result, row.Dest != "")
				}
			case <-timer.C:
				answer, out.Timeout = approval.TimedOut, timeout
				r.toClient(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"Weir: no answer within %s; the call was refused"}}`, quotedID, timeout))
			case <-h.cancel:
				answer = approval.Cancelled
				r.settle(context.WithoutCancel(ctx), row.ID, answer, r.opts.Now())
				note(row.ID, approval.Elicitation, answer, r.opts.Now().Sub(start))
				r.toClient(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"the call was cancelled"}}`, quotedID))
				return // a cancelled request is not answered
			case <-r.clientGone:
				r.settle(context.WithoutCancel(ctx), row.ID, approval.Gone, r.opts.Now())
				note(row.ID, approval.Elicitation, approval.Gone, r.opts.Now().Sub(start))
				return
			case <-tick:
				r.toClient(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"message":"waiting for a person to approve %s"}}`, p.progress, n, strings.ReplaceAll(ask.Tool, `"`, "")))
				continue
			}
			break
		}
		out.Answer = answer
		ctx := context.WithoutCancel(ctx)
		r.settle(ctx, row.ID, answer, r.opts.Now())
		if answer.Allows() {
			note(row.ID, approval.Elicitation, answer, r.opts.Now().Sub(start))
			r.forward(ctx, line, nil, p)
			return
		}
		note(row.ID, approval.Elicitation, answer, r.opts.Now().Sub(start))
		r.flushAudit()
		r.replyResult(p, approval.RefusalMessage(head, out))
	}()
}

// takeAnswer hands the client's answer to one of Weir's elicitations to
// the held call; false when the id is not one of Weir's questions in
// flight (it is then the answer to a server's request).
func (r *Relay) takeAnswer(m *jsonrpc.Response) bool {
	id, ok := m.ID.Raw().(string)
	if !ok || !strings.HasPrefix(id, approvalPrefix) {
		return false
	}
	r.holdsMu.Lock()
	h, asked := r.asks[id]
	if asked {
		r.asks[id] = nil // a second answer is not one
	}
	r.holdsMu.Unlock()
	switch {
	case !asked:
		return false // no id of Weir's: a server's request that looks like one
	case h == nil:
		r.log.Warn("dropped a second or late answer to a question of Weir's", "id", id)
		return true
	}
	h.answer <- m
	return true
}

// cancelHeld ends the hold of a call the client cancelled; false when no
// such call is held.
func (r *Relay) cancelHeld(params json.RawMessage) bool {
	if len(params) == 0 || params[0] != '{' {
		return false
	}
	id, err := jsonrpc.ParseID(jsonrpc.Member(params, "requestId"))
	if err != nil || !id.IsValid() {
		return false
	}
	r.holdsMu.Lock()
	defer r.holdsMu.Unlock()
	h := r.holds[clientKey(id)]
	if h == nil {
		return false
	}
	delete(r.holds, h.client)
	close(h.cancel)
	return true
}

// endHolds marks the client gone: held calls end without being answered
// or forwarded.
func (r *Relay) endHolds() {
	r.holdsMu.Lock()
	if !r.clientEnded {
		r.clientEnded = true
		close(r.clientGone)
	}
	r.holdsMu.Unlock()
	r.held.Wait()
}
