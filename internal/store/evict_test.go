package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

// evictObs is an observation of tool with n prints numbered from base.
func evictObs(tool string, labels flow.Labels, base, n int) *flow.Observation {
	o := &flow.Observation{Tool: tool, Labels: labels, At: int64(base)}
	for i := range n {
		o.Prints = append(o.Prints, uint64(base*1000+i+1))
	}
	return o
}

// storedBytes is what a session's rows hold, counted from the rows.
func (b *backend) storedBytes(t *testing.T, session string) (counted, actual int64) {
	t.Helper()
	b.queryRow(t, `SELECT bytes FROM sessions WHERE session = ?`, []any{session}, &counted)
	b.queryRow(t, `SELECT coalesce(sum(coalesce(length(prints), 0) + coalesce(length(digests), 0) + coalesce(length(idents), 0)), 0) FROM observations WHERE session = ?`, []any{session}, &actual)
	return counted, actual
}

// TestStoreEvictionWidensTaint: a session past session.max_bytes keeps
// its newest rows and, for its oldest, one tombstone per tool with their
// labels and Evicted and no hashes; a mirror that joins then holds the
// tool's private data as evicted (so every sink call is judged as carrying
// it), still attributes the newest rows, and other sessions are untouched.
func TestStoreEvictionWidensTaint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		b := open(t)
		ctx := context.Background()
		const maxBytes = 64 << 10
		b.SetSessionMaxBytes(maxBytes)
		if _, err := b.Append(ctx, "other", evictObs("notes/read", flow.Private, 1, 512)); err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			tool, labels := "notes/read", flow.Private
			if i%3 == 2 {
				tool, labels = "web/fetch", flow.Untrusted
			}
			if _, err := b.Append(ctx, "s", evictObs(tool, labels, i+2, 256)); err != nil { // 2 KiB a row
				t.Fatal(err)
			}
			if counted, actual := b.storedBytes(t, "s"); counted != actual || counted > maxBytes {
				t.Fatalf("after %d appends the session counts %d bytes, holds %d, bound %d", i+1, counted, actual, maxBytes)
			}
		}
		var m flow.Session
		if err := b.Sync(ctx, "s", &m); err != nil {
			t.Fatal(err)
		}
		tombs := map[string]flow.Labels{}
		for _, src := range m.Sources {
			if src.Labels.Has(flow.Evicted) {
				if _, dup := tombs[src.Tool]; dup {
					t.Errorf("two tombstones of %s", src.Tool)
				}
				tombs[src.Tool] = src.Labels
			}
		}
		if tombs["notes/read"] != flow.Private|flow.Evicted || tombs["web/fetch"] != flow.Untrusted|flow.Evicted {
			t.Errorf("tombstones %v, want notes/read private+evicted and web/fetch untrusted+evicted", tombs)
		}
		newest := evictObs("notes/read", flow.Private, 60, 256).Prints
		if srcs := m.PrintSources(nil, newest[0]); len(srcs) != 1 {
			t.Errorf("the newest row's fingerprints are not attributed after eviction: %v", srcs)
		}
		oldest := evictObs("notes/read", flow.Private, 2, 256).Prints
		if srcs := m.PrintSources(nil, oldest[0]); len(srcs) != 0 {
			t.Errorf("an evicted row's fingerprint is still attributed: %v", srcs)
		}
		if counted, actual := b.storedBytes(t, "other"); counted != 4096 || actual != 4096 {
			t.Errorf("another session's rows changed: %d counted, %d held", counted, actual)
		}
		// Evicting again folds the tombstones: still one per tool.
		for i := range 40 {
			if _, err := b.Append(ctx, "s", evictObs("notes/read", flow.Private, 100+i, 256)); err != nil {
				t.Fatal(err)
			}
		}
		if n := b.count(t, `SELECT count(*) FROM observations WHERE session = 's' AND prints IS NULL`); n != 2 {
			t.Errorf("%d tombstones after a second eviction, want 2", n)
		}
	})
}

// TestStoreEvictionBoundsConcurrentWriters: proxies of one session
// appending at once, each evicting, keep the session within its bound
// and its byte count exact.
func TestStoreEvictionBoundsConcurrentWriters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		b := open(t)
		handles := []State{b.State, b.reopen(t).State}
		const maxBytes = 32 << 10
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			h := handles[w%2]
			h.SetSessionMaxBytes(maxBytes)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					if _, err := h.Append(context.Background(), "s", evictObs(fmt.Sprint("t", w), flow.Private, w*1000+i, 128)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if counted, actual := b.storedBytes(t, "s"); counted != actual || counted > maxBytes {
			t.Errorf("the session counts %d bytes and holds %d, bound %d", counted, actual, maxBytes)
		}
	})
}

// TestMigrateCountsSessionBytes: migration 9 counts what the rows of a
// store from before it hold.
func TestMigrateCountsSessionBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v := range 8 {
		if _, err := db.Exec(migrations[v]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (?, 0)`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range []string{"a", "a", "b"} {
		o := evictObs("notes/read", flow.Private, i, 10*(i+1))
		if _, err := db.Exec(insertQuery, s, o.At, o.Tool, int64(o.Labels), packHashes(o.Prints), nil, packHashes([]uint64{7})); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO sessions (session, last_seen) VALUES (?, 0) ON CONFLICT DO NOTHING`, s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := &backend{State: s, kind: "sqlite"}
	if counted, actual := b.storedBytes(t, "a"); counted != 8*(10+20+2) || counted != actual {
		t.Errorf("session a: %d counted, %d held, want %d", counted, actual, 8*32)
	}
	if counted, _ := b.storedBytes(t, "b"); counted != 8*(30+1) {
		t.Errorf("session b: %d counted", counted)
	}
}
