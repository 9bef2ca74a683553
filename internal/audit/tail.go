package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// pollInterval is how often Follow looks for new lines.
var pollInterval = 200 * time.Millisecond

// Tail returns the last n records of the log at path, oldest first. It reads
// the file backwards from its end, not the whole file, and does not verify
// the chain: lines that do not decode as records (a torn tail) are skipped.
// When the file holds fewer than n records and the log has been rotated,
// the rest come from the rotated files, newest first (see [Files]).
func Tail(path string, n int) ([]Record, error) {
	if n <= 0 {
		return nil, nil
	}
	out, err := tailFile(path, n)
	if err != nil || len(out) >= n {
		return out, err
	}
	files, err := Files(path)
	if err != nil {
		return nil, err
	}
	for i := len(files) - 2; i >= 0 && len(out) < n; i-- {
		more, err := tailFile(files[i], n-len(out))
		if err != nil {
			return nil, err
		}
		out = append(more, out...)
	}
	return out, nil
}

// tailFile is Tail within one file.
func tailFile(path string, n int) ([]Record, error) {
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
// (Verify reports them). A log that rotates (see [MaxSize]) is followed
// into its new file, once the old one has been read to its end. A log that
// shrinks, or is replaced by a file that does not continue its chain, ends
// Follow with an error: an audit log should only grow.
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
	if after >= 0 && !waited {
		// The record after seq may be in a rotated file: start there, and
		// go from file to file as after a rotation.
		if start, err := fileWith(path, after+1); err != nil {
			f.Close()
			return err
		} else if start != nil {
			f.Close()
			f = start
		}
	}
	defer func() { f.Close() }()
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
			// A rotation renames the file under its lock, after its last
			// write: read it to its end, then go on in the new one if that
			// continues the chain.
			old, err := f.Stat()
			if err != nil {
				return fmt.Errorf("audit: follow: %w", err)
			}
			if old.Size() > off {
				continue
			}
			nf, err := nextFile(f, old.Size(), path)
			if err != nil {
				return err
			}
			if nf == nil {
				timer.Reset(pollInterval)
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-timer.C:
				}
				continue
			}
			f.Close()
			f, off, pending, skipping = nf, 0, pending[:0], false
			if orig, err = f.Stat(); err != nil {
				return fmt.Errorf("audit: follow: %w", err)
			}
			continue
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

// fileWith opens the rotated file of the log at path that holds the record
// with the given seq, or returns nil if the active file does (or the log
// has not been rotated).
func fileWith(path string, seq int64) (*os.File, error) {
	files, err := Files(path)
	if err != nil || len(files) < 2 {
		return nil, nil
	}
	var start string
	for _, p := range files[:len(files)-1] {
		first, _ := rotatedSeq(filepath.Base(path), filepath.Base(p))
		if first > seq {
			break
		}
		start = p
	}
	if start == "" {
		return nil, nil
	}
	// Is the record in the active file already?
	af, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit: follow: %w", err)
	}
	fi, err := af.Stat()
	if err == nil {
		var first int64
		if first, err = firstSeq(af, fi.Size()); err == nil && first > 0 && first <= seq {
			start = ""
		}
	}
	af.Close()
	if err != nil {
		return nil, fmt.Errorf("audit: follow %s: %w", path, err)
	}
	if start == "" {
		return nil, nil
	}
	f, err := os.Open(start)
	if err != nil {
		return nil, fmt.Errorf("audit: follow: %w", err)
	}
	return f, nil
}

// nextFile opens the file that continues old (of the given size) after a
// rotation took it from path: the rotated file named for the seq after
// old's last record, if the log has rotated again since, else the file at
// path. Its first record must continue old's chain. It returns nil and no
// error while that file's first line is not yet whole.
func nextFile(old *os.File, size int64, path string) (*os.File, error) {
	seq, hash, _, err := lastLink(old, size)
	if err != nil {
		return nil, fmt.Errorf("audit: follow %s: %w", path, err)
	}
	nf, err := os.Open(path + "." + strconv.FormatInt(seq+1, 10))
	if errors.Is(err, fs.ErrNotExist) {
		nf, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("audit: follow: %w", err)
	}
	// The writer creates the new file and then writes to it: until its
	// first line is whole, there is nothing to judge yet (nil, nil).
	line, whole, err := firstLine(nf)
	if err != nil {
		nf.Close()
		return nil, fmt.Errorf("audit: follow: %w", err)
	}
	if !whole && len(line) <= MaxLine {
		nf.Close()
		return nil, nil
	}
	var first Record
	if !whole || json.Unmarshal(line, &first) != nil || first.Seq != seq+1 || first.Prev != hash {
		nf.Close()
		return nil, fmt.Errorf("audit: follow: %s was replaced by another file, which does not continue its chain (seq %d after %s)", path, seq, short(hash))
	}
	return nf, nil
}

// firstLine reads f's first line, without its newline, and whether it is
// whole (ends in a newline); it stops reading past MaxLine bytes.
func firstLine(f *os.File) (line []byte, whole bool, err error) {
	br := bufio.NewReader(f)
	for len(line) <= MaxLine {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case err == io.EOF:
			return line, false, nil
		case err != bufio.ErrBufferFull:
			return nil, false, err
		}
	}
	return line, false, nil
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
