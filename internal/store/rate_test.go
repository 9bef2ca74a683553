package store

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ms is a time in Unix milliseconds, for driving Take's clock.
func ms(t int64) time.Time { return time.UnixMilli(t) }

// rateRows counts the stored events of one (session, key).
func rateRows(t testing.TB, s *backend, session, key string) int {
	t.Helper()
	return s.count(t, `SELECT count(*) FROM rate_events WHERE session = ? AND key = ?`, session, key)
}

// TestTakeWindow drives one limit of 3 calls per second through its
// boundaries: the window is (now-1s, now], so an event leaves it exactly
// one second after it was recorded.
func TestTakeWindow(t *testing.T) { forEachBackend(t, testTakeWindow) }

func testTakeWindow(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	steps := []struct {
		at    int64
		ok    bool
		retry time.Duration
	}{
		{0, true, 0},
		{10, true, 0},
		{10, true, 0},                         // two in the same millisecond both count
		{10, false, 990 * time.Millisecond},   // the 4th: the event at 0 leaves at 1000
		{500, false, 500 * time.Millisecond},  // a refusal records nothing
		{999, false, 1 * time.Millisecond},    // 0 is still in (-1, 999]
		{1000, true, 0},                       // 0 left: (0, 1000] holds 10, 10
		{1000, false, 10 * time.Millisecond},  // full again; both 10s leave at 1010
		{1009, false, 1 * time.Millisecond},   //
		{1010, true, 0},                       // both 10s left: (10, 1010] holds 1000
		{1010, true, 0},                       //
		{1010, false, 990 * time.Millisecond}, // 1000 leaves at 2000
		{5000, true, 0},                       // everything left long ago
		{5000, true, 0},
		{5000, true, 0},
		{5000, false, 1000 * time.Millisecond},
	}
	for i, st := range steps {
		ok, retry, err := s.Take(ctx, "S", "rule", 3, time.Second, ms(st.at))
		if err != nil {
			t.Fatal(err)
		}
		if ok != st.ok || retry != st.retry {
			t.Errorf("step %d at %d ms: Take = %v, %v; want %v, %v", i, st.at, ok, retry, st.ok, st.retry)
		}
		if ok && retry != 0 {
			t.Errorf("step %d: retryAfter %v on success", i, retry)
		}
	}
	// Expired events are deleted as the window slides: only the three at
	// 5000 remain.
	if n := rateRows(t, s, "S", "rule"); n != 3 {
		t.Errorf("%d events stored, want 3", n)
	}
}

// TestTakeRetryAfter checks retryAfter against the window it predicts: a
// call one millisecond before it is refused, a call at it passes.
func TestTakeRetryAfter(t *testing.T) { forEachBackend(t, testTakeRetryAfter) }

func testTakeRetryAfter(t *testing.T, open opener) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	s := open(t)
	for round := range 25 {
		key := "k" + strconv.Itoa(round)
		n := 1 + rng.IntN(5)
		per := time.Duration(1+rng.IntN(2000)) * time.Millisecond
		now := int64(1_000_000)
		for range 25 {
			now += rng.Int64N(per.Milliseconds()/2 + 1)
			ok, retry, err := s.Take(ctx, "S", key, n, per, ms(now))
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				continue
			}
			if retry <= 0 || retry > per {
				t.Fatalf("round %d: retryAfter %v outside (0, %v]", round, retry, per)
			}
			at := now + retry.Milliseconds()
			if ok, _, _ := s.Take(ctx, "S", key, n, per, ms(at-1)); ok {
				t.Fatalf("round %d (n %d per %v): refused at %d with retryAfter %v, but passed at %d", round, n, per, now, retry, at-1)
			}
			if ok, _, _ := s.Take(ctx, "S", key, n, per, ms(at)); !ok {
				t.Fatalf("round %d (n %d per %v): refused at %d with retryAfter %v, and refused again at %d", round, n, per, now, retry, at)
			}
			now = at
		}
	}
}

// TestTakeExact checks Take against a plain count of the calls it let
// through, over random call times and limits: every call passes exactly
// when fewer than n passed calls lie in (now-per, now].
func TestTakeExact(t *testing.T) { forEachBackend(t, testTakeExact) }

func testTakeExact(t *testing.T, open opener) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	s := open(t)
	outcomes := map[bool]int{}
	for round := range 12 {
		key := "k" + strconv.Itoa(round)
		n := 1 + rng.IntN(8)
		per := time.Duration(1+rng.IntN(100)) * time.Millisecond
		var passed []int64
		now := int64(0)
		for range 150 {
			now += rng.Int64N(2*per.Milliseconds()/int64(n) + 1)
			in := 0
			for _, p := range passed {
				if p > now-per.Milliseconds() {
					in++
				}
			}
			ok, _, err := s.Take(ctx, "S", key, n, per, ms(now))
			if err != nil {
				t.Fatal(err)
			}
			if ok != (in < n) {
				t.Fatalf("round %d (n %d per %v): at %d with %d passed calls in the window, Take = %v", round, n, per, now, in, ok)
			}
			outcomes[ok]++
			if ok {
				passed = append(passed, now)
			}
		}
		if rows := rateRows(t, s, "S", key); rows > n {
			t.Errorf("round %d: %d events stored for a limit of %d", round, rows, n)
		}
	}
	t.Logf("%d calls passed, %d refused", outcomes[true], outcomes[false])
	if outcomes[true] < 100 || outcomes[false] < 100 {
		t.Errorf("%d calls passed, %d refused: the test barely exercised one side", outcomes[true], outcomes[false])
	}
}

// TestTakeIsolation: sessions and keys each have their own count.
func TestTakeIsolation(t *testing.T) { forEachBackend(t, testTakeIsolation) }

func testTakeIsolation(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	take := func(session, key string) bool {
		t.Helper()
		ok, _, err := s.Take(ctx, session, key, 2, time.Minute, ms(1000))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, sk := range [][2]string{{"A", "x"}, {"A", "y"}, {"B", "x"}, {"B", "y"}} {
		for i := range 2 {
			if !take(sk[0], sk[1]) {
				t.Errorf("session %s key %s: call %d did not pass", sk[0], sk[1], i+1)
			}
		}
		if take(sk[0], sk[1]) {
			t.Errorf("session %s key %s: the third call passed", sk[0], sk[1])
		}
	}
	// Keys and sessions are compared exactly, not as prefixes or patterns.
	for _, sk := range [][2]string{{"A", "x "}, {"A", "X"}, {"A", "%"}, {"AB", "x"}, {"A\x00", "x"}} {
		if s.kind == "postgres" && strings.Contains(sk[0]+sk[1], "\x00") {
			// PostgreSQL text holds no NUL: refused, never truncated
			// into another session's name (TestPostgresText).
			if _, _, err := s.Take(ctx, sk[0], sk[1], 2, time.Minute, ms(1000)); err == nil || !strings.Contains(err.Error(), "NUL") {
				t.Errorf("session %q: err = %v, want a refusal naming the NUL", sk[0], err)
			}
			continue
		}
		if !take(sk[0], sk[1]) {
			t.Errorf("session %q key %q shares another's count", sk[0], sk[1])
		}
	}
	// A window sliding in one key expires nothing of another.
	if ok, _, _ := s.Take(ctx, "A", "x", 2, time.Minute, ms(1000+60_000)); !ok {
		t.Error("A/x did not pass after its window slid")
	}
	if n := rateRows(t, s, "A", "y"); n != 2 {
		t.Errorf("A/y holds %d events after A/x slid, want 2", n)
	}
}

// TestTakeLaterEvents: a call stamped before events another proxy already
// recorded (it read its clock, then waited for the lock) counts them.
func TestTakeLaterEvents(t *testing.T) { forEachBackend(t, testTakeLaterEvents) }

func testTakeLaterEvents(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	if ok, _, _ := s.Take(ctx, "S", "k", 1, time.Second, ms(10_050)); !ok {
		t.Fatal("first call refused")
	}
	ok, retry, err := s.Take(ctx, "S", "k", 1, time.Second, ms(10_000))
	if err != nil || ok {
		t.Fatalf("a call stamped 50 ms before the one that filled the limit: %v, %v", ok, err)
	}
	// Room is made when the later event leaves, 1050 ms after this call.
	if retry != 1050*time.Millisecond {
		t.Errorf("retryAfter %v, want 1.05s", retry)
	}
}

// TestTakeLoweredLimit: when more than n events are in the window (the
// policy lowered the limit), retryAfter waits until enough have left.
func TestTakeLoweredLimit(t *testing.T) { forEachBackend(t, testTakeLoweredLimit) }

func testTakeLoweredLimit(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	for i := range 5 {
		if ok, _, _ := s.Take(ctx, "S", "k", 5, time.Second, ms(int64(100*i))); !ok {
			t.Fatalf("call %d refused", i)
		}
	}
	// Events at 0, 100, 200, 300, 400; with n=2, room is made once four
	// have left and one remains: when 300 leaves, at 1300.
	ok, retry, err := s.Take(ctx, "S", "k", 2, time.Second, ms(500))
	if err != nil || ok || retry != 800*time.Millisecond {
		t.Errorf("Take with a lowered limit = %v, %v, %v; want refused, 800ms", ok, retry, err)
	}
	if ok, _, _ := s.Take(ctx, "S", "k", 2, time.Second, ms(1299)); ok {
		t.Error("passed at 1299")
	}
	if ok, _, _ := s.Take(ctx, "S", "k", 2, time.Second, ms(1300)); !ok {
		t.Error("refused at 1300")
	}
}

func TestTakeArgs(t *testing.T) { forEachBackend(t, testTakeArgs) }

func testTakeArgs(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	for _, c := range []struct {
		session, key string
		n            int
		per          time.Duration
		want         string
	}{
		{"", "k", 1, time.Second, "empty session"},
		{"S", "", 1, time.Second, "empty rate limit key"},
		{"S", "k", 0, time.Second, "at least 1"},
		{"S", "k", -1, time.Second, "at least 1"},
		{"S", "k", 1, 0, "milliseconds"},
		{"S", "k", 1, -time.Second, "milliseconds"},
		{"S", "k", 1, time.Microsecond, "milliseconds"},
		{"S", "k", 1, 1500 * time.Microsecond, "milliseconds"},
	} {
		ok, _, err := s.Take(ctx, c.session, c.key, c.n, c.per, ms(0))
		if err == nil || ok || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), s.where) {
			t.Errorf("Take(%q, %q, %d, %v) = %v, %v; want an error saying %q", c.session, c.key, c.n, c.per, ok, err, c.want)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM rate_events`); n != 0 {
		t.Errorf("invalid calls stored %d events", n)
	}
}

func TestTakeCanceled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		s := open(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if ok, _, err := s.Take(ctx, "S", "k", 1, time.Second, ms(0)); err == nil || ok {
			t.Errorf("Take with a canceled context = %v, %v", ok, err)
		}
	})
}

// TestTakePrune: a call Take lets through keeps its session alive, and
// Prune drops a pruned session's rate events with its observations.
func TestTakePrune(t *testing.T) { forEachBackend(t, testTakePrune) }

func testTakePrune(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	clock := time.UnixMilli(1_000_000)
	s.setNow(func() time.Time { return clock })
	for i, sess := range []string{"old", "new"} {
		if i > 0 {
			clock = clock.Add(time.Hour)
		}
		if ok, _, err := s.Take(ctx, sess, "k", 5, time.Hour, clock); err != nil || !ok {
			t.Fatalf("Take: %v, %v", ok, err)
		}
	}
	// The stale session had no observations to keep a tombstone of.
	n, err := s.Prune(ctx, clock.Add(-time.Minute))
	if err != nil || n != 0 {
		t.Fatalf("Prune = %d, %v; want 0 sessions tombstoned", n, err)
	}
	if got := rateRows(t, s, "old", "k"); got != 0 {
		t.Errorf("pruned session keeps %d rate events", got)
	}
	if got := rateRows(t, s, "new", "k"); got != 1 {
		t.Errorf("live session has %d rate events, want 1", got)
	}
}

func TestRateQueryPlans(t *testing.T) {
	s, _ := openTest(t)
	for _, q := range []struct {
		query string
		args  []any
	}{
		{rateExpireQuery, []any{"S", "k", 0}},
		{rateCountQuery, []any{"S", "k", 0}},
		{rateOldestQuery, []any{"S", "k", 0, 0}},
	} {
		plan := queryPlan(t, s, q.query, q.args...)
		t.Logf("%s\n\tplan: %q", strings.Join(strings.Fields(q.query), " "), plan)
		// One search of the (session, key, at) index on all three, already
		// in time order: no scan, no sort.
		if len(plan) != 1 || !planRE.MatchString(plan[0]) {
			t.Errorf("plan %q, want one SEARCH of rate_events_session_key_at on session, key and at", plan)
		}
		for _, p := range plan {
			if strings.Contains(p, "SCAN") || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("plan has %q", p)
			}
		}
	}
}

var planRE = regexp.MustCompile(`^SEARCH rate_events USING (COVERING )?INDEX rate_events_session_key_at \(session=\? AND key=\? AND at[<>]\?\)$`)

func queryPlan(t testing.TB, s *SQLite, query string, args ...any) []string {
	t.Helper()
	rows, err := s.db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestTakeProcesses has four processes take from one limit of 60 calls an
// hour, 50 calls each, at once: exactly 60 pass in all.
func TestTakeProcesses(t *testing.T) { forEachBackend(t, testTakeProcesses) }

func testTakeProcesses(t *testing.T, open opener) {
	const procs, perProc, limit = 4, 50, 60
	st := open(t)
	path := st.dsn
	dir := t.TempDir()
	gun := filepath.Join(dir, "go")
	outs := make([]bytes.Buffer, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for i := range procs {
		cmd := helperCommand(t, "take", "WEIR_TEST_DB="+path, "WEIR_TEST_N="+strconv.Itoa(perProc),
			"WEIR_TEST_LIMIT="+strconv.Itoa(limit), "WEIR_TEST_GO="+gun, "WEIR_TEST_READY="+gun+".ready"+strconv.Itoa(i))
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &outs[i], &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				errs[i] = &helperError{err, stderr.String()}
			}
		})
	}
	fire(t, gun, procs)
	wg.Wait()
	total := 0
	var results []string
	for i := range procs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		lines := outLines(outs[i].Bytes())
		if len(lines) != 1 || len(lines[0]) != perProc {
			t.Fatalf("process %d printed %q", i, lines)
		}
		r := lines[0]
		results = append(results, r)
		total += strings.Count(r, "+")
		// Nothing leaves an hour's window during the test, so once a
		// process is refused it is refused for good.
		if strings.Contains(r, "-+") {
			t.Errorf("process %d passed after a refusal: %s", i, r)
		}
	}
	t.Logf("calls per process (+ passed, - refused):\n\t%s", strings.Join(results, "\n\t"))
	if total != limit {
		t.Errorf("%d calls passed in all, want exactly %d", total, limit)
	}
	if n := rateRows(t, st.reopen(t), "S", "rule"); n != limit {
		t.Errorf("%d events stored, want %d", n, limit)
	}
}

// helperTake calls Take WEIR_TEST_N times at the starting gun, on session S
// and key "rule" with a limit of WEIR_TEST_LIMIT calls an hour, and prints
// one line: + for each call that passed, - for each refused.
func helperTake() error {
	ctx := context.Background()
	n, _ := strconv.Atoi(os.Getenv("WEIR_TEST_N"))
	limit, _ := strconv.Atoi(os.Getenv("WEIR_TEST_LIMIT"))
	s, err := openDSN(ctx, os.Getenv("WEIR_TEST_DB"))
	if err != nil {
		return err
	}
	defer s.Close()
	if err := awaitGun(); err != nil {
		return err
	}
	var out strings.Builder
	for i := range n {
		ok, retry, err := s.Take(ctx, "S", "rule", limit, time.Hour, time.Now())
		if err != nil {
			return fmt.Errorf("take %d: %w", i, err)
		}
		if ok {
			out.WriteByte('+')
		} else {
			if retry <= 0 || retry > time.Hour {
				return fmt.Errorf("take %d: retryAfter %v", i, retry)
			}
			out.WriteByte('-')
		}
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
	fmt.Printf("OUT %s\n", out.String())
	return nil
}

// BenchmarkTake times one Take on the hot path of a tools/call.
//
//   - pass: a limit of 10 calls a second, one call every 100 ms, so the
//     window always holds 9 earlier calls and every call passes (the common
//     case: delete one expired event, count, record).
//   - refuse: the same limit, full, so every call is refused (count, then
//     find the event that makes room).
//   - pass-1000: a limit of 1000 calls a second, one call a millisecond:
//     counting 999 events.
func BenchmarkTake(b *testing.B) { benchBackends(b, benchmarkTake) }

func benchmarkTake(b *testing.B, open opener) {
	for _, c := range []struct {
		name string
		n    int
		step int64
	}{
		{"pass", 10, 100},
		{"refuse", 10, 0},
		{"pass-1000", 1000, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s := open(b)
			now := int64(1_000_000)
			// Fill the window first.
			for range c.n {
				if _, _, err := s.Take(ctx, "S", "rule", c.n, time.Second, ms(now)); err != nil {
					b.Fatal(err)
				}
				now += max(c.step, 1)
			}
			want := c.step != 0
			for b.Loop() {
				ok, _, err := s.Take(ctx, "S", "rule", c.n, time.Second, ms(now))
				if err != nil {
					b.Fatal(err)
				}
				if ok != want {
					b.Fatalf("Take = %v, want %v", ok, want)
				}
				now += c.step
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
		})
	}
}
