package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
)

// schemaV1 is the schema of version 1 exactly as it shipped. The migration
// tests build version 1 stores from it, so they keep testing the upgrade of
// real old files even if someone edits migrations[0], which
// TestShippedMigrations forbids.
const schemaV1 = `CREATE TABLE observations (
		seq     INTEGER PRIMARY KEY AUTOINCREMENT,
		session TEXT    NOT NULL,
		at      INTEGER NOT NULL,
		tool    TEXT    NOT NULL,
		labels  INTEGER NOT NULL,
		prints  BLOB,
		digests BLOB
	);
	CREATE INDEX observations_session_seq ON observations (session, seq);
	CREATE TABLE sessions (
		session   TEXT    PRIMARY KEY,
		last_seen INTEGER NOT NULL
	) WITHOUT ROWID;`

// The statements version 1 ran, as a proxy of that version still running
// during an upgrade runs them.
const (
	insertQueryV1 = `INSERT INTO observations (session, at, tool, labels, prints, digests) VALUES (?, ?, ?, ?, ?, ?)`
	syncQueryV1   = `SELECT seq, at, tool, labels, prints, digests FROM observations
		WHERE session = ? AND seq > ? ORDER BY seq`
)

func TestShippedMigrations(t *testing.T) {
	if migrations[0] != schemaV1 {
		t.Error("migration 1 differs from the schema version 1 shipped with; never edit a shipped migration, append a new one")
	}
}

// makeV1Store creates a version 1 store at path as Weir of that version did
// (a 0600 file in WAL mode), holding rows observations alternating between
// sessions A and B, and returns them in order. Row i of session S has tool
// "v1/S/i" and prints that carry i.
func makeV1Store(t testing.TB, path string, rows int) []*flow.Observation {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
		schemaV1,
		`INSERT INTO schema_version VALUES (1, 1000)`,
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var obs []*flow.Observation
	for i := range rows {
		sess := "AB"[i%2 : i%2+1]
		o := &flow.Observation{
			Tool: fmt.Sprintf("v1/%s/%d", sess, i), Labels: flow.Private, At: int64(1000 + i),
			Prints: []uint64{uint64(i)<<8 | 1, uint64(i)<<8 | 2}, Digests: []uint64{uint64(i)<<8 | 3},
		}
		if _, err := tx.Exec(insertQueryV1, sess, o.At, o.Tool, int64(o.Labels), packHashes(o.Prints), packHashes(o.Digests)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT OR REPLACE INTO sessions VALUES (?, ?)`, sess, o.At); err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return obs
}

// schemaOf describes db's schema as SQLite understands it (columns with
// their types, constraints and keys, indexes with their columns, rowid or
// not), not by the text of its DDL, which ALTER TABLE edits in place: a
// migrated store and a new one must have the same schema.
func schemaOf(t testing.TB, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, tbl_name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	type object struct{ typ, name, table string }
	var objs []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.typ, &o.name, &o.table); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	rows.Close()
	var desc []string
	for _, o := range objs {
		var d string
		var err error
		switch o.typ {
		case "table":
			err = db.QueryRow(`SELECT (SELECT 'rowid=' || (wr = 0) || ' ' FROM pragma_table_list WHERE name = ?1) ||
				group_concat(name || ' ' || type || ' notnull=' || "notnull" || ' default=' || coalesce(dflt_value, '-') || ' pk=' || pk, ', ')
				FROM pragma_table_xinfo(?1)`, o.name).Scan(&d)
		case "index":
			err = db.QueryRow(`SELECT (SELECT 'unique=' || "unique" || ' partial=' || partial || ' ' FROM pragma_index_list(?2) WHERE name = ?1) ||
				group_concat(coalesce(name, '<rowid>') || ' desc=' || "desc" || ' coll=' || coll || ' key=' || key, ', ')
				FROM pragma_index_xinfo(?1)`, o.name, o.table).Scan(&d)
		}
		if err != nil {
			t.Fatalf("describing %s %s: %v", o.typ, o.name, err)
		}
		desc = append(desc, fmt.Sprintf("%s %s on %s: %s", o.typ, o.name, o.table, d))
	}
	return desc
}

func versionsOf(t testing.TB, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

// TestMigrateV1 opens a version 1 store: it is upgraded in place to the
// schema a new store has, its rows read back unchanged with no idents, new
// rows keep their idents, and a proxy of version 1 still running through
// the upgrade keeps appending and syncing.
func TestMigrateV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	v1 := makeV1Store(t, path, 20)

	// A version 1 proxy, with its statements prepared before the upgrade.
	old, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	old.SetMaxOpenConns(1)
	oldInsert, err := old.Prepare(insertQueryV1)
	if err != nil {
		t.Fatal(err)
	}
	oldSync, err := old.Prepare(syncQueryV1)
	if err != nil {
		t.Fatal(err)
	}

	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := versionsOf(t, s.db); !slices.Equal(got, allVersions()) {
		t.Errorf("schema versions after migration %v, want %v", got, allVersions())
	}
	fresh, _ := openTest(t)
	if got, want := schemaOf(t, s.db), schemaOf(t, fresh.db); !slices.Equal(got, want) {
		t.Errorf("migrated schema:\n\t%s\nnew store's schema:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	} else {
		t.Logf("schema:\n\t%s", strings.Join(got, "\n\t"))
	}

	// The version 1 rows read back as they were, with no idents.
	var rows []flow.Observation
	if err := s.pull(ctx, "A", 0, math.MaxInt64, func(_ int64, o *flow.Observation) { rows = append(rows, *o) }); err != nil {
		t.Fatal(err)
	}
	var wantA []flow.Observation
	for i, o := range v1 {
		if i%2 == 0 {
			wantA = append(wantA, *o)
		}
	}
	if len(rows) != len(wantA) {
		t.Fatalf("session A has %d rows after migration, want %d", len(rows), len(wantA))
	}
	for i, o := range rows {
		w := wantA[i]
		if o.Tool != w.Tool || o.Labels != w.Labels || o.At != w.At || !slices.Equal(o.Prints, w.Prints) ||
			!slices.Equal(o.Digests, w.Digests) || o.Idents != nil {
			t.Errorf("row %d after migration %+v, want %+v", i, o, w)
		}
	}

	// New rows carry idents, next to the old ones.
	var m flow.Session
	seq, err := s.Append(ctx, "A", &flow.Observation{Tool: "new/x", Labels: flow.Untrusted, Prints: []uint64{5}, Idents: []uint64{77}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx, "A", &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Sources) != len(wantA)+1 || m.Watermark != seq {
		t.Fatalf("mirror holds %d sources up to %d, want %d up to %d", len(m.Sources), m.Watermark, len(wantA)+1, seq)
	}
	if got := m.IdentSources(nil, 77); !slices.Equal(got, []int32{int32(len(wantA))}) {
		t.Errorf("new row's ident sources %v", got)
	}
	if got := m.PrintSources(nil, wantA[3].Prints[1]); !slices.Equal(got, []int32{3}) {
		t.Errorf("old row's print sources %v", got)
	}
	if ok, _, err := s.Take(ctx, "A", "r", 1, time.Second, time.UnixMilli(5000)); err != nil || !ok {
		t.Errorf("Take on a migrated store: %v, %v", ok, err)
	}

	// The version 1 proxy keeps working: it appends (no idents) and syncs
	// the new version's rows.
	if _, err := oldInsert.Exec("A", 9000, "old/y", int64(flow.Private), packHashes([]uint64{6}), nil); err != nil {
		t.Fatalf("version 1 append after the upgrade: %v", err)
	}
	r, err := oldSync.Query("A", 0)
	if err != nil {
		t.Fatalf("version 1 sync after the upgrade: %v", err)
	}
	n := 0
	for r.Next() {
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if n != len(wantA)+2 {
		t.Errorf("version 1 sync read %d rows, want %d", n, len(wantA)+2)
	}
	if err := s.Sync(ctx, "A", &m); err != nil || len(m.Sources) != len(wantA)+2 || m.Sources[len(m.Sources)-1].Tool != "old/y" {
		t.Errorf("sync of a version 1 proxy's row: %v, %d sources", err, len(m.Sources))
	}

	// Reopening migrates nothing again.
	s2, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := versionsOf(t, s2.db); !slices.Equal(got, allVersions()) {
		t.Errorf("schema versions after reopening %v", got)
	}
}

// TestMigrateFailureRollsBack: a migration that fails leaves the store at
// its old version, untouched, and the error names the file and the version.
func TestMigrateFailureRollsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	makeV1Store(t, path, 4)
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Something in the way of migration 2, after its ALTER TABLE.
	if _, err := db.Exec(`CREATE TABLE rate_events (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	before := schemaOf(t, db)

	_, err = OpenSQLite(context.Background(), path)
	if err == nil {
		t.Fatal("migration into an existing rate_events table succeeded")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("error %q should name the path and the version", err)
	}
	if got := versionsOf(t, db); !slices.Equal(got, []int{1}) {
		t.Errorf("schema versions after a failed migration %v", got)
	}
	if after := schemaOf(t, db); !slices.Equal(after, before) {
		t.Errorf("a failed migration changed the schema:\n\t%s", strings.Join(after, "\n\t"))
	}
}

// TestMigrateRace opens a version 1 store from several processes at once, as
// a client does when it starts all its servers after Weir was upgraded: one
// migrates, the others wait for it and use the new schema.
func TestMigrateRace(t *testing.T) {
	const procs, v1rows = 6, 10
	ctx := context.Background()
	for round := range 3 {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.db")
		makeV1Store(t, path, v1rows)
		gun := filepath.Join(dir, "go")
		errs := make([]error, procs)
		var wg sync.WaitGroup
		for i := range procs {
			cmd := helperCommand(t, "migrate", "WEIR_TEST_DB="+path, "WEIR_TEST_ID="+strconv.Itoa(i),
				"WEIR_TEST_N="+strconv.Itoa(v1rows/2), "WEIR_TEST_GO="+gun, "WEIR_TEST_READY="+gun+".ready"+strconv.Itoa(i))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
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
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d process %d: %v", round, i, err)
			}
		}

		s, err := OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if got := versionsOf(t, s.db); !slices.Equal(got, allVersions()) {
			t.Errorf("round %d: schema versions %v, want %v", round, got, allVersions())
		}
		fresh, _ := openTest(t)
		if got, want := schemaOf(t, s.db), schemaOf(t, fresh.db); !slices.Equal(got, want) {
			t.Errorf("round %d: migrated schema:\n\t%s\nnew store's schema:\n\t%s", round, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
		// The old rows, then one row from each process, with its ident.
		var m flow.Session
		if err := s.Sync(ctx, "A", &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Sources) != v1rows/2+procs {
			t.Errorf("round %d: session A has %d rows, want %d", round, len(m.Sources), v1rows/2+procs)
		}
		for i := range procs {
			if got := m.IdentSources(nil, migrateIdent(i)); len(got) != 1 {
				t.Errorf("round %d: ident of process %d in %d sources", round, i, len(got))
			}
		}
		s.Close()
	}
}

// fire waits until procs helpers have said they are ready (created
// gun+".ready"+i), then creates gun to start them all at once.
func fire(t testing.TB, gun string, procs int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < procs; {
		if _, err := os.Stat(gun + ".ready" + strconv.Itoa(i)); err == nil {
			i++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("helper %d not ready after 30s", i)
		}
		time.Sleep(time.Millisecond)
	}
	if err := os.WriteFile(gun, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func migrateIdent(id int) uint64 { return 1<<62 | uint64(id) }

// helperMigrate opens the version 1 store WEIR_TEST_DB at the starting gun,
// appends one row with idents to session A, and checks that its mirror of A
// holds the WEIR_TEST_N old rows and its own.
func helperMigrate() error {
	ctx := context.Background()
	id, _ := strconv.Atoi(os.Getenv("WEIR_TEST_ID"))
	n, _ := strconv.Atoi(os.Getenv("WEIR_TEST_N"))
	if err := awaitGun(); err != nil {
		return err
	}
	s, err := OpenSQLite(ctx, os.Getenv("WEIR_TEST_DB"))
	if err != nil {
		return err
	}
	defer s.Close()
	o := &flow.Observation{Tool: fmt.Sprintf("new/%d", id), Labels: flow.Untrusted, Idents: []uint64{migrateIdent(id)}}
	seq, err := s.Append(ctx, "A", o)
	if err != nil {
		return err
	}
	var m flow.Session
	if err := s.Sync(ctx, "A", &m); err != nil {
		return err
	}
	old := 0
	for _, src := range m.Sources {
		if strings.HasPrefix(src.Tool, "v1/A/") {
			old++
		}
	}
	if old != n || m.Watermark < seq {
		return fmt.Errorf("mirror of A holds %d old rows (want %d) up to %d (appended %d)", old, n, m.Watermark, seq)
	}
	if got := m.IdentSources(nil, migrateIdent(id)); len(got) != 1 {
		return fmt.Errorf("own ident in %d sources", len(got))
	}
	return nil
}

// allVersions is 1..the current schema version.
func allVersions() []int {
	v := make([]int, len(migrations))
	for i := range v {
		v[i] = i + 1
	}
	return v
}

// TestMigrateRekeysPins: pins written under the old identities (name and
// command) move to their server's name; of a tool pinned under two
// commands, the newest pin is kept.
func TestMigrateRekeysPins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v := 0; v < 4; v++ {
		if _, err := db.Exec(migrations[v]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (?, 0)`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct {
		identity, tool, server, hash string
		updated                      int64
	}{
		{"old-a", "search", "notes", "h1", 10},
		{"old-b", "search", "notes", "h2", 20}, // newer command: kept
		{"old-a", "add", "notes", "h3", 10},
		{"old-c", "send", "mail", "h4", 5},
	} {
		if _, err := db.Exec(`INSERT INTO pins (identity, tool, server, hash, pending_hash, pending_why, first_seen, updated) VALUES (?, ?, ?, ?, '', '', 1, ?)`,
			r.identity, r.tool, r.server, r.hash, r.updated); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	notes, err := s.Pins(context.Background(), pin.Identity("notes"))
	if err != nil || len(notes) != 2 || notes["search"].Hash != "h2" || notes["add"].Hash != "h3" {
		t.Errorf("notes pins %+v, %v", notes, err)
	}
	mail, err := s.Pins(context.Background(), pin.Identity("mail"))
	if err != nil || len(mail) != 1 || mail["send"].Hash != "h4" {
		t.Errorf("mail pins %+v, %v", mail, err)
	}
	all, _ := s.AllPins(context.Background(), "")
	if len(all) != 3 {
		t.Errorf("%d pins after the migration, want 3: %+v", len(all), all)
	}
}
