package audit

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Option configures a Log opened with [Open].
type Option func(*Log)

// MaxSize makes the log rotate by size: when a write would grow the file
// past n bytes, and the file already holds a record, the file is renamed
// and the write starts a new one (see [Files] for the names). n <= 0 turns
// rotation off, which is the default. One write always lands in one file,
// so a batch larger than n makes a file larger than n.
func MaxSize(n int64) Option {
	return func(l *Log) { l.maxSize = max(n, 0) }
}

// RotateError reports a rotation that did not happen. The records of that
// Append were written all the same, to the file that was to be rotated, and
// the next Append tries again.
type RotateError struct {
	Path string // the log's path
	Err  error
}

func (e *RotateError) Error() string {
	return fmt.Sprintf("audit: rotate %s: %v; the records were appended to it unrotated", e.Path, e.Err)
}

func (e *RotateError) Unwrap() error { return e.Err }

// maxReplaced bounds how often one Append follows the log to a new file
// before giving up: only a rotation per attempt could make it loop.
const maxReplaced = 64

// lockCurrent locks the file at l.path and returns it. The file l holds
// may have been rotated away by this or another process since it was last
// locked: every rotation happens under the lock of the file it replaces,
// so after taking the lock l checks that the file is still the one at
// l.path, and if not, opens the one that is and locks that instead.
func (l *Log) lockCurrent() (*os.File, error) {
	for range maxReplaced {
		f := l.f
		if err := lockFile(f); err != nil {
			return nil, fmt.Errorf("lock %s: %w", l.path, err)
		}
		cur, err := isCurrent(f, l.path)
		if err != nil {
			_ = unlockFile(f)
			return nil, err
		}
		if cur {
			return f, nil
		}
		_ = unlockFile(f)
		nf, err := openLogFile(l.path)
		if err != nil {
			return nil, err
		}
		_ = f.Close()
		l.f = nf
	}
	return nil, fmt.Errorf("%s was replaced %d times while waiting for its lock", l.path, maxReplaced)
}

// isCurrent reports whether f is the file at path. A path that no longer
// exists (the log was deleted by hand) is not f: the next write starts a
// new file there, whose first record Verify shows as the chain's restart.
func isCurrent(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
	pi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

// rotate moves the full file f (the one at l.path, locked, of the given
// size) aside and puts buf, whose first record chains from f's last, in a
// new file at l.path. The steps keep a log at l.path at every instant, so
// no process opening it can find it missing and start a chain from
// Genesis:
//
//  1. write buf to a temporary file next to the log, and sync it;
//  2. hard-link f to its rotated name, l.path + "." + the seq of its first record;
//  3. rename the temporary file over l.path.
//
// Writers waiting for f's lock find, once they have it, that f is no
// longer at l.path, and move to the new file (lockCurrent). A crash between
// 2 and 3 leaves f under both names; the next rotation finds the rotated
// name already linked to f and goes on. A failure before 3 changes
// nothing: the caller writes buf to f instead.
func (l *Log) rotate(f *os.File, fi os.FileInfo, buf []byte) error {
	fail := func(err error) error { return &RotateError{Path: l.path, Err: err} }
	first, err := firstSeq(f, fi.Size())
	if err != nil {
		return fail(fmt.Errorf("read the first record: %w", err))
	}
	if first == 0 {
		return fail(errors.New("no record in the file to name it by"))
	}
	rotated := l.path + "." + strconv.FormatInt(first, 10)
	// The name first: a name held by another file fails every time, and
	// should fail before any file is written.
	linked := false
	if ri, err := os.Lstat(rotated); err == nil {
		if !os.SameFile(ri, fi) {
			return fail(fmt.Errorf("%s already exists and is another file (an older chain?): move it away", filepath.Base(rotated)))
		}
		linked = true // by a rotation that crashed before its rename
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}

	dir, base := filepath.Split(l.path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, base+".rotate-*")
	if err != nil {
		return fail(err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = os.Remove(tmp.Name())
		}
	}()
	_, werr := tmp.Write(buf)
	serr := tmp.Sync()
	if cerr := tmp.Close(); werr == nil && serr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = serr
	}
	if werr != nil {
		return fail(werr)
	}

	made := false
	if !linked {
		if err := os.Link(l.path, rotated); err != nil {
			return fail(fmt.Errorf("keep the full file as %s: %w", filepath.Base(rotated), err))
		}
		made = true
	}
	if err := os.Rename(tmp.Name(), l.path); err != nil {
		if made {
			_ = os.Remove(rotated)
		}
		return fail(err)
	}
	committed = true
	return nil
}

// firstSeq returns the Seq of the first line of r[0:size) that decodes as
// a record, 0 if none does.
func firstSeq(r io.ReaderAt, size int64) (int64, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	for {
		line, long, err := readLine(br)
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if long {
			continue
		}
		if k, ok := linkOf(line); ok {
			return k.Seq, nil
		}
	}
}

// Files returns the files that hold the log at path, oldest first: the
// rotated ones, then path itself.
//
// A rotated file is named after the log and the sequence number of its
// first record: audit.log.1 holds the chain from record 1, audit.log.5213
// from record 5213, and audit.log goes on from there. The names never
// change once given, so a file can be archived, anchored or named in a
// ticket; Weir never deletes one. A file that does not exist is left out;
// when none does, Files returns an error that wraps fs.ErrNotExist.
func Files(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	readDir := dir
	if readDir == "" {
		readDir = "."
	}
	entries, err := os.ReadDir(readDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("audit: list %s: %w", readDir, err)
	}
	type rotated struct {
		seq  int64
		name string
	}
	var rs []rotated
	for _, e := range entries {
		if seq, ok := rotatedSeq(base, e.Name()); ok && e.Type().IsRegular() {
			rs = append(rs, rotated{seq, e.Name()})
		}
	}
	slices.SortFunc(rs, func(a, b rotated) int { return cmp.Compare(a.seq, b.seq) })
	var out []string
	for _, r := range rs {
		out = append(out, dir+r.name)
	}
	if _, err := os.Stat(path); err == nil {
		out = append(out, path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("audit: %s: %w", path, fs.ErrNotExist)
	}
	return out, nil
}

// rotatedSeq reports whether name is a rotated file of the log named base,
// and the seq it is named by.
func rotatedSeq(base, name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, base+".")
	if !ok || s == "" || s[0] == '0' || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
