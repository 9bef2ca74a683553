package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/flow"
)

// TestApprovals: requests, decisions, grants and nonces, on one handle and
// raced from two (two proxies, or two replicas): a request is decided once,
// a nonce spent once.
func TestApprovals(t *testing.T) { forEachBackend(t, testApprovals) }

func testApprovals(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	row := func(id, session, digest string, created int64, ch approval.Channel) approval.Row {
		return approval.Row{ID: id, Session: session, Server: "mail", Tool: "send", Digest: digest, Dest: "d-" + digest,
			Rule: "exfiltration", Sealed: []byte{1, 2, 3}, Created: created, Expires: created + 60_000,
			Status: approval.StatusPending, Scope: approval.Once, Channel: ch}
	}
	for _, r := range []approval.Row{
		row("a1", "S", "g1", 1000, approval.Elicitation),
		row("a2", "S", "g1", 2000, approval.CLI),
		row("a3", "S", "g2", 3000, approval.Memory),
		row("b1", "T", "g1", 1500, approval.InputRequired),
	} {
		if err := s.PutApproval(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutApproval(ctx, row("a1", "S", "g1", 1000, approval.CLI)); err == nil {
		t.Error("a second request with the id a1 was stored")
	}
	got, err := s.Approval(ctx, "a2")
	if want := row("a2", "S", "g1", 2000, approval.CLI); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Approval(a2) = %+v, %v; want %+v", got, err, want)
	}
	if _, err := s.Approval(ctx, "nope"); !errors.Is(err, approval.ErrUnknown) {
		t.Errorf("unknown id: err = %v", err)
	}
	ids := func(rows []approval.Row) (out []string) {
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out
	}
	if all, err := s.Approvals(ctx, "", 0); err != nil || !slices.Equal(ids(all), []string{"a3", "a2", "b1", "a1"}) {
		t.Errorf("all approvals newest first: %v, %v", ids(all), err)
	}
	if sess, err := s.Approvals(ctx, "S", 61_500); err != nil || !slices.Equal(ids(sess), []string{"a3", "a2"}) {
		t.Errorf("S's unexpired at 61.5 s: %v, %v", ids(sess), err)
	}
	if r, ok, err := s.LatestApproval(ctx, "S", "g1", 0); err != nil || !ok || r.ID != "a2" {
		t.Errorf("latest of S/g1: %v %v %v", r.ID, ok, err)
	}
	if _, ok, err := s.LatestApproval(ctx, "S", "g1", 62_000); err != nil || ok {
		t.Errorf("latest of S/g1 after both expired: %v %v", ok, err)
	}
	if n, err := s.CountApprovals(ctx, "S"); err != nil || n != 2 {
		t.Errorf("CountApprovals(S) = %d, %v; want 2 (memory does not count)", n, err)
	}

	// Many deciders on two handles: exactly one moves a1 out of pending.
	s2 := s.reopen(t)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		h := []*backend{s, s2}[i%2]
		wg.Go(func() {
			ok, err := h.SetApproval(ctx, "a1", approval.StatusPending, approval.StatusApproved, approval.Session, "cli"+strconv.Itoa(i), 5000)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d deciders moved a1 from pending; want exactly 1", wins.Load())
	}
	if r, _ := s2.Approval(ctx, "a1"); r.Status != approval.StatusApproved || r.Scope != approval.Session || r.Decided != 5000 {
		t.Errorf("decided a1: %+v", r)
	}

	// Grants are per session and destination, idempotent.
	for range 2 {
		if err := s.Grant(ctx, "S", "dest", 10); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		session, dest string
		want          bool
	}{{"S", "dest", true}, {"T", "dest", false}, {"S", "dest2", false}} {
		if ok, err := s2.Granted(ctx, c.session, c.dest); err != nil || ok != c.want {
			t.Errorf("Granted(%s, %s) = %v, %v", c.session, c.dest, ok, err)
		}
	}

	// A nonce spent from many goroutines on two handles is spent once.
	wins.Store(0)
	for i := range 16 {
		h := []*backend{s, s2}[i%2]
		wg.Go(func() {
			ok, err := h.SpendNonce(ctx, "n1", 100_000)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("nonce n1 spent %d times; want once", wins.Load())
	}

	// A new request prunes requests and nonces a day past their expiry.
	if err := s.PutApproval(ctx, row("late", "S", "g9", 100_000+approvalKeep+1, approval.CLI)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approval(ctx, "a1"); !errors.Is(err, approval.ErrUnknown) {
		t.Errorf("a request a day past expiry is kept: %v", err)
	}
	if ok, _ := s.SpendNonce(ctx, "n1", 1); !ok {
		t.Error("a nonce a day past expiry was not pruned")
	}
}

// TestWritten: entries come back per identity in order after a watermark,
// with legs only, at most MaxWritten kept per identity.
func TestWritten(t *testing.T) { forEachBackend(t, testWritten) }

func testWritten(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	for i := range 3 {
		if err := s.AppendWritten(ctx, "id-a", &flow.Observation{At: int64(1000 * (i + 1)), Labels: flow.Private | flow.Sink, Prints: []uint64{uint64(i), 1 << 63}, Digests: []uint64{7}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendWritten(ctx, "id-b", &flow.Observation{At: 5000, Labels: flow.Untrusted}); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	var got []*flow.Observation
	read := func(identity string, after int64) {
		seqs, got = nil, nil
		if err := s.Written(ctx, identity, after, func(seq int64, o *flow.Observation) {
			seqs, got = append(seqs, seq), append(got, o)
		}); err != nil {
			t.Fatal(err)
		}
	}
	read("id-a", 0)
	if len(got) != 3 || !slices.IsSorted(seqs) {
		t.Fatalf("id-a: %d entries, seqs %v", len(got), seqs)
	}
	if o := got[1]; o.Tool != "id-a" || o.At != 2000 || o.Labels != flow.Private || !slices.Equal(o.Prints, []uint64{1, 1 << 63}) || !slices.Equal(o.Digests, []uint64{7}) {
		t.Errorf("entry 1: %+v", o)
	}
	read("id-a", seqs[1])
	if len(got) != 1 || got[0].At != 3000 {
		t.Errorf("after the second: %d entries", len(got))
	}
	read("id-b", 0)
	if len(got) != 1 || got[0].Labels != flow.Untrusted || got[0].Prints != nil {
		t.Errorf("id-b: %+v", got)
	}
	if err := s.PruneWritten(ctx, time.UnixMilli(2500)); err != nil {
		t.Fatal(err)
	}
	read("id-a", 0)
	if len(got) != 1 {
		t.Errorf("after pruning before 2.5 s: %d entries of id-a, want 1", len(got))
	}
	// The cap keeps the newest.
	for i := range MaxWritten + 5 {
		if err := s.AppendWritten(ctx, "id-c", &flow.Observation{At: int64(i), Labels: flow.Private}); err != nil {
			t.Fatal(err)
		}
	}
	read("id-c", 0)
	if len(got) != MaxWritten || got[0].At != 5 {
		t.Errorf("id-c keeps %d entries from %d, want %d from 5", len(got), got[0].At, MaxWritten)
	}
}

// TestTakeConcurrent: 32 goroutines on two handles (two replicas, each
// with its own connections) take from one limit at once, without pauses:
// exactly the limit passes, and no event beyond it is stored.
func TestTakeConcurrent(t *testing.T) { forEachBackend(t, testTakeConcurrent) }

func testTakeConcurrent(t *testing.T, open opener) {
	const workers, each, limit = 32, 20, 100
	ctx := context.Background()
	a := open(t)
	b := a.reopen(t)
	var passed atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range workers {
		h := []*backend{a, b}[i%2]
		wg.Go(func() {
			<-start
			for range each {
				ok, _, err := h.Take(ctx, "S", "rule", limit, time.Hour, time.Now())
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					passed.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if n := passed.Load(); n != limit {
		t.Errorf("%d of %d calls passed a limit of %d", n, workers*each, limit)
	}
	if n := rateRows(t, a, "S", "rule"); n != limit {
		t.Errorf("%d events stored, want %d", n, limit)
	}
}

// TestAppendConcurrentReplicas hammers one session with appends from two
// handles, 8 goroutines each and no pauses, while a mirror on a third
// syncs as fast as it can. Sequence numbers are handed out before commit,
// so without serialising a session's appends a row with a lower number
// could commit after the mirror moved past it; the mirror must end with
// every row, once, in order.
func TestAppendConcurrentReplicas(t *testing.T) { forEachBackend(t, testAppendConcurrentReplicas) }

func testAppendConcurrentReplicas(t *testing.T, open opener) {
	const workers, each = 16, 60
	ctx := context.Background()
	a := open(t)
	b, c := a.reopen(t), a.reopen(t)
	var (
		mirror   flow.Session
		stop     atomic.Bool
		syncErr  error
		syncs    int
		syncDone = make(chan struct{})
	)
	go func() {
		defer close(syncDone)
		for !stop.Load() {
			if syncErr = c.Sync(ctx, "S", &mirror); syncErr != nil {
				return
			}
			syncs++
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		h := []*backend{a, b}[w%2]
		wg.Go(func() {
			for i := range each {
				o := testObservation("S", strconv.Itoa(w), i)
				if _, err := h.Append(ctx, "S", o); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	<-syncDone
	if syncErr != nil {
		t.Fatal(syncErr)
	}
	// Rows the mirror missed while it synced are gone for good: a final
	// sync pulls only above the watermark, so it cannot hide a miss.
	if err := c.Sync(ctx, "S", &mirror); err != nil {
		t.Fatal(err)
	}
	want := a.seqs(t, "S")
	if len(want) != workers*each {
		t.Fatalf("%d rows stored, want %d", len(want), workers*each)
	}
	var got []int64
	for _, src := range mirror.Sources {
		got = append(got, src.Seq)
	}
	t.Logf("%d syncs while %d rows were appended", syncs, len(want))
	if !slices.Equal(got, want) {
		missing := 0
		for _, s := range want {
			if _, found := slices.BinarySearch(got, s); !found {
				missing++
			}
		}
		t.Errorf("the mirror holds %d rows, the table %d; %d rows missed", len(got), len(want), missing)
	}
}

// TestPruneConcurrent: two handles prune at once, again and again, while a
// third keeps appending to a live session and a mirror follows a stale
// one: no prune fails or deadlocks, each stale session ends as one
// tombstone, the live one loses nothing, and the mirror of the stale one
// learns it was pruned.
func TestPruneConcurrent(t *testing.T) { forEachBackend(t, testPruneConcurrent) }

func testPruneConcurrent(t *testing.T, open opener) {
	ctx := context.Background()
	a := open(t)
	b, c := a.reopen(t), a.reopen(t)
	clock := time.UnixMilli(1_000_000)
	for _, h := range []*backend{a, b, c} {
		h.setNow(func() time.Time { return clock })
	}
	var stale []string
	for i := range 20 {
		sess := "old" + strconv.Itoa(i)
		stale = append(stale, sess)
		for j := range 3 {
			if _, err := a.Append(ctx, sess, &flow.Observation{Tool: "notes/read", Labels: flow.Private, Prints: []uint64{uint64(j)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mirror flow.Session
	if err := c.Sync(ctx, "old0", &mirror); err != nil {
		t.Fatal(err)
	}
	later := clock.Add(time.Hour)
	for _, h := range []*backend{a, b, c} {
		h.setNow(func() time.Time { return later })
	}
	var wg sync.WaitGroup
	var pruned atomic.Int32
	for _, h := range []*backend{a, b} {
		wg.Go(func() {
			for range 5 {
				n, err := h.Prune(ctx, later.Add(-time.Minute))
				if err != nil {
					t.Error(err)
					return
				}
				pruned.Add(int32(n))
			}
		})
	}
	wg.Go(func() {
		for i := range 100 {
			if _, err := c.Append(ctx, "live", &flow.Observation{Tool: "a/b", Prints: []uint64{uint64(i)}}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	if n := pruned.Load(); n != int32(len(stale)) {
		t.Errorf("%d sessions pruned in all, want %d (each once)", n, len(stale))
	}
	for _, sess := range stale {
		if n := len(a.seqs(t, sess)); n != 1 {
			t.Errorf("session %s holds %d rows, want its tombstone", sess, n)
		}
	}
	if n := len(a.seqs(t, "live")); n != 100 {
		t.Errorf("the live session holds %d rows, want 100", n)
	}
	if err := c.Sync(ctx, "old0", &mirror); err != nil {
		t.Fatal(err)
	}
	if last := mirror.Sources[len(mirror.Sources)-1]; last.Tool != flow.PrunedTool || last.Labels != flow.Private|flow.Pruned {
		t.Errorf("the stale session's mirror ends with %+v, want its tombstone", last)
	}
}
