package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// MaxLine is the longest line, newline excluded, that Append writes and that
// Verify, Tail and Follow read as a record. Shape's caps keep real records far
// below it.
const MaxLine = 16 << 20

// ErrClosed is returned by Append on a Log that has been closed.
var ErrClosed = errors.New("audit: log is closed")

// Log appends records to one audit log file. A Log is safe for use by many
// goroutines, and many Logs, in one process or many, may append to the same
// file: every append holds an exclusive advisory lock on the file.
type Log struct {
	mu      sync.Mutex // serialises the goroutines of this process; the file lock serialises processes
	f       *os.File   // the file at path when last locked; a rotation, by any process, replaces it
	path    string
	maxSize int64 // rotate before the file would grow past this; 0: never
}

// Open opens the audit log at path for appending, creating it with mode 0600
// (and its parent directory with mode 0700) if it does not exist. An existing
// file's mode is left as it is. Options: [MaxSize].
func Open(path string, opts ...Option) (*Log, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("audit: create log directory: %w", err)
		}
	}
	f, err := openLogFile(path)
	if err != nil {
		return nil, err
	}
	l := &Log{f: f, path: path}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// openLogFile opens (or creates) the log file at path for appending.
func openLogFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: open log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("audit: open log: %w", err)
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("audit: open log: %s is not a regular file", path)
	}
	return f, nil
}

// Path returns the path the log was opened with.
func (l *Log) Path() string { return l.path }

// Append adds r to the end of the chain. Under an exclusive lock on the file
// it reads the last record's Seq and Hash from the file's tail, sets r.Seq,
// r.Prev and r.Hash (and r.Time to the current time if the caller left it
// empty), writes r as one line, and unlocks. On return r holds exactly what
// was written.
//
// With [MaxSize] set, a write that would grow the file past it rotates the
// log first: the records go to a new file at the log's path, chained from
// the last record of the old one, which keeps its records under a new name
// (see [Files]).
//
// A torn last line (a write cut short by a crash) does not stop Append: it
// ends the torn line with a newline, leaves it for Verify to report, and
// chains from the last complete record before it. More generally Append
// chains from the last line that decodes as a record; it does not verify the
// chain (that is Verify's job, and it would cost a read of the whole file).
func (l *Log) Append(r *Record) error {
	if r == nil {
		return errors.New("audit: append: nil record")
	}
	return l.AppendAll([]*Record{r})
}

// AppendAll appends records in order under one lock and one write, each
// chained to the one before; it is how a busy writer amortises the lock.
// On success each record's Seq, Prev and Hash are set. Nothing is written
// if any record cannot be encoded.
func (l *Log) AppendAll(rs []*Record) (err error) {
	for _, r := range rs {
		if r == nil {
			return errors.New("audit: append: nil record")
		}
	}
	if len(rs) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	f, err := l.lockCurrent()
	if err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	defer func() {
		if uerr := unlockFile(f); uerr != nil && err == nil {
			err = fmt.Errorf("audit: append: unlock %s: %w", l.path, uerr)
		}
	}()

	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	seq, prev, needNL, err := lastLink(f, fi.Size())
	if err != nil {
		return fmt.Errorf("audit: append: read tail of %s: %w", l.path, err)
	}

	out, lines, err := Chain(rs, seq, prev)
	if err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	var buf []byte
	for _, line := range lines {
		buf = append(append(buf, line...), '\n')
	}

	var rotErr error
	if l.maxSize > 0 && out[0].Seq > 1 && fi.Size()+int64(len(buf)) > l.maxSize {
		// The file holds a record and this write would take it past the
		// limit: the records start a new file instead. A torn last line is
		// ended first, so that every line of the rotated file is whole.
		if needNL {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				return fmt.Errorf("audit: append to %s: %w", l.path, err)
			}
			needNL = false
		}
		if rotErr = l.rotate(f, fi, buf); rotErr == nil {
			for i, r := range rs {
				*r = out[i]
			}
			return nil
		}
	}
	if needNL {
		buf = append([]byte{'\n'}, buf...)
	}
	if _, err := f.Write(buf); err != nil {
		return fmt.Errorf("audit: append to %s: %w", l.path, err)
	}
	for i, r := range rs {
		*r = out[i]
	}
	// A failed rotation loses nothing: the records are in the old file,
	// which goes on growing; the error says so.
	return rotErr
}

// Sync commits the log's written records to stable storage. Append does not
// sync on its own: a record is in the operating system's cache when Append
// returns, which survives the process crashing but not the machine losing
// power.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("audit: sync %s: %w", l.path, err)
	}
	return nil
}

// Close closes the log. Closing a closed Log returns nil.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("audit: close %s: %w", l.path, err)
	}
	return nil
}

// Chain returns copies of rs that continue a chain whose last record has
// seq and hash prev (0 and [Genesis] for an empty chain) — each with its
// Seq, Prev and Hash set, and Time set to now when empty — and each one's
// canonical line, without a newline. It is Append's chaining for chains
// kept elsewhere than a file (a state store keeps one per tenant). rs are
// not changed; nothing is returned if any record cannot be encoded or
// would be longer than [MaxLine].
func Chain(rs []*Record, seq int64, prev string) ([]Record, [][]byte, error) {
	out := make([]Record, len(rs))
	lines := make([][]byte, len(rs))
	now := FormatTime(time.Now())
	for i, r := range rs {
		if r == nil {
			return nil, nil, errors.New("nil record")
		}
		c := *r
		c.Seq, c.Prev, c.Hash = seq+1, prev, ""
		if c.Time == "" {
			c.Time = now
		}
		unhashed, line, sum, err := canonical(&c)
		if err != nil {
			return nil, nil, err
		}
		if changed, err := normalise(&c, unhashed); err != nil {
			return nil, nil, err
		} else if changed {
			if _, line, sum, err = canonical(&c); err != nil {
				return nil, nil, err
			}
		}
		if len(line) > MaxLine {
			return nil, nil, fmt.Errorf("record is %d bytes, more than the %d a line may hold", len(line), MaxLine)
		}
		c.Hash = sum
		out[i], lines[i] = c, line
		seq, prev = c.Seq, sum
	}
	return out, lines, nil
}

// link is the part of a record Append chains from.
type link struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// linkOf returns the Seq and Hash of the record on line, if it is one.
func linkOf(line []byte) (link, bool) {
	if k, ok := canonicalLink(line); ok {
		return k, true
	}
	var k link
	if json.Unmarshal(line, &k) != nil || k.Seq < 1 || !isHexHash(k.Hash) {
		return link{}, false
	}
	return k, true
}

// canonicalLink is linkOf's fast path for the lines Append writes: a line
// that starts {"seq":N, and ends ,"hash":"H"} where H is the SHA-256 of the
// line with H removed. Such a line is a complete record (a torn one cannot
// carry its own hash), so it needs no JSON decoding.
func canonicalLink(line []byte) (link, bool) {
	const (
		prefix  = `{"seq":`
		hashKey = `,"hash":"`
	)
	n := len(line)
	if n < len(prefix)+2+len(hashKey)+64+2 || !bytes.HasPrefix(line, []byte(prefix)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return link{}, false
	}
	h := line[n-2-64 : n-2]
	if !bytes.Equal(line[n-2-64-len(hashKey):n-2-64], []byte(hashKey)) || !isHexHash(string(h)) {
		return link{}, false
	}
	var seq int64
	i := len(prefix)
	for ; i < n && '0' <= line[i] && line[i] <= '9' && i < len(prefix)+18; i++ {
		seq = seq*10 + int64(line[i]-'0')
	}
	if i == len(prefix) || line[i] != ',' || seq < 1 || line[len(prefix)] == '0' {
		return link{}, false
	}
	d := sha256.New()
	d.Write(line[:n-2-64])
	d.Write([]byte(`"}`))
	var sum [sha256.Size]byte
	if hex.EncodeToString(d.Sum(sum[:0])) != string(h) {
		return link{}, false
	}
	return link{Seq: seq, Hash: string(h)}, true
}

// lastLink returns the Seq and Hash of the last line of r[0:size) that
// decodes as a record (0 and Genesis if none does), and whether the data
// ends without a newline (a torn tail that the next write must end first).
func lastLink(r io.ReaderAt, size int64) (seq int64, hash string, needNL bool, err error) {
	if size == 0 {
		return 0, Genesis, false, nil
	}
	var last [1]byte
	if _, err := r.ReadAt(last[:], size-1); err != nil {
		return 0, "", false, err
	}
	needNL = last[0] != '\n'
	seq, hash = 0, Genesis
	err = backLines(r, size, func(line []byte, _ int64, long bool) bool {
		if long {
			return true
		}
		k, ok := linkOf(line)
		if !ok {
			return true
		}
		seq, hash = k.Seq, k.Hash
		return false
	})
	if err != nil {
		return 0, "", false, err
	}
	return seq, hash, needNL, nil
}

// backLines calls fn for each line of r[0:end), last line first, with the
// line (without its newline) and the offset where it starts. A newline as the
// very last byte ends the last line rather than starting an empty one. Lines
// longer than MaxLine are not read into memory: fn gets a nil line and long
// set. fn returns false to stop.
func backLines(r io.ReaderAt, end int64, fn func(line []byte, off int64, long bool) bool) error {
	if end == 0 {
		return nil
	}
	var last [1]byte
	if _, err := r.ReadAt(last[:], end-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		end--
	}
	// pending holds the bytes [pos, lineEnd) of the line being assembled;
	// skipping means that line is too long and its bytes are being dropped.
	var pending []byte
	pos := end
	skipping := false
	chunk := int64(16 << 10)
	for {
		if i := bytes.LastIndexByte(pending, '\n'); i >= 0 {
			start := pos + int64(i) + 1
			if skipping {
				skipping = false
				if !fn(nil, start, true) {
					return nil
				}
			} else if !fn(pending[i+1:], start, false) {
				return nil
			}
			pending = pending[:i]
			continue
		}
		if pos == 0 {
			if skipping {
				fn(nil, 0, true)
			} else {
				fn(pending, 0, false)
			}
			return nil
		}
		if !skipping && len(pending) > MaxLine {
			skipping = true
		}
		if skipping {
			pending = pending[:0]
		}
		n := min(chunk, pos)
		if chunk < 1<<20 {
			chunk *= 2
		}
		pos -= n
		buf := make([]byte, int(n)+len(pending))
		if _, err := r.ReadAt(buf[:n], pos); err != nil {
			return err
		}
		copy(buf[n:], pending)
		pending = buf
	}
}
