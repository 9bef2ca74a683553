package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/store/pgtest"
)

// TestReplicaKilledMidLoad: two `weir gateway` HTTP replicas, a home each
// but one install key and one PostgreSQL store, carry 64 go-sdk sessions
// (32 each) calling the everything-server's test_simple_text in a loop.
// Part-way through, replica A is killed with SIGKILL. Then:
//
//   - every call sent to replica B was answered, none with an error, and B
//     opens and serves new sessions;
//   - A's sessions got transport errors at once, none waited out its
//     timeout;
//   - what A wrote before it died still holds through B: a record read
//     through A cannot be posted through B, and posts counted through A
//     count against a rate limit checked through B;
//   - the store is whole: weir replay of every session both replicas
//     recorded, read back from PostgreSQL, decides each call again with no
//     mismatch, every call B answered among them (recordings are stored in
//     batches, so A's last ones may have died with it: the test logs how
//     many), and the audit chain both replicas wrote into the store is
//     intact and holds every call B answered.
//
// With B on a SQLite store of its own instead, the taint, rate-limit and
// replay checks fail.
func TestReplicaKilledMidLoad(t *testing.T) {
	t.Parallel()
	const (
		perReplica  = 32
		killAfter   = 2000             // calls answered in all before A is killed
		afterKill   = 2000             // calls B answers after the kill before the load stops
		callTimeout = 10 * time.Second // a call not answered in this is lost
		loadCap     = 25 * time.Second // the load stops by then, whatever happened
	)
	began := time.Now()
	url := pgtest.NewDatabase(t)
	ev := startEverything(t, false)
	hook := newGWHook(t)
	policy := gwPolicy + "rules:\n  - id: three-posts-a-minute\n    match: \"hook:post\"\n    rate_limit: 3/minute\n"
	cfg := writeGatewayConfig(t, policy, gwURL("ev", ev), gwURL("hook", hook.url))
	useStore(t, cfg, url)
	// The gateway's own request rate limit (100/s a tenant by default)
	// would refuse this load before Weir's decisions are reached.
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("rate: 1000000\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	homes := replicaHomes(t)
	homeA, homeB := homes[0], homes[1]
	a := startGatewayHTTP(t, gwEnv(&weirEnv{home: homeA}), cfg)
	b := startGatewayHTTP(t, gwEnv(&weirEnv{home: homeB}), cfg)

	ctx := ctxT(t, 60*time.Second)
	named := func(g *gwHTTP, session string) *mcp.ClientSession {
		return gwConnect(t, ctx, g.endpoint(), http.Header{"Weir-Session": {session + "-" + t.Name()}}, "2025-11-25", nil)
	}
	// State A writes before it dies: a private read, and posts up to the
	// rate limit, each in a taint session of its own.
	if text, isErr := gwGoCall(t, ctx, named(a, "kill-taint"), "hook__fetch_record", map[string]any{"id": "4471"}); isErr || text != gwRecord {
		t.Fatalf("fetch_record through A: isError %v, %q", isErr, text)
	}
	rateA := named(a, "kill-rate")
	for i := range 3 {
		if text, isErr := gwGoCall(t, ctx, rateA, "hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build ok"}); isErr {
			t.Fatalf("post %d through A, within the limit, was refused: %s", i+1, text)
		}
	}

	// The load: every session opens first, so that none is opening when
	// A dies, then all call until told to stop.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * perReplica}}
	defer hc.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-kill", Version: "1.0.0"}, nil)
	loadCtx, stopLoad := context.WithTimeout(ctx, loadCap)
	defer stopLoad()
	stop := make(chan struct{})
	killed := make(chan struct{})
	var killedAt atomic.Int64 // unix nanoseconds
	var answeredA, answeredB atomic.Int64
	sessions := make([]*loadSession, 2*perReplica)
	var wg sync.WaitGroup
	for i := range sessions {
		g, n := a, &answeredA
		if i%2 == 1 {
			g, n = b, &answeredB
		}
		// Retries off: a broken stream fails its call at once instead of
		// reconnecting to a replica that is gone, as the bench's clients.
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.endpoint(), HTTPClient: hc, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("opening load session %d: %v", i, err)
		}
		sessions[i] = &loadSession{onA: g == a, cs: cs, answered: n}
	}
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.cs.Close()
			s.run(loadCtx, stop, callTimeout, &killedAt)
		}()
	}
	go func() {
		for answeredA.Load()+answeredB.Load() < killAfter && loadCtx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		killedAt.Store(time.Now().UnixNano())
		a.kill()
		close(killed)
		base := answeredB.Load()
		for answeredB.Load()-base < afterKill && loadCtx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		close(stop)
	}()

	// While the load goes on, B opens new sessions and holds what A wrote.
	select {
	case <-killed:
	case <-loadCtx.Done():
		t.Fatalf("the load did not reach %d answered calls within %s", killAfter, loadCap)
	}
	for i := range 4 {
		cs := gwConnect(t, ctx, b.endpoint(), nil, "2025-11-25", nil)
		for j := range 5 {
			if text, isErr := gwGoCall(t, ctx, cs, "ev__test_simple_text", map[string]any{}); isErr {
				t.Errorf("new session %d on B, call %d: %s", i, j, text)
			}
		}
	}
	text, isErr := gwGoCall(t, ctx, named(b, "kill-taint"), "hook__post", map[string]any{"to": "https://hooks.example/a", "body": "fyi: " + gwRecord})
	if !isErr || !contains(text, "Weir blocked this call to hook/post", "flow.exfiltration", "hook/fetch_record") {
		t.Errorf("the record read through A before A was killed leaked through B (isError %v): %s", isErr, text)
	}
	if hook.receivedAny("Halvorsen") {
		t.Errorf("the hook received the record: %q", hook.received())
	}
	text, isErr = gwGoCall(t, ctx, named(b, "kill-rate"), "hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build ok"})
	if !isErr || !strings.Contains(text, "rate limit of rule three-posts-a-minute (3/minute)") {
		t.Errorf("a fourth post through B, after three through A under a limit of 3 a minute, was not refused by the limit (isError %v): %s", isErr, text)
	}
	if text, isErr := gwGoCall(t, ctx, named(b, "kill-fresh"), "hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build ok"}); isErr {
		t.Errorf("a benign post through B in a fresh session was refused: %s", text)
	}
	wg.Wait()
	if loadCtx.Err() != nil {
		t.Errorf("the load was cut off by its %s cap, not stopped: B answered %d calls after the kill of %d wanted", loadCap, answeredB.Load(), afterKill)
	}

	var onA, onB loadSession
	failedA, slowest := 0, time.Duration(0)
	for _, s := range sessions {
		tally := &onB
		if s.onA {
			tally = &onA
			if s.failed > 0 {
				failedA++
			}
			slowest = max(slowest, s.slowestFail)
		}
		tally.add(s)
	}
	t.Logf("replica A (killed after %d answered in all): %d sent, %d answered, %d failed (%d waited out the timeout), slowest failure %s; %d of %d sessions got an error; e.g. %q",
		killAfter, onA.sent, onA.ok+onA.errs, onA.failed, onA.timeouts, slowest.Round(time.Millisecond), failedA, perReplica, onA.samples)
	t.Logf("replica B: %d sent, %d ok, %d errors, %d lost; e.g. %q", onB.sent, onB.ok, onB.errs, onB.failed, onB.samples)
	if onB.failed != 0 || onB.errs != 0 || onB.ok != onB.sent || onB.ok < afterKill {
		t.Errorf("replica B lost %d of %d calls and answered %d with an error (%d ok): %q", onB.failed, onB.sent, onB.errs, onB.ok, onB.samples)
	}
	if failedA != perReplica || onA.timeouts != 0 || slowest > 2*time.Second {
		t.Errorf("after the kill, %d of A's %d sessions got an error, %d calls waited out their %s timeout, the slowest failure took %s: want every session an error, at once",
			failedA, perReplica, onA.timeouts, callTimeout, slowest)
	}

	// B stops cleanly, so its last recordings and audit records are
	// stored.
	b.stop(t)
	cmd := exec.Command(weirBin, "replay", "--json")
	cmd.Env = append(os.Environ(), "WEIR_HOME="+homeB, "WEIR_STORE_URL="+url, "NO_COLOR=1")
	out, err := cmd.Output()
	var rep replayReport
	// Through B: the load's calls, the new sessions' 20, and 3 posts.
	// Through A: its load's calls and 4 before the load; recordings are
	// batched, so those A made last died with it.
	fromB, fromA := onB.ok+20+3, onA.ok+4
	if jerr := json.Unmarshal(out, &rep); err != nil || jerr != nil || rep.Counts.Mismatch != 0 || rep.Calls < fromB || rep.Calls > fromB+fromA {
		t.Errorf("weir replay from PostgreSQL after the kill (%v): %d calls, want every one of B's %d and at most A's %d besides; %d mismatches: %.2000s",
			err, rep.Calls, fromB, fromA, rep.Counts.Mismatch, out)
	}
	t.Logf("weir replay from PostgreSQL: %d calls in %d sessions decided again, %d mismatches; %d of A's %d answered calls were not recorded",
		rep.Calls, rep.Sessions, rep.Counts.Mismatch, fromB+fromA-rep.Calls, fromA)
	// A kill loses the recordings of about the last recordLinger (250 ms)
	// of A's calls, not all those still batched: a relay whose calls come
	// faster than that stores them on time anyway.
	if lost := fromB + fromA - rep.Calls; lost > fromA/2 {
		t.Errorf("the kill lost the recordings of %d of A's %d answered calls: recordings wait for a batch instead of at most recordLinger", lost, fromA)
	}
	// Both replicas audit into one chain in the store, a row per record
	// in a transaction: the kill may cost A its last batch, never a torn
	// or forked chain.
	chain := verifyStoreChain(t, homeB, url, fromB)
	t.Logf("weir audit verify of the store: %s; wall %s", strings.TrimSpace(chain), time.Since(began).Round(100*time.Millisecond))
}

// loadSession is one client session of the load and its tally.
type loadSession struct {
	onA      bool
	cs       *mcp.ClientSession
	answered *atomic.Int64 // its replica's answered calls

	sent, ok, errs int
	// failed counts calls that got no answer: a transport error, or
	// their timeout (timeouts) passed.
	failed, timeouts int
	slowestFail      time.Duration
	samples          []string
}

// run calls test_simple_text until stop closes or ctx ends. After a call
// that got no answer it makes one more (to see that it too fails at once)
// and ends: the session is broken.
func (s *loadSession) run(ctx context.Context, stop <-chan struct{}, timeout time.Duration, killedAt *atomic.Int64) {
	params := &mcp.CallToolParams{Name: "ev__test_simple_text", Arguments: map[string]any{}}
	for {
		select {
		case <-stop:
			return
		default:
		}
		if ctx.Err() != nil {
			return
		}
		s.sent++
		cctx, cancel := context.WithTimeout(ctx, timeout)
		began := time.Now()
		res, err := s.cs.CallTool(cctx, params)
		took := time.Since(began)
		cancel()
		var wire *jsonrpc.Error
		switch {
		case err == nil && !res.IsError:
			s.ok++
			s.answered.Add(1)
			continue
		case err == nil:
			s.errs++
			s.note(fmt.Sprintf("isError: %v", res.Content))
			continue
		// The go-sdk fails the calls of a broken connection with an
		// error that wraps a JSON-RPC one it made itself: no answer.
		case errors.As(err, &wire) && !errors.Is(err, mcp.ErrConnectionClosed):
			s.errs++
			s.note(err.Error())
			continue
		}
		s.failed++
		if errors.Is(err, context.DeadlineExceeded) {
			s.timeouts++
		}
		s.note(err.Error())
		// A call begun before the kill fails no sooner than the kill.
		if k := killedAt.Load(); k != 0 {
			took = min(took, time.Since(time.Unix(0, k)))
		}
		s.slowestFail = max(s.slowestFail, took)
		if s.failed > 1 {
			return
		}
	}
}

func (s *loadSession) note(msg string) {
	if len(s.samples) < 2 {
		s.samples = append(s.samples, msg)
	}
}

func (s *loadSession) add(o *loadSession) {
	s.sent += o.sent
	s.ok += o.ok
	s.errs += o.errs
	s.failed += o.failed
	s.timeouts += o.timeouts
	for _, m := range o.samples {
		s.note(m)
	}
}

// kill ends the process at once, as a crash or an OOM kill would.
func (g *gwHTTP) kill() {
	g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.done
}

// stop interrupts the process and waits for its clean exit.
func (g *gwHTTP) stop(t *testing.T) {
	t.Helper()
	g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		t.Errorf("weir gateway did not exit within 10s of an interrupt; output:\n%.4000s", g.out.String())
	}
}
