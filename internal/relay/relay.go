package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/recording"
	"github.com/weir-sec/weir/internal/scratch"
	"github.com/weir-sec/weir/internal/store"
)

// Store persists deltas, keeps a session mirror current, counts
// rate-limited calls across the proxies of a session, and keeps pins.
type Store interface {
	Append(ctx context.Context, session string, o *flow.Observation) (int64, error)
	PutPin(ctx context.Context, ps ...pin.Pin) error
	Inputs
}

var (
	_ Store = (*store.SQLite)(nil)
	_ Store = (*store.Postgres)(nil)
	_ Store = (*store.Memory)(nil)
)

// Recorder keeps what weir replay and weir learn read: a record per
// decision, and the texts of the policies they were made under.
type Recorder interface {
	AppendRecords(ctx context.Context, recs []store.Rec) error
	PutPolicy(ctx context.Context, hash, source string, text []byte, at time.Time) error
}

var (
	_ Recorder = (*store.SQLite)(nil)
	_ Recorder = (*store.Postgres)(nil)
)

// WrittenStore keeps, across sessions, what calls wrote to a server while
// their sessions held private or untrusted data (engine Decision.Written),
// so that a result carrying it later takes its labels back.
type WrittenStore interface {
	AppendWritten(ctx context.Context, identity string, o *flow.Observation) error
	Written(ctx context.Context, identity string, after int64, fn func(seq int64, o *flow.Observation)) error
}

var (
	_ WrittenStore = (*store.SQLite)(nil)
	_ WrittenStore = (*store.Postgres)(nil)
)

// Auditor records decisions, in order, several at a time.
type Auditor interface {
	AppendAll(rs []*audit.Record) error
}

var _ Auditor = (*audit.Log)(nil)

// DefaultRequestTimeout is how long a request may wait for the server's
// answer before Weir answers it with an error: generous, since a tool can
// run for minutes, but finite, so a server that never answers cannot leave
// a client waiting forever.
const DefaultRequestTimeout = 10 * time.Minute

// Options configure a Relay.
type Options struct {
	// Server is the server's name (weir run --name), used in tool names
	// ("server/tool") and policy matches ("server:tool").
	Server string
	// Session is the key of the client session whose state this relay shares.
	Session string
	// Identity is the server's identity for tool pins (pin.Identity), and
	// Command its command line as pins remember it (pin.CommandLine).
	Identity, Command string
	// Package is the server's package identity (engine.PackageOf of its
	// command line, or its URL's host): it selects the labelling
	// registry's entry and names the service. "" when unknown.
	Package string
	Policy  *policy.Policy
	// AskPolicy, when set, decides the calls of a client that can put an
	// escalation to a person (it declared elicitation); Policy decides the
	// rest. The no-policy default uses it to escalate where a person can
	// answer and to stay out of the way where none can.
	AskPolicy *policy.Policy
	Hasher    *fingerprint.Hasher
	Store     Store
	// Audit receives a record per decision; nil disables auditing.
	Audit Auditor
	// Recorder, when not nil, keeps each decision's recording for weir
	// replay and weir learn (while the policy's record.enabled is true).
	Recorder Recorder
	// Written, when not nil, keeps what tainted sessions wrote to this
	// server, so that reading it back later keeps it tainted.
	Written WrittenStore
	// Scratch, when not nil, is the session's scratch database: results
	// of the tools the policy's scratch: block names (every tool, with
	// ScratchAll) that hold a large array become tables, and weir_query is
	// added to tools/list and answered by the relay. The relay does not
	// close it.
	Scratch    *scratch.DB
	ScratchAll bool
	// Approvals is the book of approval requests an escalation consults
	// and records; nil makes every escalation a block.
	Approvals *approval.Book
	Logger    *slog.Logger
	// RequestTimeout bounds the wait for each answer; 0 means
	// DefaultRequestTimeout, a negative value no bound.
	RequestTimeout time.Duration
	// Now is the clock; nil means time.Now. Decisions never read it: only
	// event and audit timestamps, rate limits and timeouts do.
	Now func() time.Time
	// Observe, when set, is told how long each tools/call decision took
	// (gathering its inputs included), for metrics.
	Observe func(took time.Duration)
	// Home and Cwd resolve path arguments that policy rules constrain with
	// `within` (~ and relative paths); empty means the process's own.
	Home, Cwd string

	// trace, for tests, is called after each message a pump handled.
	trace func(side string)
	// progressEvery, for tests, replaces defaultProgressEvery.
	progressEvery time.Duration
}

// Relay relays one client–server connection. Create it with New and call
// Run once.
type Relay struct {
	opts      Options
	policy    atomic.Pointer[policy.Policy]
	askPolicy atomic.Pointer[policy.Policy]
	log       *slog.Logger
	gather    *Gatherer

	client, server Transport
	ids            *idTable

	// scans tracks result scans in flight (see scanResult); queries the
	// weir_query calls being answered (see answerQuery).
	scans   inflight
	queries inflight
	// scanSlots holds a token per result scan running (see maxScans).
	scanSlots chan struct{}

	// sinks is what the session's sink calls carried (see split.go).
	sinks sinkHistory

	// mirrorMu guards the session mirror. It is separate from mu so that a
	// decision in progress does not hold up the other pump's bookkeeping.
	mirrorMu sync.Mutex
	mirror   flow.Session

	// Escalations held for the client's answer (see approve.go).
	elicits     atomic.Bool      // the client's initialize declared form elicitation
	namedMode   atomic.Bool      // and a protocol that names the form mode
	holdsMu     sync.Mutex       // guards the fields below
	asks        map[string]*held // Weir's question id → held call; nil once answered
	holds       map[string]*held // held call's clientKey → held call
	clientEnded bool
	clientGone  chan struct{} // closed when the client's input ends
	held        inflight

	mu           sync.Mutex // guards the fields below
	catalog      map[string]*catalogEntry
	instructions string            // the server's, from initialize or server/discover
	withheld     map[string]string // tool → why it is withheld
	lastList     listSeen          // the last tool list recorded
	listMemo     listMemo          // the last tool list decided in full
	listsDecided int               // how many were (tests)

	// Audit records wait in a buffer that the audit goroutine empties a
	// batch at a time; it is woken once per batch, not once per record.
	// written is what tainted calls wrote to this server, as synced from
	// the store up to writtenSeq (the newest store.MaxWritten).
	writtenMu     sync.Mutex
	written       []*flow.Observation
	writtenSeq    int64
	writtenSynced time.Time
	// recordedPolicies are the hashes of the policies this relay has
	// stored for its recordings; recPending are the decisions whose
	// recordings wait to be made and stored, since recStored. All three
	// are guarded by flushMu.
	recordedPolicies map[string]bool
	recPending       []auditItem
	recStored        time.Time
	// flushMu serialises writes, so records reach the log in order.
	auditMu   sync.Mutex
	auditBuf  []auditItem
	flushMu   sync.Mutex
	auditWake chan struct{} // capacity 1: "the buffer is not empty"
	auditStop chan struct{}
}

// auditItem is a record waiting to be written, with the arguments whose
// shape it will carry: shaping costs tens of microseconds, so it is done
// off the hot path by the audit goroutine.
type auditItem struct {
	rec  *audit.Record
	args json.RawMessage
	// recording, when not nil, makes the decision's recording and says
	// the policy it was made under; it runs when the batch is written, off
	// the path of the call.
	recording func() (store.Rec, *policy.Policy)
	// written, when not nil, is what the call left on its server while
	// its session was tainted (see WrittenStore).
	written *flow.Observation
}

// New returns a relay with the given options.
func New(opts Options) *Relay {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.progressEvery <= 0 {
		opts.progressEvery = defaultProgressEvery
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.Cwd == "" {
		opts.Cwd, _ = os.Getwd()
	}
	r := &Relay{
		opts:             opts,
		log:              opts.Logger,
		ids:              newIDTable(),
		catalog:          make(map[string]*catalogEntry),
		withheld:         make(map[string]string),
		recordedPolicies: make(map[string]bool),
		asks:             make(map[string]*held),
		holds:            make(map[string]*held),
		scanSlots:        make(chan struct{}, maxScans),
		clientGone:       make(chan struct{}),
		gather: &Gatherer{
			Store: opts.Store, Session: opts.Session, Server: opts.Server, Identity: opts.Identity, Command: opts.Command,
			Home: opts.Home, Cwd: opts.Cwd, Now: opts.Now, Cache: NewListCache(),
		},
	}
	r.policy.Store(opts.Policy)
	r.askPolicy.Store(opts.AskPolicy)
	return r
}

// SetPolicy replaces the policy and the ask policy (nil for none) for the
// decisions that follow (SIGHUP reload). The session state is kept.
func (r *Relay) SetPolicy(p, ask *policy.Policy) {
	r.policy.Store(p)
	r.askPolicy.Store(ask)
}

// ErrServerGone is the cause recorded when the server side ends.
var ErrServerGone = errors.New("MCP server closed its output")

// Run relays between client and server until the server side ends (it
// closes its output, usually because it exited) or ctx is done. When the
// client's input ends, Run closes the server's (CloseWrite) so the server
// can exit. Requests still waiting when the server side ends are answered
// with an error; Run then closes the client side and returns once both
// pumps are done.
func (r *Relay) Run(ctx context.Context, client, server Transport) error {
	r.client, r.server = client, server
	var wg sync.WaitGroup
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	if load := r.join(ctx); load != nil {
		wg.Go(func() { load(loadCtx) })
	}
	if r.opts.Audit != nil {
		r.auditWake = make(chan struct{}, 1)
		r.auditStop = make(chan struct{})
		wg.Go(r.auditLoop)
	}
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		r.clientPump(ctx)
		// Calls held for a person's answer end before the server's input
		// closes: none is forwarded once the client is gone.
		r.endHolds()
		if err := server.CloseWrite(); err != nil {
			r.log.Debug("closing server input", "err", err)
		}
	}()
	serverErr := r.serverPump(ctx)
	r.serverEnded(serverErr)
	client.Close() // unblocks the client pump if it is still reading
	<-clientDone
	r.queries.Wait()
	r.scans.Wait()
	if r.auditStop != nil {
		close(r.auditStop)
	}
	stopLoad()
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
	for _, p := range r.ids.end(cause) {
		r.replyError(p.clientID, jsonrpc.CodeServerUnavailable,
			fmt.Sprintf("the MCP server %q ended before answering %s (%v)", r.opts.Server, p.method, cause))
	}
}

func (r *Relay) toClient(msg []byte) {
	if err := r.client.Write(context.Background(), msg); err != nil {
		r.log.Debug("writing to client", "err", err)
	}
}

func (r *Relay) replyError(rawID []byte, code int, msg string) {
	r.toClient(jsonrpc.ErrorResponse(rawID, code, msg))
}

func (r *Relay) now() int64 { return r.opts.Now().UnixMilli() }

func (r *Relay) enforcing() bool { return r.policy.Load().Mode == policy.Enforce }

// record queues an audit record, with the call arguments to shape (nil for
// none). It never blocks on the log: shaping and writing happen on the
// audit goroutine, except for a record flushed with flushAudit.
func (r *Relay) record(rec *audit.Record, args json.RawMessage) {
	r.recordWith(rec, args, nil, nil)
}

// recordWith is record with the decision's recording and what the call
// left on its server (see auditItem).
func (r *Relay) recordWith(rec *audit.Record, args json.RawMessage, recording func() (store.Rec, *policy.Policy), written *flow.Observation) {
	if r.auditWake == nil {
		return
	}
	rec.Time = audit.FormatTime(r.opts.Now())
	rec.Session = r.opts.Session
	rec.Server = r.opts.Server
	if r.opts.Recorder == nil || !r.policy.Load().Record.Enabled {
		recording = nil
	}
	r.auditMu.Lock()
	if r.opts.Written == nil {
		written = nil
	}
	r.auditBuf = append(r.auditBuf, auditItem{rec, args, recording, written})
	first := len(r.auditBuf) == 1
	r.auditMu.Unlock()
	if first {
		select {
		case r.auditWake <- struct{}{}:
		default:
		}
	}
}

// maxScans bounds the result scans a relay runs at once. Each holds its
// result twice (the bytes and their text) and works in about seven times
// the text's size; the detectors use a core each, so more at once would
// not finish sooner.
const maxScans = 4

// auditLinger is how long the audit goroutine lets records gather after the
// first one arrives: one file lock and one write then serve a burst of
// calls, and a record still reaches the log within milliseconds.
const auditLinger = 10 * time.Millisecond

// Recordings are evidence for weir replay and weir learn, not a control,
// so they are stored in larger batches than audit records: at most
// recordLinger after the decision, or once maxRecPending wait. Making a
// recording digests the call's arguments and one SQLite transaction then
// serves hundreds of calls. A proxy killed with SIGKILL loses at most the
// last recordLinger of recordings; its audit log loses nothing.
const (
	recordLinger  = 250 * time.Millisecond
	maxRecPending = 256
)

// auditLoop writes buffered records in batches until Run ends, then writes
// what is left.
func (r *Relay) auditLoop() {
	recTimer := time.NewTimer(recordLinger)
	defer recTimer.Stop()
	// armed: the timer runs. It is started when records wait and it does
	// not run, never pushed back: a session busier than recordLinger
	// would otherwise store its recordings only when maxRecPending wait,
	// and a crash would lose them all instead of recordLinger's worth.
	armed := true
	for {
		select {
		case <-r.auditWake:
			select {
			case <-time.After(auditLinger):
			case <-r.auditStop:
			}
			r.flushAudit()
			if !armed {
				recTimer.Reset(recordLinger)
				armed = true
			}
		case <-recTimer.C:
			armed = false
			if r.flushRecordings(false) {
				recTimer.Reset(recordLinger)
				armed = true
			}
		case <-r.auditStop:
			r.flushAudit()
			r.flushRecordings(true)
			return
		}
	}
}

// flushAudit writes every buffered record now. A block is flushed before
// its answer is sent, so a proxy killed right after still has the record.
func (r *Relay) flushAudit() {
	if r.auditWake == nil {
		return
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.auditMu.Lock()
	items := r.auditBuf
	r.auditBuf = nil
	r.auditMu.Unlock()
	if len(items) == 0 {
		return
	}
	batch := make([]*audit.Record, len(items))
	for i, it := range items {
		batch[i] = r.shape(it)
	}
	var rotate *audit.RotateError
	switch err := r.opts.Audit.AppendAll(batch); {
	case errors.As(err, &rotate):
		// The records are in the log; only the rotation failed.
		r.log.Warn("audit log rotation failed; the records were written to the full log", "err", err)
	case err != nil:
		r.log.Error("audit log write failed; decisions continue", "err", err)
	}
	r.writeWritten(items)
	for _, it := range items {
		if it.recording != nil {
			r.recPending = append(r.recPending, it)
		}
	}
	if len(r.recPending) >= maxRecPending {
		r.writeRecordings()
	}
}

// flushRecordings stores the waiting recordings when the last were stored
// recordLinger ago, or now when all is true. It reports whether some are
// still waiting. (The wall clock, not opts.Now: this is batching, not
// a decision.)
func (r *Relay) flushRecordings(all bool) (waiting bool) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if all || time.Since(r.recStored) >= recordLinger {
		r.writeRecordings()
	}
	return len(r.recPending) > 0
}

// writtenSyncEvery is how often syncWritten reads the store.
const writtenSyncEvery = time.Second

// syncWritten returns what tainted calls wrote to this server, any
// session's, synced from the store. A store that cannot be read leaves
// what was synced before: the labels it adds only ever tighten.
func (r *Relay) syncWritten(ctx context.Context) []*flow.Observation {
	if r.opts.Written == nil {
		return nil
	}
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	// At most one query a second: what other sessions wrote reaches this
	// one within that, and a busy proxy does not pay a query per result.
	now := r.opts.Now()
	if now.Sub(r.writtenSynced) < writtenSyncEvery {
		return r.written
	}
	r.writtenSynced = now
	err := r.opts.Written.Written(ctx, string(r.opts.Identity), r.writtenSeq, func(seq int64, o *flow.Observation) {
		r.written = append(r.written, o)
		r.writtenSeq = seq
	})
	if err != nil {
		r.log.Warn("reading what tainted calls wrote to this server failed", "err", err)
	}
	if n := len(r.written) - store.MaxWritten; n > 0 {
		// A copy: a decision may still be reading the old slice.
		r.written = slices.Clone(r.written[n:])
	}
	return r.written
}

// writeWritten stores what the tainted calls of a batch wrote: unlike a
// recording it is a control (what comes back must carry its label), so it
// is stored with the batch's audit records.
func (r *Relay) writeWritten(items []auditItem) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, it := range items {
		if it.written != nil {
			if err := r.opts.Written.AppendWritten(ctx, string(r.opts.Identity), it.written); err != nil {
				r.log.Warn("keeping what a tainted call wrote failed; reading it back later will not be tainted", "err", err)
			}
		}
	}
}

// writeRecordings makes and stores the waiting recordings; the caller
// holds flushMu. Recording is evidence, not a control: a failure is logged
// and decisions go on.
func (r *Relay) writeRecordings() {
	items := r.recPending
	r.recPending = nil
	r.recStored = time.Now()
	if len(items) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs := make([]store.Rec, 0, len(items))
	for _, it := range items {
		rec, pol := it.recording()
		recs = append(recs, rec)
		if hash := recording.PolicyHash(pol); !r.recordedPolicies[hash] {
			if err := r.opts.Recorder.PutPolicy(ctx, hash, pol.Source, pol.Text, r.opts.Now()); err != nil {
				r.log.Warn("recording the policy failed; replay of these decisions will need it", "err", err)
			} else {
				r.recordedPolicies[hash] = true
			}
		}
	}
	if len(recs) == 0 {
		return
	}
	if err := r.opts.Recorder.AppendRecords(ctx, recs); err != nil {
		r.log.Warn("recording decisions failed; they are in the audit log, not in the recordings", "err", err)
	}
}

func (r *Relay) shape(it auditItem) *audit.Record {
	if it.args != nil {
		var err error
		if it.rec.Shape, it.rec.Hashes, err = audit.Shape(it.args, r.opts.Hasher.Keyed); err != nil {
			it.rec.Shape = json.RawMessage(`"unreadable"`)
		}
	}
	return it.rec
}

// inflight counts work in flight that a later step must wait for. Unlike a
// sync.WaitGroup it may be added to while another goroutine waits.
type inflight struct {
	mu   sync.Mutex
	n    int
	done *sync.Cond
}

func (f *inflight) Add(n int) {
	f.mu.Lock()
	f.n += n
	if f.n == 0 && f.done != nil {
		f.done.Broadcast()
	}
	f.mu.Unlock()
}

func (f *inflight) Done() { f.Add(-1) }

// Wait returns when nothing is in flight.
func (f *inflight) Wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done == nil {
		f.done = sync.NewCond(&f.mu)
	}
	for f.n > 0 {
		f.done.Wait()
	}
}
