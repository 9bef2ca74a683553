package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
)

// errNotAsked stands for a listing that was not tried because the scan of
// the server had stopped at an earlier one.
var errNotAsked = errors.New("not asked")

// list initializes a session over t and lists tools, prompts and resources
// (each only when the server declares the capability), following cursors.
// A failing initialize or tools/list fails the whole listing: phase says
// which, and cat is nil. A prompts or resources listing that fails after
// that is recorded in cat.failed, and the rest is still listed: the tools
// are what the scan is for.
func list(ctx context.Context, t mcp.Transport, rec *recorder) (cat *catalogue, phase string, err error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-scan", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, // ask for nothing back: no roots, sampling or elicitation
	})
	phase = "initialize"
	cs, err := client.Connect(ctx, &recordingTransport{Transport: t, rec: rec}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, phase, err
	}
	defer cs.Close()
	init := cs.InitializeResult()
	cat = &catalogue{}
	caps := &mcp.ServerCapabilities{}
	if init != nil {
		cat.instructions = init.Instructions
		if init.Capabilities != nil {
			caps = init.Capabilities
		}
		if init.ServerInfo != nil {
			rec.info = &ServerInfo{Name: init.ServerInfo.Name, Version: init.ServerInfo.Version, Protocol: init.ProtocolVersion}
		}
	}
	if caps.Tools != nil {
		phase = "tools/list"
		var cursor string
		for range maxPages {
			res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, phase, err
			}
			// Read exactly as weir run reads it: what run would refuse as
			// ambiguous, the scan reports as a failure.
			page, _, err := engine.ReadToolList("", rec.last("tools/list"))
			if err != nil {
				return nil, phase, fmt.Errorf("reading the tool list: %v; weir run refuses such a list", err)
			}
			cat.tools = append(cat.tools, page...)
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
	}

	// The other listings are independent of each other: one that fails
	// is noted and the next one is still asked, unless the scan of this
	// server is over (its time ran out, or the connection is gone).
	stopped := ""
	try := func(method string, each func() error) {
		if stopped != "" {
			cat.failed = append(cat.failed, failure{method, fmt.Errorf("%w: the scan of this server stopped at %s", errNotAsked, stopped)})
			return
		}
		if err := each(); err != nil {
			var we *jsonrpc.Error
			if errors.As(err, &we) && method == "resources/templates/list" && we.Code == jsonrpc.CodeMethodNotFound {
				return // templates are optional
			}
			cat.failed = append(cat.failed, failure{method, err})
			if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
				stopped = method
			}
		}
	}
	if caps.Prompts != nil {
		try("prompts/list", func() error {
			return collect(cs.Prompts(ctx, nil), &cat.prompts, func(p *mcp.Prompt) detect.NamedText {
				return detect.NamedText{Name: p.Name, Description: p.Description}
			})
		})
	}
	if caps.Resources != nil {
		try("resources/list", func() error {
			return collect(cs.Resources(ctx, nil), &cat.resources, func(r *mcp.Resource) detect.NamedText {
				return detect.NamedText{Name: r.Name, Description: r.Description}
			})
		})
		try("resources/templates/list", func() error {
			return collect(cs.ResourceTemplates(ctx, nil), &cat.resources, func(r *mcp.ResourceTemplate) detect.NamedText {
				return detect.NamedText{Name: r.Name, Description: r.Description}
			})
		})
	}
	return cat, "", nil
}

// collect appends what a paginated listing yields to into, up to a bound.
// Items yielded before an error are kept.
func collect[T any](seq iter.Seq2[T, error], into *[]detect.NamedText, conv func(T) detect.NamedText) error {
	n := 0
	for item, err := range seq {
		if err != nil {
			return err
		}
		*into = append(*into, conv(item))
		if n++; n > maxPages*100 {
			break
		}
	}
	return nil
}

// recordingTransport keeps the raw result of every response, by method,
// so that tool definitions are judged and hashed exactly as the server sent
// them, not as the SDK's types re-encode them.
type recordingTransport struct {
	mcp.Transport
	rec *recorder
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, rec: t.rec}, nil
}

type recordingConn struct {
	mcp.Connection
	rec *recorder
}

func (c *recordingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.rec.mu.Lock()
		c.rec.pending[req.ID] = req.Method
		c.rec.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && err == nil {
		c.rec.mu.Lock()
		if method, ok := c.rec.pending[resp.ID]; ok {
			delete(c.rec.pending, resp.ID)
			c.rec.results[method] = append(c.rec.results[method], resp.Result)
		}
		c.rec.mu.Unlock()
	}
	return m, err
}

type recorder struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]string
	results map[string][]json.RawMessage
	info    *ServerInfo
}

// last returns the latest raw result of method.
func (r *recorder) last(method string) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.results[method]
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
}
