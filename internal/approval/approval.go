package approval

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Channel is how a person was asked, or how an escalation was settled
// without asking.
type Channel string

const (
	// Elicitation: an elicitation/create request to the client while the
	// call waits (MCP 2025-06-18 and 2025-11-25).
	Elicitation Channel = "elicitation"
	// InputRequired: an input_required result and the client's retry
	// (MCP 2026-07-28).
	InputRequired Channel = "input_required"
	// CLI: the call is refused with an approval id; a person runs
	// `weir approve` or `weir deny` and the agent retries.
	CLI Channel = "cli"
	// Memory: a person approved this tool and destination for the session.
	Memory Channel = "memory"
	// Repeat: a person refused this same call moments ago; it is refused
	// again without asking.
	Repeat Channel = "repeat"
)

// Answer is how an escalation ended.
type Answer string

const (
	Approved        Answer = "approved"
	ApprovedSession Answer = "approved_session"
	Declined        Answer = "declined"
	Cancelled       Answer = "cancelled" // the person dismissed the question
	TimedOut        Answer = "timeout"   // nobody answered in time
	Failed          Answer = "error"     // the client answered with an error or garbage
	Gone            Answer = "client_gone"
	Pending         Answer = "pending" // out of band: waiting for `weir approve`
)

// By says who or what gave an answer on a channel, for the audit log: a
// person, the timeout, the client (an error, or it went away), a session
// approval, a refusal that stood, or Weir itself (a state it refused).
func (a Answer) By(ch Channel) string {
	switch {
	case a == Pending:
		return ""
	case a == TimedOut:
		return "timeout"
	case a == Failed || a == Gone:
		return "client"
	case ch == Memory:
		return "session_approval"
	case ch == Repeat:
		return "earlier_refusal"
	}
	return "person"
}

// Allows reports whether the call may run.
func (a Answer) Allows() bool { return a == Approved || a == ApprovedSession }

// Status is the state of a request in the book.
type Status string

const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusDenied   Status = "denied"
	StatusUsed     Status = "used" // approved and spent on the call it covers
	// StatusUnanswered: asked through the client, and no answer came (a
	// timeout, an error, the client left). The call was refused.
	StatusUnanswered Status = "unanswered"
)

// Scope is what an approval covers.
type Scope string

const (
	// Once: the one call whose digest it names, once.
	Once Scope = "once"
	// Session: every call of the tool to the same destination for the rest
	// of the session, whose arguments carry nothing chosen from untrusted
	// content.
	Session Scope = "session"
)

// Row is an approval request as the store keeps it: digests, ids and
// times in the clear, everything a person reads sealed.
type Row struct {
	ID      string
	Session string
	Server  string
	Tool    string
	Digest  string // Digest of the call
	Dest    string // DestKey of its destination; "" when it may not be remembered
	Rule    string
	Sealed  []byte // the Details, sealed (Sealer.SealDetails)
	Created int64  // unix ms
	Expires int64  // unix ms
	Status  Status
	Scope   Scope
	Channel Channel
	By      string // who decided: "cli", "elicitation", ...
	Decided int64  // unix ms, 0 while pending
}

// Store keeps approval requests, session grants and spent nonces. It is
// shared by the proxies of a machine (store.SQLite) so that `weir approve`
// in a terminal reaches the proxy that asked.
type Store interface {
	// PutApproval records a new request.
	PutApproval(ctx context.Context, r Row) error
	// Approval returns the request with the id, or ErrUnknown.
	Approval(ctx context.Context, id string) (Row, error)
	// Approvals lists the requests not yet expired at now, newest first;
	// session "" means every session.
	Approvals(ctx context.Context, session string, now int64) ([]Row, error)
	// LatestApproval returns the newest request of the session for the
	// digest that has not expired at now.
	LatestApproval(ctx context.Context, session, digest string, now int64) (Row, bool, error)
	// SetApproval moves a request from status from to status to, with the
	// scope and who decided: false when it was not in status from (another
	// proxy or person got there first).
	SetApproval(ctx context.Context, id string, from, to Status, scope Scope, by string, at int64) (bool, error)
	// Grant remembers an approval for the session's destination key.
	Grant(ctx context.Context, session, dest string, at int64) error
	// Granted reports whether the session has a grant for dest.
	Granted(ctx context.Context, session, dest string) (bool, error)
	// SpendNonce records a sealed state's nonce as used: false when it was
	// used before. The record is kept until expires.
	SpendNonce(ctx context.Context, nonce string, expires int64) (bool, error)
	// CountApprovals counts the requests of the session that asked a
	// person (any channel but memory and repeat).
	CountApprovals(ctx context.Context, session string) (int, error)
}

// Sentinel errors callers branch on.
var (
	// ErrUnknown: no request has that id (it may have expired and been
	// pruned).
	ErrUnknown = errors.New("no such approval request")
	// ErrDecided: the request was approved, denied or used already.
	ErrDecided = errors.New("approval request already decided")
	// ErrExpired: the request or state is past its expiry.
	ErrExpired = errors.New("approval request expired")
)

// Default bounds (the policy's approval: timeout and ttl override them).
const (
	DefaultTimeout = 2 * time.Minute
	DefaultTTL     = 10 * time.Minute
	// RepeatWindow is how long a refusal answers an identical escalation
	// without asking again.
	RepeatWindow = 2 * time.Minute
)

// Details are what a person reads about a request: sealed at rest.
type Details struct {
	Facts   []Fact   `json:"facts,omitempty"`
	Reason  string   `json:"reason"`
	Sources []string `json:"sources,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	// SessionScope reports that "approve for this session" may be given.
	SessionScope bool `json:"session_scope,omitempty"`
}

// Request is a request as `weir approvals` shows it.
type Request struct {
	Row
	Details
}

// idAlphabet is lowercase base32 without the letters people confuse
// (no 0/o, 1/l/i): ids are typed from a terminal.
const idAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// IDLen is the length of an approval id.
const IDLen = 10

// NewID returns a fresh approval id.
func NewID() string {
	var b [IDLen]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b[:])
}

// ValidID reports whether s has the form of an approval id.
func ValidID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(idAlphabet, rune(s[i])) {
			return false
		}
	}
	return true
}

// Book is the approval requests of one install: what the relay records and
// consults, and what `weir approvals`, `weir approve` and `weir deny` read
// and change.
type Book struct {
	Store  Store
	Sealer *Sealer
}

// Open records a new pending request for the call and returns it, or the
// pending request already open for the same call in the session (an agent
// that retries before the person answered gets the same id: asked once).
func (b *Book) Open(ctx context.Context, r Row, d Details) (Row, error) {
	if prev, ok, err := b.Store.LatestApproval(ctx, r.Session, r.Digest, r.Created); err != nil {
		return r, err
	} else if ok && prev.Status == StatusPending {
		return prev, nil
	}
	sealed, err := b.Sealer.SealDetails(d)
	if err != nil {
		return r, err
	}
	r.Sealed = sealed
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.Status == "" {
		r.Status = StatusPending
	}
	if err := b.Store.PutApproval(ctx, r); err != nil {
		return r, err
	}
	return r, nil
}

// Prior is what the book already says about a call about to be escalated.
type Prior struct {
	// Answer is Approved (an out-of-band approval, now spent), Declined (a
	// refusal still standing), ApprovedSession (a session grant covers
	// it), or "" (nothing: ask).
	Answer  Answer
	Channel Channel
	ID      string
	// Age is how long ago the deciding answer was given.
	Age time.Duration
}

// Consult looks for an answer already given to this call: a session grant
// for its destination (only when dest is not ""), an approval of this
// exact call not yet spent (which it spends: single use), or a refusal
// within the repeat window or the request's life.
func (b *Book) Consult(ctx context.Context, session, digest, dest string, now time.Time) (Prior, error) {
	ms := now.UnixMilli()
	if dest != "" {
		ok, err := b.Store.Granted(ctx, session, dest)
		if err != nil {
			return Prior{}, err
		}
		if ok {
			return Prior{Answer: ApprovedSession, Channel: Memory}, nil
		}
	}
	r, ok, err := b.Store.LatestApproval(ctx, session, digest, ms)
	if err != nil || !ok {
		return Prior{}, err
	}
	age := time.Duration(ms-r.Decided) * time.Millisecond
	switch r.Status {
	case StatusApproved:
		won, err := b.Store.SetApproval(ctx, r.ID, StatusApproved, StatusUsed, r.Scope, r.By, ms)
		if err != nil || !won {
			return Prior{}, err
		}
		if r.Scope == Session && r.Dest != "" {
			if err := b.Store.Grant(ctx, session, r.Dest, ms); err != nil {
				return Prior{}, err
			}
		}
		return Prior{Answer: Approved, Channel: CLI, ID: r.ID, Age: age}, nil
	case StatusDenied:
		// A refusal given with weir deny stands until the request expires,
		// whatever channel asked; one given through the client stands for
		// the repeat window.
		ch := Repeat
		if r.Channel == CLI || r.By == "cli" {
			ch = CLI
		}
		if ch == CLI || age <= RepeatWindow {
			return Prior{Answer: Declined, Channel: ch, ID: r.ID, Age: age}, nil
		}
	}
	return Prior{}, nil
}

// Settle records the answer a channel got for a request: a refusal stands
// against identical calls for the repeat window, a session approval
// becomes a grant.
func (b *Book) Settle(ctx context.Context, r Row, a Answer, now time.Time) error {
	ms := now.UnixMilli()
	switch {
	case a.Allows():
		scope := Once
		if a == ApprovedSession {
			scope = Session
		}
		if _, err := b.Store.SetApproval(ctx, r.ID, StatusPending, StatusUsed, scope, string(r.Channel), ms); err != nil {
			return err
		}
		if a == ApprovedSession && r.Dest != "" {
			return b.Store.Grant(ctx, r.Session, r.Dest, ms)
		}
		return nil
	case a == Declined || a == Cancelled:
		_, err := b.Store.SetApproval(ctx, r.ID, StatusPending, StatusDenied, Once, string(r.Channel), ms)
		return err
	case a == TimedOut || a == Failed || a == Gone:
		// The next identical call is a new question, counted as one.
		_, err := b.Store.SetApproval(ctx, r.ID, StatusPending, StatusUnanswered, Once, string(r.Channel), ms)
		return err
	}
	return nil
}

// Decide is `weir approve` (approve true) and `weir deny`: it answers a
// pending request. A session scope is refused for a request that may not
// be remembered.
func (b *Book) Decide(ctx context.Context, id string, approve, session bool, by string, now time.Time) (Request, error) {
	r, err := b.Store.Approval(ctx, id)
	if err != nil {
		return Request{}, err
	}
	req, err := b.unseal(r)
	if err != nil {
		return req, err
	}
	ms := now.UnixMilli()
	switch {
	case r.Expires <= ms:
		return req, fmt.Errorf("%w: %s expired %s ago; ask the agent to retry the call for a new request", ErrExpired, id, now.Sub(time.UnixMilli(r.Expires)).Round(time.Second))
	case r.Status != StatusPending:
		return req, fmt.Errorf("%w: %s is %s", ErrDecided, id, r.Status)
	case session && !req.SessionScope:
		return req, fmt.Errorf("%s cannot be approved for the session: an argument of the call was chosen from untrusted content (%s), so only this one call can be approved; run weir approve %s without --session", id, strings.Join(req.Paths, ", "), id)
	}
	to, scope := StatusDenied, Once
	if approve {
		to = StatusApproved
		if session {
			scope = Session
		}
	}
	won, err := b.Store.SetApproval(ctx, id, StatusPending, to, scope, by, ms)
	if err != nil {
		return req, err
	}
	if !won {
		return req, fmt.Errorf("%w: %s was answered meanwhile", ErrDecided, id)
	}
	req.Status, req.Scope, req.By, req.Decided = to, scope, by, ms
	return req, nil
}

// List returns the requests not yet expired, newest first, with their
// details unsealed; session "" lists every session.
func (b *Book) List(ctx context.Context, session string, now time.Time) ([]Request, error) {
	rows, err := b.Store.Approvals(ctx, session, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	out := make([]Request, 0, len(rows))
	for _, r := range rows {
		req, err := b.unseal(r)
		if err != nil {
			return nil, err
		}
		out = append(out, req)
	}
	return out, nil
}

func (b *Book) unseal(r Row) (Request, error) {
	req := Request{Row: r}
	d, err := b.Sealer.OpenDetails(r.Sealed)
	if err != nil {
		return req, fmt.Errorf("approval %s: %w", r.ID, err)
	}
	req.Details = d
	return req, nil
}

// MarshalJSON writes a request for `weir approvals --json`.
func (r Request) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID           string   `json:"id"`
		Session      string   `json:"session"`
		Server       string   `json:"server"`
		Tool         string   `json:"tool"`
		Rule         string   `json:"rule"`
		Reason       string   `json:"reason"`
		Sources      []string `json:"sources"`
		Paths        []string `json:"paths"`
		Facts        []Fact   `json:"facts"`
		Status       Status   `json:"status"`
		Channel      Channel  `json:"channel"`
		SessionScope bool     `json:"session_scope"`
		Created      string   `json:"created"`
		Expires      string   `json:"expires"`
	}{r.ID, r.Session, r.Server, r.Tool, r.Rule, r.Reason, nonNil(r.Sources), nonNil(r.Paths), nonNilFacts(r.Facts), r.Status, r.Channel, r.SessionScope,
		time.UnixMilli(r.Created).UTC().Format(time.RFC3339), time.UnixMilli(r.Expires).UTC().Format(time.RFC3339)})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilFacts(f []Fact) []Fact {
	if f == nil {
		return []Fact{}
	}
	return f
}
