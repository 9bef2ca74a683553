package audit

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func seqs(recs []Record) []int64 {
	var s []int64
	for _, r := range recs {
		s = append(s, r.Seq)
	}
	return s
}

func equalSeqs(a []int64, from, to int64) bool {
	if int64(len(a)) != to-from+1 {
		return false
	}
	for i, s := range a {
		if s != from+int64(i) {
			return false
		}
	}
	return true
}

func TestTail(t *testing.T) {
	path := writeLog(t, 20)
	tests := []struct {
		n        int
		from, to int64
	}{
		{0, 1, 0}, {-1, 1, 0}, {1, 20, 20}, {5, 16, 20}, {20, 1, 20}, {100, 1, 20},
	}
	for _, tt := range tests {
		got, err := Tail(path, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		if !equalSeqs(seqs(got), tt.from, tt.to) {
			t.Errorf("Tail(%d) seqs %v, want %d..%d", tt.n, seqs(got), tt.from, tt.to)
		}
	}
	got, _ := Tail(path, 1)
	if want := testRecord(20); got[0].Tool != want.Tool || got[0].Verdict != want.Verdict {
		t.Errorf("Tail(1) = %+v", got[0])
	}
}

func TestTailSkipsTornAndReadsLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 1; i <= 6; i++ {
		r := testRecord(i)
		r.Reason = strings.Repeat("long reason ", 4000*(i%3)) // 0, 48 KB, 96 KB: lines span read chunks
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":7,"time":"2026-`)
	f.Close()

	got, err := Tail(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !equalSeqs(seqs(got), 3, 6) {
		t.Fatalf("Tail(4) seqs %v, want 3..6", seqs(got))
	}
	if len(got[2].Reason) != len(strings.Repeat("long reason ", 4000*2)) {
		t.Fatalf("record 5's reason is %d bytes", len(got[2].Reason))
	}
}

func TestTailMissingFile(t *testing.T) {
	_, err := Tail(filepath.Join(t.TempDir(), "none.log"), 3)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Tail on a missing file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.log")
	os.WriteFile(empty, nil, 0o600)
	if got, err := Tail(empty, 3); err != nil || len(got) != 0 {
		t.Fatalf("Tail on an empty file = %v, %v", got, err)
	}
}

// fastPoll makes Follow poll every millisecond for the test.
func fastPoll(t *testing.T) {
	old := pollInterval
	pollInterval = time.Millisecond
	t.Cleanup(func() { pollInterval = old })
}

// follower runs follow in the background and hands over what it delivers.
type follower struct {
	recs   chan Record
	done   chan error
	cancel context.CancelFunc
}

func startFollow(t *testing.T, run func(ctx context.Context, fn func(Record) error) error) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{recs: make(chan Record, 1000), done: make(chan error, 1), cancel: cancel}
	go func() {
		f.done <- run(ctx, func(r Record) error { f.recs <- r; return nil })
	}()
	t.Cleanup(cancel)
	return f
}

// next waits for n records.
func (f *follower) next(t *testing.T, n int) []Record {
	t.Helper()
	var out []Record
	timeout := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case r := <-f.recs:
			out = append(out, r)
		case err := <-f.done:
			t.Fatalf("follow ended after %d of %d records: %v", len(out), n, err)
		case <-timeout:
			t.Fatalf("timed out after %d of %d records", len(out), n)
		}
	}
	return out
}

// quiet checks nothing more arrives for a while.
func (f *follower) quiet(t *testing.T) {
	t.Helper()
	select {
	case r := <-f.recs:
		t.Fatalf("unexpected record seq %d", r.Seq)
	case <-time.After(50 * time.Millisecond):
	}
}

func (f *follower) stop(t *testing.T) error {
	t.Helper()
	f.cancel()
	select {
	case err := <-f.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("follow did not stop")
		return nil
	}
}

func appendN(t *testing.T, path string, n int) {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < n; i++ {
		if err := l.Append(testRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFollow(t *testing.T) {
	fastPoll(t)
	path := writeLog(t, 5)
	f := startFollow(t, func(ctx context.Context, fn func(Record) error) error { return Follow(ctx, path, fn) })
	f.quiet(t) // records already there are not delivered
	appendN(t, path, 3)
	if got := seqs(f.next(t, 3)); !equalSeqs(got, 6, 8) {
		t.Fatalf("seqs %v, want 6..8", got)
	}

	// A line written in two pieces is delivered once, when complete.
	r := testRecord(9)
	r.Seq, r.Prev = 9, Genesis
	_, line, _, _ := canonical(r)
	fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.Write(line[:30])
	f.quiet(t)
	fh.Write(append(line[30:], '\n'))
	// A torn line followed by a real append: the torn line is skipped.
	fh.Write(line[:50])
	fh.Close()
	appendN(t, path, 1)
	got := f.next(t, 2)
	if got[0].Seq != 9 || got[1].Seq != 10 {
		t.Fatalf("seqs %v, want 9, 10", seqs(got))
	}
	f.quiet(t)
	if err := f.stop(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after cancel: %v", err)
	}
}

func TestFollowAfter(t *testing.T) {
	fastPoll(t)
	path := writeLog(t, 10)
	for _, tt := range []struct{ after, from int64 }{{7, 8}, {0, 1}, {10, 11}, {42, 11}} {
		f := startFollow(t, func(ctx context.Context, fn func(Record) error) error {
			return FollowAfter(ctx, path, tt.after, fn)
		})
		if tt.from <= 10 {
			if got := seqs(f.next(t, int(11-tt.from))); !equalSeqs(got, tt.from, 10) {
				t.Fatalf("FollowAfter(%d) seqs %v, want %d..10", tt.after, got, tt.from)
			}
		}
		f.quiet(t)
		f.stop(t)
	}

	// Tail then FollowAfter misses nothing appended in between.
	tail, _ := Tail(path, 3)
	appendN(t, path, 2)
	f := startFollow(t, func(ctx context.Context, fn func(Record) error) error {
		return FollowAfter(ctx, path, tail[len(tail)-1].Seq, fn)
	})
	appendN(t, path, 2)
	if got := seqs(f.next(t, 4)); !equalSeqs(got, 11, 14) {
		t.Fatalf("seqs %v, want 11..14", got)
	}
	f.stop(t)
}

func TestFollowWaitsForFile(t *testing.T) {
	fastPoll(t)
	path := filepath.Join(t.TempDir(), "later", "audit.log")
	f := startFollow(t, func(ctx context.Context, fn func(Record) error) error { return Follow(ctx, path, fn) })
	f.quiet(t)
	appendN(t, path, 2)
	if got := seqs(f.next(t, 2)); !equalSeqs(got, 1, 2) {
		t.Fatalf("seqs %v, want 1..2", got)
	}
	f.stop(t)
}

func TestFollowErrors(t *testing.T) {
	fastPoll(t)
	t.Run("callback error", func(t *testing.T) {
		path := writeLog(t, 1)
		errStop := errors.New("stop")
		done := make(chan error, 1)
		go func() { done <- FollowAfter(context.Background(), path, 0, func(Record) error { return errStop }) }()
		select {
		case err := <-done:
			if !errors.Is(err, errStop) {
				t.Fatalf("Follow = %v, want fn's error", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Follow did not return fn's error")
		}
	})
	t.Run("truncated", func(t *testing.T) {
		path := writeLog(t, 3)
		f := startFollow(t, func(ctx context.Context, fn func(Record) error) error { return Follow(ctx, path, fn) })
		f.quiet(t)
		lines := readLines(t, path)
		writeLines(t, path, lines[:1], true)
		select {
		case err := <-f.done:
			if err == nil || !strings.Contains(err.Error(), "shrank") {
				t.Fatalf("Follow = %v, want a shrink error", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Follow did not notice truncation")
		}
	})
	t.Run("replaced", func(t *testing.T) {
		path := writeLog(t, 3)
		f := startFollow(t, func(ctx context.Context, fn func(Record) error) error { return Follow(ctx, path, fn) })
		f.quiet(t)
		b, _ := os.ReadFile(path)
		tmp := path + ".new"
		os.WriteFile(tmp, bytes.Repeat(b, 2), 0o600)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-f.done:
			if err == nil || !strings.Contains(err.Error(), "replaced") {
				t.Fatalf("Follow = %v, want a replaced error", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Follow did not notice replacement")
		}
	})
}
