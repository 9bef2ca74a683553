package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
)

func openTest(t testing.TB) (*SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestAppendSync(t *testing.T) { forEachBackend(t, testAppendSync) }

func testAppendSync(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	obs := []*flow.Observation{
		{Tool: "notes/read_note", Labels: flow.Private, At: 1000, Prints: []uint64{1, 2, 1 << 63}, Digests: []uint64{7}, Idents: []uint64{11, 1 << 63}},
		{Tool: "web/fetch", Labels: flow.Untrusted | flow.Sink, At: 2000, Idents: []uint64{12}},
		{Tool: "files/read_file", Labels: flow.Private, At: 3000, Prints: []uint64{2, 3}, Idents: []uint64{11}},
	}
	var seqs []int64
	for _, o := range obs {
		seq, err := s.Append(ctx, "A", o)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	if !slices.IsSorted(seqs) || seqs[0] == seqs[1] || seqs[1] == seqs[2] {
		t.Errorf("seqs %v not increasing", seqs)
	}
	if _, err := s.Append(ctx, "B", &flow.Observation{Tool: "b/x", Labels: flow.Private, Prints: []uint64{99}}); err != nil {
		t.Fatal(err)
	}

	var m flow.Session
	if err := s.Sync(ctx, "A", &m); err != nil {
		t.Fatal(err)
	}
	if m.Watermark != seqs[2] || len(m.Sources) != 3 || m.Legs != flow.Private|flow.Untrusted {
		t.Fatalf("mirror: watermark %d, %d sources, legs %v", m.Watermark, len(m.Sources), m.Legs)
	}
	for i, src := range m.Sources {
		want := flow.Source{Seq: seqs[i], Tool: obs[i].Tool, Labels: obs[i].Labels, At: obs[i].At}
		if src != want {
			t.Errorf("source %d = %+v, want %+v", i, src, want)
		}
	}
	if got := m.PrintSources(nil, 2); !slices.Equal(got, []int32{0, 2}) {
		t.Errorf("print 2 sources %v", got)
	}
	if got := m.PrintSources(nil, 1<<63); !slices.Equal(got, []int32{0}) {
		t.Errorf("print 1<<63 sources %v", got)
	}
	if got := m.DigestSources(nil, 7); !slices.Equal(got, []int32{0}) {
		t.Errorf("digest 7 sources %v", got)
	}
	if got := m.PrintSources(nil, 99); len(got) != 0 {
		t.Errorf("session B's print is in A's mirror")
	}
	// Idents are their own index: a value that is also a print or a digest
	// elsewhere is found only where it was an ident.
	for h, want := range map[uint64][]int32{11: {0, 2}, 12: {1}, 1 << 63: {0}, 7: nil, 2: nil, 13: nil} {
		if got := m.IdentSources(nil, h); !slices.Equal(got, want) {
			t.Errorf("ident %d sources %v, want %v", h, got, want)
		}
	}
	if got := m.DigestSources(nil, 11); len(got) != 0 {
		t.Errorf("ident 11 found as a digest in %v", got)
	}
	// Each row's blobs went to their own columns, packed.
	var prints, digests, idents []byte
	s.queryRow(t, `SELECT prints, digests, idents FROM observations WHERE seq = ?`, []any{seqs[0]}, &prints, &digests, &idents)
	if !bytes.Equal(prints, packHashes(obs[0].Prints)) || !bytes.Equal(digests, packHashes(obs[0].Digests)) || !bytes.Equal(idents, packHashes(obs[0].Idents)) {
		t.Errorf("row %d stored prints %x, digests %x, idents %x", seqs[0], prints, digests, idents)
	}
	// None is NULL, as in the rows of a store migrated from version 1.
	var null bool
	if s.queryRow(t, `SELECT idents IS NULL FROM observations WHERE session = 'B'`, nil, &null); !null {
		t.Errorf("row without idents: idents IS NULL = %v", null)
	}

	// A second sync with nothing new changes nothing; a new row arrives.
	if err := s.Sync(ctx, "A", &m); err != nil || len(m.Sources) != 3 {
		t.Fatalf("idle sync: %v, %d sources", err, len(m.Sources))
	}
	seq, err := s.Append(ctx, "A", &flow.Observation{Tool: "x/y", Prints: []uint64{42}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx, "A", &m); err != nil || len(m.Sources) != 4 || m.Watermark != seq {
		t.Fatalf("sync after append: %v, %d sources, watermark %d want %d", err, len(m.Sources), m.Watermark, seq)
	}

	// A second handle on the same store (another proxy, or replica) sees
	// the same rows.
	s2 := s.reopen(t)
	var m2 flow.Session
	if err := s2.Sync(ctx, "A", &m2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m2.Sources, m.Sources) {
		t.Errorf("second handle's mirror differs")
	}
}

func TestAppendEmptySession(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		s := open(t)
		if _, err := s.Append(context.Background(), "", &flow.Observation{}); err == nil {
			t.Error("append to an empty session key succeeded")
		}
	})
}

func TestPackHashes(t *testing.T) {
	for _, h := range [][]uint64{nil, {0}, {1, 2, 3}, {^uint64(0), 1 << 63, 0x0102030405060708}} {
		b := packHashes(h)
		if len(b) != 8*len(h) {
			t.Errorf("packHashes(%v) is %d bytes", h, len(b))
		}
		got, err := unpackHashes(b)
		if err != nil || !slices.Equal(got, h) {
			t.Errorf("round trip of %v = %v, %v", h, got, err)
		}
	}
	// Little-endian, 8 bytes each.
	if b := packHashes([]uint64{0x0102030405060708}); !bytes.Equal(b, []byte{8, 7, 6, 5, 4, 3, 2, 1}) {
		t.Errorf("packHashes = %x", b)
	}
	if _, err := unpackHashes(make([]byte, 12)); err == nil {
		t.Error("unpackHashes of 12 bytes succeeded")
	}
	if n := testing.AllocsPerRun(100, func() { unpackHashes(make([]byte, 8*1000)) }); n > 2 {
		t.Errorf("unpackHashes of 1000 hashes: %v allocations", n)
	}
}

func TestSyncQueryPlan(t *testing.T) {
	s, _ := openTest(t)
	rows, err := s.db.Query("EXPLAIN QUERY PLAN "+syncQuery, "A", 0, int64(math.MaxInt64))
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
	t.Logf("plan: %q", plan)
	// One search of the (session, seq) index, already in seq order: no
	// scan, no sort.
	if len(plan) != 1 || !strings.HasPrefix(plan[0], "SEARCH observations USING INDEX observations_session_seq (session=? AND ") {
		t.Errorf("sync query plan %q, want one SEARCH of observations_session_seq", plan)
	}
	for _, p := range plan {
		if strings.Contains(p, "SCAN") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("sync query plan has %q", p)
		}
	}
}

func TestSchema(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	var v int
	if err := s.db.QueryRow(`SELECT max(version) FROM schema_version`).Scan(&v); err != nil || v != len(migrations) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(migrations))
	}
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v", mode, err)
	}
	var timeout int
	if err := s.db.QueryRow(`PRAGMA busy_timeout`).Scan(&timeout); err != nil || timeout != 5000 {
		t.Errorf("busy_timeout %d, %v", timeout, err)
	}
	s.Close()

	// Reopening runs no migration twice.
	s2, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s2.db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&n); err != nil || n != len(migrations) {
		t.Errorf("%d schema_version rows, %v", n, err)
	}
	// A store from a newer Weir is refused, not guessed at.
	if _, err := s2.db.Exec(`INSERT INTO schema_version VALUES (?, 0)`, len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	_, err = OpenSQLite(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), path) {
		t.Errorf("newer schema: err = %v", err)
	}
}

// TestPrune: a session past retention keeps only a tombstone — its
// labels, Pruned, no fingerprints — so a mirror that joins it later still
// knows what it held (DESIGN rule 3); a live session is untouched; a
// second prune leaves the tombstone alone; sequence numbers are never
// reused; and a SQLite file gives the space back.
func TestPrune(t *testing.T) { forEachBackend(t, testPrune) }

func testPrune(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	clock := time.UnixMilli(1_000_000)
	s.setNow(func() time.Time { return clock })
	big := make([]uint64, 50_000)
	for i := range big {
		big[i] = uint64(i) * 7919
	}
	if _, err := s.Append(ctx, "old", &flow.Observation{Tool: "notes/read", Labels: flow.Private, Prints: big}); err != nil {
		t.Fatal(err)
	}
	old, err := s.Append(ctx, "old", &flow.Observation{Tool: "web/fetch", Labels: flow.Untrusted | flow.Sink, Prints: []uint64{3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "clean", &flow.Observation{Tool: "calc/add", Prints: []uint64{4}}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if _, err := s.Append(ctx, "new", &flow.Observation{Tool: "a/b", Labels: flow.Private, Prints: []uint64{2}}); err != nil {
		t.Fatal(err)
	}
	pages := func() (n int64) {
		if lite, ok := s.State.(*SQLite); ok {
			lite.db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&n)
		}
		return n
	}
	before := pages()
	n, err := s.Prune(ctx, clock.Add(-time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2", n, err)
	}
	var mOld, mClean, mNew flow.Session
	if err := s.Sync(ctx, "old", &mOld); err != nil || len(mOld.Sources) != 1 {
		t.Fatalf("pruned session has %d rows (%v), want its tombstone", len(mOld.Sources), err)
	}
	if src := mOld.Sources[0]; src.Tool != flow.PrunedTool || src.Labels != flow.Private|flow.Untrusted|flow.Pruned || mOld.Legs != flow.Legs {
		t.Errorf("tombstone %+v, legs %v", src, mOld.Legs)
	}
	if mOld.PrintSources(nil, 3) != nil {
		t.Error("the tombstone kept fingerprints")
	}
	if err := s.Sync(ctx, "clean", &mClean); err != nil || len(mClean.Sources) != 1 || mClean.Sources[0].Labels != flow.Pruned {
		t.Errorf("a pruned session with no labels: %+v (%v)", mClean.Sources, err)
	}
	if err := s.Sync(ctx, "new", &mNew); err != nil || len(mNew.Sources) != 1 || mNew.Sources[0].Tool != "a/b" {
		t.Errorf("live session: %+v (%v)", mNew.Sources, err)
	}
	if after := pages(); s.kind == "sqlite" && after >= before {
		t.Errorf("the file kept its %d pages after pruning (%d now)", before, after)
	}
	// Tombstones are not pruned again.
	if n, err := s.Prune(ctx, clock.Add(-time.Minute)); err != nil || n != 0 {
		t.Errorf("second Prune = %d, %v; want 0", n, err)
	}
	// A pruned session that comes back and goes stale again keeps the
	// labels of both its tombstone and its new rows.
	clock = clock.Add(time.Hour)
	if _, err := s.Append(ctx, "old", &flow.Observation{Tool: "calc/add", Prints: []uint64{5}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx, clock.Add(time.Minute)); err != nil || n != 2 { // old and new
		t.Fatalf("third Prune = %d, %v; want 2", n, err)
	}
	var again flow.Session
	if err := s.Sync(ctx, "old", &again); err != nil || len(again.Sources) != 1 || again.Sources[0].Labels != flow.Private|flow.Untrusted|flow.Pruned {
		t.Errorf("re-pruned session: %+v (%v)", again.Sources, err)
	}
	// Sequence numbers are never reused after a prune: a mirror that
	// already applied the pruned rows still sees new ones.
	seq, err := s.Append(ctx, "old", &flow.Observation{Tool: "a/b"})
	if err != nil || seq <= old+1 {
		t.Errorf("seq after prune %d (%v), want above %d", seq, err, old+1)
	}
}

func TestOpenNotSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("this is not a database\n"), 200), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSQLite(context.Background(), path)
	if err == nil {
		t.Fatal("opened a text file as the state store")
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.Contains(msg, path) || !strings.Contains(msg, "move it aside") || !strings.Contains(msg, "mv "+path) {
		t.Errorf("error %q should name the path and say to move it aside", msg)
	}
	if errors.Unwrap(err) == nil {
		t.Error("error does not wrap the driver's")
	}
}

func TestOpenForeignSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE observations (x TEXT); INSERT INTO observations VALUES ('someone else''s')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = OpenSQLite(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "not a Weir state store") || !strings.Contains(err.Error(), "mv "+path) {
		t.Errorf("opening another program's database: err = %v", err)
	}
}

func TestStoreFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	s, path := openTest(t)
	if _, err := s.Append(context.Background(), "A", &flow.Observation{Tool: "a/b"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", f, fi.Mode().Perm())
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my weir?x=1#frag%20")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(context.Background(), "A", &flow.Observation{Tool: "a/b"}); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, "state.db") || !slices.Contains(names, "state.db-wal") {
		t.Errorf("store files in %q: %q", dir, names)
	}
}

func TestOpenDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenSQLite(context.Background(), dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("opening a directory: err = %v", err)
	}
	missing := filepath.Join(dir, "nope", "state.db")
	if _, err := OpenSQLite(context.Background(), missing); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing directory: err = %v", err)
	}
}

func TestOpenReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes through directory modes; see TestOpenReadOnlyMount")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	checkReadOnlyError(t, filepath.Join(dir, "state.db"), openErr(filepath.Join(dir, "state.db")))
}

func openErr(path string) error {
	s, err := OpenSQLite(context.Background(), path)
	if err == nil {
		s.Close()
	}
	return err
}

// checkReadOnlyError checks the error from opening path in a directory Weir
// cannot write.
func checkReadOnlyError(t *testing.T, path string, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("opened a store in a read-only directory")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "writable") {
		t.Errorf("error %q should name the path and say it must be writable", err)
	}
}

// TestOpenRace opens a new store from several processes at once, as a
// client starting all its servers does on the first run.
func TestOpenRace(t *testing.T) {
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "state.db")
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			cmd := helperCommand(t, "open", "WEIR_TEST_DB="+path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			wg.Go(func() {
				if err := cmd.Run(); err != nil {
					errs[i] = &helperError{err, stderr.String()}
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d process %d: %v", round, i, err)
			}
		}
	}
}

// TestConcurrentProcesses has four processes (proxies, or replicas)
// append to two sessions at once while this process syncs a mirror of each
// continuously.
func TestConcurrentProcesses(t *testing.T) { forEachBackend(t, testConcurrentProcesses) }

func testConcurrentProcesses(t *testing.T, open opener) {
	const procs, perProc = 4, 100
	ctx := context.Background()
	s := open(t)
	path := s.dsn

	mirrors := map[string]*flow.Session{"A": {}, "B": {}}
	var (
		stop     atomic.Bool
		syncErr  error
		syncs    int
		syncDone = make(chan struct{})
	)
	go func() {
		defer close(syncDone)
		for !stop.Load() {
			for _, sess := range []string{"A", "B"} {
				if err := s.Sync(ctx, sess, mirrors[sess]); err != nil {
					syncErr = err
					return
				}
				syncs++
			}
		}
	}()

	var wg sync.WaitGroup
	errs := make([]error, procs)
	gun := filepath.Join(t.TempDir(), "go")
	for i := range procs {
		cmd := helperCommand(t, "append", "WEIR_TEST_DB="+path, "WEIR_TEST_ID="+strconv.Itoa(i),
			"WEIR_TEST_N="+strconv.Itoa(perProc), "WEIR_TEST_GO="+gun)
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
	time.Sleep(200 * time.Millisecond) // let the writers open the store
	if err := os.WriteFile(gun, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	stop.Store(true)
	<-syncDone
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if syncErr != nil {
		t.Fatalf("sync while writing: %v", syncErr)
	}
	// The writers really did interleave: count how often the writer of
	// consecutive rows changes.
	switches, last := 0, ""
	for _, tool := range s.strs(t, `SELECT tool FROM observations ORDER BY seq`) {
		if w := strings.Split(tool, "/")[1]; w != last {
			switches, last = switches+1, w
		}
	}
	t.Logf("%d syncs ran while the writers appended; the writer changed %d times in %d rows", syncs, switches, procs*perProc)
	if switches < 2*procs {
		t.Errorf("writers barely overlapped (%d changes of writer); the test did not test concurrency", switches)
	}

	for _, sess := range []string{"A", "B"} {
		m := mirrors[sess]
		if err := s.Sync(ctx, sess, m); err != nil {
			t.Fatal(err)
		}
		// Exactly this session's rows, in seq order, as the table holds them.
		want := s.seqs(t, sess)
		if len(want) != procs*perProc/2 {
			t.Fatalf("session %s has %d rows in the table, want %d", sess, len(want), procs*perProc/2)
		}
		if len(m.Sources) != len(want) {
			t.Fatalf("mirror %s holds %d sources, want %d", sess, len(m.Sources), len(want))
		}
		seen := map[string]bool{}
		for i, src := range m.Sources {
			if src.Seq != want[i] {
				t.Fatalf("mirror %s source %d has seq %d, want %d", sess, i, src.Seq, want[i])
			}
			if !strings.HasPrefix(src.Tool, sess+"/") {
				t.Fatalf("row %d of session %q (%s) is in mirror %s", src.Seq, src.Tool[:1], src.Tool, sess)
			}
			if seen[src.Tool] {
				t.Fatalf("row %s applied twice", src.Tool)
			}
			seen[src.Tool] = true
		}
		// Every print in the mirror carries this session's mark.
		other := "AB"[strings.Index("AB", sess)^1:][:1]
		for w := range procs {
			for i := range perProc {
				o := testObservation(other, strconv.Itoa(w), i)
				if got := m.PrintSources(nil, o.Prints[0]); len(got) > 0 {
					t.Fatalf("a print of session %s is in mirror %s", other, sess)
				}
			}
		}
	}
}

func BenchmarkAppend150k(b *testing.B) {
	s, _ := openTest(b)
	o := bigObservation(150_000)
	b.SetBytes(int64(8 * len(o.Prints)))
	for b.Loop() {
		if _, err := s.Append(context.Background(), "A", o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendSmall(b *testing.B) {
	s, _ := openTest(b)
	o := &flow.Observation{Tool: "web/fetch", Labels: flow.Untrusted, Prints: []uint64{1, 2, 3, 4}}
	for b.Loop() {
		if _, err := s.Append(context.Background(), "A", o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncIdle is the common case before a decision: nothing new.
func BenchmarkSyncIdle(b *testing.B) {
	ctx := context.Background()
	s, _ := openTest(b)
	for i := range 100 {
		if _, err := s.Append(ctx, "A", &flow.Observation{Tool: "a/b", Prints: []uint64{uint64(i)}}); err != nil {
			b.Fatal(err)
		}
	}
	var m flow.Session
	if err := s.Sync(ctx, "A", &m); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := s.Sync(ctx, "A", &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncOneNew pulls one new small row that another proxy (another
// handle on the file) appended.
func BenchmarkSyncOneNew(b *testing.B) {
	ctx := context.Background()
	s, path := openTest(b)
	w, err := OpenSQLite(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var m flow.Session
	o := &flow.Observation{Tool: "web/fetch", Labels: flow.Untrusted, Prints: make([]uint64, 4), Digests: make([]uint64, 1)}
	var h uint64
	for b.Loop() {
		b.StopTimer()
		for i := range o.Prints {
			h++
			o.Prints[i] = h
		}
		h++
		o.Digests[0] = h
		if _, err := w.Append(ctx, "A", o); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.Sync(ctx, "A", &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSync1MB pulls one row holding the prints of a 1 MB private
// result into a fresh mirror.
func BenchmarkSync1MB(b *testing.B) {
	ctx := context.Background()
	s, _ := openTest(b)
	o := bigObservation(150_000)
	if _, err := s.Append(ctx, "A", o); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * len(o.Prints)))
	for b.Loop() {
		var m flow.Session
		if err := s.Sync(ctx, "A", &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPull1MB is BenchmarkSync1MB without applying to a mirror: the
// store's own share (query, copy, decode).
func BenchmarkPull1MB(b *testing.B) {
	ctx := context.Background()
	s, _ := openTest(b)
	o := bigObservation(150_000)
	if _, err := s.Append(ctx, "A", o); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * len(o.Prints)))
	n := 0
	for b.Loop() {
		if err := s.pull(ctx, "A", 0, math.MaxInt64, func(int64, *flow.Observation) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
	if n == 0 {
		b.Fatal("pulled nothing")
	}
}

// bigObservation has n distinct pseudo-random prints, sorted, as a 1 MB
// private result yields about 150k.
func bigObservation(n int) *flow.Observation {
	p := make([]uint64, n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range p {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		p[i] = x
	}
	slices.Sort(p)
	p = slices.Compact(p)
	return &flow.Observation{Tool: "notes/read_note", Labels: flow.Private, At: 1, Prints: p, Digests: p[:100]}
}

// TestOutline: a session's outline is its observations' tools, labels and
// times in sequence order with no hashes, and SessionBytes the bytes of
// hashes it holds.
func TestOutline(t *testing.T) { forEachBackend(t, testOutline) }

func testOutline(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	if n, err := s.SessionBytes(ctx, "s"); err != nil || n != 0 {
		t.Fatalf("bytes of a session never seen: %d, %v", n, err)
	}
	in := []*flow.Observation{
		{Tool: "notes/read", Labels: flow.Private, At: 5, Prints: []uint64{1, 2, 3}, Digests: []uint64{4}},
		{Tool: "web/fetch", Labels: flow.Untrusted, At: 6, Idents: []uint64{7, 8}},
		{Tool: "files/list", At: 7},
	}
	for _, o := range in {
		if _, err := s.Append(ctx, "s", o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append(ctx, "other", in[0]); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SessionBytes(ctx, "s"); err != nil || n != 6*8 {
		t.Errorf("bytes of s: %d, %v; want %d", n, err, 6*8)
	}
	var got []string
	last := int64(0)
	if err := s.Outline(ctx, "s", func(seq int64, o *flow.Observation) {
		if seq <= last {
			t.Errorf("seq %d after %d", seq, last)
		}
		last = seq
		if len(o.Prints)+len(o.Digests)+len(o.Idents) > 0 {
			t.Errorf("outline row %d has hashes", seq)
		}
		got = append(got, fmt.Sprintf("%s %s %d", o.Tool, o.Labels, o.At))
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"notes/read private 5", "web/fetch untrusted 6", "files/list none 7"}
	if !slices.Equal(got, want) {
		t.Errorf("outline %q, want %q", got, want)
	}
}

// TestSyncAppended: a proxy that applies what it appended without reading
// it back still applies, first and in order, what another proxy appended
// to the session meanwhile, and ends where a full Sync does; rows of other
// sessions in between change nothing.
func TestSyncAppended(t *testing.T) {
	ctx := context.Background()
	a, path := openTest(t)
	b, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	obs := func(tool string, h uint64) *flow.Observation {
		return &flow.Observation{Tool: tool, Labels: flow.Private, At: 1, Prints: []uint64{h, h + 1}, Digests: []uint64{h + 2}, Idents: []uint64{h + 3}}
	}
	var mirror flow.Session
	if _, err := a.Append(ctx, "S", obs("files/read", 10)); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx, "S", &mirror); err != nil {
		t.Fatal(err)
	}
	// another proxy of the session, and another session, append meanwhile
	if _, err := b.Append(ctx, "S", obs("mail/read_inbox", 20)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, "other", obs("web/fetch", 30)); err != nil {
		t.Fatal(err)
	}
	mine := obs("files/read", 40)
	seq, err := a.Append(ctx, "S", mine)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SyncAppended(ctx, "S", &mirror, seq, mine); err != nil {
		t.Fatal(err)
	}
	var full flow.Session
	if err := a.Sync(ctx, "S", &full); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mirror.Sources, full.Sources) || mirror.Watermark != full.Watermark {
		t.Fatalf("after SyncAppended: %+v (watermark %d); a full Sync: %+v (watermark %d)", mirror.Sources, mirror.Watermark, full.Sources, full.Watermark)
	}
	for _, h := range []uint64{10, 20, 40} {
		if len(mirror.PrintSources(nil, h)) != 1 || len(mirror.IdentSources(nil, h+3)) != 1 {
			t.Errorf("print %d: sources %v, ident %v", h, mirror.PrintSources(nil, h), mirror.IdentSources(nil, h+3))
		}
	}
	if len(mirror.PrintSources(nil, 30)) != 0 {
		t.Error("another session's row reached the mirror")
	}
}
