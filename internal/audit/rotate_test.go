package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordSize is the length of testRecord(i)'s line for small i.
func recordSize(t *testing.T) int64 {
	t.Helper()
	path := writeLog(t, 1)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func appendRecords(t *testing.T, l *Log, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := l.Append(testRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRotateBySize(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, MaxSize(4*size+size/2)) // four records a file
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRecords(t, l, 1, 10)

	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{path + ".1", path + ".5", path}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("Files = %v, want %v", files, want)
	}
	for _, f := range files[:len(files)-1] {
		fi, _ := os.Stat(f)
		if fi.Size() > 4*size+size/2 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v", f, fi.Size(), fi.Mode())
		}
	}
	// The active file starts mid-chain, linked to the last rotated one.
	recs, err := tailFile(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	prev, _ := tailFile(files[1], 1)
	if len(recs) != 2 || recs[0].Seq != 9 || recs[0].Prev != prev[0].Hash {
		t.Fatalf("active file: %+v; the file before ends with %+v", recs, prev)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the new active file has mode %v", fi.Mode())
	}

	sums, err := VerifyFiles(files, FromGenesis)
	if err != nil {
		t.Fatalf("VerifyFiles: %v", err)
	}
	total := 0
	for i, s := range sums {
		total += s.Records
		if i > 0 && s.FirstPrev != sums[i-1].Head {
			t.Errorf("%s starts after %s, the file before ends at %s", s.Path, short(s.FirstPrev), short(sums[i-1].Head))
		}
	}
	if total != 10 || sums[2].FirstSeq != 9 {
		t.Fatalf("summaries %+v", sums)
	}
	// Verify alone, on the active file, says the chain does not start there.
	if _, err := verifyFile(t, path); err == nil || !strings.Contains(err.Error(), "want seq 1, found 9") {
		t.Errorf("Verify(active file) = %v", err)
	}
	// Tail reaches into the rotated files.
	all, err := Tail(path, 100)
	if err != nil || len(all) != 10 || all[0].Seq != 1 || all[9].Seq != 10 {
		t.Fatalf("Tail(100) = %d records, %v", len(all), err)
	}
	some, _ := Tail(path, 3)
	if len(some) != 3 || some[0].Seq != 8 {
		t.Errorf("Tail(3) = %v", seqs(some))
	}
}

// TestRotateOtherWritersFollow: a Log without MaxSize (weir approve, or a
// proxy started before the limit was set) that shares the file with one
// that rotates writes to the new file, never to the rotated one.
func TestRotateOtherWritersFollow(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	rot, err := Open(path, MaxSize(3*size))
	if err != nil {
		t.Fatal(err)
	}
	defer rot.Close()
	plain, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for i := 1; i <= 12; i++ {
		l := rot
		if i%3 == 0 {
			l = plain
		}
		appendRecords(t, l, i, i)
	}
	files, _ := Files(path)
	if len(files) < 3 {
		t.Fatalf("Files = %v", files)
	}
	sums, err := VerifyFiles(files, FromGenesis)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range sums {
		total += s.Records
	}
	if total != 12 {
		t.Fatalf("%d records across %d files", total, len(files))
	}
}

// TestRotateTornTail: a crash that tore the last line of the full file is
// ended and chained past in the new one, and the chain across files shows
// the torn line as recovered, not as a tail.
func TestRotateTornTail(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, MaxSize(3*size+size/2))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRecords(t, l, 1, 3)
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:int64(len(b))-size/2], 0o600) // record 3 torn
	appendRecords(t, l, 4, 5)

	files, _ := Files(path)
	if len(files) != 2 || files[0] != path+".1" {
		t.Fatalf("Files = %v", files)
	}
	rotated, _ := os.ReadFile(files[0])
	if !bytes.HasSuffix(rotated, []byte("\n")) {
		t.Error("the rotated file's torn line was not ended")
	}
	sums, err := VerifyFiles(files, FromGenesis)
	var ve *VerifyError
	if !errors.As(err, &ve) || !ve.Torn || ve.File != files[0] || ve.Line != 3 || sums[0].TornTail != 0 || sums[1].TornTail != 0 {
		t.Fatalf("VerifyFiles = %+v, %v", sums, err)
	}
	if !strings.Contains(ve.Reason, "the chain resumes after it and all 4 complete records verify") {
		t.Errorf("reason %q", ve.Reason)
	}
	if sums[1].FirstSeq != 3 {
		t.Errorf("the new file starts at seq %d, want 3 (the torn record's)", sums[1].FirstSeq)
	}
}

// TestRotateRecoversFromCrash: a rotation that crashed after linking the
// full file to its rotated name, before the rename, is finished by the next.
func TestRotateRecoversFromCrash(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, MaxSize(2*size+size/2))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRecords(t, l, 1, 2)
	if err := os.Link(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path+".rotate-123", []byte("left over"), 0o600)
	appendRecords(t, l, 3, 4)
	files, _ := Files(path)
	if len(files) != 2 {
		t.Fatalf("Files = %v", files)
	}
	if _, err := VerifyFiles(files, FromGenesis); err != nil {
		t.Fatal(err)
	}
}

// TestRotateNameTaken: a rotated name held by another file (an old chain
// left behind) stops the rotation, not the records.
func TestRotateNameTaken(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	os.WriteFile(path+".1", []byte("an old chain\n"), 0o600)
	l, err := Open(path, MaxSize(2*size))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRecords(t, l, 1, 2)
	err = l.Append(testRecord(3))
	var re *RotateError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "audit.log.1 already exists and is another file (an older chain?): move it away") || !strings.Contains(err.Error(), "appended to it unrotated") {
		t.Fatalf("Append = %v, want a RotateError naming audit.log.1", err)
	}
	if sum, err := verifyFile(t, path); err != nil || sum.Records != 3 {
		t.Fatalf("the record was not kept: %+v, %v", sum, err)
	}
	if b, _ := os.ReadFile(path + ".1"); string(b) != "an old chain\n" {
		t.Error("the other file was touched")
	}
	if tmp, _ := filepath.Glob(path + ".rotate-*"); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestRotateOneBigBatch(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, MaxSize(size))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	batch := []*Record{testRecord(1), testRecord(2), testRecord(3)}
	if err := l.AppendAll(batch); err != nil { // into the empty file, whole
		t.Fatal(err)
	}
	if err := l.AppendAll([]*Record{testRecord(4), testRecord(5)}); err != nil {
		t.Fatal(err)
	}
	files, _ := Files(path)
	if len(files) != 2 || files[0] != path+".1" {
		t.Fatalf("Files = %v", files)
	}
	if _, err := VerifyFiles(files, FromGenesis); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFilesFindsBreaks(t *testing.T) {
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, MaxSize(3*size+size/2))
	if err != nil {
		t.Fatal(err)
	}
	appendRecords(t, l, 1, 10)
	l.Close()
	files, _ := Files(path) // .1 .4 .7 and the active file
	if len(files) != 4 {
		t.Fatalf("Files = %v", files)
	}
	check := func(name string, list []string, start ChainStart, file string, line int, reason string) {
		t.Helper()
		_, err := VerifyFiles(list, start)
		var ve *VerifyError
		if !errors.As(err, &ve) || ve.File != file || ve.Line != line || !strings.Contains(ve.Reason, reason) {
			t.Errorf("%s: VerifyFiles = %v; want %s line %d: %s", name, err, file, line, reason)
		}
		if ve != nil && !strings.HasPrefix(ve.Error(), file+" line "+strconv.Itoa(line)+" (seq ") {
			t.Errorf("%s: the error does not name the file and line first: %v", name, ve)
		}
	}
	check("a file left out", []string{files[0], files[2], files[3]}, FromGenesis, files[2], 1, "seq gap: want seq 4, found 7")
	check("reordered", []string{files[1], files[0], files[2], files[3]}, FromFirstRecord, files[0], 1, "seq gap: want seq 7, found 1")
	check("oldest archived", files[1:], FromGenesis, files[1], 1, "seq gap: want seq 1, found 4")

	// From a rotated file on, taking its first record's link as given.
	sums, err := VerifyFiles(files[1:], FromFirstRecord)
	if err != nil || sums[0].FirstSeq != 4 || sums[0].Records != 3 {
		t.Fatalf("from %s: %+v, %v", files[1], sums, err)
	}
	head1, _ := tailFile(files[0], 1)
	if sums[0].FirstPrev != head1[0].Hash {
		t.Error("FirstPrev is not the hash the file before ends with")
	}

	// An edit inside a rotated file names that file.
	b, _ := os.ReadFile(files[1])
	os.WriteFile(files[1], bytes.Replace(b, []byte("send_mail_5"), []byte("send_mail_X"), 1), 0o600)
	check("edited", files, FromGenesis, files[1], 2, "hash mismatch")
	if _, err := VerifyFiles([]string{files[0], filepath.Join(filepath.Dir(path), "missing")}, FromGenesis); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestFilesNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	for _, n := range []string{"audit.log.10", "audit.log.9", "audit.log.1", "audit.log.01", "audit.log.x", "audit.log.rotate-5", "audit.log.2.bak", "other.log.3"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	got, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"audit.log.1", "audit.log.9", "audit.log.10"}
	if len(got) != len(want) {
		t.Fatalf("Files = %v", got)
	}
	for i := range want {
		if got[i] != filepath.Join(dir, want[i]) {
			t.Fatalf("Files = %v, want %v", got, want)
		}
	}
	if _, err := Files(filepath.Join(t.TempDir(), "audit.log")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Files of no log = %v", err)
	}
}

func TestFollowAcrossRotation(t *testing.T) {
	fastPoll(t)
	size := recordSize(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, MaxSize(2*size+size/2))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRecords(t, l, 1, 1)
	f := startFollow(t, func(ctx context.Context, fn func(Record) error) error { return FollowAfter(ctx, path, 0, fn) })
	appendRecords(t, l, 2, 9)
	for want := int64(1); want <= 9; want++ {
		select {
		case r := <-f.recs:
			if r.Seq != want {
				t.Fatalf("followed seq %d, want %d", r.Seq, want)
			}
		case err := <-f.done:
			t.Fatalf("Follow ended: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatalf("Follow did not deliver seq %d", want)
		}
	}
	if files, _ := Files(path); len(files) < 3 {
		t.Fatalf("the log did not rotate: %v", files)
	}
	if err := f.stop(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow = %v", err)
	}
	// FollowAfter starts in the rotated file that holds the next record.
	for _, after := range []int64{0, 2, 5, 8, 9} {
		g := startFollow(t, func(ctx context.Context, fn func(Record) error) error { return FollowAfter(ctx, path, after, fn) })
		for want := after + 1; want <= 9; want++ {
			select {
			case r := <-g.recs:
				if r.Seq != want {
					t.Fatalf("FollowAfter(%d): seq %d, want %d", after, r.Seq, want)
				}
			case err := <-g.done:
				t.Fatalf("FollowAfter(%d) ended: %v", after, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("FollowAfter(%d) did not deliver seq %d", after, want)
			}
		}
		g.quiet(t)
		if err := g.stop(t); !errors.Is(err, context.Canceled) {
			t.Fatalf("FollowAfter(%d) = %v", after, err)
		}
	}
}

const helperEnvMaxSize = "WEIR_AUDIT_HELPER_MAXSIZE"

// TestConcurrentRotation has goroutines and processes append to one log
// that rotates every few records, some of them with no MaxSize of their
// own: the chain must run unbroken across the files, with every record once.
func TestConcurrentRotation(t *testing.T) {
	const goroutines, procs = 6, 3
	size := recordSize(t)
	maxSize := 40 * size
	path := filepath.Join(t.TempDir(), "audit.log")
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnvPath+"="+path, helperEnvWriter+"=proc"+strconv.Itoa(p), helperEnvMaxSize+"="+strconv.FormatInt(maxSize, 10))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			var opts []Option
			if g%3 != 0 { // some writers do not rotate, but must follow
				opts = append(opts, MaxSize(maxSize))
			}
			l, err := Open(path, opts...)
			if err != nil {
				errs <- err
				return
			}
			defer l.Close()
			for i := range perWriter {
				r := testRecord(i)
				r.Server = fmt.Sprintf("goroutine%d", g)
				if i%7 == 0 {
					err = l.AppendAll([]*Record{r, testRecord(i)})
				} else {
					err = l.Append(r)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := VerifyFiles(files, FromGenesis)
	if err != nil {
		t.Fatalf("VerifyFiles over %d files: %v", len(files), err)
	}
	// A write to a file after its rotation would fork the chain, and
	// VerifyFiles would find the next file's first record out of line.
	total := 0
	for _, s := range sums {
		total += s.Records
	}
	extra := goroutines * ((perWriter + 6) / 7)
	if want := (goroutines+procs)*perWriter + extra; total != want {
		t.Fatalf("%d records across %d files, want %d", total, len(files), want)
	}
	if len(files) < 10 {
		t.Errorf("only %d files", len(files))
	}
	leftovers, _ := filepath.Glob(path + ".rotate-*")
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestNextFileWaitsForFirstLine: a follower that finds the new file of a
// rotation before the writer has put a whole line in it waits, rather than
// taking the empty or half-written file for a replacement.
func TestNextFileWaitsForFirstLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	appendRecords(t, l, 1, 2)
	l.Close()
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	st, _ := old.Stat()
	lines := readLines(t, path)
	// The file the log goes on in, before and while its first line is
	// written.
	next := filepath.Join(dir, "next.log")
	for name, content := range map[string][]byte{"empty": nil, "half a line": lines[1][:len(lines[1])/2]} {
		os.WriteFile(next, content, 0o600)
		nf, err := nextFile(old, st.Size(), next)
		if nf != nil || err != nil {
			t.Errorf("%s: nextFile = %v, %v; want to wait (nil, nil)", name, nf, err)
		}
	}
	// A whole first line that does not continue the chain is refused.
	os.WriteFile(next, append(lines[0], '\n'), 0o600)
	if nf, err := nextFile(old, st.Size(), next); nf != nil || err == nil || !strings.Contains(err.Error(), "does not continue its chain") {
		t.Errorf("a foreign file: nextFile = %v, %v", nf, err)
	}
}
