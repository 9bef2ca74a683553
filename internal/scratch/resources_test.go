package scratch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sortBomb sorts the cross join of a 1 MiB table with itself: 7 million
// rows of prose, which SQLite's sorter holds in memory (temp_store=2).
func sortBomb(t *testing.T, db *DB) string {
	h := mustStore(t, db, 0, benchPayload(1<<20))
	return "SELECT a.body, b.body FROM " + h.Table + " a, " + h.Table + " b ORDER BY random()"
}

// TestMemoryGuardStopsSortBomb: the watchdog stops a query that grows the
// process past MaxQueryMemory long before its deadline.
func TestMemoryGuardStopsSortBomb(t *testing.T) {
	if _, ok := residentBytes(); !ok {
		t.Skip("no /proc/self/statm here")
	}
	db := openDB(t, Options{MaxPayloadBytes: 2 << 20, QueryTimeout: time.Minute, MaxQueryMemory: 48 << 20})
	sql := sortBomb(t, db)
	start := time.Now()
	_, err := db.Query(context.Background(), sql)
	if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "more than 48 MiB") {
		t.Fatalf("err = %v, want ErrMemory", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("stopped after %v", d)
	}
	if got := one(t, db, "SELECT 1"); got != int64(1) {
		t.Errorf("after the guard: %v", got)
	}
}

// TestIntermediateRowsNeverReachDisk: a query big enough to make SQLite's
// sorter spill opens no file. With temp_store at its default, SQLite would
// write the rows to an unlinked file under /var/tmp: result text at rest.
func TestIntermediateRowsNeverReachDisk(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	db := openDB(t, Options{MaxPayloadBytes: 2 << 20, QueryTimeout: 1500 * time.Millisecond, MaxQueryMemory: 1 << 40})
	sql := sortBomb(t, db)
	files := func() map[string]bool {
		m := map[string]bool{}
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
			if err == nil && strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "/dev/") && !strings.HasPrefix(l, "/proc/") && !strings.HasPrefix(l, "/sys/") {
				m[l] = true
			}
		}
		return m
	}
	before := files()
	var (
		mu    sync.Mutex
		extra []string
		done  = make(chan struct{})
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for f := range files() {
				if !before[f] {
					mu.Lock()
					extra = append(extra, f)
					mu.Unlock()
				}
			}
		}
	}()
	_, err := db.Query(context.Background(), sql)
	close(done)
	wg.Wait()
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v, want the timeout", err)
	}
	if len(extra) > 0 {
		t.Errorf("the query opened files: %v", extra)
	}
}

// TestConcurrentSessions: sessions run side by side, and one session's
// calls from many goroutines are serialised; the race detector watches the
// authorizer state and the sink registry.
func TestConcurrentSessions(t *testing.T) {
	var wg sync.WaitGroup
	for s := range 3 {
		db := openDB(t, Options{MaxTables: 3})
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 4 {
					h, ok, err := db.Materialise(context.Background(), "t", 0, structured(issues(20+s+g+i)))
					if !ok {
						t.Errorf("not stored: %v %s", err, h.Note)
						return
					}
					r, err := db.Query(context.Background(), "SELECT count(*) FROM "+h.Table)
					if err != nil && !errors.Is(err, ErrEvicted) {
						t.Errorf("query: %v", err)
					}
					if err == nil && r.Rows[0][0] != int64(20+s+g+i) {
						t.Errorf("count %v", r.Rows[0][0])
					}
				}
			}()
		}
	}
	wg.Wait()
}
