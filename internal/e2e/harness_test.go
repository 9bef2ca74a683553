package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/store/pgtest"
)

var (
	weirBin       string // the weir binary under test
	everythingBin string // go-sdk conformance everything-server
	repoRoot      string
)

func TestMain(m *testing.M) {
	if os.Getenv("WEIR_E2E_RELAY") != "" {
		os.Exit(bareRelay(os.Args[1:]))
	}
	if os.Getenv("WEIR_E2E_FAKE") != "" {
		fakeServer()
		os.Exit(0)
	}
	os.Exit(run(m))
}

// fake returns the command that runs the misbehaving fake server.
func fake() []string { return []string{os.Args[0]} }

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Join(filepath.Dir(file), "..", "..")
	dir, err := os.MkdirTemp("", "weir-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	weirBin = filepath.Join(dir, "weir")
	everythingBin = filepath.Join(dir, "everything-server")
	for _, b := range [][2]string{
		{weirBin, "./cmd/weir"},
		{everythingBin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"},
	} {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b[1], err, out)
			return 1
		}
	}
	defer pgtest.StopShared() // the cluster of the PostgreSQL tests, if one started
	return m.Run()
}

// npmPeer returns the command that runs an npm reference server or script
// from testdata/npm, skipping the test (or failing it under
// WEIR_E2E_REQUIRE=1) when the packages are not installed.
func npmPeer(t testing.TB, pkgMain string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	path := filepath.Join(repoRoot, "testdata", "npm", pkgMain)
	if _, serr := os.Stat(path); err != nil || serr != nil {
		msg := fmt.Sprintf("npm peer %s not installed (run `make deps`): node %v, %v", pkgMain, err, serr)
		if os.Getenv("WEIR_E2E_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return []string{node, path}
}

func serverEverything(t testing.TB) []string {
	return npmPeer(t, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

func serverFilesystem(t testing.TB, dirs ...string) []string {
	return append(npmPeer(t, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), dirs...)
}

func serverMemory(t testing.TB) []string {
	return npmPeer(t, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

// weirEnv is a WEIR_HOME and session for one test.
type weirEnv struct {
	home    string
	session string
}

func newWeirEnv(t testing.TB) *weirEnv {
	e := &weirEnv{home: t.TempDir(), session: "test-" + t.Name()}
	// Registered first, so it runs last, once the test's proxies have
	// exited and written their recordings: every decision any e2e
	// scenario made is derived again from its recording, exactly.
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(e.home, "state.db")); err != nil {
			return
		}
		rep, code := replay(t, e.home)
		if rep.Counts.Mismatch != 0 || code != 0 {
			t.Errorf("weir replay of the test's recordings (exit %d): %d of %d calls mismatch: %+v", code, rep.Counts.Mismatch, rep.Calls, rep.Outcomes)
		}
		t.Logf("weir replay: %d recorded calls decided again, %d mismatches", rep.Calls, rep.Counts.Mismatch)
	})
	return e
}

func (e *weirEnv) environ(extra ...string) []string {
	env := append(os.Environ(), "WEIR_HOME="+e.home, "NO_COLOR=1")
	if e.session != "" {
		env = append(env, "WEIR_SESSION="+e.session)
	}
	return append(env, extra...)
}

// wrap returns argv run behind weir run.
func (e *weirEnv) wrap(name string, argv []string, flags ...string) []string {
	out := []string{weirBin, "run", "--name", name}
	out = append(out, flags...)
	out = append(out, "--")
	return append(out, argv...)
}

// peer is a process spoken to over newline-delimited JSON-RPC.
type peer struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *syncBuffer
	done   chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startPeer(t testing.TB, env []string, argv ...string) *peer {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	p := &peer{t: t, cmd: cmd, lines: make(chan []byte, 1024), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			p.lines <- bytes.Clone(sc.Bytes())
		}
	}()
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.close() })
	return p
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing to peer: %v", err)
	}
}

// close ends the session the way a client does: close stdin, wait.
func (p *peer) close() int {
	p.in.Close()
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Errorf("peer did not exit within 15s of its input closing; stderr:\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// msg is the part of a JSON-RPC message the harness reads.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func parse(t testing.TB, line []byte) msg {
	t.Helper()
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("peer sent invalid JSON %q: %v", line, err)
	}
	return m
}

func (m msg) isRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }
func (m msg) isNotification() bool {
	return m.Method != "" && (len(m.ID) == 0 || string(m.ID) == "null")
}

// transcript records everything a client saw, and answers the server's
// requests the same way every run.
type transcript struct {
	lines [][]byte
}

// await reads until the response with the given id arrives, answering
// server requests on the way. It returns the response.
func (tr *transcript) await(t testing.TB, p *peer, id string) msg {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var line []byte
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("peer closed its output while waiting for id %s; stderr:\n%s", id, p.stderr.String())
			}
			line = l
		case <-time.After(time.Until(deadline)):
			t.Fatalf("no response to id %s within 30s; stderr:\n%s", id, p.stderr.String())
		}
		tr.lines = append(tr.lines, line)
		m := parse(t, line)
		switch {
		case m.isRequest():
			p.send(answerServerRequest(m))
		case m.isNotification():
		case string(m.ID) == id:
			return m
		}
	}
	t.Fatalf("no response to id %s", id)
	return msg{}
}

func answerServerRequest(m msg) string {
	switch m.Method {
	case "roots/list":
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file:///tmp","name":"tmp"}]}}`, m.ID)
	case "ping":
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	default:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not supported by the test client"}}`, m.ID)
	}
}

// drain reads whatever arrives within d (late notifications).
func (tr *transcript) drain(t testing.TB, p *peer, d time.Duration) {
	t.Helper()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return
			}
			tr.lines = append(tr.lines, l)
			if m := parse(t, l); m.isRequest() {
				p.send(answerServerRequest(m))
			}
		case <-time.After(d):
			return
		}
	}
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// handshake initializes a session with a proxy, under request id 1.
func handshake(t *testing.T, p *peer, tr *transcript) {
	t.Helper()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	tr.await(t, p, "1")
}
