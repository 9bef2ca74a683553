package scan

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/clients"
)

// fetchRemote connects to an HTTP or SSE server.
func fetchRemote(ctx context.Context, s clients.Server, r *ServerReport, opts Options, rec *recorder) (*catalogue, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	// Every request ends with the scan of this server, whatever context
	// the SDK gave it: a stream it keeps open must not outlive the scan.
	c.Transport = scopedTransport{base: base, ctx: ctx, headers: s.Headers}
	hc = &c
	var t mcp.Transport
	if s.Transport == clients.TransportSSE {
		t = &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1}
	}
	cat, phase, err := list(ctx, t, rec)
	explain := func(phase string, err error) string {
		if msg, ok := answered(phase, err); ok {
			return msg
		}
		switch {
		case errors.Is(err, errNotAsked):
			return err.Error()
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fmt.Sprintf("did not answer %s within %s", phase, opts.Timeout)
		case ctx.Err() != nil:
			return fmt.Sprintf("the scan was interrupted during %s", phase)
		}
		return fmt.Sprintf("%s failed: %v", phase, err)
	}
	if err != nil {
		return nil, errors.New(explain(phase, err))
	}
	r.Notes = append(r.Notes, failureNotes(cat, explain)...)
	return cat, nil
}

// scopedTransport adds an entry's headers to every request and cancels
// every request when ctx ends.
type scopedTransport struct {
	base    http.RoundTripper
	ctx     context.Context
	headers map[string]string
}

func (t scopedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rctx, cancel := context.WithCancel(req.Context())
	context.AfterFunc(t.ctx, cancel)
	req = req.Clone(rctx)
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}
