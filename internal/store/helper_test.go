package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
)

// The tests re-execute the test binary as helper processes: a subprocess
// runs TestHelperProcess with WEIR_STORE_HELPER naming what to do, prints
// its results on stdout as lines "OUT ...", and reports failure through its
// exit status and stderr.

const helperEnv = "WEIR_STORE_HELPER"

// helperArgs returns the environment and command line that run the helper
// named mode.
func helperArgs(mode string) (env []string, argv []string) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return []string{helperEnv + "=" + mode}, []string{exe, "-test.run=^TestHelperProcess$", "-test.count=1"}
}

// helperCommand is an exec.Cmd running the helper directly.
func helperCommand(t testing.TB, mode string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	env, argv := helperArgs(mode)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), env...), extraEnv...)
	return cmd
}

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	if err := runHelper(mode); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runHelper(mode string) error {
	switch mode {
	case "sessionkey":
		key, how, err := SessionKey()
		if err != nil {
			return err
		}
		fmt.Printf("OUT %s\t%s\n", key, how)
		fmt.Printf("CHAIN %s\n", strings.Join(ancestors(), " "))
		return nil
	case "loadkey":
		key, err := LoadKey(os.Getenv("WEIR_TEST_HOME"))
		if err != nil {
			return err
		}
		fmt.Printf("OUT %s\n", hex.EncodeToString(key))
		return nil
	case "open":
		s, err := openDSN(context.Background(), os.Getenv("WEIR_TEST_DB"))
		if err != nil {
			return err
		}
		return s.Close()
	case "append":
		return helperAppend()
	case "migrate":
		return helperMigrate()
	case "take":
		return helperTake()
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// helperAppend appends WEIR_TEST_N observations, alternating between
// sessions A and B, and after each checks that its own mirror of that
// session sees the row it wrote.
func helperAppend() error {
	ctx := context.Background()
	n, _ := strconv.Atoi(os.Getenv("WEIR_TEST_N"))
	id := os.Getenv("WEIR_TEST_ID")
	s, err := openDSN(ctx, os.Getenv("WEIR_TEST_DB"))
	if err != nil {
		return err
	}
	defer s.Close()
	// Wait for the starting gun, so all writers overlap.
	if err := awaitGun(); err != nil {
		return err
	}
	mirrors := map[string]*flow.Session{"A": {}, "B": {}}
	for i := range n {
		sess := "AB"[i%2 : i%2+1]
		o := testObservation(sess, id, i)
		seq, err := s.Append(ctx, sess, o)
		if err != nil {
			return fmt.Errorf("append %d: %w", i, err)
		}
		m := mirrors[sess]
		if err := s.Sync(ctx, sess, m); err != nil {
			return fmt.Errorf("sync %d: %w", i, err)
		}
		if m.Watermark < seq {
			return fmt.Errorf("mirror of %s at %d after appending %d", sess, m.Watermark, seq)
		}
		if got := m.PrintSources(nil, o.Prints[0]); len(got) != 1 {
			return fmt.Errorf("own print of row %d found in %d sources", seq, len(got))
		}
		if got := m.IdentSources(nil, o.Idents[0]); len(got) != 1 {
			return fmt.Errorf("own ident of row %d found in %d sources", seq, len(got))
		}
		// A proxy appends after each tool result, not in a tight loop;
		// pausing lets the other writers in between.
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	}
	return nil
}

// awaitGun waits for the file WEIR_TEST_GO to appear, when it is set, so
// that all helpers start their work at once. When WEIR_TEST_READY is set
// too, it first creates that file, to say this helper is ready.
func awaitGun() error {
	gun := os.Getenv("WEIR_TEST_GO")
	if gun == "" {
		return nil
	}
	if ready := os.Getenv("WEIR_TEST_READY"); ready != "" {
		if err := os.WriteFile(ready, nil, 0o600); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(gun); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no start signal at %s", gun)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// testObservation is row i of writer id in session sess. Its tool names all
// three, and its prints, digests and idents carry the session in their top
// byte so a row in the wrong mirror is visible.
func testObservation(sess, id string, i int) *flow.Observation {
	top := uint64(sess[0]) << 56
	w, _ := strconv.Atoi(id)
	base := top | uint64(w)<<32 | uint64(i)<<8
	return &flow.Observation{
		Tool:    fmt.Sprintf("%s/%s/%d", sess, id, i),
		Labels:  flow.Private,
		At:      time.Now().UnixMilli(),
		Prints:  []uint64{base | 1, base | 2, base | 3},
		Digests: []uint64{base | 4},
		Idents:  []uint64{base | 5},
	}
}

// helperError carries a helper's stderr with its exit status.
type helperError struct {
	err    error
	stderr string
}

func (e *helperError) Error() string { return e.err.Error() + "\n" + e.stderr }
func (e *helperError) Unwrap() error { return e.err }

func hexString(b []byte) string { return hex.EncodeToString(b) }

// outLines returns the lines a helper printed with the "OUT " prefix, without it.
func outLines(out []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "OUT "); ok {
			lines = append(lines, l)
		}
	}
	return lines
}
