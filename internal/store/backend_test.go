package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/store/pgtest"
)

// One suite, two drivers: the tests of what a state store does run
// against SQLite and PostgreSQL alike, through forEachBackend; the tests of
// how one of them does it (file modes, WAL, query plans, migrating old
// files, the change feed) stay with that one.

func TestMain(m *testing.M) { pgtest.Main(m) }

// backend is one open store under test, with what the tests need to look
// under it.
type backend struct {
	State
	kind  string // "sqlite" or "postgres"
	dsn   string // the file or URL: what helper processes and reopen open
	where string // what the store's error messages name
}

// openDSN opens the store named by dsn: a postgres:// URL, else a SQLite
// file. The helper processes open their store with it.
func openDSN(ctx context.Context, dsn string) (State, error) {
	if strings.HasPrefix(dsn, "postgres://") {
		return OpenPostgres(ctx, dsn)
	}
	return OpenSQLite(ctx, dsn)
}

type opener func(t testing.TB) *backend

func openSQLiteBackend(t testing.TB) *backend {
	t.Helper()
	s, path := openTest(t)
	return &backend{State: s, kind: "sqlite", dsn: path, where: path}
}

func openPostgresBackend(t testing.TB) *backend {
	t.Helper()
	url := pgtest.NewSchema(t)
	s, err := OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &backend{State: s, kind: "postgres", dsn: url, where: s.name}
}

// backends are the stores every neutral test runs against.
var backends = []struct {
	name string
	open opener
}{
	{"sqlite", openSQLiteBackend},
	{"postgres", openPostgresBackend},
}

// forEachBackend runs f as a subtest per store; open makes a new empty
// store of that kind each time it is called.
func forEachBackend(t *testing.T, f func(t *testing.T, open opener)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.open) })
	}
}

// benchBackends is forEachBackend for benchmarks.
func benchBackends(b *testing.B, f func(b *testing.B, open opener)) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) { f(b, be.open) })
	}
}

// reopen opens a second handle on the same store, as another proxy or
// replica does.
func (b *backend) reopen(t testing.TB) *backend {
	t.Helper()
	s, err := openDSN(context.Background(), b.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &backend{State: s, kind: b.kind, dsn: b.dsn, where: b.where}
}

// setNow replaces the clock the store stamps sessions' activity with.
func (b *backend) setNow(now func() time.Time) {
	switch s := b.State.(type) {
	case *SQLite:
		s.now = now
	case *Postgres:
		s.now = now
	}
}

// queryRow runs a query written with ? placeholders straight against the
// store's database and scans its one row.
func (b *backend) queryRow(t testing.TB, q string, args []any, dest ...any) {
	t.Helper()
	var err error
	switch s := b.State.(type) {
	case *SQLite:
		err = s.db.QueryRow(q, args...).Scan(dest...)
	case *Postgres:
		err = s.pool.QueryRow(context.Background(), dollars(q), args...).Scan(dest...)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// count runs a count(*) query.
func (b *backend) count(t testing.TB, q string, args ...any) int {
	t.Helper()
	var n int
	b.queryRow(t, q, args, &n)
	return n
}

// column lists the int64 values of a one-column query, in order.
func (b *backend) column(t testing.TB, q string, args ...any) []int64 {
	t.Helper()
	var out []int64
	switch s := b.State.(type) {
	case *SQLite:
		out = scanInts(t, s.db, q, args...)
	case *Postgres:
		rows, err := s.pool.Query(context.Background(), dollars(q), args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// strings lists the values of a one-column text query, in order.
func (b *backend) strs(t testing.TB, q string, args ...any) []string {
	t.Helper()
	var out []string
	var err error
	switch s := b.State.(type) {
	case *SQLite:
		var rows *sql.Rows
		if rows, err = s.db.Query(q, args...); err == nil {
			for rows.Next() {
				var v string
				if err = rows.Scan(&v); err != nil {
					break
				}
				out = append(out, v)
			}
			rows.Close()
		}
	case *Postgres:
		rows, qerr := s.pool.Query(context.Background(), dollars(q), args...)
		if err = qerr; err == nil {
			for rows.Next() {
				var v string
				if err = rows.Scan(&v); err != nil {
					break
				}
				out = append(out, v)
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scanInts(t testing.TB, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dollars rewrites ? placeholders as PostgreSQL's $1, $2, …
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// seqs lists a session's sequence numbers straight from the table.
func (b *backend) seqs(t testing.TB, session string) []int64 {
	return b.column(t, `SELECT seq FROM observations WHERE session = ? ORDER BY seq`, session)
}
