package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/scratch"
)

// The scratch database (package scratch) in the relay: results of the
// tools the policy's scratch: block names (or every tool, with weir run
// --scratch) that hold a large JSON array of objects become tables, the
// client gets a handle and a preview instead of the payload, and the relay
// adds weir_query to tools/list and answers it itself.
//
// Labels flow through: a result is decided and recorded in full before it
// is stored (its fingerprints are in the session whatever the client
// sees), its table carries the labels it entered the session with and any
// the detectors add later, and a weir_query answer is decided and recorded
// as a tool result under the labels of the tables it read.

// stores reports whether results of tool go to the scratch database.
func (r *Relay) stores(tool string) bool {
	if r.opts.Scratch == nil || tool == scratch.ToolName {
		return false
	}
	return r.opts.ScratchAll || r.policy.Load().Scratch.Stores(r.opts.Server, tool)
}

// answersQuery reports whether a tools/call of tool is Weir's weir_query.
func (r *Relay) answersQuery(tool string) bool {
	return r.opts.Scratch != nil && tool == scratch.ToolName
}

// materialise stores the result a line carries and returns the line to
// relay: the handle when it was stored, else the result with a note in its
// _meta. A failure to store never fails the call.
func (r *Relay) materialise(ctx context.Context, p *pending, labels flow.Labels, line []byte) (out []byte, table string) {
	result := jsonrpc.Member(line, "result")
	if result == nil {
		return line, ""
	}
	h, ok, err := r.opts.Scratch.Materialise(ctx, r.opts.Server+":"+p.tool, labels, result)
	if err != nil {
		r.log.Warn("the scratch database could not store a result; it was passed through", "tool", p.tool, "err", err)
	}
	replacement := scratch.PassThrough(result, h.Note)
	if ok {
		replacement = h.Result()
		table = h.Table
		r.log.Debug("result stored as a table", "tool", p.tool, "table", h.Table, "rows", h.Rows, "bytes", h.Bytes)
	}
	if out, replaced := jsonrpc.ReplaceMember(line, "result", replacement); replaced {
		return out, table
	}
	return line, ""
}

// answerQuery answers a weir_query call from the scratch database, on a
// goroutine of its own: a query may run for its whole timeout, and the
// client pump must go on reading (a cancellation, another call).
func (r *Relay) answerQuery(ctx context.Context, p *pending, args json.RawMessage) {
	r.queries.Add(1)
	go func() {
		defer r.queries.Done()
		defer startScan(p) // after the answer, as fromServer does
		defer func() {
			if v := recover(); v != nil {
				r.log.Error("Weir failed while answering weir_query", "panic", v)
				r.replyError(p.clientID, jsonrpc.CodeInternalError, fmt.Sprintf("Weir failed while answering weir_query (%v)", v))
			}
		}()
		// What the detectors find in a stored result raises its table's
		// labels: that must be in before a query reads the table.
		r.scans.Wait()
		result, labels := r.opts.Scratch.CallTool(ctx, args)
		r.record(&audit.Record{Event: "call", Method: "tools/call", Tool: scratch.ToolName, Labels: labels.Names(),
			Verdict: flow.Allow.String(), Enforced: true,
			Reason: "answered by Weir from the scratch database (read-only); the answer carries the labels of the tables it read"}, args)
		if p.modern {
			result = withResultType(result)
		}
		p.labels = engine.ToolLabels{Labels: labels, Listed: true}
		line := jsonrpc.ResultResponse(p.clientID, result)
		if out, ok := r.onResult(ctx, p, result, line); ok {
			r.toClient(out)
		}
	}()
}

// withResultType marks a result complete, as results are under protocol
// 2026-07-28.
func withResultType(result []byte) []byte {
	if jsonrpc.Member(result, "resultType") != nil {
		return result
	}
	return append(bytes.TrimSuffix(bytes.TrimSpace(result), []byte("}")), []byte(`,"resultType":"complete"}`)...)
}

// scratchList adapts a tools/list result the client is about to get:
// weir_query is added on the last page (a server tool of that name is left
// out: Weir answers it), and tools whose results may be stored lose their
// outputSchema, which a handle no longer matches.
func (r *Relay) scratchList(line []byte) []byte {
	if r.opts.Scratch == nil {
		return line
	}
	result := jsonrpc.Member(line, "result")
	rawTools := jsonrpc.Member(result, "tools")
	if rawTools == nil {
		return line
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(rawTools, &tools); err != nil {
		return line
	}
	kept := make([]json.RawMessage, 0, len(tools)+1)
	for _, t := range tools {
		var name string
		if n := jsonrpc.Member(t, "name"); n != nil {
			name, _ = jsonrpc.Unquote(n)
		}
		switch {
		case name == scratch.ToolName:
			r.log.Warn("the server lists a tool named weir_query; Weir's own query tool takes its place", "server", r.opts.Server)
			continue
		case r.stores(name) && jsonrpc.Member(t, "outputSchema") != nil:
			t = jsonrpc.WithoutMembers(t, "outputSchema")
		}
		kept = append(kept, t)
	}
	if c := jsonrpc.Member(result, "nextCursor"); c == nil || strings.TrimSpace(string(c)) == "null" {
		kept = append(kept, r.opts.Scratch.ToolDefinition())
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return line
	}
	result, _ = jsonrpc.ReplaceMember(result, "tools", b)
	out, _ := jsonrpc.ReplaceMember(line, "result", result)
	return out
}
