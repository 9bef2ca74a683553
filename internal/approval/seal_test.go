package approval

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// testKey and otherKey are two install keys.
var (
	testKey  = []byte("weir-test-install-key-0123456789")
	otherKey = []byte("weir-other-install-key-987654321")
)

// t0 is the fixed "now" of the tests: time is an argument everywhere.
var t0 = time.UnixMilli(1_800_000_000_000)

func sealer(t testing.TB, key []byte) *Sealer {
	t.Helper()
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const b64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func TestNewSealerKeyLength(t *testing.T) {
	for _, n := range []int{0, 1, MinKeyLen - 1} {
		if _, err := NewSealer(make([]byte, n)); err == nil {
			t.Errorf("NewSealer accepted a %d-byte install key", n)
		}
	}
	for _, n := range []int{MinKeyLen, 32, 64} {
		if _, err := NewSealer(bytes.Repeat([]byte{7}, n)); err != nil {
			t.Errorf("NewSealer refused a %d-byte install key: %v", n, err)
		}
	}
}

func TestNewState(t *testing.T) {
	a := NewState("sess", "dig", "dest", "abcdefghjk", t0, DefaultTTL)
	b := NewState("sess", "dig", "dest", "abcdefghjk", t0, DefaultTTL)
	if a.Nonce == "" || a.Nonce == b.Nonce || len(a.Nonce) != 32 {
		t.Errorf("nonces %q and %q: want two distinct 128-bit hex nonces", a.Nonce, b.Nonce)
	}
	if a.Issued != t0.UnixMilli() || a.Expires != t0.Add(DefaultTTL).UnixMilli() {
		t.Errorf("issued %d expires %d, want %d and %d", a.Issued, a.Expires, t0.UnixMilli(), t0.Add(DefaultTTL).UnixMilli())
	}
	if a.Session != "sess" || a.Digest != "dig" || a.Dest != "dest" || a.ID != "abcdefghjk" {
		t.Errorf("state %+v does not carry what it was made from", a)
	}
}

func TestStateRoundTrip(t *testing.T) {
	s := sealer(t, testKey)
	rapid.Check(t, func(t *rapid.T) {
		st := State{
			Session: rapid.String().Draw(t, "session"),
			Digest:  rapid.String().Draw(t, "digest"),
			Dest:    rapid.String().Draw(t, "dest"),
			ID:      rapid.String().Draw(t, "id"),
			Nonce:   rapid.StringN(1, 40, -1).Draw(t, "nonce"),
			Issued:  t0.UnixMilli() - rapid.Int64Range(0, 1e9).Draw(t, "age"),
			Expires: t0.UnixMilli() + rapid.Int64Range(1, 1e9).Draw(t, "left"),
		}
		str, err := s.SealState(st)
		if err != nil {
			t.Fatal(err)
		}
		if !IsWeirState(str) {
			t.Fatalf("%q lacks the prefix %q", str, StatePrefix)
		}
		if strings.Contains(str, st.Session) && len(st.Session) > 8 || strings.Contains(str, st.Digest) && len(st.Digest) > 8 {
			t.Fatalf("the sealed state %q shows its session or digest in the clear", str)
		}
		got, err := s.OpenState(str, st.Session, st.Digest, t0)
		if err != nil {
			t.Fatalf("OpenState: %v", err)
		}
		if got != st {
			t.Fatalf("opened %+v, sealed %+v", got, st)
		}
	})
}

func TestStateSealedTwiceDiffers(t *testing.T) {
	s := sealer(t, testKey)
	st := NewState("sess", "dig", "", "abcdefghjk", t0, time.Minute)
	a, _ := s.SealState(st)
	b, _ := s.SealState(st)
	if a == b {
		t.Error("the same state sealed twice gives the same string: the AEAD nonce is not fresh")
	}
}

// TestOpenStateRefusals: every way a retried state can be wrong, each with
// the sentinel the relay reports.
func TestOpenStateRefusals(t *testing.T) {
	s, other := sealer(t, testKey), sealer(t, otherKey)
	st := NewState("sess", "digest-of-the-call", "dest", "abcdefghjk", t0, DefaultTTL)
	good, err := s.SealState(st)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(good, StatePrefix)
	forged, _ := other.SealState(st)
	past, _ := s.SealState(NewState("sess", "digest-of-the-call", "", "abcdefghjk", t0.Add(-time.Hour), time.Minute))
	noNonce := st
	noNonce.Nonce = ""
	nonceless, _ := s.SealState(noNonce)
	notJSON := StatePrefix + base64.RawURLEncoding.EncodeToString(s.seal(s.state, []byte("not json"), stateAD))
	array := StatePrefix + base64.RawURLEncoding.EncodeToString(s.seal(s.state, []byte(`["s","d"]`), stateAD))

	cases := []struct {
		name          string
		state         string
		session, call string
		now           time.Time
		want          error
	}{
		{"good", good, "sess", "digest-of-the-call", t0, nil},
		{"good until the last millisecond", good, "sess", "digest-of-the-call", time.UnixMilli(st.Expires - 1), nil},
		{"empty", "", "sess", "digest-of-the-call", t0, ErrForged},
		{"prefix only", StatePrefix, "sess", "digest-of-the-call", t0, ErrForged},
		{"no prefix", body, "sess", "digest-of-the-call", t0, ErrForged},
		{"wrong prefix", "weir2." + body, "sess", "digest-of-the-call", t0, ErrForged},
		{"upper-case prefix", "WEIR1." + body, "sess", "digest-of-the-call", t0, ErrForged},
		{"standard base64 padding", good + "==", "sess", "digest-of-the-call", t0, ErrForged},
		{"newline inside", StatePrefix + body[:20] + "\n" + body[20:], "sess", "digest-of-the-call", t0, ErrForged},
		{"trailing newline", good + "\n", "sess", "digest-of-the-call", t0, ErrForged},
		{"space inside", StatePrefix + body[:20] + " " + body[20:], "sess", "digest-of-the-call", t0, ErrForged},
		{"truncated by one", good[:len(good)-1], "sess", "digest-of-the-call", t0, ErrForged},
		{"truncated by four", good[:len(good)-4], "sess", "digest-of-the-call", t0, ErrForged},
		{"truncated to the nonce", StatePrefix + body[:16], "sess", "digest-of-the-call", t0, ErrForged},
		{"extended", good + "AAAA", "sess", "digest-of-the-call", t0, ErrForged},
		{"doubled", good + body, "sess", "digest-of-the-call", t0, ErrForged},
		{"not base64", StatePrefix + strings.Repeat("*", len(body)), "sess", "digest-of-the-call", t0, ErrForged},
		{"another install key", forged, "sess", "digest-of-the-call", t0, ErrForged},
		{"sealed without a nonce", nonceless, "sess", "digest-of-the-call", t0, ErrForged},
		{"sealed, not JSON", notJSON, "sess", "digest-of-the-call", t0, ErrForged},
		{"sealed, not an object", array, "sess", "digest-of-the-call", t0, ErrForged},
		{"wrong session", good, "other-session", "digest-of-the-call", t0, ErrWrongSession},
		{"empty session", good, "", "digest-of-the-call", t0, ErrWrongSession},
		{"wrong session and call", good, "other-session", "other-call", t0, ErrWrongSession},
		{"different call", good, "sess", "digest-of-another-call", t0, ErrWrongCall},
		{"expired exactly", good, "sess", "digest-of-the-call", time.UnixMilli(st.Expires), ErrExpired},
		{"expired long ago", good, "sess", "digest-of-the-call", t0.Add(24 * time.Hour), ErrExpired},
		{"issued with a past time", past, "sess", "digest-of-the-call", t0, ErrExpired},
	}
	sentinels := []error{ErrForged, ErrWrongSession, ErrWrongCall, ErrExpired, ErrReplayed}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.OpenState(c.state, c.session, c.call, c.now)
			if c.want == nil {
				if err != nil {
					t.Fatalf("OpenState: %v", err)
				}
				if got != st {
					t.Fatalf("opened %+v, want %+v", got, st)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("OpenState = %v, want %v", err, c.want)
			}
			for _, other := range sentinels {
				if other != c.want && errors.Is(err, other) {
					t.Errorf("the error %v is also %v", err, other)
				}
			}
		})
	}
	_, err = s.OpenState(past, "sess", "digest-of-the-call", t0)
	if !strings.Contains(err.Error(), "ago") {
		t.Errorf("an expiry error says how long ago it expired: %v", err)
	}
}

// TestOpenStateAnyByteChanged: changing any one character of the body of
// a state to any other character, or any bit of the sealed bytes, is
// refused as forged, for bodies of every length modulo 3 (the unused bits
// of a base64 body's last character included).
func TestOpenStateAnyByteChanged(t *testing.T) {
	s := sealer(t, testKey)
	lengths := map[int]bool{}
	for destLen := 0; len(lengths) < 3; destLen++ {
		st := NewState("sess", "dig", strings.Repeat("d", destLen), "abcdefghjk", t0, time.Minute)
		good, err := s.SealState(st)
		if err != nil {
			t.Fatal(err)
		}
		body := strings.TrimPrefix(good, StatePrefix)
		raw, _ := base64.RawURLEncoding.DecodeString(body)
		if lengths[len(raw)%3] {
			continue
		}
		lengths[len(raw)%3] = true
		for p := 0; p < len(body); p++ {
			for _, c := range []byte(b64URL + "=+/.~!") {
				if c == body[p] {
					continue
				}
				alt := StatePrefix + body[:p] + string(c) + body[p+1:]
				if _, err := s.OpenState(alt, "sess", "dig", t0); !errors.Is(err, ErrForged) {
					t.Fatalf("%d-byte state: character %d changed %q→%q: OpenState = %v, want ErrForged", len(raw), p, body[p], c, err)
				}
			}
		}
		for i := range raw {
			for bit := 0; bit < 8; bit++ {
				flipped := bytes.Clone(raw)
				flipped[i] ^= 1 << bit
				alt := StatePrefix + base64.RawURLEncoding.EncodeToString(flipped)
				if _, err := s.OpenState(alt, "sess", "dig", t0); !errors.Is(err, ErrForged) {
					t.Fatalf("%d-byte state: bit %d of byte %d flipped: OpenState = %v, want ErrForged", len(raw), bit, i, err)
				}
			}
		}
	}
}

func TestIsWeirState(t *testing.T) {
	for s, want := range map[string]bool{"weir1.abc": true, StatePrefix: true, "weir1": false, "": false, "server-state": false, "WEIR1.abc": false, " weir1.abc": false} {
		if got := IsWeirState(s); got != want {
			t.Errorf("IsWeirState(%q) = %v, want %v", s, got, want)
		}
	}
}

func testDetails() Details {
	return Details{
		Facts:        Facts([]byte(`{"to":"alice@example.com","url":"https://example.com/x","amount":12.5}`)),
		Reason:       "the arguments carry private data read from notes/read_note",
		Sources:      []string{"notes/read_note"},
		Paths:        []string{"$.body"},
		SessionScope: true,
	}
}

// exported is a Details with only what survives sealing: facts' exported
// fields.
func exported(d Details) Details {
	if d.Facts != nil {
		fs := make([]Fact, len(d.Facts))
		for i, f := range d.Facts {
			fs[i] = Fact{Kind: f.Kind, Path: f.Path, Value: f.Value}
		}
		d.Facts = fs
	}
	return d
}

func equalDetails(a, b Details) bool {
	a, b = exported(a), exported(b)
	if a.Reason != b.Reason || a.SessionScope != b.SessionScope || len(a.Facts) != len(b.Facts) ||
		strings.Join(a.Sources, "\x00") != strings.Join(b.Sources, "\x00") || len(a.Sources) != len(b.Sources) ||
		strings.Join(a.Paths, "\x00") != strings.Join(b.Paths, "\x00") || len(a.Paths) != len(b.Paths) {
		return false
	}
	for i := range a.Facts {
		if a.Facts[i].Kind != b.Facts[i].Kind || a.Facts[i].Path != b.Facts[i].Path || a.Facts[i].Value != b.Facts[i].Value {
			return false
		}
	}
	return true
}

func TestDetailsRoundTrip(t *testing.T) {
	s := sealer(t, testKey)
	rapid.Check(t, func(t *rapid.T) {
		var facts []Fact
		for i, n := 0, rapid.IntRange(0, 5).Draw(t, "facts"); i < n; i++ {
			facts = append(facts, Fact{
				Kind:  rapid.SampledFrom([]Kind{KindRecipient, KindChannel, KindAccount, KindHost, KindPath, KindAmount}).Draw(t, "kind"),
				Path:  rapid.String().Draw(t, "path"),
				Value: rapid.String().Draw(t, "value"),
			})
		}
		d := Details{Facts: facts, Reason: rapid.String().Draw(t, "reason"),
			Sources: rapid.SliceOfN(rapid.String(), 0, 3).Draw(t, "sources"), Paths: rapid.SliceOfN(rapid.String(), 0, 3).Draw(t, "paths"),
			SessionScope: rapid.Bool().Draw(t, "scope")}
		// JSON drops empty slices (omitempty): compare what it keeps.
		if len(d.Sources) == 0 {
			d.Sources = nil
		}
		if len(d.Paths) == 0 {
			d.Paths = nil
		}
		blob, err := s.SealDetails(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Reason) > 8 && bytes.Contains(blob, []byte(d.Reason)) {
			t.Fatalf("the sealed details show the reason %q in the clear", d.Reason)
		}
		got, err := s.OpenDetails(blob)
		if err != nil {
			t.Fatalf("OpenDetails: %v", err)
		}
		if !equalDetails(got, d) {
			t.Fatalf("opened %+v, sealed %+v", got, d)
		}
	})
}

func TestOpenDetailsTampered(t *testing.T) {
	s, other := sealer(t, testKey), sealer(t, otherKey)
	blob, err := s.SealDetails(testDetails())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.OpenDetails(blob); err != nil || !equalDetails(got, testDetails()) {
		t.Fatalf("OpenDetails = %+v, %v", got, err)
	}
	for i := range blob {
		for bit := 0; bit < 8; bit++ {
			b := bytes.Clone(blob)
			b[i] ^= 1 << bit
			if _, err := s.OpenDetails(b); err == nil {
				t.Fatalf("bit %d of byte %d flipped: the details still open", bit, i)
			}
		}
	}
	for _, c := range []struct {
		name string
		blob []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"one byte", blob[:1]},
		{"nonce only", blob[:12]},
		{"truncated by one", blob[:len(blob)-1]},
		{"extended", append(bytes.Clone(blob), 0)},
	} {
		if _, err := s.OpenDetails(c.blob); err == nil {
			t.Errorf("%s: the details open", c.name)
		}
	}
	_, err = other.OpenDetails(blob)
	if err == nil || !strings.Contains(err.Error(), "install's key") {
		t.Errorf("details sealed under another install key: OpenDetails = %v, want an error naming the key", err)
	}
}

// TestSealDomainSeparation: a details blob is no request state and a
// request state no details blob, by key and by associated data.
func TestSealDomainSeparation(t *testing.T) {
	s := sealer(t, testKey)
	st := NewState("sess", "dig", "", "abcdefghjk", t0, time.Minute)
	state, _ := s.SealState(st)
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(state, StatePrefix))
	if _, err := s.OpenDetails(raw); err == nil {
		t.Error("a request state opens as details")
	}

	// Details whose JSON reads as a valid state, sealed as details.
	plain := `{"s":"sess","d":"dig","i":"abcdefghjk","n":"00ff","a":1,"e":` + strconv.FormatInt(st.Expires, 10) + `}`
	asDetails := StatePrefix + base64.RawURLEncoding.EncodeToString(s.seal(s.details, []byte(plain), detailsAD))
	if _, err := s.OpenState(asDetails, "sess", "dig", t0); !errors.Is(err, ErrForged) {
		t.Errorf("a details blob opens as a state: %v", err)
	}
	// The same plaintext under the state key but the details' AD, and
	// under the details key with the state's AD: each layer alone refuses.
	sameKey := StatePrefix + base64.RawURLEncoding.EncodeToString(s.seal(s.state, []byte(plain), detailsAD))
	if _, err := s.OpenState(sameKey, "sess", "dig", t0); !errors.Is(err, ErrForged) {
		t.Errorf("a blob sealed with the state key under the details' associated data opens as a state: %v", err)
	}
	sameAD := StatePrefix + base64.RawURLEncoding.EncodeToString(s.seal(s.details, []byte(plain), stateAD))
	if _, err := s.OpenState(sameAD, "sess", "dig", t0); !errors.Is(err, ErrForged) {
		t.Errorf("a blob sealed with the details key under the state's associated data opens as a state: %v", err)
	}
	// The control: that plaintext sealed as a state does open.
	asState := StatePrefix + base64.RawURLEncoding.EncodeToString(s.seal(s.state, []byte(plain), stateAD))
	if _, err := s.OpenState(asState, "sess", "dig", t0); err != nil {
		t.Errorf("the control state does not open: %v", err)
	}
	detailsPlain := []byte(`{"reason":"r"}`)
	if _, err := s.OpenDetails(s.seal(s.state, detailsPlain, stateAD)); err == nil {
		t.Error("a blob sealed as a state opens as details")
	}
	if _, err := s.OpenDetails(s.seal(s.details, detailsPlain, detailsAD)); err != nil {
		t.Errorf("the control details do not open: %v", err)
	}
}
