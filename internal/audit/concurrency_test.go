package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

func sha256hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

const (
	helperEnvPath   = "WEIR_AUDIT_HELPER_LOG"
	helperEnvWriter = "WEIR_AUDIT_HELPER_WRITER"
	perWriter       = 200
)

// TestHelperProcess is not a test: TestConcurrentAppend runs the test
// binary again with it selected and the environment set, to append from
// another process.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnvPath)
	if path == "" {
		t.Skip("helper process for TestConcurrentAppend")
	}
	writer := os.Getenv(helperEnvWriter)
	var opts []Option
	if n, err := strconv.ParseInt(os.Getenv(helperEnvMaxSize), 10, 64); err == nil {
		opts = append(opts, MaxSize(n))
	}
	l, err := Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < perWriter; i++ {
		r := testRecord(i)
		r.Server = writer
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentAppend has 8 goroutines (half sharing one Log, half with a
// Log each) and 4 other processes append to one file at once.
func TestConcurrentAppend(t *testing.T) {
	const goroutines, procs = 8, 4
	path := filepath.Join(t.TempDir(), "audit.log")
	shared, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()

	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnvPath+"="+path, helperEnvWriter+"=proc"+strconv.Itoa(p))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}

	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := shared
			if g%2 == 1 {
				own, err := Open(path)
				if err != nil {
					errs <- err
					return
				}
				defer own.Close()
				l = own
			}
			for i := 0; i < perWriter; i++ {
				r := testRecord(i)
				r.Server = fmt.Sprintf("goroutine%d", g)
				if err := l.Append(r); err != nil {
					errs <- err
					return
				}
			}
		}()
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

	const total = (goroutines + procs) * perWriter
	sum, err := verifyFile(t, path)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if sum.Records != total {
		t.Fatalf("Records = %d, want %d", sum.Records, total)
	}
	recs, err := Tail(path, total+10)
	if err != nil {
		t.Fatal(err)
	}
	perServer := map[string]int{}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		perServer[r.Server]++
	}
	if len(perServer) != goroutines+procs {
		t.Fatalf("writers seen: %v", perServer)
	}
	for s, n := range perServer {
		if n != perWriter {
			t.Errorf("%s wrote %d records, want %d", s, n, perWriter)
		}
	}
}
