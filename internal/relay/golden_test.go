package relay

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

var update = flag.Bool("update", false, "rewrite the golden sections of testdata/scenarios/*.txtar")

// TestScenarios replays the relay scenarios in testdata/scenarios. Each
// file opens with what it checks and the defects it pins, then:
//
//	-- policy.yaml --  the policy (optional; the default preset otherwise)
//	-- session --      the messages, in order, one per line:
//	                   "client {...}" from the client, "server {...}" from
//	                   the server; "# ..." lines are comments
//	-- server saw --   what the server received, in order
//	-- client got --   what the client received, in order
//	-- audit --        the audit log: event, tool, verdict, rule, labels, reason
//
// The relay runs in process with a real SQLite state store and a real
// audit log, and each message is handled to the end (the relay's own
// result scans included) before the next is sent, so every output section
// is deterministic. `go test ./internal/relay -run TestScenarios -update`
// rewrites the last three sections; review the diff.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runScenario(t, file)
		})
	}
}

func runScenario(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	section := func(name string) ([]byte, bool) {
		for _, f := range ar.Files {
			if f.Name == name {
				return f.Data, true
			}
		}
		return nil, false
	}
	pol, _ := policyfile.Preset("default")
	if data, ok := section("policy.yaml"); ok {
		if pol, err = policyfile.Parse("policy.yaml", data); err != nil {
			t.Fatal(err)
		}
	}
	session, ok := section("session")
	if !ok {
		t.Fatal("no -- session -- section")
	}
	sc := startScenario(t, scenarioConfig{policy: pol})
	for i, line := range strings.Split(string(session), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		side, msg, _ := strings.Cut(line, " ")
		switch side {
		case "client", "server":
			sc.send(side, msg)
		default:
			t.Fatalf("session line %d: want \"client {...}\" or \"server {...}\", got %q", i+1, line)
		}
	}
	got := sc.finish()
	for _, name := range []string{"server saw", "client got", "audit"} {
		want, _ := section(name)
		if *update {
			setSection(ar, name, got[name])
			continue
		}
		if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got[name])) {
			t.Errorf("-- %s -- differs:\ngot:\n%s\nwant:\n%s", name, got[name], want)
		}
	}
	if *update {
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func setSection(ar *txtar.Archive, name string, data []byte) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = data
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
}

// scenario is a relay under test, between two in-memory transports.
type scenario struct {
	t              *testing.T
	r              *Relay
	client, server *memTransport
	handled        chan string
	done           chan error
	auditPath      string
}

// scenarioConfig sets up a scenario's relay; zero fields get defaults: the
// default preset, a fresh SQLite store, server "srv" in session "s1".
type scenarioConfig struct {
	policy  *policy.Policy
	store   Store
	server  string
	timeout time.Duration
}

func startScenario(t *testing.T, cfg scenarioConfig) *scenario {
	h, err := fingerprint.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if cfg.policy == nil {
		cfg.policy, _ = policyfile.Preset("default")
	}
	if cfg.server == "" {
		cfg.server = "srv"
	}
	if cfg.store == nil {
		cfg.store = sqliteStore(t)
	}
	sc := &scenario{t: t, client: newMemTransport(), server: newMemTransport(), handled: make(chan string, 16),
		done: make(chan error, 1), auditPath: filepath.Join(dir, "audit.log")}
	log, err := audit.Open(sc.auditPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	var tick int64
	sc.r = New(Options{Server: cfg.server, Session: "s1", Identity: cfg.server + "-identity", Policy: cfg.policy, Hasher: h, Store: cfg.store, Audit: log,
		Home: dir, Cwd: dir, RequestTimeout: cfg.timeout,
		Now:   func() time.Time { tick++; return time.UnixMilli(1_700_000_000_000 + tick) },
		trace: func(side string) { sc.handled <- side }})
	go func() { sc.done <- sc.r.Run(context.Background(), sc.client, sc.server) }()
	return sc
}

// send delivers one message to the relay and waits until it is handled,
// the result scans it started included.
func (sc *scenario) send(side, msg string) {
	sc.t.Helper()
	tr := sc.client
	if side == "server" {
		tr = sc.server
	}
	tr.in <- []byte(msg)
	select {
	case got := <-sc.handled:
		if got != side {
			sc.t.Fatalf("the relay handled a %s message, want %s", got, side)
		}
	case <-time.After(10 * time.Second):
		sc.t.Fatalf("the relay did not handle %s", msg)
	}
	sc.r.scans.Wait()
}

// expect returns the next n messages the relay has written to side since
// the last call (waiting up to a few seconds for them), for tests that read
// outputs as they go.
func (sc *scenario) written(side string) [][]byte {
	if side == "server" {
		return sc.server.out()
	}
	return sc.client.out()
}

// finish ends both sides, waits for the relay, and returns the outputs.
func (sc *scenario) finish() map[string][]byte {
	close(sc.client.in)
	close(sc.server.in)
	select {
	case <-sc.done:
	case <-time.After(10 * time.Second):
		sc.t.Fatal("the relay did not stop")
	}
	recs, err := audit.Tail(sc.auditPath, 10000)
	if err != nil && !os.IsNotExist(err) {
		sc.t.Fatal(err)
	}
	var a bytes.Buffer
	for _, r := range recs {
		enforced := ""
		if !r.Enforced {
			enforced = " (not enforced)"
		}
		fmt.Fprintf(&a, "%s %s %s%s rule=%s labels=%s", r.Event, orDash(r.Tool), r.Verdict, enforced, orDash(r.Rule), orDash(strings.Join(r.Labels, ",")))
		if r.Reason != "" {
			fmt.Fprintf(&a, ": %s", r.Reason)
		}
		a.WriteByte('\n')
	}
	return map[string][]byte{
		"server saw": lines(sc.server.out()),
		"client got": lines(sc.client.out()),
		"audit":      a.Bytes(),
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func lines(msgs [][]byte) []byte {
	var b bytes.Buffer
	for _, m := range msgs {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// memTransport is a Transport over channels, for tests: what the relay
// writes is kept in order; what it reads is what the test sends.
type memTransport struct {
	in chan []byte

	mu      sync.Mutex
	written [][]byte
	closed  chan struct{}
	once    sync.Once
}

var _ Transport = (*memTransport)(nil)

func newMemTransport() *memTransport {
	return &memTransport{in: make(chan []byte), closed: make(chan struct{})}
}

func (m *memTransport) Read(ctx context.Context) ([]byte, error) {
	select {
	case msg, ok := <-m.in:
		if !ok {
			return nil, io.EOF
		}
		return msg, nil
	case <-m.closed:
		return nil, os.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *memTransport) Write(_ context.Context, msg []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.written = append(m.written, slices.Clone(msg))
	return nil
}

func (m *memTransport) CloseWrite() error { return nil }

func (m *memTransport) Close() error {
	m.once.Do(func() { close(m.closed) })
	return nil
}

func (m *memTransport) out() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.written)
}
