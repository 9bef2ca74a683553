package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ParseSince reads a --since value, relative to now: a duration back from
// now ("90m", "24h", "7d", "2w") or a point in time ("2026-07-01",
// "2026-07-01T12:00:00Z", any RFC 3339 time). The zero time (no bound) is
// returned for "".
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	bad := fmt.Errorf("--since %q: want a duration back from now (90m, 24h, 7d, 2w) or a time (2026-07-01, 2026-07-01T12:00:00Z)", s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	var d time.Duration
	if n, unit := s[:len(s)-1], s[len(s)-1]; unit == 'd' || unit == 'w' {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || days < 0 || days > 100*366 {
			return time.Time{}, bad
		}
		if unit == 'w' {
			days *= 7
		}
		d = time.Duration(days * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d < 0 {
			return time.Time{}, bad
		}
	}
	return now.Add(-d), nil
}

// RecordTime returns r.Time as a time, and whether it parses.
func RecordTime(r *Record) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, r.Time)
	return t, err == nil
}

// ReadFiles calls fn for each record in the files, in order, that has a
// Time at or after since (every record, for the zero time), with the line
// it was read from, which stays valid only until fn returns. Lines that do
// not decode as records are skipped, as Tail skips them: Verify is what
// reports them. A rotated file whose last record is older than since is
// not read at all.
func ReadFiles(paths []string, since time.Time, fn func(r *Record, line []byte) error) error {
	for i, p := range paths {
		if !since.IsZero() && i < len(paths)-1 {
			last, err := tailFile(p, 1)
			if err != nil {
				return err
			}
			if len(last) == 1 {
				if t, ok := RecordTime(&last[0]); ok && t.Before(since) {
					continue
				}
			}
		}
		if err := readFile(p, since, fn); err != nil {
			return err
		}
	}
	return nil
}

// FirstRecord returns the first record in the file at path (the first line
// that decodes as one), or nil if there is none.
func FirstRecord(path string) (*Record, error) {
	var first *Record
	errStop := errors.New("stop")
	err := readFile(path, time.Time{}, func(r *Record, _ []byte) error {
		first = r
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return first, nil
}

func readFile(path string, since time.Time, fn func(r *Record, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("audit: read: %w", err)
	}
	defer f.Close()
	return readRecords(f, path, since, fn)
}

// readRecords is ReadFiles for one log read from r; name names it in errors.
func readRecords(r io.Reader, name string, since time.Time, fn func(r *Record, line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, long, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: read %s: %w", name, err)
		}
		var r Record
		if long || json.Unmarshal(line, &r) != nil || r.Seq < 1 {
			continue
		}
		if !since.IsZero() {
			if t, ok := RecordTime(&r); ok && t.Before(since) {
				continue
			}
		}
		if err := fn(&r, line); err != nil {
			return err
		}
	}
}
