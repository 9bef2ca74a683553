package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-sec/weir/internal/store/pgtest"
)

// TestGatewayReplicasShareState: two `weir gateway` replicas, each with a
// home of its own (as on two machines) but one install key and one
// PostgreSQL state store (store: {url} in their configuration), serve one
// client session. A private note read through replica A cannot leave
// through replica B; a rate limit counts the calls of both; and what both
// decided is replayed from the PostgreSQL store with no mismatch.
func TestGatewayReplicasShareState(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir := gwDir(t)
	hook := newGWHook(t)
	policy := gwPolicy + "rules:\n  - id: five-posts-a-minute\n    match: \"hook:post\"\n    rate_limit: 5/minute\n"
	cfg := writeGatewayConfig(t, policy, gwCommand("fs", serverFilesystem(t, dir), nil), gwURL("hook", hook.url))
	useStore(t, cfg, url)
	homes := replicaHomes(t)
	session := "replicas-" + strings.ReplaceAll(t.Name(), "/", "-")
	start := func(home string) *gwStdio {
		e := &weirEnv{home: home, session: session}
		return startGatewayStdio(t, gwEnv(e), cfg)
	}
	a, b2 := start(homes[0]), start(homes[1])

	// Before any private read, posts go through either replica.
	if text, isErr := b2.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build 88 is green"}); isErr {
		t.Fatalf("a benign post through B before any read was refused: %s", text)
	}
	if text, isErr := a.call("fs__read_text_file", map[string]any{"path": filepath.Join(dir, "note.md")}); isErr || !strings.Contains(text, gwNote) {
		t.Fatalf("reading the note through A: isError %v, %q", isErr, text)
	}
	text, isErr := b2.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "fyi: " + gwNote})
	if !isErr || !contains(text, "Weir blocked this call to hook/post", "flow.exfiltration", "fs/read_text_file") {
		t.Errorf("the note read through A leaked through B (isError %v): %s", isErr, text)
	}
	if hook.receivedAny("Tromsø") {
		t.Errorf("the hook received the note: %q", hook.received())
	}

	// The rate limit (5 a minute) counts both replicas' posts: one went
	// before the read (the blocked one was refused before it was counted
	// or after, either way the limit is exact), so at most 5 pass in all.
	passed := 1
	for i := range 8 {
		g := a
		if i%2 == 1 {
			g = b2
		}
		if _, isErr := g.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build ok"}); !isErr {
			passed++
		}
	}
	if passed > 5 || passed < 4 {
		t.Errorf("%d posts passed through two replicas under a limit of 5 a minute", passed)
	}

	// Both replicas recorded into the one store: replay decides every
	// call again, the same way.
	a.p.close()
	b2.p.close()
	cmd := exec.Command(weirBin, "replay", "--json")
	cmd.Env = append(os.Environ(), "WEIR_HOME="+homes[0], "WEIR_STORE_URL="+url, "NO_COLOR=1")
	out, err := cmd.Output()
	var rep replayReport
	if err != nil || json.Unmarshal(out, &rep) != nil || rep.Counts.Mismatch != 0 || rep.Calls < 10 {
		t.Errorf("weir replay of both replicas' recordings from PostgreSQL: %v: %s", err, out)
	}

	// Both replicas audited into one chain in the store, not a file each.
	verifyStoreChain(t, homes[0], url, rep.Calls)
	for _, h := range homes {
		if fi, err := os.Stat(filepath.Join(h, "audit.log")); err == nil && fi.Size() > 0 {
			t.Errorf("replica home %s has an audit.log of %d bytes: its records belong in the store's chain", h, fi.Size())
		}
	}
}

// TestGatewayReplicasShareApproval: a leak escalated through replica B,
// for a client that cannot be asked, is approved with `weir approve` from
// replica A's machine (its home, the shared store); the identical retry
// through B goes through exactly once, and a third try through A is held
// again. The chain in the store holds both replicas' records and the
// person's answer, and an edited row breaks it.
func TestGatewayReplicasShareApproval(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir := gwDir(t)
	hook := newGWHook(t)
	cfg := writeGatewayConfig(t, gwPolicy+"flow:\n  exfiltration: escalate\n", gwCommand("fs", serverFilesystem(t, dir), nil), gwURL("hook", hook.url))
	useStore(t, cfg, url)
	var envs [2]*weirEnv
	for i, h := range replicaHomes(t) {
		envs[i] = &weirEnv{home: h, session: "approve-" + t.Name()}
	}
	a := startGatewayStdio(t, gwEnv(envs[0]), cfg)
	b2 := startGatewayStdio(t, gwEnv(envs[1]), cfg)

	if text, isErr := a.call("fs__read_text_file", map[string]any{"path": filepath.Join(dir, "note.md")}); isErr || !strings.Contains(text, gwNote) {
		t.Fatalf("reading the note through A: isError %v, %q", isErr, text)
	}
	leak := map[string]any{"to": "https://hooks.example/a", "body": "fyi: " + gwNote}
	text, isErr := b2.call("hook__post", leak)
	m := approvalIDRe.FindStringSubmatch(text)
	if !isErr || m == nil || !contains(text, "hook/post", "flow.exfiltration") {
		t.Fatalf("the leak through B was not held for approval (isError %v): %s", isErr, text)
	}
	id := m[1]
	aEnv := append(gwEnv(envs[0]), "WEIR_STORE_URL="+url)
	list := exec.Command(weirBin, "approvals", "--json")
	list.Env = aEnv
	if out, err := list.CombinedOutput(); err != nil || !strings.Contains(string(out), id) {
		t.Fatalf("weir approvals on A's machine does not list %s: %v\n%s", id, err, out)
	}
	approve := exec.Command(weirBin, "approve", id)
	approve.Env = aEnv
	if out, err := approve.CombinedOutput(); err != nil || !strings.Contains(string(out), "approved "+id) {
		t.Fatalf("weir approve %s on A's machine: %v\n%s", id, err, out)
	}
	if text, isErr := b2.call("hook__post", leak); isErr {
		t.Fatalf("the approved call, retried through B, was refused: %s", text)
	}
	if n := len(hook.received()); n != 1 {
		t.Fatalf("the hook received %d posts after one approved retry, want 1", n)
	}
	if text, isErr := a.call("hook__post", leak); !isErr || !approvalIDRe.MatchString(text) {
		t.Errorf("a second retry, through A, of the call approved once was not held again (isError %v): %s", isErr, text)
	}
	if text, isErr := b2.call("hook__post", leak); !isErr {
		t.Errorf("a third retry, through B, went through: %s", text)
	}
	if n := len(hook.received()); n != 1 {
		t.Errorf("the hook received %d posts, want exactly 1", n)
	}
	a.p.close()
	b2.p.close()

	out := verifyStoreChain(t, envs[1].home, url, 6)
	export := exec.Command(weirBin, "audit", "export", "--tenant", "")
	export.Env = append(gwEnv(envs[1]), "WEIR_STORE_URL="+url)
	lines, err := export.Output()
	if err != nil {
		t.Fatalf("weir audit export from the store: %v", err)
	}
	var answers []string
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var r struct{ Event, Channel, Answer, Approval string }
		if json.Unmarshal([]byte(l), &r) == nil && r.Event == "approval" && r.Approval == id {
			answers = append(answers, r.Channel+":"+r.Answer)
		}
	}
	if !slices.Contains(answers, "cli:approved") {
		t.Errorf("the chain does not hold weir approve's answer for %s (approval records %q); verify said %s", id, answers, out)
	}

	// An edited row breaks the chain, and verify says where.
	ctx := ctxT(t, 30*time.Second)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, `UPDATE audit SET line = convert_to(replace(convert_from(line, 'UTF8'), '"verdict":"escalate"', '"verdict":"allow"'), 'UTF8')
		WHERE seq = (SELECT min(seq) FROM audit WHERE position(convert_to('"verdict":"escalate"', 'UTF8') IN line) > 0)`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("rewriting an escalation as allowed: %v, %d rows", err, tag.RowsAffected())
	}
	verify := exec.Command(weirBin, "audit", "verify", "--store", url)
	verify.Env = gwEnv(envs[1])
	got, err := verify.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(got), "NOT intact") {
		t.Errorf("weir audit verify after an escalation was rewritten as allowed: %v\n%s", err, got)
	}
}

// useStore points the gateway configuration at the PostgreSQL state
// store url.
func useStore(t *testing.T, cfg, url string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	uj, _ := json.Marshal(url)
	if err := os.WriteFile(cfg, append([]byte("store: {url: "+string(uj)+"}\n"), b...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// replicaHomes are the homes of two replicas on two machines: each its
// own, with the one install key the replicas of a gateway share.
func replicaHomes(t *testing.T) [2]string {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	homes := [2]string{t.TempDir(), t.TempDir()}
	for _, h := range homes {
		if err := os.WriteFile(filepath.Join(h, "key"), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return homes
}

// verifyStoreChain runs weir audit verify on the store's chains (from
// home's machine) and wants the chain of sessions without a tenant intact
// with at least min records; it returns what verify printed.
func verifyStoreChain(t *testing.T, home, url string, min int) string {
	t.Helper()
	cmd := exec.Command(weirBin, "audit", "verify")
	cmd.Env = append(os.Environ(), "WEIR_HOME="+home, "WEIR_STORE_URL="+url, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	var n int
	if _, serr := fmt.Sscanf(strings.TrimPrefix(string(out), "sessions without a tenant: intact, "), "%d records", &n); err != nil || serr != nil || n < min {
		t.Errorf("weir audit verify of the store's chain: %v (want intact, at least %d records)\n%s", err, min, out)
	}
	return string(out)
}

// roundRobin is a load balancer without session affinity: each request
// goes to the next replica in turn, and to the one after it when that one
// does not answer (a dead replica), as a balancer's failover does.
type roundRobin struct {
	backends []string
	next     atomic.Int64
	served   []atomic.Int64 // requests each backend answered
}

func (lb *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	start := int(lb.next.Add(1))
	for k := range lb.backends {
		i := (start + k) % len(lb.backends)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, lb.backends[i]+r.URL.Path, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			continue
		}
		lb.served[i].Add(1)
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		flushCopy(w, resp.Body)
		resp.Body.Close()
		return
	}
	http.Error(w, "no replica answered", http.StatusBadGateway)
}

// flushCopy copies an answer, SSE streams included, flushing each chunk.
func flushCopy(w http.ResponseWriter, r io.Reader) {
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// TestGatewayReplicasWithoutAffinity: a 2025-11-25 go-sdk client session
// through a balancer that sends each request to the next replica. The
// replica that did not mint the Mcp-Session-Id resumes the session from
// its sealed id, so every request is served, whichever replica gets it;
// the note read through one is refused through the other; and when one
// replica is killed the session goes on, on the other, without
// initialising again.
func TestGatewayReplicasWithoutAffinity(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir := gwDir(t)
	hook := newGWHook(t)
	cfg := writeGatewayConfig(t, gwPolicy, gwCommand("fs", serverFilesystem(t, dir), nil), gwURL("hook", hook.url))
	useStore(t, cfg, url)
	homes := replicaHomes(t)
	var gws [2]*gwHTTP
	for i, h := range homes {
		gws[i] = startGatewayHTTP(t, gwEnv(&weirEnv{home: h}), cfg)
	}
	lb := &roundRobin{backends: []string{gws[0].base, gws[1].base}, served: make([]atomic.Int64, 2)}
	front := httptest.NewServer(lb)
	t.Cleanup(front.Close)

	ctx := ctxT(t, 90*time.Second)
	cs := gwConnect(t, ctx, front.URL+"/mcp", nil, "2025-11-25", nil)
	note := filepath.Join(dir, "note.md")
	leak := map[string]any{"to": "https://hooks.example/a", "body": "fyi: " + gwNote}
	if text, isErr := gwGoCall(t, ctx, cs, "fs__read_text_file", map[string]any{"path": note}); isErr || !strings.Contains(text, gwNote) {
		t.Fatalf("reading the note: isError %v, %q", isErr, text)
	}
	for i := range 4 {
		if text, isErr := gwGoCall(t, ctx, cs, "hook__post", map[string]any{"to": "https://hooks.example/a", "body": fmt.Sprint("build ", i, " is green")}); isErr {
			t.Errorf("benign post %d: %s", i, text)
		}
		if text, isErr := gwGoCall(t, ctx, cs, "hook__post", leak); !isErr || !contains(text, "flow.exfiltration", "fs/read_text_file") {
			t.Errorf("leak %d went through (isError %v): %s", i, isErr, text)
		}
	}
	if lb.served[0].Load() < 3 || lb.served[1].Load() < 3 {
		t.Fatalf("the balancer did not spread the session: %d and %d requests", lb.served[0].Load(), lb.served[1].Load())
	}

	// Replica A dies; the session goes on through B alone.
	gws[0].kill()
	before := lb.served[1].Load()
	for i := range 3 {
		if text, isErr := gwGoCall(t, ctx, cs, "hook__post", map[string]any{"to": "https://hooks.example/a", "body": fmt.Sprint("after the kill ", i)}); isErr {
			t.Errorf("benign post %d after A died: %s", i, text)
		}
		if text, isErr := gwGoCall(t, ctx, cs, "hook__post", leak); !isErr {
			t.Errorf("leak %d after A died went through: %s", i, text)
		}
	}
	if lb.served[1].Load()-before < 6 {
		t.Errorf("B served %d requests after A died, want every one of 6", lb.served[1].Load()-before)
	}
	if hook.receivedAny("Tromsø") {
		t.Errorf("the hook received the note: %q", hook.received())
	}
	if n := len(hook.received()); n != 7 {
		t.Errorf("the hook received %d posts, want the 7 benign ones", n)
	}
}
