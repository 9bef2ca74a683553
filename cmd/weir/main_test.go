package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/script")

var binDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "weir-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	// The real binary, built the way users build it: the CLI tests run it
	// as a subprocess, and it runs itself for the demo's proxies and servers.
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "weir"), ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building weir: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// TestScripts runs the CLI scripts in testdata/script: each runs weir
// commands and compares their output with golden files. Run with -update to
// rewrite the golden files after a reviewed change to user-facing text.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("PATH", binDir+string(os.PathListSeparator)+e.Getenv("PATH"))
			e.Setenv("WEIR_HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("WEIR_SESSION", "cli-test")
			e.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mask":      cmdMask,
			"session":   cmdSession,
			"jsonfield": cmdJSONField,
		},
	})
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
	{regexp.MustCompile(`time=\S+`), "time=TIME"},
	{regexp.MustCompile(`[0-9a-f]{64}`), "HASH"},
	{regexp.MustCompile(`[0-9a-f]{16}`), "KEYED"},
	{regexp.MustCompile(`asked [0-9hms]+ ago, expires in [0-9hms]+`), "asked AGO ago, expires in LEFT"},
}

// cmdMask rewrites a file with timestamps and hashes masked, so output that
// carries them can be compared with a golden file: mask FILE [VAR...]. Each
// VAR's value is replaced with $VAR first.
func cmdMask(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: mask FILE [VAR...]")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	for _, v := range args[1:] {
		if val := ts.Getenv(v); val != "" {
			data = bytes.ReplaceAll(data, []byte(val), []byte("$"+v))
		}
	}
	for _, m := range masks {
		data = m.re.ReplaceAll(data, []byte(m.with))
	}
	ts.Check(os.WriteFile(path, data, 0o644))
}

// cmdJSONField sets an environment variable from a JSON file: jsonfield
// VAR FILE INDEX KEY reads FILE's array, element INDEX, member KEY.
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: jsonfield VAR FILE INDEX KEY")
	}
	data, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	var list []map[string]any
	ts.Check(json.Unmarshal(data, &list))
	var i int
	if _, err := fmt.Sscan(args[2], &i); err != nil || i < 0 || i >= len(list) {
		ts.Fatalf("index %s out of range (%d elements)", args[2], len(list))
	}
	v, ok := list[i][args[3]].(string)
	if !ok {
		ts.Fatalf("element %d has no string %q", i, args[3])
	}
	ts.Setenv(args[0], v)
}

// cmdSession plays a client: session FILE CMD [ARGS...] starts CMD, sends
// FILE's lines one at a time, waits after each request for its response,
// then closes CMD's input and waits for it to exit. Everything CMD wrote to
// stdout becomes the script's stdout. (The stdin command would close the
// input at once, which tells an MCP server to shut down mid-request.)
func cmdSession(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: session FILE CMD [ARGS...]")
	}
	script, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	cmd := exec.Command(lookPath(ts, args[1]), args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = os.Environ()
	for _, k := range []string{"PATH", "WEIR_HOME", "WEIR_SESSION", "NO_COLOR", "HOME"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	ts.Check(err)
	outPipe, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	lines := make(chan string)
	var out strings.Builder
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for _, line := range strings.Split(strings.TrimSpace(string(script)), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal([]byte(line), &m)
		io.WriteString(in, line+"\n")
		if len(m.ID) == 0 {
			continue
		}
		for waiting := true; waiting; {
			select {
			case l, ok := <-lines:
				if !ok {
					ts.Fatalf("%s exited before answering id %s; stderr:\n%s", args[1], m.ID, stderr.String())
				}
				out.WriteString(l + "\n")
				var r struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				json.Unmarshal([]byte(l), &r)
				waiting = r.Method != "" || !bytes.Equal(r.ID, m.ID)
			case <-time.After(20 * time.Second):
				ts.Fatalf("no answer to id %s within 20s; stderr:\n%s", m.ID, stderr.String())
			}
		}
	}
	in.Close()
	for l := range lines {
		out.WriteString(l + "\n")
	}
	err = cmd.Wait()
	ts.Stdout().Write([]byte(out.String()))
	ts.Stderr().Write(stderr.Bytes())
	if neg != (err != nil) {
		ts.Fatalf("%s: exit %v (want failure: %v); stderr:\n%s", args[1], err, neg, stderr.String())
	}
}

// lookPath finds a command on the script's PATH (exec.Command would search
// the test process's).
func lookPath(ts *testscript.TestScript, name string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return name
}
