package gateway

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Tokens are the bearer tokens Weir accepts, one per tenant, held only as
// SHA-256 hashes.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	tenant string
	hash   [sha256.Size]byte
}

var tenantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ErrNoToken and ErrBadToken are what Authenticate returns for a request
// without a bearer token and with one Weir does not know.
var (
	ErrNoToken  = errors.New("no bearer token")
	ErrBadToken = errors.New("invalid bearer token")
)

// Len is the number of tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// HashToken is the form a tokens file stores: "sha256:" and the hex hash.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// NewToken returns a fresh random token.
func NewToken() string { return "weir_" + rand.Text() }

// Add records one tenant's token, given as the token itself or its hash.
func (t *Tokens) Add(tenant, tok string) error {
	if !tenantName.MatchString(tenant) {
		return fmt.Errorf("tenant name %q: use letters, digits, '.', '_' or '-' (at most 64)", tenant)
	}
	for _, e := range t.entries {
		if e.tenant == tenant {
			return fmt.Errorf("tenant %q has two tokens; give each tenant one", tenant)
		}
	}
	var e tokenEntry
	e.tenant = tenant
	if h, ok := strings.CutPrefix(tok, "sha256:"); ok {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size {
			return fmt.Errorf("tenant %q: a hashed token is sha256: and 64 hex digits", tenant)
		}
		copy(e.hash[:], b)
	} else {
		if len(tok) < 16 {
			return fmt.Errorf("tenant %q: the token is shorter than 16 characters; make one with `weir serve --new-token`", tenant)
		}
		e.hash = sha256.Sum256([]byte(tok))
	}
	t.entries = append(t.entries, e)
	return nil
}

// ParseTokensEnv reads WEIR_TOKENS: "tenant=token" pairs separated by
// commas or white space.
func ParseTokensEnv(v string) (*Tokens, error) {
	t := &Tokens{}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		tenant, tok, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("WEIR_TOKENS: %q is not tenant=token", redact(f))
		}
		if err := t.Add(tenant, tok); err != nil {
			return nil, fmt.Errorf("WEIR_TOKENS: %w", err)
		}
	}
	return t, nil
}

// LoadTokensFile reads a tokens file: one "tenant sha256:HEX" line per
// tenant (a plain token is accepted too, but a file should not hold one);
// '#' starts a comment.
func LoadTokensFile(path string, into *Tokens) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("tokens file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		switch len(fields) {
		case 0:
			continue
		case 2:
			if err := into.Add(fields[0], fields[1]); err != nil {
				return fmt.Errorf("%s:%d: %w", path, line, err)
			}
		default:
			return fmt.Errorf("%s:%d: want \"TENANT sha256:HEX\"", path, line)
		}
	}
	return sc.Err()
}

// Authenticate returns the tenant whose token the Authorization header
// carries. Every stored hash is compared in constant time, so the time
// taken says nothing about which tenant, or how much of a hash, matched.
func (t *Tokens) Authenticate(authorization string) (string, error) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", ErrNoToken
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	tenant, found := "", 0
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(sum[:], e.hash[:]) == 1 {
			tenant, found = e.tenant, 1
		}
	}
	if found == 0 {
		return "", ErrBadToken
	}
	return tenant, nil
}

func redact(s string) string {
	if i := strings.IndexByte(s, '='); i >= 0 {
		return s[:i] + "=…"
	}
	if len(s) > 4 {
		return s[:4] + "…"
	}
	return s
}
