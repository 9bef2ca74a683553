package store

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/store/pgtest"
)

// The PostgreSQL store's own tests: its schema and migrations, what text it
// refuses, and the change feed. What it shares with SQLite is tested
// through forEachBackend.

func openPG(t testing.TB, url string) *Postgres {
	t.Helper()
	s, err := OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func pgConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestPostgresMigrationsMatchSQLite(t *testing.T) {
	if len(pgMigrations) != len(migrations) {
		t.Errorf("%d PostgreSQL migrations and %d SQLite ones: a schema version must mean one data model in both stores", len(pgMigrations), len(migrations))
	}
	for v := range goMigrations {
		if pgGoMigrations[v] == nil {
			t.Errorf("SQLite's version %d has a Go step and PostgreSQL's has none", v)
		}
	}
}

// TestPostgresSchema: a new database gets every version once; reopening
// migrates nothing; a schema from a newer Weir, or another program's
// tables, are refused with an error that says what to do.
func TestPostgresSchema(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	s := openPG(t, url)
	c := pgConn(t, url)
	var v, n int
	if err := c.QueryRow(ctx, `SELECT max(version), count(*) FROM schema_version`).Scan(&v, &n); err != nil || v != len(pgMigrations) || n != v {
		t.Fatalf("schema version %d in %d rows, %v; want %d", v, n, err, len(pgMigrations))
	}
	s.Close()
	openPG(t, url).Close()
	if err := c.QueryRow(ctx, `SELECT count(*) FROM schema_version`).Scan(&n); err != nil || n != len(pgMigrations) {
		t.Errorf("%d schema_version rows after reopening, %v", n, err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO schema_version VALUES ($1, 0)`, len(pgMigrations)+1); err != nil {
		t.Fatal(err)
	}
	_, err := OpenPostgres(ctx, url)
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), s.name) {
		t.Errorf("newer schema: err = %v", err)
	}

	foreign := pgtest.NewSchema(t)
	if _, err := pgConn(t, foreign).Exec(ctx, `CREATE TABLE observations (x text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPostgres(ctx, foreign); err == nil || !strings.Contains(err.Error(), "not a Weir state store") {
		t.Errorf("another program's tables: err = %v", err)
	}
}

// TestPostgresOpenRace: replicas starting at once on a new database
// create its schema once, whoever is first; the others wait on the
// advisory transaction lock and find it current.
func TestPostgresOpenRace(t *testing.T) {
	url := pgtest.NewSchema(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			s, err := OpenPostgres(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	var n int
	if err := pgConn(t, url).QueryRow(context.Background(), `SELECT count(*) FROM schema_version`).Scan(&n); err != nil || n != len(pgMigrations) {
		t.Errorf("%d schema_version rows, %v", n, err)
	}
}

// TestPostgresMigrateRekeysPins builds a version 4 schema holding pins
// under the old name-and-command identities and opens it: version 5's Go
// step moves them to the name's identity, keeping the newest of each tool.
func TestPostgresMigrateRekeysPins(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	c := pgConn(t, url)
	if _, err := c.Exec(ctx, `CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v := range 4 {
		if _, err := c.Exec(ctx, pgMigrations[v]); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO schema_version VALUES ($1, 0)`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct {
		identity, tool, hash string
		updated              int64
	}{
		{"old-1", "read", "h-old", 1}, {"old-2", "read", "h-new", 2}, {"old-1", "send", "h-send", 1},
	} {
		if _, err := c.Exec(ctx, `INSERT INTO pins VALUES ($1, $2, 'notes', $3, NULL, '', NULL, '', 1, $4)`, p.identity, p.tool, p.hash, p.updated); err != nil {
			t.Fatal(err)
		}
	}
	s := openPG(t, url)
	got, err := s.AllPins(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	id := pin.Identity("notes")
	if len(got) != 2 || got[0].Identity != id || got[1].Identity != id || got[0].Hash != "h-new" || got[1].Hash != "h-send" {
		t.Errorf("rekeyed pins: %+v", got)
	}
}

// TestPostgresText: a name PostgreSQL text cannot hold exactly is refused
// with an error that says why, and nothing is stored.
func TestPostgresText(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.NewSchema(t))
	for _, c := range []struct {
		session, tool, want string
	}{
		{"A\x00B", "a/b", "NUL"},
		{"A", "a/\x00", "NUL"},
		{"A", "a/\xff", "UTF-8"},
	} {
		if _, err := s.Append(ctx, c.session, &flow.Observation{Tool: c.tool}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Append(%q, %q): err = %v, want one naming %s", c.session, c.tool, err, c.want)
		}
	}
	if _, _, err := s.Take(ctx, "A", "k\x00", 1, time.Second, time.Now()); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Take with a NUL in the key: %v", err)
	}
	if err := s.PutPin(ctx, pin.Pin{Identity: "i", Tool: "t\x00"}); err == nil {
		t.Error("a pin of a tool named with a NUL was stored")
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM observations) + (SELECT count(*) FROM rate_events) + (SELECT count(*) FROM pins)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows stored, %v", n, err)
	}
}

// TestPostgresURLRedacted: errors name the database, never its password.
func TestPostgresURLRedacted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://weir:hunter2secret@127.0.0.1:1/weir?connect_timeout=1",
		"postgres://weir:hunter2secret@127.0.0.1:1/weir?sslmode=bogus",
	} {
		s, err := OpenPostgres(ctx, url)
		if err == nil {
			s.Close()
			t.Fatalf("opened %s", url)
		}
		t.Log(err)
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
}

// waitListening waits for a store's change feed to be confirmed
// listening.
func waitListening(t testing.TB, s *Postgres) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !s.feed.listening() {
		if time.Now().After(deadline) {
			t.Fatal("the change feed did not start listening")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPostgresFeed: two replicas, each appending and syncing the other's
// session right after, never miss a row, while syncs with nothing new
// skip their query; after the listener's connection is killed, syncs
// query until it is back, and see every row meanwhile.
func TestPostgresFeed(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	a, b := openPG(t, url), openPG(t, url)
	waitListening(t, a)
	waitListening(t, b)

	var mb flow.Session
	roundTrip := func(round string, n int) {
		t.Helper()
		for i := range n {
			seq, err := a.Append(ctx, "S", &flow.Observation{Tool: "a/" + round, Labels: flow.Private, Prints: []uint64{uint64(i)}})
			if err != nil {
				t.Fatal(err)
			}
			// Right after A's commit, B must see it: the feed's barrier
			// makes B read A's notification before deciding to skip.
			if err := b.Sync(ctx, "S", &mb); err != nil {
				t.Fatal(err)
			}
			if mb.Watermark != seq {
				t.Fatalf("%s %d: replica B's mirror at %d right after A appended %d", round, i, mb.Watermark, seq)
			}
			// Nothing new: these may skip.
			for range 3 {
				if err := b.Sync(ctx, "S", &mb); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	roundTrip("live", 100)
	t.Logf("live: %d syncs queried, %d skipped", b.queried.Load(), b.skipped.Load())
	if b.skipped.Load() < 100 {
		t.Errorf("only %d of 400 syncs skipped; the feed is not working", b.skipped.Load())
	}

	// Kill B's listener. Until it is back, every sync queries, and still
	// sees A's rows at once.
	b.feed.mu.Lock()
	pid := b.feed.pid
	b.feed.mu.Unlock()
	var killed bool
	if err := pgConn(t, url).QueryRow(ctx, `SELECT pg_terminate_backend($1)`, int32(pid)).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminating the listener: %v, %v", killed, err)
	}
	roundTrip("down", 50)
	waitListening(t, b)
	skipped := b.skipped.Load()
	roundTrip("back", 50)
	t.Logf("after the reconnect: %d skipped", b.skipped.Load()-skipped)
	if b.skipped.Load()-skipped < 50 {
		t.Errorf("only %d of 200 syncs skipped after the listener came back", b.skipped.Load()-skipped)
	}
	want := pgSeqs(t, b, "S")
	var got []int64
	for _, src := range mb.Sources {
		got = append(got, src.Seq)
	}
	if !slices.Equal(got, want) {
		t.Errorf("replica B's mirror holds %d rows, the table %d", len(got), len(want))
	}
}

// TestPostgresFeedNeverListening: a feed that cannot connect makes every
// Sync query; none is skipped on its say-so.
func TestPostgresFeedNeverListening(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	a, b := openPG(t, url), openPG(t, url)
	b.feed.stop()
	cfg := b.pool.Config().ConnConfig.Config.Copy()
	cfg.Port = 1 // nothing listens there
	b.feed = startFeed(cfg, b.name)
	var m flow.Session
	for i := range 20 {
		seq, err := a.Append(ctx, "S", &flow.Observation{Tool: "a/b", Prints: []uint64{uint64(i)}})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := b.Sync(ctx, "S", &m); err != nil {
				t.Fatal(err)
			}
		}
		if m.Watermark != seq {
			t.Fatalf("mirror at %d after %d was appended", m.Watermark, seq)
		}
	}
	if n := b.skipped.Load(); n != 0 {
		t.Errorf("%d syncs skipped without a listening feed", n)
	}
}

// TestPostgresFeedOtherMirror: a mirror at another watermark than the one
// the last query left (a new proxy's, or one reset) is never skipped.
func TestPostgresFeedOtherMirror(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.NewSchema(t))
	waitListening(t, s)
	if _, err := s.Append(ctx, "S", &flow.Observation{Tool: "a/b"}); err != nil {
		t.Fatal(err)
	}
	var m1 flow.Session
	for range 3 {
		if err := s.Sync(ctx, "S", &m1); err != nil {
			t.Fatal(err)
		}
	}
	var m2 flow.Session
	if err := s.Sync(ctx, "S", &m2); err != nil {
		t.Fatal(err)
	}
	if len(m2.Sources) != 1 {
		t.Errorf("a fresh mirror got %d rows, want 1", len(m2.Sources))
	}
}

// pgSeqs lists a session's sequence numbers straight from the table.
func pgSeqs(t testing.TB, p *Postgres, session string) []int64 {
	t.Helper()
	rows, err := p.pool.Query(context.Background(), `SELECT seq FROM observations WHERE session = $1 ORDER BY seq`, session)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPostgresBarrierChecksBackend: the feed goes live only on a backend
// that listens, and a barrier proves something only when it ran on the
// connection's own backend (behind a pooler in transaction mode it may
// not).
func TestPostgresBarrierChecksBackend(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.NewSchema(t))
	cfg := s.pool.Config().ConnConfig.Config.Copy()
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := s.feed.checkListening(ctx, conn); err == nil || !strings.Contains(err.Error(), "does not listen") {
		t.Errorf("a backend not listening: %v", err)
	}
	if err := s.feed.exec(ctx, conn, "LISTEN "+feedChannel); err != nil {
		t.Fatal(err)
	}
	if err := s.feed.checkListening(ctx, conn); err != nil {
		t.Errorf("a listening backend: %v", err)
	}
	if err := s.feed.barrier(ctx, conn, conn.PID()); err != nil {
		t.Errorf("a barrier on the connection's backend: %v", err)
	}
	if err := s.feed.barrier(ctx, conn, conn.PID()+1); err == nil || !strings.Contains(err.Error(), "not the connection's backend") {
		t.Errorf("a barrier answered by another backend: %v", err)
	}
}
