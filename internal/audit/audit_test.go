package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// testRecord returns a record as the relay would fill it, numbered i.
func testRecord(i int) *Record {
	return &Record{
		Time:     FormatTime(time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)),
		Session:  "pid:4242",
		Server:   "notes",
		Event:    "call",
		Method:   "tools/call",
		Tool:     fmt.Sprintf("send_mail_%d", i),
		Labels:   []string{"private", "sink"},
		Verdict:  "block",
		Enforced: true,
		Rule:     "flow.exfiltration",
		Reason:   "send_mail would send data read by notes/read_note",
		Sources:  []string{"notes/read_note"},
		Shape:    json.RawMessage(`{"to":"string(17)","body":"string(120)"}`),
		Hashes:   map[string]string{"$.to": "k1", "$.body": "k2"},
		Prints:   3,
	}
}

// writeLog appends n records to a new log and returns its path.
func writeLog(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weir", "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 1; i <= n; i++ {
		if err := l.Append(testRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func verifyFile(t *testing.T, path string) (Summary, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Verify(f)
}

// readLines returns the file's lines without their newlines.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeLines(t *testing.T, path string, lines [][]byte, final bool) {
	t.Helper()
	b := bytes.Join(lines, []byte("\n"))
	if final {
		b = append(b, '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAppendVerifyRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 2, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path := writeLog(t, n)
			sum, err := verifyFile(t, path)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if sum.Records != n {
				t.Fatalf("Records = %d, want %d", sum.Records, n)
			}
			lines := readLines(t, path)
			if n == 0 {
				if sum.Head != "" || sum.First != "" {
					t.Fatalf("empty log summary = %+v", sum)
				}
				return
			}
			var first, last Record
			if err := json.Unmarshal(lines[0], &first); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
				t.Fatal(err)
			}
			if first.Seq != 1 || first.Prev != Genesis {
				t.Fatalf("first record seq %d prev %q", first.Seq, first.Prev)
			}
			if last.Seq != int64(n) || sum.Head != last.Hash || sum.First != first.Time || sum.Last != last.Time {
				t.Fatalf("summary %+v, last record seq %d hash %s", sum, last.Seq, last.Hash)
			}
		})
	}
}

func TestAppendSetsRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := &Record{Session: "s", Server: "srv", Event: "list", Verdict: "allow", Seq: 99, Prev: "junk", Hash: "junk"}
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	if r.Seq != 1 || r.Prev != Genesis || !isHexHash(r.Hash) {
		t.Fatalf("after Append: seq %d prev %q hash %q", r.Seq, r.Prev, r.Hash)
	}
	if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil || !strings.HasSuffix(r.Time, "Z") || len(r.Time) != len("2026-07-01T12:00:00.000Z") {
		t.Fatalf("Time %q is not RFC 3339 UTC with milliseconds (%v)", r.Time, err)
	}
	// The line on disk is the record as Append left it.
	want, _ := json.Marshal(r)
	if got := readLines(t, path)[0]; !bytes.Equal(got, want) {
		t.Fatalf("line\n%s\nwant\n%s", got, want)
	}
	// The documented external recipe: drop the hash digits, SHA-256 the rest.
	line := readLines(t, path)[0]
	stripped := bytes.Replace(line, []byte(r.Hash), nil, 1)
	if got := sha256hex(stripped); got != r.Hash {
		t.Fatalf("external recipe gives %s, record says %s", got, r.Hash)
	}
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	dir := filepath.Join(t.TempDir(), "home")
	l, err := Open(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "audit.log"): 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode %o, want %o", p, got, want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil {
		t.Fatal("Open on a directory succeeded")
	}
	l, err := Open(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.Append(testRecord(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	l2, _ := Open(filepath.Join(dir, "b.log"))
	defer l2.Close()
	if err := l2.Append(nil); err == nil {
		t.Fatal("Append(nil) succeeded")
	}
	bad := testRecord(1)
	bad.Shape = json.RawMessage(`{"to":`)
	if err := l2.Append(bad); err == nil {
		t.Fatal("Append with invalid Shape JSON succeeded")
	}
	if err := l2.Sync(); err != nil {
		t.Fatal(err)
	}
}

// forge returns the line of a record that claims seq and prev, with a hash
// correctly computed over its own content.
func forge(t *testing.T, seq int64, prev string) []byte {
	t.Helper()
	r := testRecord(int(seq))
	r.Verdict = "allow"
	r.Seq, r.Prev = seq, prev
	_, line, _, err := canonical(r)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func TestVerifyDetectsTampering(t *testing.T) {
	const n = 6
	tests := []struct {
		name    string
		tamper  func(t *testing.T, lines [][]byte) ([][]byte, bool) // new lines, final newline
		line    int
		torn    bool
		reason  string
		records int // records verified before the bad line (all, for torn)
	}{
		{
			name: "edit a field",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[2] = bytes.Replace(l[2], []byte(`"verdict":"block"`), []byte(`"verdict":"allow"`), 1)
				return l, true
			},
			line: 3, reason: "hash mismatch", records: 2,
		},
		{
			name: "edit a hashed map",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[4] = bytes.Replace(l[4], []byte(`"$.to":"k1"`), []byte(`"$.to":"k9"`), 1)
				return l, true
			},
			line: 5, reason: "hash mismatch", records: 4,
		},
		{
			name: "add an unknown field",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[1] = bytes.Replace(l[1], []byte(`{"seq":2,`), []byte(`{"seq":2,"note":"x",`), 1)
				return l, true
			},
			line: 2, reason: "canonical", records: 1,
		},
		{
			name: "reformat whitespace",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[3] = bytes.Replace(l[3], []byte(`{"seq":4,`), []byte(`{ "seq": 4,`), 1)
				return l, true
			},
			line: 4, reason: "canonical", records: 3,
		},
		{
			name: "CRLF line endings",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				for i := range l {
					l[i] = append(l[i], '\r')
				}
				return l, true
			},
			line: 1, reason: "canonical", records: 0,
		},
		{
			name: "delete a middle record",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				return append(l[:2:2], l[3:]...), true
			},
			line: 3, reason: "seq gap", records: 2,
		},
		{
			name: "delete the first record",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				return l[1:], true
			},
			line: 1, reason: "seq gap", records: 0,
		},
		{
			name: "swap two records",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[2], l[3] = l[3], l[2]
				return l, true
			},
			line: 3, reason: "seq gap", records: 2,
		},
		{
			name: "insert a forged record with its own hash and a wrong prev",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				f := forge(t, 4, strings.Repeat("ab", 32))
				return append(l[:3:3], append([][]byte{f}, l[3:]...)...), true
			},
			line: 4, reason: "prev mismatch", records: 3,
		},
		{
			name: "replace a record with a forged one",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[3] = forge(t, 4, Genesis)
				return l, true
			},
			line: 4, reason: "prev mismatch", records: 3,
		},
		{
			name: "truncate mid-line",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[5] = l[5][:len(l[5])/2]
				return l, false
			},
			line: 6, torn: true, reason: "last record is cut short", records: 5,
		},
		{
			name: "truncate inside a literal",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				i := bytes.Index(l[5], []byte(`"enforced":tr`))
				l[5] = l[5][:i+len(`"enforced":tr`)]
				return l, false
			},
			line: 6, torn: true, reason: "cut short", records: 5,
		},
		{
			name: "cut a middle record short",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[2] = l[2][:40]
				return l, true
			},
			line: 3, reason: "does not chain past it", records: 2,
		},
		{
			name: "last record without its newline",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				return l, false
			},
			line: 0, records: 6,
		},
		{
			name: "garbage line",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[3] = []byte("hello")
				return l, true
			},
			line: 4, reason: "bad JSON", records: 3,
		},
		{
			name: "JSON that is not a record",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				l[3] = []byte(`[1,2,3]`)
				return l, true
			},
			line: 4, reason: "bad JSON", records: 3,
		},
		{
			name: "empty line",
			tamper: func(t *testing.T, l [][]byte) ([][]byte, bool) {
				return append(l[:1:1], append([][]byte{{}}, l[1:]...)...), true
			},
			line: 2, reason: "empty line", records: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLog(t, n)
			lines, final := tt.tamper(t, readLines(t, path))
			writeLines(t, path, lines, final)
			sum, err := verifyFile(t, path)
			if tt.line == 0 {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
			} else {
				var ve *VerifyError
				if !errors.As(err, &ve) {
					t.Fatalf("Verify error = %v, want a *VerifyError", err)
				}
				if ve.Line != tt.line || ve.Torn != tt.torn || !strings.Contains(ve.Reason, tt.reason) {
					t.Fatalf("Verify = line %d torn %v %q; want line %d torn %v reason containing %q",
						ve.Line, ve.Torn, ve.Reason, tt.line, tt.torn, tt.reason)
				}
				t.Logf("%v", err)
			}
			if sum.Records != tt.records {
				t.Fatalf("Summary.Records = %d, want %d", sum.Records, tt.records)
			}
		})
	}
}

// A chain rewritten from an edit onwards verifies: only an anchored head
// shows it. This is the documented limit, pinned so nobody believes
// otherwise.
func TestRewrittenChainNeedsAnAnchor(t *testing.T) {
	path := writeLog(t, 4)
	orig, err := verifyFile(t, path)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	prev := Genesis
	for i, l := range lines {
		var r Record
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			r.Verdict = "allow"
		}
		r.Prev = prev
		_, lines[i], prev, err = canonical(&r)
		if err != nil {
			t.Fatal(err)
		}
	}
	writeLines(t, path, lines, true)
	sum, err := verifyFile(t, path)
	if err != nil {
		t.Fatalf("rewritten chain: %v", err)
	}
	if sum.Head == orig.Head {
		t.Fatal("rewritten chain has the original head")
	}
}

func TestAppendAfterTornTail(t *testing.T) {
	path := writeLog(t, 5)
	lines := readLines(t, path)
	lines[4] = lines[4][:len(lines[4])-30]
	writeLines(t, path, lines, false)

	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 3; i++ {
		r := testRecord(10 + i)
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		if want := int64(5 + i); r.Seq != want {
			t.Fatalf("seq after torn tail = %d, want %d", r.Seq, want)
		}
	}
	got := readLines(t, path)
	if len(got) != 8 {
		t.Fatalf("%d lines, want 8 (4 records, the torn line, 3 records)", len(got))
	}
	sum, err := verifyFile(t, path)
	var ve *VerifyError
	if !errors.As(err, &ve) || !ve.Torn || ve.Line != 5 || ve.Seq != 5 {
		t.Fatalf("Verify = %v, want a torn line 5 (seq 5)", err)
	}
	if !strings.Contains(ve.Reason, "chain resumes") {
		t.Errorf("reason %q", ve.Reason)
	}
	if sum.Records != 7 || len(sum.Torn) != 1 || sum.Torn[0] != 5 {
		t.Fatalf("summary %+v, want 7 records and torn line 5", sum)
	}
}

// A torn line that the chain resumes past does not hide tampering after it.
func TestTamperAfterTornLine(t *testing.T) {
	path := writeLog(t, 3)
	lines := readLines(t, path)
	lines[2] = lines[2][:20]
	writeLines(t, path, lines, false)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := l.Append(testRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	lines = readLines(t, path)
	lines[4] = bytes.Replace(lines[4], []byte(`"block"`), []byte(`"allow"`), 1)
	writeLines(t, path, lines, true)
	sum, err := verifyFile(t, path)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Torn || ve.Line != 5 || !strings.Contains(ve.Reason, "hash mismatch") {
		t.Fatalf("Verify = %v, want a hash mismatch at line 5", err)
	}
	if sum.Records != 3 || len(sum.Torn) != 1 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestAppendAfterCompleteRecordWithoutNewline(t *testing.T) {
	path := writeLog(t, 3)
	writeLines(t, path, readLines(t, path), false)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := testRecord(4)
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if r.Seq != 4 {
		t.Fatalf("seq %d, want 4", r.Seq)
	}
	if sum, err := verifyFile(t, path); err != nil || sum.Records != 4 {
		t.Fatalf("Verify = %+v, %v", sum, err)
	}
}

// Append skips lines it cannot read, even one too long to hold, and Verify
// names them.
func TestAppendPastOverlongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 16 MiB line")
	}
	path := writeLog(t, 2)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(bytes.Repeat([]byte("x"), MaxLine+10), '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := testRecord(3)
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if r.Seq != 3 {
		t.Fatalf("seq %d, want 3", r.Seq)
	}
	_, err = verifyFile(t, path)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Line != 3 || !strings.Contains(ve.Reason, "longer than") {
		t.Fatalf("Verify = %v, want line 3 too long", err)
	}
	got, err := Tail(path, 5)
	if err != nil || len(got) != 3 || got[2].Seq != 3 {
		t.Fatalf("Tail = %d records, %v", len(got), err)
	}
}

// Records with odd strings (invalid UTF-8, HTML characters, line
// separators, control characters) still verify: Append writes the form a
// verifier re-derives.
func TestAppendNormalisesStrings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	odd := []string{"a\xffb", "<script>&", "line\u2028sep", "nul\x00ctl\x1f", "\xed\xa0\x80", "é\u00e9\ufffd"}
	for _, s := range odd {
		r := testRecord(1)
		r.Tool, r.Reason, r.Labels = s, s, []string{s}
		r.Hashes = map[string]string{s: s}
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if sum, err := verifyFile(t, path); err != nil || sum.Records != len(odd) {
		t.Fatalf("Verify = %+v, %v", sum, err)
	}
}

func TestVerifyReadError(t *testing.T) {
	_, err := Verify(errReader{})
	var ve *VerifyError
	if err == nil || errors.As(err, &ve) || !errors.Is(err, errBoom) {
		t.Fatalf("Verify on a failing reader = %v", err)
	}
}

var errBoom = errors.New("boom")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBoom }

func TestLinkOf(t *testing.T) {
	path := writeLog(t, 3)
	lines := readLines(t, path)
	for i, line := range lines {
		fast, ok := canonicalLink(line)
		var slow link
		if err := json.Unmarshal(line, &slow); err != nil || !ok || fast != slow || fast.Seq != int64(i+1) {
			t.Fatalf("line %d: fast %+v %v, slow %+v %v", i+1, fast, ok, slow, err)
		}
	}
	edited := bytes.Replace(lines[1], []byte(`"block"`), []byte(`"allow"`), 1)
	if _, ok := canonicalLink(edited); ok {
		t.Fatal("fast path accepted a line whose hash does not verify")
	}
	if k, ok := linkOf(edited); !ok || k.Seq != 2 {
		t.Fatalf("linkOf(edited) = %+v, %v; want the slow path to read seq 2", k, ok)
	}
	for _, bad := range []string{"", "{}", `{"seq":0,"hash":"` + Genesis + `"}`, `{"seq":1,"hash":"xyz"}`, `{"seq":01,` + strings.Repeat("x", 100) + `}`} {
		if k, ok := linkOf([]byte(bad)); ok {
			t.Errorf("linkOf(%q) = %+v", bad, k)
		}
	}
}

// A record torn right after a map whose last entry looks like a hash field
// must not be chained from.
func TestAppendTornLookalike(t *testing.T) {
	path := writeLog(t, 2)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := testRecord(3)
	r.Hashes = map[string]string{"hash": strings.Repeat("a", 64)}
	r.Prints = 0
	r.Seq, r.Prev = 3, strings.Repeat("b", 64)
	_, line, _, _ := canonical(r)
	h := bytes.Index(line, []byte(`"hashes":{`))
	cut := h + bytes.IndexByte(line[h:], '}') + 1 // just after the hashes map
	if !bytes.HasSuffix(line[:cut], []byte(`"hash":"`+strings.Repeat("a", 64)+`"}`)) {
		t.Fatalf("test setup: %s", line[:cut])
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(line[:cut])
	f.Close()
	next := testRecord(4)
	if err := l.Append(next); err != nil {
		t.Fatal(err)
	}
	if next.Seq != 3 {
		t.Fatalf("chained as seq %d, want 3", next.Seq)
	}
	_, err = verifyFile(t, path)
	var ve *VerifyError
	if !errors.As(err, &ve) || !ve.Torn || ve.Line != 3 {
		t.Fatalf("Verify = %v, want torn line 3", err)
	}
}

// Any strings at all, valid UTF-8 or not, make records that verify.
func TestAppendVerifyAnyStrings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	anyString := rapid.OneOf(rapid.String(), rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }))
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		r := &Record{
			Time:    anyString.Draw(t, "time"),
			Session: anyString.Draw(t, "session"),
			Server:  anyString.Draw(t, "server"),
			Event:   anyString.Draw(t, "event"),
			Tool:    anyString.Draw(t, "tool"),
			Labels:  rapid.SliceOf(anyString).Draw(t, "labels"),
			Verdict: anyString.Draw(t, "verdict"),
			Reason:  anyString.Draw(t, "reason"),
			Hashes:  rapid.MapOf(anyString, anyString).Draw(t, "hashes"),
		}
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		n++
		got, err := Tail(path, 1)
		if err != nil || len(got) != 1 || got[0].Seq != r.Seq || got[0].Reason != r.Reason {
			t.Fatalf("Tail after Append = %+v, %v; want %+v", got, err, r)
		}
	})
	if sum, err := verifyFile(t, path); err != nil || sum.Records != n {
		t.Fatalf("Verify = %+v, %v; want %d records", sum, err, n)
	}
}

func TestAppendAllChains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	batch := []*Record{{Event: "call", Verdict: "allow"}, {Event: "result", Verdict: "allow"}, {Event: "call", Verdict: "block"}}
	if err := l.AppendAll(batch); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(&Record{Event: "list", Verdict: "allow"}); err != nil {
		t.Fatal(err)
	}
	for i, r := range batch {
		if r.Seq != int64(i+1) || (i > 0 && r.Prev != batch[i-1].Hash) {
			t.Errorf("record %d: seq %d prev %s", i, r.Seq, r.Prev)
		}
	}
	f, _ := os.Open(path)
	defer f.Close()
	sum, err := Verify(f)
	if err != nil || sum.Records != 4 {
		t.Errorf("verify: %+v, %v", sum, err)
	}
	if err := l.AppendAll([]*Record{{Event: "x"}, nil}); err == nil {
		t.Error("a nil record in a batch was accepted")
	}
}
