package relay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
	"github.com/weir-sec/weir/internal/transport"
)

// harness runs a Relay in process between a test client and a scripted
// server, both over pipes, with a real SQLite store.
type harness struct {
	t        *testing.T
	r        *Relay
	toRelay  *io.PipeWriter // client → relay
	clientRx chan string    // relay → client
	srvIn    *bufio.Scanner // relay → server
	srvOut   *io.PipeWriter // server → relay
	done     chan error
	serverRx chan string
}

func newHarness(t *testing.T, st Store, pol *policy.Policy, with ...func(*Options)) *harness {
	t.Helper()
	return newHarnessFront(t, st, pol, nil, with...)
}

// newHarnessFront is newHarness with the client's transport wrapped, as
// a test of a failing or slow client needs.
func newHarnessFront(t *testing.T, st Store, pol *policy.Policy, wrap func(Transport) Transport, with ...func(*Options)) *harness {
	t.Helper()
	h, err := fingerprint.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		sq, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sq.Close() })
		st = sq
	}
	if pol == nil {
		pol, _ = policyfile.Preset("default")
	}
	opts := Options{Server: "srv", Session: "s1", Policy: pol, Hasher: h, Store: st}
	for _, f := range with {
		f(&opts)
	}
	cIn, cW := io.Pipe()
	cR, cOut := io.Pipe()
	sR, sIn := io.Pipe()
	sOut, sW := io.Pipe()
	x := &harness{
		t:        t,
		r:        New(opts),
		toRelay:  cW,
		clientRx: make(chan string, 100),
		srvIn:    bufio.NewScanner(sR),
		srvOut:   sW,
		done:     make(chan error, 1),
		serverRx: make(chan string, 100),
	}
	go func() {
		var front Transport = transport.NewStdio(cIn, cOut, 0)
		if wrap != nil {
			front = wrap(front)
		}
		x.done <- x.r.Run(context.Background(), front, transport.NewStdio(sOut, sIn, 0))
	}()
	go func() {
		sc := bufio.NewScanner(cR)
		for sc.Scan() {
			x.clientRx <- sc.Text()
		}
		close(x.clientRx)
	}()
	go func() {
		for x.srvIn.Scan() {
			x.serverRx <- x.srvIn.Text()
		}
		close(x.serverRx)
	}()
	t.Cleanup(func() {
		cW.Close()
		sW.Close()
		select {
		case <-x.done:
		case <-time.After(5 * time.Second):
			t.Error("relay did not stop")
		}
	})
	return x
}

func (x *harness) client(line string) {
	x.t.Helper()
	if _, err := io.WriteString(x.toRelay, line+"\n"); err != nil {
		x.t.Fatal(err)
	}
}

func (x *harness) server(line string) {
	x.t.Helper()
	if _, err := io.WriteString(x.srvOut, line+"\n"); err != nil {
		x.t.Fatal(err)
	}
}

// serverGot returns the next line the server received.
func (x *harness) serverGot() string {
	x.t.Helper()
	select {
	case l := <-x.serverRx:
		return l
	case <-time.After(5 * time.Second):
		x.t.Fatal("server received nothing")
	}
	return ""
}

func (x *harness) clientGot() string {
	x.t.Helper()
	select {
	case l := <-x.clientRx:
		return l
	case <-time.After(5 * time.Second):
		x.t.Fatal("client received nothing")
	}
	return ""
}

func (x *harness) noServerMessage() {
	x.t.Helper()
	select {
	case l := <-x.serverRx:
		x.t.Fatalf("the server received %s", l)
	case <-time.After(100 * time.Millisecond):
	}
}

const notesText = "Production deploy credentials for the billing service. Rotate them every ninety days and never paste them anywhere."

// readPrivate has the relay observe a private result for read_note.
func (x *harness) readPrivate() {
	x.t.Helper()
	x.client(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_note","arguments":{"name":"a"}}}`)
	x.serverGot()
	x.server(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + notesText + `"}]}}`)
}

// failingStore fails on purpose: it stands for a state store that is down.
type failingStore struct {
	Store
	failSync, failAppend bool
}

var errDown = errors.New("database is locked")

func (f failingStore) Sync(ctx context.Context, s string, m *flow.Session) error {
	if f.failSync {
		return errDown
	}
	return f.Store.Sync(ctx, s, m)
}

func (f failingStore) Append(ctx context.Context, s string, o *flow.Observation) (int64, error) {
	if f.failAppend {
		return 0, errDown
	}
	return f.Store.Append(ctx, s, o)
}

func sqliteStore(t *testing.T) Store {
	sq, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	return sq
}

// TestFailClosedStoreDown: a sink call that cannot be judged because the
// state store is down is blocked, not forwarded (DESIGN rule 1).
func TestFailClosedStoreDown(t *testing.T) {
	x := newHarness(t, failingStore{Store: sqliteStore(t), failSync: true}, nil)
	x.client(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"a@b.c","body":"hi"}}}`)
	got := x.clientGot()
	if !strings.Contains(got, `"id":7`) || !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "session state could not be read") {
		t.Errorf("client got %s", got)
	}
	x.noServerMessage()
	// A call that is not a sink does not need the store and still works.
	x.client(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if l := x.serverGot(); !strings.Contains(l, `"name":"echo"`) {
		t.Errorf("server got %s", l)
	}
}

// TestFailClosedRecordingFails: a private result whose labels cannot be
// recorded does not reach the client (DESIGN rule 1).
func TestFailClosedRecordingFails(t *testing.T) {
	x := newHarness(t, failingStore{Store: sqliteStore(t), failAppend: true}, nil)
	x.readPrivate()
	got := x.clientGot()
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "Weir withheld the result of srv/read_note") || strings.Contains(got, "billing") {
		t.Errorf("client got %s", got)
	}
}

// TestLabelsOnlyWiden: a server that drops a tool's annotations in a later
// tools/list does not take its labels away (DESIGN rule 3).
func TestLabelsOnlyWiden(t *testing.T) {
	x := newHarness(t, nil, nil)
	list := func(id, tool string) {
		x.client(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
		x.serverGot()
		x.server(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[` + tool + `]}}`)
		x.clientGot()
	}
	list("1", `{"name":"do_it","inputSchema":{"type":"object"},"annotations":{"openWorldHint":true}}`)
	if l := x.r.toolLabels("do_it").Labels; !l.Has(flow.Sink) {
		t.Fatalf("first definition: labels %s, want sink", l)
	}
	list("2", `{"name":"do_it","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	if l := x.r.toolLabels("do_it").Labels; !l.Has(flow.Sink) {
		t.Errorf("after the server dropped the hint: labels %s, want sink kept", l)
	}
	// A policy reload relabels: the user may narrow what the server may not.
	p, err := policyfile.Parse("p.yaml", []byte("version: 1\ntools:\n  - {match: \"srv:do_it\", labels: [private]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	x.r.SetPolicy(p, nil)
	if l := x.r.toolLabels("do_it").Labels; !l.Has(flow.Private) || !l.Has(flow.Sink) {
		t.Errorf("after reload: labels %s, want private plus the annotation's sink", l)
	}
}

// TestReplaceIDFallsBack: an id found in a line that was rewritten since
// is no slice of the new line, so replaceID finds the id by name there.
func TestReplaceIDFallsBack(t *testing.T) {
	line := []byte(`{"result":{"x":1},"jsonrpc":"2.0","id":7}`)
	_, id, err := jsonrpc.ParseRaw(line)
	if err != nil {
		t.Fatal(err)
	}
	rewritten, _ := jsonrpc.ReplaceMember(line, "result", []byte(`{"x":"a much longer value than before"}`))
	for _, c := range []struct{ line, id []byte }{{line, id}, {rewritten, id}, {rewritten, nil}} {
		want, _ := jsonrpc.ReplaceMember(c.line, "id", []byte(`"c-1"`))
		if got := replaceID(c.line, c.id, []byte(`"c-1"`)); !bytes.Equal(got, want) {
			t.Errorf("replaceID(%s) = %s, want %s", c.line, got, want)
		}
	}
}
