package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"
)

// pollInterval is how often Follow looks for new lines.
var pollInterval = 200 * time.Millisecond

// Tail returns the last n records of the log at path, oldest first. It reads
// the file backwards from its end, not the whole file, and does not verify
// the chain: lines that do not decode as records (a torn tail) are skipped.
func Tail(path string, n int) ([]Record, error) {
	if n <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit: tail: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit: tail: %w", err)
	}
	var out []Record
	err = backLines(f, fi.Size(), func(line []byte, _ int64, long bool) bool {
		var r Record
		if long || json.Unmarshal(line, &r) != nil || r.Seq < 1 {
			return true
		}
		out = append(out, r)
		return len(out) < n
	})
	if err != nil {
		return nil, fmt.Errorf("audit: tail %s: %w", path, err)
	}
	slices.Reverse(out)
	return out, nil
}

// Follow calls fn for each record appended to the log at path after Follow
// starts, like tail -f, polling for new lines until ctx is done; it then
// returns ctx.Err(). It returns fn's error if fn fails. A log that does not
// exist yet is waited for, then followed from its first record. Lines that
// do not decode as records are skipped
// (Verify reports them). A log that shrinks or is replaced by another file
// ends Follow with an error: an audit log should only grow.
func Follow(ctx context.Context, path string, fn func(Record) error) error {
	return follow(ctx, path, -1, fn)
}

// FollowAfter is Follow starting after the record with sequence number seq:
// it first calls fn for every record already in the log with a greater Seq,
// then follows. With the last Seq that Tail returned it shows the records
// appended between the two calls, which Follow alone would miss. A seq of 0
// replays the whole log.
func FollowAfter(ctx context.Context, path string, seq int64, fn func(Record) error) error {
	if seq < 0 {
		seq = 0
	}
	return follow(ctx, path, seq, fn)
}

// follow follows path from the end (after < 0) or from just after the last
// record whose Seq is at most after.
func follow(ctx context.Context, path string, after int64, fn func(Record) error) error {
	f, waited, err := waitOpen(ctx, path)
	if err != nil {
		return err
	}
	defer f.Close()
	orig, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit: follow: %w", err)
	}
	var off int64 // a log that appeared while waiting is new from its start
	if !waited {
		if off, err = startOffset(f, orig.Size(), after); err != nil {
			return fmt.Errorf("audit: follow %s: %w", path, err)
		}
	}

	var (
		pending  []byte // an incomplete last line
		skipping bool   // pending is an overlong line being dropped
		buf      = make([]byte, 64<<10)
		timer    = time.NewTimer(0)
	)
	defer timer.Stop()
	<-timer.C
	for {
		n, rerr := f.ReadAt(buf, off)
		if rerr != nil && rerr != io.EOF {
			return fmt.Errorf("audit: follow %s: %w", path, rerr)
		}
		off += int64(n)
		data := buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if !skipping {
					pending = append(pending, data...)
					if len(pending) > MaxLine {
						pending, skipping = nil, true
					}
				}
				break
			}
			line := data[:i]
			data = data[i+1:]
			if skipping {
				skipping = false
				continue
			}
			if len(pending) > 0 {
				pending = append(pending, line...)
				line = pending
			}
			var r Record
			if json.Unmarshal(line, &r) == nil && r.Seq >= 1 {
				if err := fn(r); err != nil {
					return err
				}
			}
			pending = pending[:0]
		}
		if n == len(buf) {
			continue // more may be waiting
		}

		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return fmt.Errorf("audit: follow: %w", err)
		case !os.SameFile(orig, fi):
			return fmt.Errorf("audit: follow: %s was replaced by another file", path)
		case fi.Size() < off:
			return fmt.Errorf("audit: follow: %s shrank from %d to %d bytes (truncated?)", path, off, fi.Size())
		}
		if fi.Size() > off {
			continue
		}
		timer.Reset(pollInterval)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// waitOpen opens path for reading, polling until it exists or ctx is done,
// and reports whether it had to wait.
func waitOpen(ctx context.Context, path string) (f *os.File, waited bool, err error) {
	for {
		f, err := os.Open(path)
		if err == nil {
			return f, waited, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, false, fmt.Errorf("audit: follow: %w", err)
		}
		waited = true
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// startOffset returns where following starts in r[0:size): for after < 0,
// the start of the last line if it is incomplete, else the end; otherwise
// just past the last record whose Seq is at most after (0 if there is none).
func startOffset(r io.ReaderAt, size int64, after int64) (int64, error) {
	if size == 0 || after == 0 {
		return 0, nil
	}
	if after < 0 {
		var last [1]byte
		if _, err := r.ReadAt(last[:], size-1); err != nil {
			return 0, err
		}
		if last[0] == '\n' {
			return size, nil
		}
		start := int64(0)
		err := backLines(r, size, func(_ []byte, off int64, _ bool) bool {
			start = off
			return false
		})
		return start, err
	}
	start := int64(0)
	err := backLines(r, size, func(line []byte, off int64, long bool) bool {
		if long {
			return true
		}
		k, ok := linkOf(line)
		if !ok || k.Seq > after {
			return true
		}
		start = off + int64(len(line)) + 1
		return false
	})
	if start > size {
		start = size // the last record has no newline yet
	}
	return start, err
}
