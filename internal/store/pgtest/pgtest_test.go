package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

// TestNewDatabase: two databases of one cluster are separate and empty.
func TestNewDatabase(t *testing.T) {
	start := time.Now()
	a, b := NewDatabase(t), NewDatabase(t)
	t.Logf("cluster and two databases in %v", time.Since(start))
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	ctx := context.Background()
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, `CREATE TABLE x (v int)`); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'x'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("a table made in one database is in the other: %d, %v", n, err)
	}
	var v string
	if err := cb.QueryRow(ctx, `SHOW server_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s at %s", v, Shared(t).URL)
}

// TestNewSchema: a schema's URL opens on that schema alone.
func TestNewSchema(t *testing.T) {
	ctx := context.Background()
	a, b := NewSchema(t), NewSchema(t)
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, `CREATE TABLE x (v int)`); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n); err != nil || n != 0 {
		t.Errorf("schema b holds %d tables, %v", n, err)
	}
}
