package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReplayScript is what one replay server serves: a suite's tools, exactly
// as AgentDojo showed them to the model, and the results of one
// transcript's calls, in order. The runner writes it to a file whose path
// is the server's only argument.
type ReplayScript struct {
	ID    string       `json:"id"`
	Suite string       `json:"suite"`
	Tools []ScriptTool `json:"tools"`
	Calls []ScriptCall `json:"calls"`
}

// ScriptTool is a tool definition: name, description and input schema, no
// annotations (AgentDojo has none), so Weir labels it from the policy and
// its name.
type ScriptTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ScriptCall is the n-th recorded call: its tool and arguments, which the
// n-th tools/call must repeat, and the answer it got.
type ScriptCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
}

// NewScript builds the replay script of transcript t over the suite's
// tools.
func NewScript(t *Transcript, tools []Tool) *ReplayScript {
	s := &ReplayScript{ID: t.ID, Suite: t.Suite}
	for _, tl := range tools {
		s.Tools = append(s.Tools, ScriptTool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema})
	}
	for i := range t.Calls {
		c := &t.Calls[i]
		args, err := c.ArgumentsJSON()
		if err != nil {
			args = nil // the client fails on the same arguments first
		}
		s.Calls = append(s.Calls, ScriptCall{Tool: c.Tool, Arguments: args, Result: c.ResultText(), IsError: c.IsError})
	}
	return s
}

// codeReplayMismatch is the JSON-RPC error code of a call the script did
// not expect.
const codeReplayMismatch = -32099

// codeNotStripped is the JSON-RPC error code of a call that reached the
// server still carrying inputResponses or requestState, which Weir must
// strip before it forwards an approved input_required retry. It is not a
// replay failure: the human client records it as an anomaly of the walk.
const codeNotStripped = -32098

// sameArguments reports whether two arguments objects are the same JSON
// value (the proxy may re-encode what it forwards).
func sameArguments(got, want json.RawMessage) bool {
	if len(want) == 0 {
		return true // a script without arguments checks the tool only
	}
	if len(got) == 0 {
		got = json.RawMessage(`{}`)
	}
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

// replayServer serves a script over stdio with the MCP go-sdk (protocol
// 2025-11-25, 2026-07-28 and the others the SDK speaks) until its input
// closes. It answers the n-th tools/call with the n-th recorded result
// and fails loudly, with a JSON-RPC error and a non-zero exit, when the
// tool called or its arguments are not the ones recorded.
//
// Matching by position holds in enforce mode too: a call Weir stops never
// reaches the server, the client sends nothing after the first stopped
// call, and an approved call reaches it once, so the calls the server sees
// are always a prefix of the recorded ones, in order.
func replayServer(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var s ReplayScript
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("replay script %s: %w", path, err)
	}
	srv, mismatch, err := newReplayServer(&s)
	if err != nil {
		return err
	}
	// The session ends when the client closes its input; how the SDK
	// reports that is not interesting. The client checks every answer.
	_ = srv.Run(context.Background(), &mcp.StdioTransport{MaxLineLength: -1})
	if m := mismatch(); m != "" {
		return errors.New(m)
	}
	return nil
}

// newReplayServer builds the go-sdk server for a script. mismatch returns
// the first replay failure, "" if none.
func newReplayServer(s *ReplayScript) (_ *mcp.Server, mismatch func() string, err error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentdojo-" + s.Suite, Version: "1"}, nil)
	defer func() {
		// AddTool panics on a schema that is not an object schema.
		if v := recover(); v != nil {
			err = fmt.Errorf("replay server %s: %v", s.ID, v)
		}
	}()
	for _, t := range s.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				// Unreachable: the middleware below answers every call.
				return nil, fmt.Errorf("replay server: tool handler called")
			})
	}
	var mu sync.Mutex
	next := 0
	failure := ""
	fail := func(msg string) error {
		if failure == "" {
			failure = msg
			fmt.Fprintln(os.Stderr, "agentdojo replay server:", msg)
		}
		return &jsonrpc.Error{Code: codeReplayMismatch, Message: msg}
	}
	// Every tools/call is answered here, before the SDK looks the tool up:
	// a model sometimes called a tool the suite does not have, and the
	// replay must still give it the error text it got.
	srv.AddReceivingMiddleware(func(h mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return h(ctx, method, req)
			}
			r, ok := req.(*mcp.CallToolRequest)
			if !ok || r.Params == nil {
				return h(ctx, method, req)
			}
			mu.Lock()
			defer mu.Unlock()
			if next >= len(s.Calls) {
				return nil, fail(fmt.Sprintf("replay mismatch in %s: call %d (%s) was made, but the transcript has only %d calls", s.ID, next+1, r.Params.Name, len(s.Calls)))
			}
			want := s.Calls[next]
			if r.Params.Name != want.Tool {
				return nil, fail(fmt.Sprintf("replay mismatch in %s: call %d is %s, the transcript recorded %s", s.ID, next+1, r.Params.Name, want.Tool))
			}
			if !sameArguments(r.Params.Arguments, want.Arguments) {
				return nil, fail(fmt.Sprintf("replay mismatch in %s: call %d (%s) has other arguments than the transcript recorded", s.ID, next+1, want.Tool))
			}
			next++
			if len(r.Params.InputResponses) > 0 || r.Params.RequestState != "" {
				return nil, &jsonrpc.Error{Code: codeNotStripped, Message: fmt.Sprintf(
					"call %d (%s) reached the server with inputResponses or requestState: the proxy did not strip them", next, want.Tool)}
			}
			return &mcp.CallToolResult{
				Content: []mcp.Content{&mcp.TextContent{Text: want.Result}},
				IsError: want.IsError,
			}, nil
		}
	})
	return srv, func() string {
		mu.Lock()
		defer mu.Unlock()
		return failure
	}, nil
}
