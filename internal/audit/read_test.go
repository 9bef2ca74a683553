package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 7, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"90m":                  now.Add(-90 * time.Minute),
		"24h":                  now.Add(-24 * time.Hour),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"1.5d":                 now.Add(-36 * time.Hour),
		"2w":                   now.Add(-14 * 24 * time.Hour),
		"2026-07-01":           time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC),
		"2026-07-01T12:30:00Z": time.Date(2026, 7, 1, 12, 30, 0, 0, time.UTC),
	} {
		got, err := ParseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "-1h", "d", "7x", "-2d", "2026-13-01", "1e9d"} {
		if _, err := ParseSince(in, now); err == nil || !strings.Contains(err.Error(), "want a duration back from now (90m, 24h, 7d, 2w) or a time") {
			t.Errorf("ParseSince(%q) = %v, want a specific error", in, err)
		}
	}
}

// TestReadFilesSince reads a rotated log since a time: whole files older
// than it are not opened, torn lines are skipped.
func TestReadFilesSince(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, MaxSize(3*size+size/2))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRecords(t, l, 1, 10) // testRecord(i) is at 12:00:00.00i
	files, _ := Files(path)
	// A rotated file whose last record is older than since is not read:
	// a later record planted at its start is not seen.
	b, _ := os.ReadFile(files[0])
	planted := strings.Replace(strings.SplitAfter(string(b), "\n")[0], "12:00:00.001Z", "12:30:00.000Z", 1)
	os.WriteFile(files[0], []byte(planted+string(b)), 0o600)
	var got []int64
	since := time.Date(2026, 7, 1, 12, 0, 0, int(5*time.Millisecond), time.UTC)
	err = ReadFiles(files, since, func(r *Record, line []byte) error {
		got = append(got, r.Seq)
		if !strings.HasPrefix(string(line), `{"seq":`) {
			t.Errorf("line %q", line)
		}
		return nil
	})
	if err != nil || len(got) != 6 || got[0] != 5 || got[5] != 10 {
		t.Fatalf("ReadFiles since record 5 = %v, %v", got, err)
	}
}
