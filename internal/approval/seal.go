package approval

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sealer seals the request state of the input_required round trip and the
// details of stored requests, with AES-256-GCM under keys derived from the
// install key: a state the client echoes back cannot be forged or altered
// without that key, and details at rest cannot be read without it.
type Sealer struct {
	state, details cipher.AEAD
}

// MinKeyLen is the shortest install key a Sealer accepts.
const MinKeyLen = 16

// NewSealer derives a Sealer from the install key.
func NewSealer(installKey []byte) (*Sealer, error) {
	if len(installKey) < MinKeyLen {
		return nil, fmt.Errorf("approval: install key of %d bytes, want at least %d", len(installKey), MinKeyLen)
	}
	aead := func(info string) (cipher.AEAD, error) {
		k, err := hkdf.Key(sha256.New, installKey, nil, info, 32)
		if err != nil {
			return nil, err
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(block)
	}
	var s Sealer
	var err error
	if s.state, err = aead("weir/approval/v1/request-state"); err != nil {
		return nil, err
	}
	if s.details, err = aead("weir/approval/v1/details"); err != nil {
		return nil, err
	}
	return &s, nil
}

// State is what a sealed requestState binds.
type State struct {
	Session string `json:"s"`
	Digest  string `json:"d"` // Digest of the call it was issued for
	Dest    string `json:"t,omitempty"`
	ID      string `json:"i"` // the approval request's id
	Nonce   string `json:"n"` // spent once (Store.SpendNonce)
	Issued  int64  `json:"a"` // unix ms
	Expires int64  `json:"e"` // unix ms
}

// StatePrefix starts every requestState Weir issues, so that a retry
// carrying a server's own state is told from one carrying Weir's.
const StatePrefix = "weir1."

// IsWeirState reports whether a requestState is one Weir issued (or claims
// to be).
func IsWeirState(s string) bool { return strings.HasPrefix(s, StatePrefix) }

// Errors of OpenState, each a reason a retry is refused.
var (
	ErrForged       = errors.New("the request state was not issued by this Weir or was altered")
	ErrWrongSession = errors.New("the request state belongs to another session")
	ErrWrongCall    = errors.New("the request state was issued for a different call (the tool or its arguments changed)")
	ErrReplayed     = errors.New("the request state was already used")
)

// stateAD binds a state to its use: a details blob cannot pose as one.
var stateAD = []byte("weir approval request state")

// NewState returns a state for a call issued at now and valid for ttl,
// with a fresh nonce.
func NewState(session, digest, dest, id string, now time.Time, ttl time.Duration) State {
	var n [16]byte
	_, _ = rand.Read(n[:])
	return State{Session: session, Digest: digest, Dest: dest, ID: id, Nonce: hex.EncodeToString(n[:]),
		Issued: now.UnixMilli(), Expires: now.Add(ttl).UnixMilli()}
}

// SealState returns the requestState string for st.
func (s *Sealer) SealState(st State) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return StatePrefix + base64.RawURLEncoding.EncodeToString(s.seal(s.state, plain, stateAD)), nil
}

// OpenState opens a requestState and checks it against the retried call:
// the session, the call's digest, and the expiry at now. It does not spend
// the nonce; the caller does, in the store, so that single use holds
// across proxies.
func (s *Sealer) OpenState(str, session, digest string, now time.Time) (State, error) {
	var st State
	body, ok := strings.CutPrefix(str, StatePrefix)
	if !ok {
		return st, ErrForged
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	// The decoder ignores newlines and the unused low bits of the last
	// character: only the one encoding SealState writes is accepted.
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != body {
		return st, ErrForged
	}
	plain, err := s.open(s.state, raw, stateAD)
	if err != nil {
		return st, ErrForged
	}
	if err := json.Unmarshal(plain, &st); err != nil || st.Nonce == "" {
		return st, ErrForged
	}
	switch {
	case st.Session != session:
		return st, ErrWrongSession
	case st.Digest != digest:
		return st, ErrWrongCall
	case now.UnixMilli() >= st.Expires:
		return st, fmt.Errorf("%w (%s ago)", ErrExpired, now.Sub(time.UnixMilli(st.Expires)).Round(time.Second))
	}
	return st, nil
}

var detailsAD = []byte("weir approval details")

// SealDetails seals what a person reads about a request, for the store.
func (s *Sealer) SealDetails(d Details) ([]byte, error) {
	plain, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return s.seal(s.details, plain, detailsAD), nil
}

// OpenDetails opens SealDetails' output.
func (s *Sealer) OpenDetails(b []byte) (Details, error) {
	var d Details
	plain, err := s.open(s.details, b, detailsAD)
	if err != nil {
		return d, fmt.Errorf("its details cannot be opened with this install's key: %w", err)
	}
	err = json.Unmarshal(plain, &d)
	return d, err
}

func (s *Sealer) seal(a cipher.AEAD, plain, ad []byte) []byte {
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(plain)+a.Overhead())
	_, _ = rand.Read(nonce)
	return a.Seal(nonce, nonce, plain, ad)
}

func (s *Sealer) open(a cipher.AEAD, b, ad []byte) ([]byte, error) {
	if len(b) < a.NonceSize()+a.Overhead() {
		return nil, errors.New("too short")
	}
	return a.Open(nil, b[:a.NonceSize()], b[a.NonceSize():], ad)
}
