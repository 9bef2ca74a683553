package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/transport"
)

// Sep joins a server's name to the names of its tools and prompts:
// SERVER__NAME. Server names hold no "_", so the first "__" always ends
// the server's name and the rest is the server's own name, whatever it
// holds: the mapping is injective and reversible.
const Sep = "__"

// uriSep joins a server's name to its resource URIs: SERVER+URI, which is
// still a URI (a scheme may hold '+'), and splits back at the first '+'.
const uriSep = "+"

// Gateway is many servers behind one MCP endpoint. Each client session
// gets a relay per server, each with that server's labels, pins and
// rate limits, all deciding in the client's one taint session; a
// multiplexer in front of them merges what the client lists and routes
// each call to its server by name.
type Gateway struct {
	servers []ServerConfig
	relays  *Relays
	version string
	stderr  io.Writer
	// restart bounds the backoff between restarts of a failed server.
	minBackoff, maxBackoff time.Duration
}

// NewGateway returns a gateway of servers whose relays come from rs.
// Standard error of stdio servers goes to stderr.
func NewGateway(servers []ServerConfig, rs *Relays, version string, stderr io.Writer) *Gateway {
	for _, s := range servers {
		rs.health.set(s.Name, true)
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	return &Gateway{servers: servers, relays: rs, version: version, stderr: stderr, minBackoff: time.Second, maxBackoff: 30 * time.Second}
}

// Serve runs one client session of the gateway until the client goes; it
// is a transport.FrontOptions.Serve, and weir gateway --stdio calls it
// with the proxy's own stdio.
func (g *Gateway) Serve(ctx context.Context, s transport.FrontSession, client transport.Transport) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := &mux{
		g: g, s: s, client: client, ctx: ctx,
		log:     g.relays.deps.Logger.With("session", s.HTTP),
		members: map[string]*member{},
		calls:   map[int64]*call{},
		asks:    map[string]*ask{},
	}
	var wg sync.WaitGroup
	for _, sc := range g.servers {
		mb := &member{cfg: sc, ready: make(chan struct{})}
		m.members[sc.Name] = mb
		m.order = append(m.order, sc.Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.supervise(mb)
		}()
	}
	m.clientPump()
	cancel()
	for _, mb := range m.members {
		mb.closeConn()
	}
	wg.Wait()
	client.Close()
}

type mux struct {
	g      *Gateway
	s      transport.FrontSession
	client transport.Transport
	ctx    context.Context
	log    interface {
		Info(string, ...any)
		Warn(string, ...any)
		Debug(string, ...any)
	}
	members map[string]*member
	order   []string

	mu       sync.Mutex
	next     int64
	calls    map[int64]*call // the mux's id toward a member → the call
	asks     map[string]*ask // the id a member's request goes to the client under
	nextAsk  int64
	init     []byte // the client's initialize request, replayed to a restarted server
	initDone bool   // the client sent notifications/initialized
}

// member is one server of one session, and the relay in front of it.
type member struct {
	cfg       ServerConfig
	ready     chan struct{} // closed once the first start has been tried
	readyOnce sync.Once

	mu   sync.Mutex
	conn *memberConn // nil while down
}

func (mb *member) current() *memberConn {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return mb.conn
}

func (mb *member) setReady() { mb.readyOnce.Do(func() { close(mb.ready) }) }

func (mb *member) closeConn() {
	if c := mb.current(); c != nil {
		c.end()
	}
}

// call is a client request (or the mux's own) sent to members.
type call struct {
	clientID []byte // nil for the mux's own (a replayed initialize)
	method   string
	member   string // for a routed call
	fan      *fanout
	swallow  bool // the mux's own: the answer goes nowhere
}

// ask is a member's request to the client, under an id of the mux's.
type ask struct {
	member string
	id     []byte // as the member's relay wrote it
}

// fanout collects the answers of every member to one client request.
type fanout struct {
	clientID []byte
	method   string
	params   []byte
	waiting  int
	results  map[string][]byte // member → result (or nil)
	errs     map[string]*jsonrpc.Error
	items    map[string][]json.RawMessage // for lists: every page so far
	acked    bool                         // subscriptions/listen: the client has its acknowledgement
	done     bool                         // answered; later answers are dropped
	timer    *time.Timer
}

// fanTimeout bounds how long a merged answer waits for its slowest
// server: one server that hangs does not hang the client's list.
const fanTimeout = 30 * time.Second

// memberConn is a relay's client side: the mux writes into it, and what
// the relay writes back comes to the mux.
type memberConn struct {
	m    *mux
	name string
	in   chan []byte
	done chan struct{}
	once sync.Once
}

var _ transport.Transport = (*memberConn)(nil)

func (c *memberConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-c.in:
		return b, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *memberConn) Write(_ context.Context, msg []byte) error {
	c.m.fromMember(c.name, bytes.Clone(msg))
	return nil
}

func (c *memberConn) CloseWrite() error { c.end(); return nil }
func (c *memberConn) Close() error      { c.end(); return nil }
func (c *memberConn) end()              { c.once.Do(func() { close(c.done) }) }

// send hands the member's relay one message; false when it is down.
func (c *memberConn) send(ctx context.Context, msg []byte) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.in <- msg:
		return true
	case <-c.done:
		return false
	case <-ctx.Done():
		return false
	}
}

// supervise runs a member's server and relay, restarting the server with
// backoff when it fails, without touching the other members. A restarted
// server is initialized as the client initialized the first, and the
// client is told its lists changed.
func (m *mux) supervise(mb *member) {
	name := mb.cfg.Name
	defer mb.setReady()
	backoff := m.g.minBackoff
	for attempt := 0; m.ctx.Err() == nil; attempt++ {
		server, stop, command, err := m.launch(mb.cfg)
		if err != nil {
			m.log.Warn("server failed to start; retrying", "server", name, "err", err, "in", backoff)
			m.g.relays.health.set(name, false)
			mb.setReady()
			if !sleepCtx(m.ctx, backoff) {
				return
			}
			backoff = min(2*backoff, m.g.maxBackoff)
			continue
		}
		conn := &memberConn{m: m, name: name, in: make(chan []byte, 16), done: make(chan struct{})}
		mb.mu.Lock()
		mb.conn = conn
		mb.mu.Unlock()
		m.g.relays.health.set(name, true)
		pkg := ""
		if mb.cfg.URL != nil {
			pkg = mb.cfg.URL.Hostname()
		} else {
			pkg = engine.PackageOf(mb.cfg.Command)
		}
		r := m.g.relays.relay(name, m.s, command, pkg)
		if attempt > 0 {
			m.reinitialize(conn)
		}
		mb.setReady()
		started := time.Now()
		runErr := r.Run(m.ctx, conn, server)
		m.g.relays.forget(r)
		conn.end()
		mb.mu.Lock()
		mb.conn = nil
		mb.mu.Unlock()
		stop()
		m.orphaned(name)
		if m.ctx.Err() != nil {
			return
		}
		m.g.relays.health.set(name, false)
		if time.Since(started) > time.Minute {
			backoff = m.g.minBackoff
		}
		m.log.Warn("server ended; restarting", "server", name, "err", runErr, "in", backoff)
		if !sleepCtx(m.ctx, backoff) {
			return
		}
		backoff = min(2*backoff, m.g.maxBackoff)
	}
}

// orphaned answers every call still waiting on a member whose relay has
// ended: the relay answered what it had forwarded, but a call it had not
// yet read went down with it. Every request is answered exactly once.
func (m *mux) orphaned(name string) {
	m.mu.Lock()
	var lost []*call
	for id, c := range m.calls {
		if c.member == name {
			lost = append(lost, c)
			delete(m.calls, id)
		}
	}
	m.mu.Unlock()
	why := fmt.Sprintf("the server %q ended before answering; Weir is restarting it", name)
	for _, c := range lost {
		switch {
		case c.swallow:
		case c.fan != nil:
			m.fanAnswer(c.fan, name, nil, &jsonrpc.Error{Code: jsonrpc.CodeServerUnavailable, Message: why})
		default:
			m.replyError(c.clientID, jsonrpc.CodeServerUnavailable, why)
		}
	}
}

// launch starts a member's server: a child process, or an HTTP upstream.
func (m *mux) launch(sc ServerConfig) (transport.Transport, func(), string, error) {
	deps := m.g.relays.deps
	if sc.URL != nil {
		up := transport.NewHTTPUpstream(sc.URL.String(), transport.HTTPOptions{
			Header: sc.Header, MaxMessage: deps.MaxMessage, Logger: deps.Logger,
			Observe: func(method string, took time.Duration, ok bool) {
				deps.Metrics.ObserveUpstream(sc.Name, method, took, ok)
				m.g.relays.health.set(sc.Name, ok)
			},
		})
		return up, func() { up.Close() }, pin.CommandLine(nil, sc.URL.String()), nil
	}
	env := os.Environ()
	for k, v := range sc.Env {
		env = append(env, k+"="+v)
	}
	child, err := transport.StartCommand(m.ctx, transport.Command{Argv: sc.Command, Env: env, Dir: sc.Cwd, Stderr: m.g.stderr})
	if err != nil {
		return nil, nil, "", err
	}
	stop := func() { child.Shutdown(context.Background(), 3*time.Second) }
	return transport.NewStdio(child.Stdout, child.Stdin, deps.MaxMessage), stop, pin.CommandLine(sc.Command, ""), nil
}

// reinitialize replays the client's initialize to a restarted server and
// tells the client to list again.
func (m *mux) reinitialize(conn *memberConn) {
	m.mu.Lock()
	init, done := m.init, m.initDone
	m.mu.Unlock()
	if init == nil {
		return
	}
	id := m.newCall(&call{method: "initialize", swallow: true})
	out, _ := jsonrpc.ReplaceMember(init, "id", []byte(strconv.FormatInt(id, 10)))
	conn.send(m.ctx, out)
	if done {
		conn.send(m.ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	for _, kind := range []string{"tools", "prompts", "resources"} {
		m.toClient([]byte(`{"jsonrpc":"2.0","method":"notifications/` + kind + `/list_changed"}`))
	}
}

func (m *mux) newCall(c *call) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	m.calls[m.next] = c
	return m.next
}

func (m *mux) takeCall(id int64) *call {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.calls[id]
	delete(m.calls, id)
	return c
}

func (m *mux) toClient(msg []byte) {
	if err := m.client.Write(m.ctx, msg); err != nil {
		m.log.Debug("writing to client", "err", err)
	}
}

func (m *mux) replyError(id []byte, code int, msg string) {
	if id != nil {
		m.toClient(jsonrpc.ErrorResponse(id, code, msg))
	}
}

func (m *mux) replyResult(id, result []byte) {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteByte('}')
	m.toClient(b.Bytes())
}

// clientPump reads the client until it goes.
func (m *mux) clientPump() {
	for {
		line, err := m.client.Read(m.ctx)
		if err != nil {
			var over *jsonrpc.OversizeError
			if errors.As(err, &over) {
				m.replyError(over.ID, jsonrpc.CodeMessageTooLarge, over.Error())
				continue
			}
			return
		}
		m.fromClient(line)
	}
}

func (m *mux) fromClient(line []byte) {
	// The line outlives this Read: it goes to members' queues.
	line = bytes.Clone(line)
	msg, err := jsonrpc.Parse(line)
	if err != nil {
		var bad *jsonrpc.BadMessageError
		if errors.As(err, &bad) && bad.ID != nil {
			m.replyError(bad.ID, bad.Code, bad.Reason)
		}
		return
	}
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		m.answerAsk(msg, line)
	case *jsonrpc.Request:
		if !msg.ID.IsValid() {
			m.clientNotification(msg, line)
			return
		}
		m.clientRequest(msg, line, jsonrpc.EncodeID(msg.ID))
	}
}

// clientRequest routes one request: by name to one server, or to all.
func (m *mux) clientRequest(req *jsonrpc.Request, line, id []byte) {
	switch req.Method {
	case "ping":
		m.replyResult(id, []byte("{}"))
	case "initialize":
		m.mu.Lock()
		m.init = bytes.Clone(line)
		m.mu.Unlock()
		m.fanOut(req, line, id)
	case "server/discover", "logging/setLevel", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "subscriptions/listen":
		m.fanOut(req, line, id)
	case "tools/call", "prompts/get":
		m.routeByName(req, line, id, "name")
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		m.routeByURI(req, line, id)
	case "completion/complete":
		m.routeCompletion(req, line, id)
	default:
		if len(m.order) == 1 {
			m.forward(m.order[0], &call{clientID: id, method: req.Method, member: m.order[0]}, line)
			return
		}
		m.replyError(id, jsonrpc.CodeMethodNotFound, fmt.Sprintf("weir gateway cannot tell which of its servers %s is for", req.Method))
	}
}

// splitName splits SERVER__NAME.
func (m *mux) splitName(full string) (string, string, bool) {
	server, name, ok := strings.Cut(full, Sep)
	if !ok || m.members[server] == nil || name == "" {
		return "", "", false
	}
	return server, name, true
}

func (m *mux) routeByName(req *jsonrpc.Request, line, id []byte, key string) {
	var p map[string]json.RawMessage
	var full string
	if json.Unmarshal(req.Params, &p) != nil || json.Unmarshal(p[key], &full) != nil {
		m.replyError(id, jsonrpc.CodeInvalidParams, req.Method+" needs params."+key)
		return
	}
	server, name, ok := m.splitName(full)
	if !ok {
		m.replyError(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("no such %s %q: the gateway names them SERVER%sNAME (servers: %s)", strings.TrimSuffix(strings.Split(req.Method, "/")[0], "s"), full, Sep, strings.Join(m.order, ", ")))
		return
	}
	out, ok := rewriteParam(line, key, name)
	if !ok {
		m.replyError(id, jsonrpc.CodeInvalidParams, "could not read params")
		return
	}
	m.forward(server, &call{clientID: id, method: req.Method, member: server}, out)
}

func (m *mux) routeByURI(req *jsonrpc.Request, line, id []byte) {
	var p map[string]json.RawMessage
	var full string
	if json.Unmarshal(req.Params, &p) != nil || json.Unmarshal(p["uri"], &full) != nil {
		m.replyError(id, jsonrpc.CodeInvalidParams, req.Method+" needs params.uri")
		return
	}
	server, uri, ok := strings.Cut(full, uriSep)
	if !ok || m.members[server] == nil {
		m.replyError(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("no such resource %q: the gateway names them SERVER%sURI", full, uriSep))
		return
	}
	out, ok := rewriteParam(line, "uri", uri)
	if !ok {
		m.replyError(id, jsonrpc.CodeInvalidParams, "could not read params")
		return
	}
	m.forward(server, &call{clientID: id, method: req.Method, member: server}, out)
}

func (m *mux) routeCompletion(req *jsonrpc.Request, line, id []byte) {
	var p struct {
		Ref map[string]json.RawMessage `json:"ref"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.Ref == nil {
		m.replyError(id, jsonrpc.CodeInvalidParams, "completion/complete needs params.ref")
		return
	}
	var server, rest, key string
	var full string
	switch {
	case json.Unmarshal(p.Ref["name"], &full) == nil:
		key = "name"
		var ok bool
		if server, rest, ok = m.splitName(full); !ok {
			m.replyError(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("no such prompt %q", full))
			return
		}
	case json.Unmarshal(p.Ref["uri"], &full) == nil:
		key = "uri"
		var ok bool
		if server, rest, ok = strings.Cut(full, uriSep); !ok || m.members[server] == nil {
			m.replyError(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("no such resource template %q", full))
			return
		}
	default:
		m.replyError(id, jsonrpc.CodeInvalidParams, "completion/complete needs ref.name or ref.uri")
		return
	}
	v, _ := json.Marshal(rest)
	out, ok := jsonrpc.ReplaceAt(line, v, "params", "ref", key)
	if !ok {
		m.replyError(id, jsonrpc.CodeInvalidParams, "could not read params.ref")
		return
	}
	m.forward(server, &call{clientID: id, method: req.Method, member: server}, out)
}

// forward sends a routed call to its member under a mux id.
func (m *mux) forward(server string, c *call, line []byte) {
	mb := m.members[server]
	<-mb.ready
	conn := mb.current()
	if conn == nil {
		m.replyError(c.clientID, jsonrpc.CodeServerUnavailable, fmt.Sprintf("the server %q is down; Weir is restarting it", server))
		return
	}
	id := m.newCall(c)
	out, _ := jsonrpc.ReplaceMember(line, "id", []byte(strconv.FormatInt(id, 10)))
	if !conn.send(m.ctx, out) {
		if m.takeCall(id) != nil {
			m.replyError(c.clientID, jsonrpc.CodeServerUnavailable, fmt.Sprintf("the server %q is down; Weir is restarting it", server))
		}
	}
}

// fanOut sends a request to every member and answers with the merge.
func (m *mux) fanOut(req *jsonrpc.Request, line, id []byte) {
	f := &fanout{clientID: id, method: req.Method, params: req.Params, results: map[string][]byte{}, errs: map[string]*jsonrpc.Error{}, items: map[string][]json.RawMessage{}}
	var up []*memberConn
	var names []string
	for _, name := range m.order {
		mb := m.members[name]
		<-mb.ready
		if conn := mb.current(); conn != nil {
			up = append(up, conn)
			names = append(names, name)
		}
	}
	if len(up) == 0 {
		m.replyError(id, jsonrpc.CodeServerUnavailable, "none of the gateway's servers is running")
		return
	}
	m.mu.Lock()
	f.waiting = len(up)
	if req.Method != "subscriptions/listen" { // a stream, answered when it ends
		f.timer = time.AfterFunc(fanTimeout, func() { m.fanExpire(f) })
	}
	m.mu.Unlock()
	for i, conn := range up {
		m.sendFan(conn, names[i], f, line)
	}
}

func (m *mux) sendFan(conn *memberConn, name string, f *fanout, line []byte) {
	cid := m.newCall(&call{method: f.method, member: name, fan: f})
	out, _ := jsonrpc.ReplaceMember(line, "id", []byte(strconv.FormatInt(cid, 10)))
	if !conn.send(m.ctx, out) && m.takeCall(cid) != nil {
		m.fanAnswer(f, name, nil, &jsonrpc.Error{Code: jsonrpc.CodeServerUnavailable, Message: "server down"})
	}
}

// listKey is the member of a list result that holds its items.
func listKey(method string) string {
	switch method {
	case "tools/list":
		return "tools"
	case "prompts/list":
		return "prompts"
	case "resources/list":
		return "resources"
	case "resources/templates/list":
		return "resourceTemplates"
	}
	return ""
}

// fanAnswer takes one member's answer to a fan-out; the last one answers
// the client. A list with a next page asks for it first.
func (m *mux) fanAnswer(f *fanout, name string, result []byte, rerr *jsonrpc.Error) {
	if key := listKey(f.method); key != "" && rerr == nil {
		var page map[string]json.RawMessage
		var items []json.RawMessage
		if json.Unmarshal(result, &page) == nil && json.Unmarshal(page[key], &items) == nil {
			m.mu.Lock()
			f.items[name] = append(f.items[name], items...)
			pages := len(f.items[name])
			m.mu.Unlock()
			var cursor string
			if json.Unmarshal(page["nextCursor"], &cursor) == nil && cursor != "" && pages < 10000 {
				if conn := m.members[name].current(); conn != nil {
					params, _ := json.Marshal(map[string]string{"cursor": cursor})
					next := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":%q,"params":%s}`, f.method, params)
					m.sendFan(conn, name, f, []byte(next))
					return
				}
			}
		}
	}
	m.mu.Lock()
	if f.done {
		m.mu.Unlock()
		return
	}
	if rerr != nil {
		f.errs[name] = rerr
	} else {
		f.results[name] = result
	}
	f.waiting--
	last := f.waiting == 0
	if last {
		f.done = true
		if f.timer != nil {
			f.timer.Stop()
		}
	}
	m.mu.Unlock()
	if last {
		m.finishFan(f)
	}
}

// fanExpire answers a fan-out with what has come when its slowest servers
// are too slow; their answers, if they come, are dropped.
func (m *mux) fanExpire(f *fanout) {
	m.mu.Lock()
	if f.done {
		m.mu.Unlock()
		return
	}
	f.done = true
	for _, name := range m.order {
		if _, ok := f.results[name]; !ok && f.errs[name] == nil {
			f.errs[name] = &jsonrpc.Error{Code: jsonrpc.CodeServerUnavailable, Message: fmt.Sprintf("no answer within %s", fanTimeout)}
		}
	}
	m.mu.Unlock()
	m.log.Warn("a server did not answer in time; answered without it", "method", f.method)
	m.finishFan(f)
}

func (m *mux) finishFan(f *fanout) {
	merged, err := m.merge(f)
	if err != nil {
		m.replyError(f.clientID, jsonrpc.CodeServerUnavailable, err.Error())
		return
	}
	if f.clientID != nil {
		m.replyResult(f.clientID, merged)
	}
}

// merge builds the gateway's answer from its members'.
func (m *mux) merge(f *fanout) ([]byte, error) {
	if len(f.results) == 0 {
		var why []string
		for _, name := range m.order {
			if e := f.errs[name]; e != nil {
				why = append(why, fmt.Sprintf("%s: %s", name, e.Message))
			}
		}
		return nil, fmt.Errorf("no server answered %s (%s)", f.method, strings.Join(why, "; "))
	}
	switch f.method {
	case "initialize", "server/discover":
		return m.mergeInit(f)
	case "logging/setLevel":
		return []byte("{}"), nil
	case "subscriptions/listen":
		for _, name := range m.order {
			if r, ok := f.results[name]; ok {
				return r, nil
			}
		}
	}
	key := listKey(f.method)
	var all []json.RawMessage
	for _, name := range m.order {
		for _, it := range f.items[name] {
			if out, ok := prefixItem(name, it); ok {
				all = append(all, out)
			}
		}
	}
	if all == nil {
		all = []json.RawMessage{}
	}
	return json.Marshal(map[string]any{key: all})
}

// prefixItem names a listed tool, prompt, resource or template as the
// gateway exposes it.
func prefixItem(server string, item json.RawMessage) (json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(item, &fields) != nil {
		return nil, false
	}
	out := []byte(item)
	for _, k := range []string{"name", "uri", "uriTemplate"} {
		var v string
		if json.Unmarshal(fields[k], &v) != nil {
			continue
		}
		if k == "name" {
			v = server + Sep + v
		} else {
			v = server + uriSep + v
		}
		enc, _ := json.Marshal(v)
		var ok bool
		if out, ok = jsonrpc.ReplaceMember(out, k, enc); !ok {
			return nil, false
		}
	}
	return out, true
}

// mergeInit merges initialize (or server/discover) results: the union of
// capabilities, the lowest protocol version any server chose, and each
// server's instructions under its name.
func (m *mux) mergeInit(f *fanout) ([]byte, error) {
	caps := map[string]map[string]any{}
	version := ""
	var instructions []string
	var supported map[string]int
	var first map[string]json.RawMessage
	n := 0
	for _, name := range m.order {
		res, ok := f.results[name]
		if !ok {
			continue
		}
		var r map[string]json.RawMessage
		if json.Unmarshal(res, &r) != nil {
			continue
		}
		if first == nil {
			first = r
		}
		n++
		var pv string
		if json.Unmarshal(r["protocolVersion"], &pv) == nil && (version == "" || pv < version) {
			version = pv
		}
		var c map[string]map[string]any
		_ = json.Unmarshal(r["capabilities"], &c)
		for k, v := range c {
			if caps[k] == nil {
				caps[k] = map[string]any{}
			}
			for kk, vv := range v {
				if b, ok := vv.(bool); ok && b {
					caps[k][kk] = true
				} else if _, set := caps[k][kk]; !set {
					caps[k][kk] = vv
				}
			}
		}
		var in string
		if json.Unmarshal(r["instructions"], &in) == nil && in != "" {
			instructions = append(instructions, "## "+name+"\n"+in)
		}
		var sv []string
		if json.Unmarshal(r["supportedVersions"], &sv) == nil {
			if supported == nil {
				supported = map[string]int{}
			}
			for _, v := range sv {
				supported[v]++
			}
		}
	}
	for _, k := range []string{"tools", "prompts", "resources"} {
		if caps[k] != nil {
			caps[k]["listChanged"] = true // a restarted server's lists change
		}
	}
	out := map[string]any{}
	for k, v := range first {
		out[k] = v
	}
	out["capabilities"] = caps
	info := map[string]string{"name": "weir-gateway", "version": m.g.version}
	if f.method == "initialize" {
		out["protocolVersion"] = version
		out["serverInfo"] = info
		delete(out, "instructions")
		if len(instructions) > 0 {
			out["instructions"] = "Tools, prompts and resources of several servers, named SERVER" + Sep + "NAME.\n\n" + strings.Join(instructions, "\n\n")
		}
	} else if supported != nil {
		var common []string
		for v, c := range supported {
			if c == n {
				common = append(common, v)
			}
		}
		sort.Strings(common)
		out["supportedVersions"] = common
	}
	return json.Marshal(out)
}

func (m *mux) clientNotification(req *jsonrpc.Request, line []byte) {
	switch req.Method {
	case "notifications/initialized":
		m.mu.Lock()
		m.initDone = true
		m.mu.Unlock()
	case "notifications/cancelled":
		m.cancel(req, line)
		return
	}
	for _, name := range m.order {
		if conn := m.members[name].current(); conn != nil {
			conn.send(m.ctx, line)
		}
	}
}

// cancel passes a client's cancellation to the member its request went
// to, under the mux's id.
func (m *mux) cancel(req *jsonrpc.Request, line []byte) {
	raw := jsonrpc.Member(req.Params, "requestId")
	if raw == nil {
		return
	}
	want := canonicalID(raw)
	// A routed call went to one member; a fan-out (a listen) to each.
	targets := map[int64]string{}
	m.mu.Lock()
	for n, cc := range m.calls {
		cid := cc.clientID
		if cc.fan != nil {
			cid = cc.fan.clientID
		}
		if cid != nil && cc.member != "" && canonicalID(cid) == want {
			targets[n] = cc.member
		}
	}
	m.mu.Unlock()
	for n, member := range targets {
		out, ok := jsonrpc.ReplaceAt(line, []byte(strconv.FormatInt(n, 10)), "params", "requestId")
		if !ok {
			continue
		}
		if conn := m.members[member].current(); conn != nil {
			conn.send(m.ctx, out)
		}
	}
}

func canonicalID(raw []byte) string {
	id, err := jsonrpc.ParseID(raw)
	if err != nil {
		return string(raw)
	}
	return string(jsonrpc.EncodeID(id))
}

// answerAsk passes the client's answer to a member's request back.
func (m *mux) answerAsk(resp *jsonrpc.Response, line []byte) {
	key := canonicalID(jsonrpc.EncodeID(resp.ID))
	m.mu.Lock()
	a := m.asks[key]
	delete(m.asks, key)
	m.mu.Unlock()
	if a == nil {
		m.log.Debug("an answer to no request of the gateway's; dropped")
		return
	}
	out, _ := jsonrpc.ReplaceMember(line, "id", a.id)
	if conn := m.members[a.member].current(); conn != nil {
		conn.send(m.ctx, out)
	}
}

// fromMember handles what a member's relay sends toward the client.
func (m *mux) fromMember(name string, line []byte) {
	msg, err := jsonrpc.Parse(line)
	if err != nil {
		m.log.Warn("unreadable message from a relay; dropped", "server", name, "err", err)
		return
	}
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		n, err := strconv.ParseInt(string(jsonrpc.EncodeID(msg.ID)), 10, 64)
		if err != nil {
			return
		}
		c := m.takeCall(n)
		switch {
		case c == nil || c.swallow:
		case c.fan != nil:
			var rerr *jsonrpc.Error
			if msg.Error != nil && !errors.As(msg.Error, &rerr) {
				rerr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg.Error.Error()}
			}
			m.fanAnswer(c.fan, name, msg.Result, rerr)
		default:
			out, _ := jsonrpc.ReplaceMember(line, "id", c.clientID)
			if msg.Error == nil && c.method == "resources/read" {
				out = prefixContents(name, out, msg.Result)
			}
			m.toClient(out)
		}
	case *jsonrpc.Request:
		if msg.ID.IsValid() {
			m.mu.Lock()
			m.nextAsk++
			key := fmt.Sprintf(`"weir-gw-%d"`, m.nextAsk)
			m.asks[key] = &ask{member: name, id: jsonrpc.EncodeID(msg.ID)}
			m.mu.Unlock()
			out, _ := jsonrpc.ReplaceMember(line, "id", []byte(key))
			m.toClient(out)
			return
		}
		if out := m.memberNotification(name, msg, line); out != nil {
			m.toClient(out)
		}
	}
}

// memberNotification names what a server's notification refers to as the
// gateway exposes it.
func (m *mux) memberNotification(name string, req *jsonrpc.Request, line []byte) []byte {
	if out, handled := m.subscriptionNotification(req, line); handled {
		return out
	}
	switch req.Method {
	case "notifications/resources/updated":
		var p map[string]json.RawMessage
		var uri string
		if json.Unmarshal(req.Params, &p) == nil && json.Unmarshal(p["uri"], &uri) == nil {
			if out, ok := rewriteParam(line, "uri", name+uriSep+uri); ok {
				return out
			}
		}
	case "notifications/cancelled":
		// A server withdrawing its own request: name it by the id the
		// client knows it under.
		raw := jsonrpc.Member(req.Params, "requestId")
		m.mu.Lock()
		var key string
		for k, a := range m.asks {
			if a.member == name && canonicalID(a.id) == canonicalID(raw) {
				key = k
			}
		}
		m.mu.Unlock()
		if key != "" {
			if out, ok := jsonrpc.ReplaceAt(line, []byte(key), "params", "requestId"); ok {
				return out
			}
		}
	}
	return line
}

// subscriptionNotification names a member's subscription notification by
// the client's listen request; the members' acknowledgements reach the
// client once. It reports whether the notification was one (out is nil
// when it is dropped).
func (m *mux) subscriptionNotification(req *jsonrpc.Request, line []byte) ([]byte, bool) {
	if !bytes.Contains(req.Params, []byte(jsonrpc.MetaSubscriptionID)) {
		return line, false
	}
	n, err := strconv.ParseInt(string(jsonrpc.Member(jsonrpc.Member(req.Params, "_meta"), jsonrpc.MetaSubscriptionID)), 10, 64)
	if err != nil {
		return line, false
	}
	m.mu.Lock()
	c := m.calls[n]
	var f *fanout
	drop := false
	if c != nil && c.fan != nil && c.fan.method == "subscriptions/listen" {
		f = c.fan
		if strings.HasSuffix(req.Method, "/acknowledged") {
			drop, f.acked = f.acked, true
		}
	}
	m.mu.Unlock()
	if f == nil {
		return line, false
	}
	if drop {
		return nil, true
	}
	out, _ := jsonrpc.ReplaceAt(line, f.clientID, "params", "_meta", jsonrpc.MetaSubscriptionID)
	return out, true
}

// prefixContents names the contents of a resources/read result.
func prefixContents(server string, line, result []byte) []byte {
	var r map[string]json.RawMessage
	var contents []json.RawMessage
	if json.Unmarshal(result, &r) != nil || json.Unmarshal(r["contents"], &contents) != nil {
		return line
	}
	for i, c := range contents {
		if out, ok := prefixItem(server, c); ok {
			contents[i] = out
		}
	}
	enc, err := json.Marshal(contents)
	if err != nil {
		return line
	}
	res, ok := jsonrpc.ReplaceMember(result, "contents", enc)
	if !ok {
		return line
	}
	out, ok := jsonrpc.ReplaceMember(line, "result", res)
	if !ok {
		return line
	}
	return out
}

// rewriteParam replaces params[key] with the string v.
func rewriteParam(line []byte, key, v string) ([]byte, bool) {
	enc, _ := json.Marshal(v)
	return jsonrpc.ReplaceAt(line, enc, "params", key)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
