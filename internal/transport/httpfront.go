package transport

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// HeaderWeirSession names the taint session a request belongs to: the same
// key as WEIR_SESSION, so HTTP clients, weir run proxies and replicas can
// share one session.
const HeaderWeirSession = "Weir-Session"

// FrontSession is what a relay behind the front needs to know of the
// session it serves.
type FrontSession struct {
	// Principal is the authenticated principal (tenant) that owns the
	// session; "" when Weir runs without credentials on loopback.
	Principal string
	// Taint is the Weir session key the relay decides under. It already
	// carries the principal, so two tenants never share one.
	Taint string
	// HTTP is the Mcp-Session-Id, "" for the stateless requests of the
	// 2026-07-28 protocol (they share one relay per taint session).
	HTTP string
}

// FrontOptions configure a Front.
type FrontOptions struct {
	// Serve runs one relay with client as its client side, until client's
	// Read returns io.EOF; the front calls it in a goroutine it owns, once
	// per session.
	Serve func(ctx context.Context, s FrontSession, client Transport)
	// DefaultSession is the taint session of requests that name none
	// (WEIR_SESSION in Weir's environment); "" means none.
	DefaultSession string
	// MaxMessage bounds a request body (0: jsonrpc.DefaultMaxMessage).
	MaxMessage int
	// IdleTimeout ends a session no request has used for this long (0: 30
	// minutes).
	IdleTimeout time.Duration
	// MaxSessions bounds the sessions of one principal (0: 256).
	MaxSessions int
	// Key, the install key, makes the Mcp-Session-Ids the front mints
	// sealed, so that every front with the same key (the replicas of a
	// gateway) can serve any request of the session: see SessionMaxAge.
	// Without it ids are random and known only to the front that minted
	// them.
	Key    []byte
	Logger *slog.Logger
}

// Transport is the relay's view of one side (relay.Transport, which this
// package cannot import).
type Transport interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, msg []byte) error
	CloseWrite() error
	Close() error
}

var _ Transport = (*frontConn)(nil)
var _ Transport = (*HTTPUpstream)(nil)
var _ Transport = (*Stdio)(nil)

type principalKey struct{}

// WithPrincipal returns ctx carrying the authenticated principal, for the
// authenticating handler in front of a Front.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// Principal is the principal WithPrincipal stored, or "".
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// Front is Weir as a Streamable HTTP server: an http.Handler for the MCP
// endpoint that turns each client session into a relay's client side.
//
// A 2025 client's initialize opens an HTTP session (Mcp-Session-Id, minted
// from crypto randomness and bound to the principal that opened it) with a
// relay of its own; DELETE, or no use for IdleTimeout, ends it. A
// 2026-07-28 request carries everything in its _meta and needs no HTTP
// session: such requests are served by one relay per taint session, named
// by the Weir-Session header or DefaultSession, and refused when neither
// names one, because a guessed session would join or split taint wrongly.
//
// Each answer goes back on the HTTP request that carried its request: as
// one JSON body when the answer is the first thing to send, else as an SSE
// stream that carries what the relay sends first (progress, an approval
// question) and ends with the answer. Messages that belong to no request go
// to the session's GET stream, or wait there (bounded) until one opens.
type Front struct {
	opts   FrontOptions
	log    *slog.Logger
	sealer cipher.AEAD // seals Mcp-Session-Ids; nil without a key

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // relays and the janitor

	mu        sync.Mutex
	sessions  map[string]*frontConn // Mcp-Session-Id → session
	stateless map[string]*frontConn // principal NUL taint → shared session
	perOwner  map[string]int

	// Sessions counts the sessions open now, for metrics.
	Sessions atomic.Int64
}

// NewFront returns a front; Close ends its sessions.
func NewFront(opts FrontOptions) *Front {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = jsonrpc.DefaultMaxMessage
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 30 * time.Minute
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 256
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var sealer cipher.AEAD
	if len(opts.Key) > 0 {
		var err error
		if sealer, err = sessionAEAD(opts.Key); err != nil {
			log.Warn("session ids are not sealed: only this process can serve its sessions", "err", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &Front{
		opts: opts, log: log, sealer: sealer, ctx: ctx, cancel: cancel,
		sessions:  map[string]*frontConn{},
		stateless: map[string]*frontConn{},
		perOwner:  map[string]int{},
	}
	f.wg.Add(1)
	go f.janitor()
	return f
}

// Close ends every session and waits for their relays.
func (f *Front) Close() {
	f.cancel()
	f.mu.Lock()
	var all []*frontConn
	for _, c := range f.sessions {
		all = append(all, c)
	}
	for _, c := range f.stateless {
		all = append(all, c)
	}
	f.mu.Unlock()
	for _, c := range all {
		f.end(c)
	}
	f.wg.Wait()
}

func (f *Front) janitor() {
	defer f.wg.Done()
	tick := time.NewTicker(min(time.Minute, f.opts.IdleTimeout/2+time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-tick.C:
		}
		f.mu.Lock()
		var idle []*frontConn
		for _, m := range []map[string]*frontConn{f.sessions, f.stateless} {
			for _, c := range m {
				if c.idleFor() > f.opts.IdleTimeout {
					idle = append(idle, c)
				}
			}
		}
		f.mu.Unlock()
		for _, c := range idle {
			f.log.Info("session idle; ended", "session", c.info.HTTP, "taint", c.info.Taint)
			f.end(c)
		}
	}
}

// end removes a session and ends its relay's client side.
func (f *Front) end(c *frontConn) {
	f.mu.Lock()
	removed := false
	if c.info.HTTP != "" && f.sessions[c.info.HTTP] == c {
		delete(f.sessions, c.info.HTTP)
		removed = true
	}
	if k := c.info.Principal + "\x00" + c.info.Taint; c.info.HTTP == "" && f.stateless[k] == c {
		delete(f.stateless, k)
		removed = true
	}
	if removed {
		f.perOwner[c.info.Principal]--
		f.Sessions.Add(-1)
	}
	f.mu.Unlock()
	c.close()
}

// errSessionExists: a session with that Mcp-Session-Id is open already.
var errSessionExists = errors.New("the session is open already")

// open starts a session and its relay.
func (f *Front) open(info FrontSession) (*frontConn, error) { return f.openWith(info, false) }

// openWith starts a session and its relay; a resumed session is not ready
// for the client's requests until it has initialised (see lookup).
func (f *Front) openWith(info FrontSession, resumed bool) (*frontConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		return nil, errors.New("shutting down")
	}
	if info.HTTP == "" {
		// Concurrent first requests of one taint session share its relay.
		if c := f.stateless[info.Principal+"\x00"+info.Taint]; c != nil {
			return c, nil
		}
	}
	if info.HTTP != "" && f.sessions[info.HTTP] != nil {
		return nil, errSessionExists
	}
	if f.perOwner[info.Principal] >= f.opts.MaxSessions {
		return nil, fmt.Errorf("too many open sessions (%d); end one with DELETE or wait for idle ones to expire", f.opts.MaxSessions)
	}
	c := newFrontConn(info, f.log)
	if resumed {
		c.ready = make(chan struct{})
	}
	if info.HTTP != "" {
		f.sessions[info.HTTP] = c
	} else {
		f.stateless[info.Principal+"\x00"+info.Taint] = c
	}
	f.perOwner[info.Principal]++
	f.Sessions.Add(1)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.end(c)
		f.opts.Serve(f.ctx, info, c)
	}()
	return c, nil
}

// ServeHTTP serves the MCP endpoint.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		f.post(w, r)
	case http.MethodGet:
		f.get(w, r)
	case http.MethodDelete:
		f.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "MCP's Streamable HTTP endpoint takes POST, GET and DELETE")
	}
}

// httpError writes a plain-text error.
func httpError(w http.ResponseWriter, status int, msg string) {
	http.Error(w, msg, status)
}

// rpcError writes a JSON-RPC error with an HTTP status, for a request
// refused before any relay saw it.
func rpcError(w http.ResponseWriter, status int, id []byte, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.ErrorResponse(id, code, msg))
}

func accepts(r *http.Request) (jsonOK, streamOK bool) {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			switch mediaType(part) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return
}

// supported lists the protocol versions the front speaks; the relay and
// the upstream decide the rest.
var supported = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", Stateless}

func knownVersion(v string) bool {
	for _, s := range supported {
		if s == v {
			return true
		}
	}
	return false
}

func (f *Front) post(w http.ResponseWriter, r *http.Request) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	jsonOK, streamOK := accepts(r)
	if !jsonOK || !streamOK {
		httpError(w, http.StatusNotAcceptable, "Accept must list both application/json and text/event-stream")
		return
	}
	if r.Header.Get(HeaderLastEventID) != "" {
		httpError(w, http.StatusBadRequest, "Last-Event-ID resumes a stream with GET, not POST")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(f.opts.MaxMessage)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			rpcError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeMessageTooLarge,
				fmt.Sprintf("the request body is over the limit of %d bytes (--max-message-bytes)", f.opts.MaxMessage))
			return
		}
		httpError(w, http.StatusBadRequest, "could not read the request body")
		return
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		rpcError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not part of MCP since 2025-06-18; send one message per request")
		return
	}
	m, err := jsonrpc.Parse(body)
	if err != nil {
		var bad *jsonrpc.BadMessageError
		if errors.As(err, &bad) {
			rpcError(w, http.StatusBadRequest, bad.ID, bad.Code, bad.Reason)
			return
		}
		rpcError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, err.Error())
		return
	}
	header := r.Header.Get(HeaderProtocol)
	req, isReq := m.(*jsonrpc.Request)
	var id []byte
	if isReq && req.ID.IsValid() {
		id = jsonrpc.EncodeID(req.ID)
	}
	principal := Principal(r.Context())
	taint, err := f.taintKey(r)
	if err != nil {
		rpcError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, err.Error())
		return
	}

	var c *frontConn
	sid := r.Header.Get(HeaderSession)
	meta := ""
	if isReq {
		meta = metaString(req.Params, jsonrpc.MetaProtocolVersion)
	}
	switch {
	case isReq && req.Method == "initialize" && meta == "":
		if sid != "" {
			rpcError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "initialize opens a new session; send it without Mcp-Session-Id")
			return
		}
		name := rand.Text()
		if taint == "" {
			taint = "http:" + name
		}
		newID := f.mintID(name, principal, scoped(principal, taint), req.Params)
		if c, err = f.open(FrontSession{Principal: principal, Taint: scoped(principal, taint), HTTP: newID}); err != nil {
			rpcError(w, http.StatusServiceUnavailable, id, jsonrpc.CodeServerUnavailable, err.Error())
			return
		}
		w.Header().Set(HeaderSession, newID)
	case sid != "":
		if c, err = f.lookup(r.Context(), sid, principal); err != nil {
			rpcError(w, http.StatusServiceUnavailable, id, jsonrpc.CodeServerUnavailable, err.Error())
			return
		}
		if c == nil {
			rpcError(w, http.StatusNotFound, id, jsonrpc.CodeInvalidRequest, "no such session (it ended, or expired); initialize a new one")
			return
		}
		if taint != "" && scoped(principal, taint) != c.info.Taint {
			rpcError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "the Weir-Session header differs from the one this session was opened with")
			return
		}
		if header != "" && !knownVersion(header) {
			rpcError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("unsupported %s %q (supported: %s)", HeaderProtocol, header, strings.Join(supported, ", ")))
			return
		}
	case meta != "" || header >= Stateless:
		if err := checkStatelessHeaders(r, req, meta, header); err != nil {
			rpcError(w, http.StatusBadRequest, id, CodeHeaderMismatch, err.Error())
			return
		}
		if taint == "" {
			rpcError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
				"a request without an HTTP session must name its Weir session in the Weir-Session header (or run Weir with WEIR_SESSION set): Weir does not guess which session's data a call may carry")
			return
		}
		key := principal + "\x00" + scoped(principal, taint)
		f.mu.Lock()
		c = f.stateless[key]
		f.mu.Unlock()
		if c == nil {
			if c, err = f.open(FrontSession{Principal: principal, Taint: scoped(principal, taint)}); err != nil {
				rpcError(w, http.StatusServiceUnavailable, id, jsonrpc.CodeServerUnavailable, err.Error())
				return
			}
		}
	default:
		rpcError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "missing Mcp-Session-Id: send initialize first (or a 2026-07-28 request with its _meta)")
		return
	}
	c.touch()
	if isReq && req.Method == "tools/call" && c.info.HTTP == "" {
		name, _ := requestName(req)
		if err := checkParamHeaders(r.Header, c.params.of(name), req.Params); err != nil {
			rpcError(w, http.StatusBadRequest, id, CodeHeaderMismatch, err.Error())
			return
		}
	}

	if id == nil {
		// A notification or a response: the relay takes it; nothing comes
		// back on this request.
		if isReq && req.Method == "notifications/cancelled" {
			body = c.cancelledForRelay(body)
		}
		if err := c.push(r.Context(), body); err != nil {
			httpError(w, http.StatusServiceUnavailable, "the session ended")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	c.serveRequest(w, r, body, id, req, c.info.HTTP == "")
}

// checkStatelessHeaders applies 2026-07-28's rule that the headers a
// request carries agree with its body, so that an intermediary that routes
// on them cannot be shown one thing and the server another. What else a
// request lacks is the upstream's to refuse.
func checkStatelessHeaders(r *http.Request, req *jsonrpc.Request, meta, header string) error {
	if req == nil {
		return fmt.Errorf("a message without an HTTP session must be a request, not a response")
	}
	if meta != "" && header != "" && meta != header {
		return fmt.Errorf("header mismatch: %s %q differs from params._meta[%q] %q", HeaderProtocol, header, jsonrpc.MetaProtocolVersion, meta)
	}
	if header < Stateless {
		return nil
	}
	got := r.Header.Get(HeaderMethod)
	if got == "" {
		return fmt.Errorf("missing required %s header", HeaderMethod)
	}
	if got != req.Method {
		return fmt.Errorf("header mismatch: %s %q differs from the method %q", HeaderMethod, got, req.Method)
	}
	if name, ok := requestName(req); ok {
		h := r.Header.Get(HeaderName)
		if h == "" {
			return fmt.Errorf("missing required %s header for %s", HeaderName, req.Method)
		}
		dec, valid := decodeHeaderValue(h)
		if h != name && (!valid || dec != name) {
			return fmt.Errorf("header mismatch: %s %q differs from the name %q", HeaderName, h, name)
		}
	}
	return nil
}

// taintKey is the taint session a request names, "" when it names none.
// A named session is keyed as weir run keys WEIR_SESSION, so the two
// share it.
func (f *Front) taintKey(r *http.Request) (string, error) {
	k := r.Header.Get(HeaderWeirSession)
	if k == "" {
		k = f.opts.DefaultSession
	}
	if k == "" {
		return "", nil
	}
	if len(k) > 200 {
		return "", fmt.Errorf("the %s header is over 200 bytes", HeaderWeirSession)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return "", fmt.Errorf("the %s header must be visible ASCII", HeaderWeirSession)
		}
	}
	return "env:" + k, nil
}

// scoped puts a principal's sessions in a namespace of their own.
func scoped(principal, taint string) string {
	if principal == "" {
		return taint
	}
	return principal + "/" + taint
}

func (f *Front) get(w http.ResponseWriter, r *http.Request) {
	if _, streamOK := accepts(r); !streamOK {
		httpError(w, http.StatusNotAcceptable, "GET opens an SSE stream: Accept must list text/event-stream")
		return
	}
	sid := r.Header.Get(HeaderSession)
	if sid == "" {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, "GET needs an Mcp-Session-Id (a 2026-07-28 client listens with subscriptions/listen instead)")
		return
	}
	c, err := f.lookup(r.Context(), sid, Principal(r.Context()))
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if c == nil {
		httpError(w, http.StatusNotFound, "no such session (it ended, or expired); initialize a new one")
		return
	}
	c.touch()
	if last := r.Header.Get(HeaderLastEventID); last != "" {
		s, after, ok := c.resume(last)
		if !ok {
			httpError(w, http.StatusNotFound, "that stream cannot be resumed (unknown event id, or it has ended)")
			return
		}
		c.pump(w, r, s, after, true, false)
		return
	}
	s, ok := c.standaloneStream()
	if !ok {
		httpError(w, http.StatusConflict, "this session already has an open GET stream")
		return
	}
	c.pump(w, r, s, -1, true, false)
}

func (f *Front) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(HeaderSession)
	if sid == "" {
		httpError(w, http.StatusBadRequest, "DELETE needs the Mcp-Session-Id of the session to end")
		return
	}
	principal := Principal(r.Context())
	f.mu.Lock()
	c := f.sessions[sid]
	f.mu.Unlock()
	if c == nil || c.info.Principal != principal {
		// A sealed id of this principal that another replica serves: it
		// holds nothing here to end, and ends there when it idles.
		if _, ok := f.openID(sid, principal, time.Now()); ok && c == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		httpError(w, http.StatusNotFound, "no such session")
		return
	}
	f.end(c)
	w.WriteHeader(http.StatusNoContent)
}

// frontConn is one session's client side: the relay reads what the
// client POSTs and writes what goes back, which the conn routes to the
// HTTP request it belongs to.
type frontConn struct {
	info  FrontSession
	log   *slog.Logger
	in    chan []byte
	done  chan struct{}
	ready chan struct{} // closed once a resumed session has initialised
	once  sync.Once
	seen  atomic.Int64 // unix nanos of the last use

	mu         sync.Mutex
	nextID     int64
	pending    map[int64]*pendingCall // Weir's id toward the relay → call
	byClient   map[string]int64       // client's raw id → Weir's, for cancellations
	progress   map[string]*outStream  // progress token → the stream of its request
	streams    map[string]*outStream  // stream id → stream, for resumption
	standalone *outStream
	listening  bool // a GET is attached to standalone
	ver        string
	params     paramTable // tools' x-mcp-header arguments, from tools/list
}

type pendingCall struct {
	clientID []byte
	method   string
	stream   *outStream
	token    string
}

func newFrontConn(info FrontSession, log *slog.Logger) *frontConn {
	c := &frontConn{
		info: info, log: log,
		in:       make(chan []byte, 16),
		done:     make(chan struct{}),
		ready:    closedChan,
		pending:  map[int64]*pendingCall{},
		byClient: map[string]int64{},
		progress: map[string]*outStream{},
		streams:  map[string]*outStream{},
	}
	c.standalone = newOutStream("0", 256)
	c.streams[c.standalone.id] = c.standalone
	c.touch()
	return c
}

// closedChan is the ready channel of every session opened here.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *frontConn) touch()          { c.seen.Store(time.Now().UnixNano()) }
func (c *frontConn) version() string { c.mu.Lock(); defer c.mu.Unlock(); return c.ver }
func (c *frontConn) idleFor() time.Duration {
	c.mu.Lock()
	busy := len(c.pending) > 0 || c.listening
	c.mu.Unlock()
	if busy {
		return 0
	}
	return time.Since(time.Unix(0, c.seen.Load()))
}

func (c *frontConn) close() {
	c.once.Do(func() { close(c.done) })
	c.mu.Lock()
	for _, s := range c.streams {
		s.finish()
	}
	c.mu.Unlock()
}

// push hands the relay one message from the client.
func (c *frontConn) push(ctx context.Context, msg []byte) error {
	select {
	case c.in <- msg:
		return nil
	case <-c.done:
		return io.EOF
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Read returns the next message the client sent.
func (c *frontConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CloseWrite: the relay has nothing more for the client (the server
// ended). The session ends with it.
func (c *frontConn) CloseWrite() error { c.close(); return nil }

// Close ends the session.
func (c *frontConn) Close() error { c.close(); return nil }

// Write routes one message from the relay to the HTTP request it belongs
// to.
func (c *frontConn) Write(_ context.Context, msg []byte) error {
	m, err := jsonrpc.Parse(msg)
	if err != nil {
		return fmt.Errorf("writing to the client: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if resp, ok := m.(*jsonrpc.Response); ok {
		n, err := strconv.ParseInt(string(jsonrpc.EncodeID(resp.ID)), 10, 64)
		p := c.pending[n]
		if err != nil || p == nil {
			c.log.Warn("an answer for no request of this session; dropped")
			return nil
		}
		delete(c.pending, n)
		delete(c.byClient, string(p.clientID))
		if p.token != "" {
			delete(c.progress, p.token)
		}
		if p.method == "tools/list" && resp.Error == nil {
			c.params.learn(resp.Result)
		}
		if p.method == "initialize" && resp.Error == nil {
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(resp.Result, &res) == nil {
				c.ver = res.ProtocolVersion
			}
		}
		out, _ := jsonrpc.ReplaceMember(msg, "id", p.clientID)
		p.stream.add(out, true)
		return nil
	}
	req := m.(*jsonrpc.Request)
	if out, s := c.subscription(msg, req); s != nil {
		s.add(out, false)
		return nil
	}
	s := c.route(req)
	if s == nil {
		c.log.Warn("a message for a client that has no stream open to take it; dropped", "method", req.Method)
		return nil
	}
	s.add(bytes.Clone(msg), false)
	return nil
}

// subscription routes a notification that names its subscriptions/listen
// request (by the id the front gave it) to that request's stream, naming
// it by the client's id again.
func (c *frontConn) subscription(msg []byte, req *jsonrpc.Request) ([]byte, *outStream) {
	if !bytes.Contains(req.Params, []byte(jsonrpc.MetaSubscriptionID)) {
		return nil, nil
	}
	n, err := strconv.ParseInt(string(jsonrpc.Member(jsonrpc.Member(req.Params, "_meta"), jsonrpc.MetaSubscriptionID)), 10, 64)
	p := c.pending[n]
	if err != nil || p == nil {
		return nil, nil
	}
	out, ok := jsonrpc.ReplaceAt(msg, p.clientID, "params", "_meta", jsonrpc.MetaSubscriptionID)
	if !ok {
		return nil, nil
	}
	return out, p.stream
}

// errorCode is the code of an error response, 0 for anything else.
func errorCode(msg []byte) int64 {
	var m struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Error == nil {
		return 0
	}
	return m.Error.Code
}

// route picks the stream for a message that answers nothing: the stream
// of the request a progress notification is about; else, when exactly one
// request is in flight, that request's stream (a server's question during
// a call, or Weir's approval question about a held call, relates to it);
// else the GET stream when it is open; else the newest request's stream
// (the client reads them all); else the GET stream's backlog. A
// stateless client has no GET stream: only its requests can carry it.
func (c *frontConn) route(req *jsonrpc.Request) *outStream {
	if req.Method == "notifications/progress" {
		var p struct {
			Token json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if s := c.progress[string(p.Token)]; s != nil && !s.isDone() {
				return s
			}
		}
	}
	var newest, only *outStream
	var newestN int64 = -1
	open := 0
	for n, p := range c.pending {
		if p.stream.isDone() || p.method == "subscriptions/listen" {
			continue
		}
		open++
		only = p.stream
		if n > newestN {
			newest, newestN = p.stream, n
		}
	}
	switch {
	case open == 1:
		return only
	case c.listening:
		return c.standalone
	case newest != nil:
		return newest
	case c.info.HTTP == "":
		return nil
	}
	return c.standalone
}

// cancelledForRelay rewrites a client's notifications/cancelled to name
// the request by the id the relay knows it under.
func (c *frontConn) cancelledForRelay(body []byte) []byte {
	id, err := jsonrpc.ParseID(jsonrpc.Member(jsonrpc.Member(body, "params"), "requestId"))
	if err != nil {
		return body
	}
	c.mu.Lock()
	n, ok := c.byClient[string(jsonrpc.EncodeID(id))]
	c.mu.Unlock()
	if !ok {
		return body
	}
	out, _ := jsonrpc.ReplaceAt(body, []byte(strconv.FormatInt(n, 10)), "params", "requestId")
	return out
}

// serveRequest hands one request to the relay under an id of the front's
// own (ids of concurrent HTTP requests need not be unique) and writes what
// comes back.
func (c *frontConn) serveRequest(w http.ResponseWriter, r *http.Request, body, id []byte, req *jsonrpc.Request, stateless bool) {
	// A 2025-11-25 session's streams open at once, primed; others wait
	// for the first message, so a 2026-07-28 error can carry its status.
	prime := !stateless && (c.version() >= "2025-11-25" || r.Header.Get(HeaderProtocol) >= "2025-11-25")
	c.mu.Lock()
	c.nextID++
	n := c.nextID
	// A request's stream keeps its last 1024 messages: a server that floods
	// progress while the client does not read cannot grow it without bound,
	// and the answer, always last, is never dropped.
	s := newOutStream(strconv.FormatInt(n, 10), 1024)
	s.modern = stateless
	p := &pendingCall{clientID: id, method: req.Method, stream: s}
	if key := string(id); c.byClient[key] == 0 {
		c.byClient[key] = n
	}
	var tok struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &tok) == nil && len(tok.Meta.Token) > 0 {
		p.token = string(tok.Meta.Token)
		c.progress[p.token] = s
	}
	c.pending[n] = p
	c.streams[s.id] = s
	c.mu.Unlock()

	out, ok := jsonrpc.ReplaceMember(body, "id", []byte(strconv.FormatInt(n, 10)))
	if !ok {
		out = body
	}
	if err := c.push(r.Context(), out); err != nil {
		c.forget(n, s)
		httpError(w, http.StatusServiceUnavailable, "the session ended")
		return
	}
	c.pump(w, r, s, 0, prime, prime)
	if !s.isDone() && stateless && r.Context().Err() != nil {
		// A 2026-07-28 client cancels by going away; a 2025 client's
		// disconnection is not a cancellation (it may resume).
		cancel := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"the client closed the request"}}`, n)
		_ = c.push(context.Background(), []byte(cancel))
	}
}

func (c *frontConn) forget(n int64, s *outStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pending[n]; p != nil {
		delete(c.byClient, string(p.clientID))
		if p.token != "" {
			delete(c.progress, p.token)
		}
	}
	delete(c.pending, n)
	delete(c.streams, s.id)
}

// standaloneStream claims the GET stream.
func (c *frontConn) standaloneStream() (*outStream, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listening {
		return nil, false
	}
	c.listening = true
	return c.standalone, true
}

// resume finds the stream an event id belongs to.
func (c *frontConn) resume(lastID string) (*outStream, int, bool) {
	sid, seq, ok := strings.Cut(lastID, "_")
	if !ok {
		return nil, 0, false
	}
	n, err := strconv.Atoi(seq)
	if err != nil {
		return nil, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[sid]
	if s == nil || (s == c.standalone && c.listening) {
		return nil, 0, false
	}
	if s == c.standalone {
		c.listening = true
	}
	return s, n, true
}

// pump writes a stream to one HTTP response until the stream is done or
// the client goes away. The first message decides the form: the answer
// alone goes as a JSON body, anything else opens an SSE stream (whose
// events are numbered so that a broken stream can be resumed); a GET is
// always SSE. after is the last event the client has (from Last-Event-ID);
// -1 means "from what has not been written yet".
func (c *frontConn) pump(w http.ResponseWriter, r *http.Request, s *outStream, after int, sse, prime bool) {
	rc := http.NewResponseController(w)
	if s == c.standalone {
		defer func() {
			c.mu.Lock()
			c.listening = false
			c.mu.Unlock()
		}()
	}
	if after < 0 {
		after = s.written()
	}
	if sse {
		startSSE(w)
		if prime {
			// The priming event (2025-11-25): an id to resume from, before
			// anything else, so a stream broken early can be resumed.
			_, _ = io.WriteString(w, "id: "+s.id+"_0\ndata: \n\n")
		}
		_ = rc.Flush()
	}
	next := after + 1
	for {
		evs, done, answered, wake := s.since(next)
		if !sse && answered && len(evs) == 1 && next == 1 && s.modern {
			// A 2026-07-28 protocol error is a JSON body under its
			// status; every other answer goes as SSE, as the reference
			// servers answer.
			if st := statusOf(errorCode(evs[0].data)); st != 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(st)
				_, _ = w.Write(evs[0].data)
				s.wrote(evs[0].seq)
				c.release(s)
				return
			}
		}
		if len(evs) > 0 && !sse {
			sse = true
			startSSE(w)
		}
		for _, e := range evs {
			if err := writeEvent(w, s.id+"_"+strconv.Itoa(e.seq), e.data); err != nil {
				return
			}
			next = e.seq + 1
		}
		if len(evs) > 0 {
			if err := rc.Flush(); err != nil {
				return
			}
			s.wrote(next - 1)
		}
		if done {
			// since saw the stream done, so evs held everything left.
			if answered {
				c.release(s)
			} else if !sse {
				httpError(w, http.StatusServiceUnavailable, "the session ended before the request was answered")
			}
			return
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		case <-c.done:
			s.finish() // write what is left, then stop
		}
	}
}

func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
}

// release forgets a request stream whose answer has been written, after
// a grace period: a client whose connection broke as the answer went out
// never got it, and may still resume from its last event id.
func (c *frontConn) release(s *outStream) {
	if s == c.standalone {
		return
	}
	time.AfterFunc(resumeGrace, func() {
		c.mu.Lock()
		delete(c.streams, s.id)
		c.mu.Unlock()
	})
}

// resumeGrace is how long a finished stream can still be resumed.
const resumeGrace = 30 * time.Second

// outStream is the messages bound for one HTTP response, kept until they
// are written (and, for the GET stream, the last few after that, so a
// broken stream can be resumed).
type outStream struct {
	id     string
	keep   int  // the most events kept; older ones are dropped
	modern bool // a 2026-07-28 request's: protocol errors set the HTTP status

	mu     sync.Mutex
	events []outEvent
	seq    int
	sent   int  // the last event written to a client
	done   bool // nothing more will be added
	answer bool // the last event is the answer
	wake   chan struct{}
}

type outEvent struct {
	seq  int
	data []byte
}

func newOutStream(id string, keep int) *outStream {
	return &outStream{id: id, keep: keep, wake: make(chan struct{})}
}

func (s *outStream) add(data []byte, answer bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.seq++
	s.events = append(s.events, outEvent{s.seq, data})
	if s.keep > 0 && len(s.events) > s.keep {
		s.events = s.events[len(s.events)-s.keep:]
	}
	if answer {
		s.done, s.answer = true, true
	}
	close(s.wake)
	s.wake = make(chan struct{})
}

func (s *outStream) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.done = true
		close(s.wake)
		s.wake = make(chan struct{})
	}
}

func (s *outStream) isDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// since returns the events numbered from seq on, whether the stream is
// done, whether it ended with its answer, and a channel closed by the next
// change.
func (s *outStream) since(seq int) ([]outEvent, bool, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []outEvent
	for _, e := range s.events {
		if e.seq >= seq {
			out = append(out, e)
		}
	}
	return out, s.done, s.answer, s.wake
}

func (s *outStream) wrote(seq int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = max(s.sent, seq)
}

func (s *outStream) written() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}
