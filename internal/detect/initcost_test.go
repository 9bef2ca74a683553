package detect

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// maxInitBytes bounds what loading the package allocates. Thousands of
// pattern words are compiled then, each through a view: when a view's
// buffers did not go back to the pool, loading allocated 20 MB, which
// every process (an idle proxy among them) kept as heap it never used.
const maxInitBytes = 8 << 20

func TestInitAllocations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs the test binary again, and counts what the race detector does not add")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`init github.com/weir-sec/weir/internal/detect @[^,]*, [^,]* clock, (\d+) bytes, (\d+) allocs`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no inittrace line for internal/detect in:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	t.Logf("loading internal/detect allocates %d bytes in %s allocations", n, m[2])
	if n > maxInitBytes {
		t.Errorf("loading internal/detect allocates %d bytes, want at most %d", n, maxInitBytes)
	}
}
