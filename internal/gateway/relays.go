package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/relay"
	"github.com/weir-sec/weir/internal/scratch"
	"github.com/weir-sec/weir/internal/transport"
)

// Deps are what every relay of a gateway shares: the decision's inputs
// and where its evidence goes.
type Deps struct {
	Policy, Ask    *policy.Policy
	Hasher         *fingerprint.Hasher
	Store          relay.Store
	Audit          relay.Auditor
	Recorder       relay.Recorder     // nil: no recordings
	Written        relay.WrittenStore // nil: reading back does not re-taint
	Approvals      *approval.Book
	Logger         *slog.Logger
	RequestTimeout time.Duration
	MaxMessage     int
	Metrics        *Metrics
}

// Relays runs the relays of a gateway's sessions and keeps them on one
// policy: SetPolicy (on SIGHUP) reaches every live session.
type Relays struct {
	deps   Deps
	health *Health

	mu          sync.Mutex
	policy, ask *policy.Policy
	live        map[*relay.Relay]*scratch.DB // each live relay and its scratch database (nil for none)
}

// NewRelays returns the relay set for deps.
func NewRelays(deps Deps) *Relays {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	return &Relays{deps: deps, health: &Health{up: map[string]bool{}}, policy: deps.Policy, ask: deps.Ask, live: map[*relay.Relay]*scratch.DB{}}
}

// Health is each upstream's last known state.
func (rs *Relays) Health() *Health { return rs.health }

// SetPolicy replaces the policy of every session, live and to come.
func (rs *Relays) SetPolicy(p, ask *policy.Policy) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.policy, rs.ask = p, ask
	for r := range rs.live {
		r.SetPolicy(p, ask)
	}
}

// Remote is a server reached over Streamable HTTP.
type Remote struct {
	Name   string
	URL    *url.URL
	Header http.Header // the upstream's own credentials, from the configuration
}

// ServeRemote is a transport.FrontOptions.Serve for one remote server:
// each front session gets its own upstream session and relay.
func (rs *Relays) ServeRemote(up Remote) func(context.Context, transport.FrontSession, transport.Transport) {
	endpoint := up.URL.String()
	rs.health.set(up.Name, true)
	return func(ctx context.Context, s transport.FrontSession, client transport.Transport) {
		version := ""
		if s.HTTP == "" {
			version = transport.Stateless // the front's stateless requests
		}
		server := transport.NewHTTPUpstream(endpoint, transport.HTTPOptions{
			Header: up.Header, MaxMessage: rs.deps.MaxMessage, Logger: rs.deps.Logger, Version: version,
			Observe: func(method string, took time.Duration, ok bool) {
				rs.deps.Metrics.ObserveUpstream(up.Name, method, took, ok)
				rs.health.set(up.Name, ok)
			},
		})
		defer server.Close()
		r := rs.relay(up.Name, s, pin.CommandLine(nil, endpoint), up.URL.Hostname())
		defer rs.forget(r)
		if err := r.Run(ctx, client, server); err != nil && ctx.Err() == nil {
			rs.deps.Logger.Debug("session ended", "server", up.Name, "err", err)
		}
	}
}

// relay makes the relay for one server in one session. A tenant's pins
// are its own: the same server name under two tenants is two identities.
func (rs *Relays) relay(name string, s transport.FrontSession, command, pkg string) *relay.Relay {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ident := name
	if s.Principal != "" {
		ident = s.Principal + "/" + name
	}
	// A session's scratch database is its own, like its session mirror:
	// tables of one session are never visible to another.
	var db *scratch.DB
	if sc := rs.policy.Scratch; len(sc.Tools) > 0 {
		var err error
		if db, err = scratch.Open(ScratchOptions(sc)); err != nil {
			rs.deps.Logger.Warn("the scratch database could not be opened; results pass through", "server", name, "err", err)
		}
	}
	r := relay.New(relay.Options{
		Scratch:        db,
		Server:         name,
		Session:        s.Taint,
		Identity:       pin.Identity(ident),
		Command:        command,
		Package:        pkg,
		Policy:         rs.policy,
		AskPolicy:      rs.ask,
		Hasher:         rs.deps.Hasher,
		Store:          rs.deps.Store,
		Audit:          rs.deps.Metrics.Auditor(rs.deps.Audit),
		Recorder:       rs.deps.Recorder,
		Written:        rs.deps.Written,
		Approvals:      rs.deps.Approvals,
		Logger:         rs.deps.Logger.With("server", name),
		RequestTimeout: rs.deps.RequestTimeout,
		Observe:        rs.deps.Metrics.ObserveDecision,
	})
	rs.live[r] = db
	return r
}

// ScratchOptions are the scratch database's bounds from a policy's
// scratch: block; a bound it leaves out is the scratch package's default.
// They are read when a database opens: a reload changes which tools are
// stored, not the bounds of databases already open.
func ScratchOptions(s policy.Scratch) scratch.Options {
	return scratch.Options{
		MinRows:         s.MinRows,
		MaxPayloadBytes: int(s.MaxPayloadBytes),
		MaxSessionBytes: s.MaxSessionBytes,
		MaxTables:       s.MaxSessionCalls,
	}
}

func (rs *Relays) forget(r *relay.Relay) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if db := rs.live[r]; db != nil {
		db.Close()
	}
	delete(rs.live, r)
}

// Health is each upstream's last outcome, for /healthz.
type Health struct {
	mu sync.Mutex
	up map[string]bool
}

func (h *Health) set(name string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.up[name] = ok
}

// Snapshot is a copy of the current state.
func (h *Health) Snapshot() map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]bool, len(h.up))
	for k, v := range h.up {
		out[k] = v
	}
	return out
}
