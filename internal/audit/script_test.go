package audit

import (
	"bytes"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the audit logs in "+verifyScript)

// verifyScript is the CLI script of `weir audit verify`, whose logs this
// package writes: they must come from the real Log, never by hand.
const verifyScript = "../../cmd/weir/testdata/script/audit_verify.txtar"

// scriptLogs writes the logs of verifyScript with Open and Append, and
// damages them the way a crash or an attacker would. A txtar file always
// ends in a newline, so torn-last.log is the crash state plus one; the
// script strips it where it can.
func scriptLogs(t *testing.T) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	appendN := func(path string, from, to int) {
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for i := from; i <= to; i++ {
			if err := l.Append(testRecord(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// crash cuts the last line of path in half, newline included, as a
	// write interrupted by a crash leaves it.
	crash := func(path string) {
		b := read(path)
		start := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
		if err := os.WriteFile(path, b[:start+(len(b)-start)/2], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logs := map[string][]byte{}

	intact := filepath.Join(dir, "intact.log")
	appendN(intact, 1, 4)
	logs["intact.log"] = read(intact)

	lines := bytes.SplitAfter(read(intact), []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"verdict":"block"`), []byte(`"verdict":"allow"`), 1)
	logs["tampered.log"] = bytes.Join(lines, nil)

	// Two records, a third torn by a crash, then two more: Append ends the
	// torn line and chains them from the second.
	middle := filepath.Join(dir, "torn-middle.log")
	appendN(middle, 1, 3)
	crash(middle)
	appendN(middle, 4, 5)
	logs["torn-middle.log"] = read(middle)

	// Then a crash at the end as well.
	twice := filepath.Join(dir, "torn-twice.log")
	if err := os.WriteFile(twice, logs["torn-middle.log"], 0o600); err != nil {
		t.Fatal(err)
	}
	appendN(twice, 6, 6)
	crash(twice)
	logs["torn-twice.log"] = append(read(twice), '\n')

	// A crash, and another during the write after it: two torn lines end
	// the log.
	endTwice := filepath.Join(dir, "torn-end-twice.log")
	appendN(endTwice, 1, 3)
	crash(endTwice)
	appendN(endTwice, 4, 4)
	crash(endTwice)
	logs["torn-end-twice.log"] = append(read(endTwice), '\n')

	last := filepath.Join(dir, "torn-last.log")
	appendN(last, 1, 5)
	crash(last)
	logs["torn-last.log"] = append(read(last), '\n')
	return logs
}

// TestVerifyScriptLogs checks that the logs in verifyScript are what the
// real Log writes today, and that Verify reads each as its name says.
// Run it with -update to rewrite them.
func TestVerifyScriptLogs(t *testing.T) {
	logs := scriptLogs(t)
	for name, want := range map[string]struct {
		records  int
		line     int // of the VerifyError, 0 for none
		torn     bool
		tornAt   []int
		tornTail int
		reason   string
	}{
		"intact.log":         {records: 4},
		"tampered.log":       {records: 2, line: 3, reason: "hash mismatch"},
		"torn-middle.log":    {records: 4, line: 3, torn: true, tornAt: []int{3}, reason: "the chain resumes after it and all 4 complete records verify"},
		"torn-twice.log":     {records: 4, line: 3, torn: true, tornAt: []int{3, 6}, tornTail: 1, reason: "but the last line (6) is cut short too"},
		"torn-last.log":      {records: 4, line: 5, torn: true, tornAt: []int{5}, tornTail: 1, reason: "the last record is cut short mid-line"},
		"torn-end-twice.log": {records: 2, line: 3, torn: true, tornAt: []int{3, 4}, tornTail: 2, reason: "the last record is cut short mid-line"},
	} {
		for _, data := range [][]byte{logs[name], bytes.TrimSuffix(logs[name], []byte("\n"))} {
			sum, err := Verify(bytes.NewReader(data))
			var ve *VerifyError
			if errors.As(err, &ve) != (want.line != 0) || err != nil && ve == nil {
				t.Fatalf("%s: Verify: %v", name, err)
			}
			if ve != nil && (ve.Line != want.line || ve.Torn != want.torn || !strings.Contains(ve.Reason, want.reason)) {
				t.Errorf("%s: Verify = line %d torn %v (%v); want line %d torn %v, reason with %q", name, ve.Line, ve.Torn, err, want.line, want.torn, want.reason)
			}
			if sum.Records != want.records || sum.TornTail != want.tornTail || !slices.Equal(sum.Torn, want.tornAt) {
				t.Errorf("%s: summary %+v; want %d records, torn lines %v, TornTail %v", name, sum, want.records, want.tornAt, want.tornTail)
			}
		}
	}

	syncScript(t, verifyScript, logs)
}

// syncScript checks that the files of a CLI script are what the real Log
// writes today (logs), or rewrites them with -update.
func syncScript(t *testing.T, script string, logs map[string][]byte) {
	t.Helper()
	ar, err := txtar.ParseFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		for _, name := range slices.Sorted(maps.Keys(logs)) {
			data := logs[name]
			found := false
			for i := range ar.Files {
				if ar.Files[i].Name == name {
					ar.Files[i].Data, found = data, true
				}
			}
			if !found {
				ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
			}
		}
		if err := os.WriteFile(script, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for name, data := range logs {
		var got []byte
		for _, f := range ar.Files {
			if f.Name == name {
				got = f.Data
			}
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s in %s is not what Log writes now; rerun with -update", name, script)
		}
	}
}

// The CLI scripts of rotation, report and export, whose logs this package
// writes.
const (
	rotateScript = "../../cmd/weir/testdata/script/audit_rotate.txtar"
	reportScript = "../../cmd/weir/testdata/script/audit_report.txtar"
	exportScript = "../../cmd/weir/testdata/script/audit_export.txtar"
)

// TestCLIScriptLogs checks (or, with -update, writes) the logs of the
// rotation, report and export scripts: a log of ten records rotated every
// three, one with a record edited in a rotated file, and the sample log
// (sampleRecords) intact and tampered with.
func TestCLIScriptLogs(t *testing.T) {
	dir := t.TempDir()
	size := recordSize(t)
	path := filepath.Join(dir, "audit.log")
	l, err := Open(path, MaxSize(3*size+size/2))
	if err != nil {
		t.Fatal(err)
	}
	appendRecords(t, l, 1, 10)
	l.Close()
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("Files = %v", files)
	}
	rotated := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rotated["rotated/"+filepath.Base(f)] = b
		if filepath.Base(f) == "audit.log.4" {
			b = bytes.Replace(b, []byte(`"tool":"send_mail_5"`), []byte(`"tool":"send_mail_X"`), 1)
		}
		rotated["tampered/"+filepath.Base(f)] = b
	}
	if bytes.Equal(rotated["rotated/audit.log.4"], rotated["tampered/audit.log.4"]) {
		t.Fatal("the tampered copy is not tampered with")
	}
	syncScript(t, rotateScript, rotated)

	sample := writeSample(t, sampleTime)
	b, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[6] = bytes.Replace(lines[6], []byte(`"verdict":"block"`), []byte(`"verdict":"allow"`), 1)
	tampered := bytes.Join(lines, nil)
	syncScript(t, reportScript, map[string][]byte{"sample.log": b, "tampered.log": tampered})
	syncScript(t, exportScript, map[string][]byte{"sample.log": b})
}
