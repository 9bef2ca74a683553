package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
)

// Store persists observations and keeps a session mirror current.
type Store interface {
	Append(ctx context.Context, session string, o *flow.Observation) (int64, error)
	Sync(ctx context.Context, session string, mirror *flow.Session) error
}

// Auditor records decisions.
type Auditor interface {
	Append(r *audit.Record) error
}

// Options configure a Relay.
type Options struct {
	// Server is the server's name (weir run --name), used in tool names
	// ("server/tool") and policy matches ("server:tool").
	Server string
	// Session is the key of the client session whose state this relay shares.
	Session string
	Policy  *policy.Policy
	Hasher  *fingerprint.Hasher
	Store   Store
	// Audit receives a record per decision; nil disables auditing.
	Audit  Auditor
	Logger *slog.Logger
	// MaxMessage limits one message in bytes; 0 means the default (16 MiB).
	MaxMessage int
	// Now is the clock; nil means time.Now. Decisions never read it: only
	// observation and audit timestamps do.
	Now func() time.Time
}

// Relay relays one client–server connection. Create it with New and call
// Run once.
type Relay struct {
	opts   Options
	policy atomic.Pointer[policy.Policy]
	log    *slog.Logger

	toClient *jsonrpc.Writer
	toServer *jsonrpc.Writer

	mu         sync.Mutex // guards the fields below
	mirror     flow.Session
	catalog    map[string]*catalogEntry
	pending    map[jsonrpc.ID]pending
	serverGone error // set once the server side has ended

	audits chan auditItem
}

// auditItem is a record waiting to be written, with the arguments whose
// shape it will carry: shaping costs tens of microseconds, so it is done
// off the hot path by the audit goroutine.
type auditItem struct {
	rec  *audit.Record
	args json.RawMessage
}

// pending is a client request forwarded to the server and not yet answered.
type pending struct {
	id     jsonrpc.ID
	rawID  []byte // the id exactly as the client wrote it
	method string
	tool   string
	labels engine.ToolLabels
	modern bool // the request was made under protocol 2026-07-28 or later
}

// New returns a relay with the given options.
func New(opts Options) *Relay {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = jsonrpc.DefaultMaxMessage
	}
	r := &Relay{
		opts:    opts,
		log:     opts.Logger,
		catalog: make(map[string]*catalogEntry),
		pending: make(map[jsonrpc.ID]pending),
	}
	r.policy.Store(opts.Policy)
	return r
}

// SetPolicy replaces the policy for the decisions that follow (SIGHUP
// reload). The session state is kept.
func (r *Relay) SetPolicy(p *policy.Policy) { r.policy.Store(p) }

// ErrServerGone is the cause recorded when the server side ends.
var ErrServerGone = errors.New("MCP server closed its output")

// Run relays until the server side ends: the server closes its output
// (usually because it exited) or ctx is done. When the client closes its
// input, Run closes serverIn so the server can exit. Requests still waiting
// when the server side ends are answered with an error; Run then closes
// clientIn to stop reading and returns once both pumps are done.
func (r *Relay) Run(ctx context.Context, clientIn io.ReadCloser, clientOut io.Writer, serverIn io.WriteCloser, serverOut io.Reader) error {
	r.toClient = jsonrpc.NewWriter(clientOut)
	r.toServer = jsonrpc.NewWriter(serverIn)

	var wg sync.WaitGroup
	if r.opts.Audit != nil {
		r.audits = make(chan auditItem, 1024)
		wg.Go(r.auditLoop)
	}
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		r.clientPump(ctx, clientIn)
		if err := serverIn.Close(); err != nil {
			r.log.Debug("closing server input", "err", err)
		}
	}()
	serverErr := r.serverPump(ctx, serverOut)
	r.serverEnded(serverErr)
	clientIn.Close() // unblocks the client pump if it is still reading
	<-clientDone
	if r.audits != nil {
		close(r.audits)
	}
	wg.Wait()
	if errors.Is(serverErr, io.EOF) {
		return nil
	}
	return serverErr
}

// serverEnded answers every request still waiting for the server.
func (r *Relay) serverEnded(cause error) {
	if cause == nil || errors.Is(cause, io.EOF) {
		cause = ErrServerGone
	}
	r.mu.Lock()
	r.serverGone = cause
	waiting := r.pending
	r.pending = make(map[jsonrpc.ID]pending)
	r.mu.Unlock()
	for _, p := range waiting {
		r.replyError(p.rawID, jsonrpc.CodeServerUnavailable,
			fmt.Sprintf("the MCP server %q ended before answering %s (%v)", r.opts.Server, p.method, cause))
	}
}

func (r *Relay) replyError(rawID []byte, code int, msg string) {
	if err := r.toClient.WriteLine(jsonrpc.ErrorResponse(rawID, code, msg)); err != nil {
		r.log.Debug("writing to client", "err", err)
	}
}

func (r *Relay) now() int64 { return r.opts.Now().UnixMilli() }

// record queues an audit record, with the call arguments to shape (nil for
// none). It drops nothing: a full queue waits, since auditing is part of
// the contract.
func (r *Relay) record(rec *audit.Record, args json.RawMessage) {
	if r.audits == nil {
		return
	}
	rec.Time = audit.FormatTime(r.opts.Now())
	rec.Session = r.opts.Session
	rec.Server = r.opts.Server
	r.audits <- auditItem{rec, args}
}

func (r *Relay) auditLoop() {
	for it := range r.audits {
		if it.args != nil {
			var err error
			if it.rec.Shape, it.rec.Hashes, err = audit.Shape(it.args, r.opts.Hasher.Keyed); err != nil {
				it.rec.Shape = json.RawMessage(`"unreadable"`)
			}
		}
		if err := r.opts.Audit.Append(it.rec); err != nil {
			r.log.Error("audit log write failed; decisions continue", "err", err)
		}
	}
}

// params are the fields of a tools/call the relay reads.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      map[string]any  `json:"_meta"`
}

const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

func isModern(meta map[string]any) bool {
	v, _ := meta[metaProtocolVersion].(string)
	return v >= "2026-07-28"
}
