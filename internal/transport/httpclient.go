package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// Streamable HTTP header names (MCP 2025-11-25 and 2026-07-28).
const (
	HeaderSession     = "Mcp-Session-Id"
	HeaderProtocol    = "Mcp-Protocol-Version"
	HeaderMethod      = "Mcp-Method"
	HeaderName        = "Mcp-Name"
	HeaderLastEventID = "Last-Event-ID"
)

// Stateless is the first protocol version of stateless Streamable HTTP:
// no initialize, no HTTP session, no standalone GET stream, and every
// request names its method in a header.
const Stateless = "2026-07-28"

// HTTPOptions configure an HTTPUpstream.
type HTTPOptions struct {
	// Header is sent with every request: the upstream's own credentials,
	// from Weir's configuration. Nothing a client sent is ever added.
	Header http.Header
	// Client makes the requests; nil means one without an overall timeout
	// (streams and long tool calls are legitimate), on the default
	// transport's dial and TLS timeouts.
	Client *http.Client
	// MaxMessage bounds each message read (0: jsonrpc.DefaultMaxMessage).
	MaxMessage int
	Logger     *slog.Logger
	// Version is the protocol version to name in requests when neither a
	// negotiation nor the request says one: Stateless for the relay of a
	// front's stateless requests, so the upstream reads them as such.
	Version string
	// Observe, when set, is told of each request's exchange: the method,
	// the time to its answer, and whether the upstream gave one.
	Observe func(method string, took time.Duration, ok bool)
}

// HTTPUpstream is the relay's Transport toward an MCP server reached over
// Streamable HTTP: each message written is POSTed to the endpoint, and
// every message the server sends back — a JSON body, the events of an SSE
// response, the standalone GET stream — comes out of Read.
//
// It keeps the HTTP session (Mcp-Session-Id) and the negotiated protocol
// version, resumes an SSE stream that breaks before its answer arrives
// (Last-Event-ID) where the server numbers its events, and answers every
// request it sent exactly once: a failure of the HTTP exchange becomes a
// JSON-RPC error for that request, so the relay never waits on a request
// the server did not get.
type HTTPUpstream struct {
	url  string
	opts HTTPOptions
	log  *slog.Logger

	ctx    context.Context // ends every request and stream on Close
	cancel context.CancelFunc
	in     chan inbound
	wg     sync.WaitGroup // requests and streams in flight
	ended  chan struct{}  // closed when nothing more will be read
	end    sync.Once

	params paramTable // tools' x-mcp-header arguments, from tools/list

	mu         sync.Mutex
	session    string
	version    string          // negotiated in initialize, or named by a stateless request
	initIDs    map[string]bool // ids of initialize requests in flight
	standalone bool            // the GET stream has been started
	closing    bool
}

type inbound struct {
	msg []byte
	err error
}

var errUpstreamClosed = errors.New("the upstream connection is closed")

// sharedClient is the upstream sessions' default client: one connection
// pool for all of them, with enough idle connections per host that many
// sessions of one upstream reuse connections instead of opening new ones
// (the default keeps two).
var sharedClient = &http.Client{Transport: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 128
	return t
}()}

// NewHTTPUpstream returns a transport toward the MCP endpoint at url.
func NewHTTPUpstream(url string, opts HTTPOptions) *HTTPUpstream {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = jsonrpc.DefaultMaxMessage
	}
	if opts.Client == nil {
		opts.Client = sharedClient
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &HTTPUpstream{
		url: url, opts: opts, log: log,
		ctx: ctx, cancel: cancel,
		in:      make(chan inbound, 64),
		ended:   make(chan struct{}),
		initIDs: map[string]bool{},
	}
}

// Read returns the next message from the server.
func (u *HTTPUpstream) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-u.in:
		return m.msg, m.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-u.ended:
		select {
		case m := <-u.in:
			return m.msg, m.err
		default:
			return nil, io.EOF
		}
	}
}

// Write sends one message. A request is sent in the background, so that a
// slow tool does not hold up the next message; notifications and responses
// are sent before Write returns, so that the server sees them in order
// (notifications/initialized before the requests that follow it).
func (u *HTTPUpstream) Write(ctx context.Context, msg []byte) error {
	m, err := jsonrpc.Parse(msg)
	if err != nil {
		return fmt.Errorf("writing to the upstream: %w", err)
	}
	u.mu.Lock()
	closing := u.closing
	u.mu.Unlock()
	if closing {
		return errUpstreamClosed
	}
	req, isReq := m.(*jsonrpc.Request)
	if isReq && req.ID.IsValid() {
		id := jsonrpc.EncodeID(req.ID)
		if req.Method == "initialize" {
			u.mu.Lock()
			u.initIDs[string(id)] = true
			u.mu.Unlock()
		}
		body := bytes.Clone(msg)
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			u.call(body, id, req)
		}()
		return nil
	}
	sctx, cancel := context.WithTimeout(u.ctx, 30*time.Second)
	defer cancel()
	resp, err := u.post(sctx, msg, m)
	if err != nil {
		u.log.Warn("upstream did not take a message", "err", err)
		return nil
	}
	drain(resp)
	if resp.StatusCode >= 300 {
		u.log.Warn("upstream refused a message", "status", resp.StatusCode)
		return nil
	}
	if isReq && req.Method == "notifications/initialized" {
		u.startStandalone()
	}
	return nil
}

// post sends one message with the headers Streamable HTTP asks for.
func (u *HTTPUpstream) post(ctx context.Context, body []byte, m jsonrpc.Message) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	u.header(hr.Header)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	if req, ok := m.(*jsonrpc.Request); ok {
		if v := metaString(req.Params, jsonrpc.MetaProtocolVersion); v != "" {
			hr.Header.Set(HeaderProtocol, v)
		}
		if hr.Header.Get(HeaderProtocol) == "" && u.opts.Version != "" {
			hr.Header.Set(HeaderProtocol, u.opts.Version)
		}
		if hr.Header.Get(HeaderProtocol) >= Stateless {
			hr.Header.Set(HeaderMethod, req.Method)
			if name, ok := requestName(req); ok {
				hr.Header.Set(HeaderName, encodeHeaderValue(name))
				if req.Method == "tools/call" {
					setParamHeaders(hr.Header, u.params.of(name), req.Params)
				}
			}
		}
	}
	return u.opts.Client.Do(hr)
}

// header sets the configured headers and the session's.
func (u *HTTPUpstream) header(h http.Header) {
	for k, vs := range u.opts.Header {
		h[k] = append([]string(nil), vs...)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.session != "" {
		h.Set(HeaderSession, u.session)
	}
	if u.version != "" {
		h.Set(HeaderProtocol, u.version)
	}
}

// call sends one request and delivers its answer, whatever happens.
func (u *HTTPUpstream) call(body, id []byte, req *jsonrpc.Request) {
	start, ok := time.Now(), true
	fail := func(why string) { ok = false; u.fail(id, why) }
	defer func() {
		u.mu.Lock()
		delete(u.initIDs, string(id))
		u.mu.Unlock()
		if u.opts.Observe != nil {
			u.opts.Observe(req.Method, time.Since(start), ok)
		}
	}()
	resp, err := u.post(u.ctx, body, req)
	if err != nil {
		if u.ctx.Err() == nil {
			fail(fmt.Sprintf("the upstream could not be reached: %v", err))
		}
		return
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get(HeaderSession); sid != "" && req.Method == "initialize" {
		u.mu.Lock()
		u.session = sid
		u.mu.Unlock()
	}
	switch ct := mediaType(resp.Header.Get("Content-Type")); {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		fail(fmt.Sprintf("the upstream accepted a request without answering it (HTTP %d)", resp.StatusCode))
	case resp.StatusCode == http.StatusOK && ct == "text/event-stream":
		ok = u.stream(resp, id, req.Method)
	case ct == "application/json":
		// 2026-07-28 servers answer some errors with a status and a
		// JSON-RPC error body: that body is the answer.
		data, err := io.ReadAll(io.LimitReader(resp.Body, int64(u.opts.MaxMessage)+1))
		if err == nil && len(data) > u.opts.MaxMessage {
			size := max(resp.ContentLength, int64(len(data)))
			u.deliver(nil, &jsonrpc.OversizeError{Size: size, Limit: u.opts.MaxMessage, ID: id})
			return
		}
		if err != nil || !u.answers(data, id, req.Method) {
			fail(fmt.Sprintf("the upstream answered HTTP %d without a JSON-RPC answer", resp.StatusCode))
			return
		}
		u.deliver(data, nil)
	case resp.StatusCode == http.StatusNotFound && u.sessionID() != "":
		fail("the upstream ended its session (HTTP 404); reconnect the client to start a new one")
	default:
		fail(fmt.Sprintf("the upstream answered HTTP %d%s", resp.StatusCode, snippet(resp.Body)))
	}
}

// answers reports whether data is a JSON-RPC response to id, noting the
// protocol version an initialize result names.
func (u *HTTPUpstream) answers(data, id []byte, method string) bool {
	m, err := jsonrpc.Parse(data)
	if err != nil {
		return false
	}
	r, ok := m.(*jsonrpc.Response)
	if !ok || !bytes.Equal(jsonrpc.EncodeID(r.ID), id) {
		return false
	}
	u.noteInitialize(r)
	if method == "tools/list" && r.Error == nil {
		u.params.learn(r.Result)
	}
	return true
}

func (u *HTTPUpstream) noteInitialize(r *jsonrpc.Response) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.initIDs[string(jsonrpc.EncodeID(r.ID))] || r.Error != nil {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(r.Result, &res) == nil && res.ProtocolVersion != "" {
		u.version = res.ProtocolVersion
	}
}

// stream delivers the events of an SSE response until the answer to id
// has come. A stream that ends before it is resumed from its last event id
// when the server gave one (the disconnection is not a cancellation).
func (u *HTTPUpstream) stream(resp *http.Response, id []byte, method string) bool {
	body, retry := resp.Body, time.Second
	for attempt := 0; ; attempt++ {
		sr := newSSEReader(body, u.opts.MaxMessage)
		answered, lastID, err := u.events(sr, id, method, &retry)
		body.Close()
		if answered {
			return true
		}
		if u.ctx.Err() != nil {
			return false
		}
		if lastID == "" || attempt >= 5 {
			u.fail(id, fmt.Sprintf("the upstream's stream ended before it answered (%v)", err))
			return false
		}
		if !sleep(u.ctx, retry) {
			return false
		}
		r, err := u.get(lastID)
		if err != nil || r.StatusCode != http.StatusOK {
			if r != nil {
				drain(r)
			}
			u.fail(id, "the upstream's stream ended before it answered, and it could not be resumed")
			return false
		}
		body = r.Body
	}
}

// events reads one SSE body; it reports whether the answer to id came (a
// nil id reads to the end), the last event id, and why it stopped.
func (u *HTTPUpstream) events(sr *sseReader, id []byte, method string, retry *time.Duration) (bool, string, error) {
	for {
		ev, err := sr.Next()
		if errors.Is(err, errEventTooLarge) {
			if id == nil {
				u.log.Warn("upstream sent an event over the message limit; dropped")
				continue
			}
			// It may have been the answer: answer with the error, so the
			// request is answered once and nothing oversized is guessed at.
			u.deliver(nil, &jsonrpc.OversizeError{Size: int64(u.opts.MaxMessage) + 1, Limit: u.opts.MaxMessage, ID: id})
			return true, sr.lastID, nil
		}
		if err != nil {
			return false, sr.lastID, err
		}
		if ev.Retry > 0 {
			*retry = ev.Retry
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // a priming event: an id to resume from, no message
		}
		done := id != nil && u.answers(ev.Data, id, method)
		u.deliver(bytes.Clone(ev.Data), nil)
		if done {
			return true, sr.lastID, nil
		}
	}
}

// startStandalone opens the GET stream on which a 2025 server sends what
// does not belong to a request; a server without one answers 405.
func (u *HTTPUpstream) startStandalone() {
	u.mu.Lock()
	if u.standalone || u.version >= Stateless || u.closing {
		u.mu.Unlock()
		return
	}
	u.standalone = true
	u.mu.Unlock()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.listen()
	}()
}

func (u *HTTPUpstream) listen() {
	lastID, retry, failures := "", time.Second, 0
	for u.ctx.Err() == nil {
		r, err := u.get(lastID)
		switch {
		case err != nil:
			failures++
		case r.StatusCode == http.StatusMethodNotAllowed:
			drain(r)
			return
		case r.StatusCode != http.StatusOK:
			drain(r)
			failures++
		default:
			sr := newSSEReader(r.Body, u.opts.MaxMessage)
			_, last, _ := u.events(sr, nil, "", &retry)
			r.Body.Close()
			if last != lastID {
				failures = 0
			}
			lastID = last
		}
		if failures >= 5 {
			u.log.Warn("the upstream's standalone stream failed five times; notifications outside requests are lost")
			return
		}
		if !sleep(u.ctx, retry*time.Duration(1+failures)) {
			return
		}
	}
}

// get opens an SSE stream: the standalone one, or (with lastID) the
// resumption of a broken one.
func (u *HTTPUpstream) get(lastID string) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(u.ctx, http.MethodGet, u.url, nil)
	if err != nil {
		return nil, err
	}
	u.header(hr.Header)
	hr.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		hr.Header.Set(HeaderLastEventID, lastID)
	}
	return u.opts.Client.Do(hr)
}

func (u *HTTPUpstream) sessionID() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.session
}

// fail answers the request id with an error of Weir's own.
func (u *HTTPUpstream) fail(id []byte, why string) {
	u.log.Warn("upstream request failed", "why", why)
	u.deliver(jsonrpc.ErrorResponse(id, jsonrpc.CodeServerUnavailable, why), nil)
}

func (u *HTTPUpstream) deliver(msg []byte, err error) {
	select {
	case u.in <- inbound{msg, err}:
	case <-u.ctx.Done():
	}
}

// CloseWrite ends the upstream session: the client has gone. The session
// is deleted (best effort), and Read returns io.EOF once what is in flight
// has stopped.
func (u *HTTPUpstream) CloseWrite() error {
	u.mu.Lock()
	if u.closing {
		u.mu.Unlock()
		return nil
	}
	u.closing = true
	sid := u.session
	u.mu.Unlock()
	go func() {
		if sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if hr, err := http.NewRequestWithContext(ctx, http.MethodDelete, u.url, nil); err == nil {
				u.header(hr.Header)
				if r, err := u.opts.Client.Do(hr); err == nil {
					drain(r)
				}
			}
			cancel()
		}
		u.cancel()
		u.wg.Wait()
		u.end.Do(func() { close(u.ended) })
	}()
	return nil
}

// Close stops everything: requests in flight are abandoned and a Read in
// progress returns io.EOF.
func (u *HTTPUpstream) Close() error {
	u.mu.Lock()
	u.closing = true
	u.mu.Unlock()
	u.cancel()
	u.end.Do(func() { close(u.ended) })
	return nil
}

// requestName is the value of the Mcp-Name header: the tool or prompt
// name, or the resource URI.
func requestName(req *jsonrpc.Request) (string, bool) {
	key := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}[req.Method]
	if key == "" {
		return "", false
	}
	var v string
	return v, json.Unmarshal(jsonrpc.Member(req.Params, key), &v) == nil
}

// metaString is params._meta[key] when it is a string.
func metaString(params []byte, key string) string {
	var out string
	_ = json.Unmarshal(jsonrpc.Member(jsonrpc.Member(params, "_meta"), key), &out)
	return out
}

func mediaType(v string) string {
	mt, _, _ := strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// snippet is the start of an error body, for a message that says what the
// upstream said.
func snippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 200))
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "?"))
	if s == "" {
		return ""
	}
	return ": " + s
}

func drain(r *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10))
	r.Body.Close()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
