package transport

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// Sealed session ids let any replica serve any request of a 2025 HTTP
// session, with no affinity at the load balancer. With FrontOptions.Key
// (the install key replicas share), the Mcp-Session-Id a front mints is
// the session's description sealed with AES-GCM under a key derived from
// it: the principal that opened it, its taint session key, when it was
// opened, and the client's initialize parameters (protocol version,
// capabilities, name and version). A front that does not know the id —
// another replica, or this one after a restart — opens it, checks that it
// was minted for the principal asking and is not older than
// SessionMaxAge, and resumes the session: it opens a relay of its own for
// it under the same taint session (whose flow state, approvals and rate
// limits are in the shared store), initialises the upstream side with the
// client's own initialize parameters, and then serves the request. The
// client sees one session throughout.
//
// What does not move between replicas is what lives only in a process: a
// request in flight on the replica that died gets no answer (the client
// retries it), an elicitation Weir put to the client on one replica must
// be answered on that one (a 2026-07-28 client's input_required retry
// carries its sealed state and works anywhere), a GET stream's backlog and
// its resumption by Last-Event-ID stay with their replica, and an
// upstream server's own session state (resource subscriptions) is
// opened anew. A DELETE ends the session on the replica that receives it;
// others that resumed it end it when it idles.

// SessionMaxAge is how long after it was minted a sealed Mcp-Session-Id
// may be resumed by a front that does not know it. The replica that
// serves a session keeps it as long as it is used; the bound is for ids
// presented to others, which cannot tell when it was last used.
const SessionMaxAge = 7 * 24 * time.Hour

// sealedPrefix starts every sealed Mcp-Session-Id (and names the format's
// version); ids without it are random, as minted without a key.
const sealedPrefix = "w1."

// maxSealedInit bounds the initialize parameters sealed into an id, so the
// header stays small; a client whose parameters are larger gets a random
// id, served only by the replica that minted it.
const maxSealedInit = 2048

var sealedAD = []byte("weir mcp-session-id v1")

// sealedSession is what a sealed Mcp-Session-Id carries.
type sealedSession struct {
	Principal string          `json:"p"`
	Taint     string          `json:"t"`
	Opened    int64           `json:"o"` // unix seconds
	Init      json.RawMessage `json:"i"`
}

// sessionAEAD derives the session ids' AEAD from the install key.
func sessionAEAD(key []byte) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, key, nil, "weir/mcp-session-id/v1", 32)
	if err != nil {
		return nil, err
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// resumeInit is the part of a client's initialize parameters a resumed
// session initialises its upstream side with.
type resumeInit struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	ClientInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

// mintID returns a new session's Mcp-Session-Id: sealed when the front has
// a key and the parameters are small enough, else name (random).
func (f *Front) mintID(name, principal, taint string, params json.RawMessage) string {
	if f.sealer == nil {
		return name
	}
	var in resumeInit
	if json.Unmarshal(params, &in) != nil {
		return name
	}
	init, err := json.Marshal(in)
	if err != nil || len(init) > maxSealedInit {
		return name
	}
	plain, err := json.Marshal(sealedSession{Principal: principal, Taint: taint, Opened: time.Now().Unix(), Init: init})
	if err != nil {
		return name
	}
	nonce := make([]byte, f.sealer.NonceSize(), f.sealer.NonceSize()+len(plain)+f.sealer.Overhead())
	_, _ = rand.Read(nonce)
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(f.sealer.Seal(nonce, nonce, plain, sealedAD))
}

// openID opens a sealed id minted for principal that may still be
// resumed; ok is false for anything else (random ids included), which is
// answered as a session that does not exist.
func (f *Front) openID(sid, principal string, now time.Time) (sealedSession, bool) {
	var s sealedSession
	body, ok := strings.CutPrefix(sid, sealedPrefix)
	if !ok || f.sealer == nil {
		return s, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	n := f.sealer.NonceSize()
	if err != nil || len(raw) < n+f.sealer.Overhead() {
		return s, false
	}
	plain, err := f.sealer.Open(nil, raw[:n], raw[n:], sealedAD)
	if err != nil || json.Unmarshal(plain, &s) != nil {
		return s, false
	}
	opened := time.Unix(s.Opened, 0)
	if s.Principal != principal || s.Taint == "" || now.Sub(opened) > SessionMaxAge || opened.After(now.Add(time.Minute)) {
		return s, false
	}
	return s, true
}

// errResume is a resumed session whose upstream side did not initialise.
var errResume = errors.New("the session could not be resumed on this replica")

// resumeTimeout bounds the upstream initialisation of a resumed session.
const resumeTimeout = 30 * time.Second

// lookup finds the session sid names for principal: one this front
// serves, or, for a sealed id another front minted, the session resumed
// here. nil, nil means there is no such session.
func (f *Front) lookup(ctx context.Context, sid, principal string) (*frontConn, error) {
	f.mu.Lock()
	c := f.sessions[sid]
	f.mu.Unlock()
	if c != nil {
		// A session another principal opened is answered as if it did
		// not exist: its id is not a capability to be probed.
		if c.info.Principal != principal {
			return nil, nil
		}
		return c, c.waitReady(ctx)
	}
	s, ok := f.openID(sid, principal, time.Now())
	if !ok {
		return nil, nil
	}
	c, fresh, err := f.openResumed(FrontSession{Principal: principal, Taint: s.Taint, HTTP: sid})
	if err != nil {
		return nil, err
	}
	if !fresh {
		return c, c.waitReady(ctx)
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resumeTimeout)
	defer cancel()
	if err := c.handshake(hctx, s.Init); err != nil {
		f.end(c)
		close(c.ready)
		return nil, err
	}
	close(c.ready)
	f.log.Debug("resumed a session minted elsewhere", "principal", principal)
	return c, nil
}

// openResumed opens the session info names unless another request has
// just done so; fresh says this call opened it, and must initialise it.
func (f *Front) openResumed(info FrontSession) (c *frontConn, fresh bool, err error) {
	f.mu.Lock()
	if c := f.sessions[info.HTTP]; c != nil {
		f.mu.Unlock()
		return c, false, nil
	}
	f.mu.Unlock()
	c, err = f.openWith(info, true)
	if errors.Is(err, errSessionExists) {
		f.mu.Lock()
		c = f.sessions[info.HTTP]
		f.mu.Unlock()
		if c == nil {
			return nil, false, errResume
		}
		return c, false, nil
	}
	return c, err == nil, err
}

// handshake initialises a resumed session's upstream side as the client
// did when it opened the session: an initialize with the client's
// parameters, whose answer goes nowhere, then notifications/initialized.
func (c *frontConn) handshake(ctx context.Context, init json.RawMessage) error {
	c.mu.Lock()
	c.nextID++
	n := c.nextID
	s := newOutStream("", 8)
	c.pending[n] = &pendingCall{clientID: []byte("0"), method: "initialize", stream: s}
	c.mu.Unlock()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":%s}`, n, init)
	if err := c.push(ctx, []byte(req)); err != nil {
		return fmt.Errorf("%w: %v", errResume, err)
	}
	for {
		events, done, answered, wake := s.since(0)
		if done {
			if !answered || len(events) == 0 {
				return fmt.Errorf("%w: the session ended while it initialised", errResume)
			}
			if jsonrpc.Member(events[len(events)-1].data, "error") != nil {
				return fmt.Errorf("%w: the upstream refused initialize", errResume)
			}
			break
		}
		select {
		case <-wake:
		case <-ctx.Done():
			c.mu.Lock()
			delete(c.pending, n)
			c.mu.Unlock()
			return fmt.Errorf("%w: initialize was not answered in %v", errResume, resumeTimeout)
		}
	}
	return c.push(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
}

// waitReady waits until a resumed session has initialised; a session
// opened here is ready at once.
func (c *frontConn) waitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
