package store

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestParseStat(t *testing.T) {
	// comm with spaces and parentheses, as a process may name itself.
	line := "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	p, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if p.pid != 4242 || p.ppid != 17 || p.name != "a) b (c)" || p.start != 987654 {
		t.Errorf("parseStat = %+v", p)
	}
	for _, bad := range []string{"", "12 noparens", "12 (x) S 1 2", "x (y) S 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

func TestReadProcSelf(t *testing.T) {
	p, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.ppid != os.Getppid() || p.start == 0 || len(p.argv) == 0 || p.argv[0] != os.Args[0] {
		t.Errorf("readProc(self) = %+v", p)
	}
	if _, err := readProc(1 << 30); err == nil {
		t.Error("readProc of a missing pid succeeded")
	}
}

// runKey runs the sessionkey helper through a command line and returns the
// key and description it printed.
func runKey(t *testing.T, name string, args ...string) (key, how, chain string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	env, _ := helperArgs("sessionkey")
	cmd.Env = append(withoutEnv(os.Environ(), "WEIR_SESSION"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, stderr.String())
	}
	keys := outLines(out)
	if len(keys) != 1 {
		t.Fatalf("%s %q printed %q", name, args, out)
	}
	key, how, _ = strings.Cut(keys[0], "\t")
	return key, how, chainLine(out)
}

// chainLine is the CHAIN line a sessionkey helper printed.
func chainLine(out []byte) string {
	for l := range strings.Lines(string(out)) {
		if c, ok := strings.CutPrefix(strings.TrimSpace(l), "CHAIN "); ok {
			return c
		}
	}
	return ""
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// selfKey is the key naming this test process as the client.
func selfKey(t *testing.T) string {
	p, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return "pid:" + strconv.Itoa(p.pid) + ":" + strconv.FormatUint(p.start, 10)
}

// selfName is this test process's name as the walk sees it.
func selfName(t *testing.T) string {
	p, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return baseName(p.name)
}

// helperShell is the helper's command line quoted for sh.
func helperShell() string {
	_, argv := helperArgs("sessionkey")
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func TestSessionKeyLaunchers(t *testing.T) {
	want := selfKey(t)
	// "; exit $?" keeps each sh alive as a parent rather than exec'ing.
	cmd := helperShell()
	cases := []struct {
		name   string
		argv   []string
		passed string // launchers the walk passes, nearest first
	}{
		{"sh -c chain", []string{"sh", "-c", "sh -c \"bash -c '" + strings.ReplaceAll(cmd, "'", `'"'"'`) + "; exit \\$?'; exit \\$?\"; exit $?"}, "bash sh sh"},
		// env execs the program it runs, so it never stays a parent; the
		// shell it starts does. The fake-table test covers a live env.
		{"env launcher", []string{"env", "WEIR_X=1", "sh", "-c", cmd + "; exit $?"}, "sh"},
		{"dash under env", []string{"sh", "-c", "env dash -c \"" + strings.ReplaceAll(cmd, `"`, `\"`) + "; exit \\$?\"; exit $?"}, "dash sh"},
		{"direct child", append([]string{os.Args[0]}, "-test.run=^TestHelperProcess$", "-test.count=1"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, how, chain := runKey(t, c.argv[0], c.argv[1:]...)
			if key != want {
				t.Errorf("key = %q (%s), want %q (this test process)", key, how, want)
			}
			if !strings.HasPrefix(how, "client process ") {
				t.Errorf("how = %q", how)
			}
			// The chain ends at this test process, the client.
			passed := strings.TrimSpace(strings.TrimSuffix(chain, selfName(t)))
			if passed != c.passed {
				t.Errorf("launchers passed = %q, want %q (chain %q)", passed, c.passed, chain)
			}
		})
	}
}

func TestSessionKeyWeirSessionWins(t *testing.T) {
	cmd := helperCommand(t, "sessionkey", "WEIR_SESSION=team-1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := outLines(out); len(got) != 1 || got[0] != "env:team-1\tWEIR_SESSION" {
		t.Errorf("got %q", got)
	}
}

// nodeClient writes a node script that runs the helper twice (as a client
// starting two servers would) through sh, and prints its own pid and start.
func nodeClient(t *testing.T, dir, file string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	_, argv := helperArgs("sessionkey")
	script := `
const { spawnSync } = require('child_process');
const argv = ` + jsonArray(argv) + `;
for (let i = 0; i < 2; i++) {
  const r = spawnSync('sh', ['-c', '"$0" "$@"; exit $?', ...argv], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) process.exit(1);
}
console.log('OUT node ' + process.pid);
`
	path := filepath.Join(dir, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func jsonArray(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// runNode runs a node client script and returns the keys its helpers
// printed and node's pid.
func runNode(t *testing.T, args ...string) (keys []string, nodePID int, chain string) {
	t.Helper()
	cmd := exec.Command("node", args...)
	env, _ := helperArgs("sessionkey")
	cmd.Env = append(withoutEnv(os.Environ(), "WEIR_SESSION"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %q: %v\n%s", args, err, stderr.String())
	}
	for _, l := range outLines(out) {
		if p, ok := strings.CutPrefix(l, "node "); ok {
			nodePID, _ = strconv.Atoi(p)
			continue
		}
		k, _, _ := strings.Cut(l, "\t")
		keys = append(keys, k)
	}
	if len(keys) != 2 || nodePID == 0 {
		t.Fatalf("node %q printed %q", args, out)
	}
	return keys, nodePID, chainLine(out)
}

func TestSessionKeyNodeClient(t *testing.T) {
	script := nodeClient(t, t.TempDir(), "client.js")
	keys, pid, chain := runNode(t, script)
	if chain != "sh node" {
		t.Errorf("chain = %q, want the walk to pass sh and stop at node", chain)
	}
	if keys[0] != keys[1] {
		t.Errorf("two servers of one node client got keys %q and %q", keys[0], keys[1])
	}
	if want := "pid:" + strconv.Itoa(pid) + ":"; !strings.HasPrefix(keys[0], want) {
		t.Errorf("key %q does not name the node client (pid %d)", keys[0], pid)
	}
}

func TestSessionKeyNodeRunningNPX(t *testing.T) {
	// node running npx's entry point is a launcher: the walk passes it and
	// finds this test process.
	script := nodeClient(t, t.TempDir(), "npm/bin/npx-cli.js")
	keys, _, chain := runNode(t, script)
	if chain != "sh node "+selfName(t) {
		t.Errorf("chain = %q, want the walk to pass sh and node", chain)
	}
	if want := selfKey(t); keys[0] != want || keys[1] != want {
		t.Errorf("keys %q, want %q (this test process)", keys, want)
	}
}

func TestSessionKeySiblingClients(t *testing.T) {
	script := nodeClient(t, t.TempDir(), "client.js")
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]int{}
	)
	for range 2 {
		wg.Go(func() {
			keys, pid, _ := runNode(t, script)
			mu.Lock()
			defer mu.Unlock()
			seen[keys[0]] = pid
		})
	}
	wg.Wait()
	if len(seen) != 2 {
		t.Errorf("two sibling clients share a session: %v", seen)
	}
}

// TestSessionKeyRealNPX runs the helper as the bin of a local package
// through the real npx, which renames its node process "npm exec ..." and
// runs the bin through sh.
func TestSessionKeyRealNPX(t *testing.T) {
	if testing.Short() {
		t.Skip("npx takes seconds to start")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not installed")
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"package.json": `{"name":"weir-store-helper","version":"1.0.0","bin":{"weir-store-helper":"run.sh"}}`,
		// No exec: the script's shell stays a parent of the helper.
		"run.sh": "#!/bin/sh\n" + helperShell() + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npx", "--yes", "--offline", pkg)
	env, _ := helperArgs("sessionkey")
	cmd.Env = append(withoutEnv(os.Environ(), "WEIR_SESSION"), env...)
	cmd.Env = append(cmd.Env,
		"npm_config_cache="+filepath.Join(dir, "cache"),
		"npm_config_update_notifier=false", "npm_config_audit=false",
		"npm_config_fund=false", "npm_config_loglevel=error")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("npx: %v\n%s", err, stderr.String())
	}
	keys := outLines(out)
	if len(keys) != 1 {
		t.Fatalf("npx printed %q", out)
	}
	key, how, _ := strings.Cut(keys[0], "\t")
	if want := selfKey(t); key != want {
		t.Errorf("key = %q (%s), want %q (this test process); chain %q", key, how, want, chainLine(out))
	}
	if chain := chainLine(out); chain != "weir-store-help sh npm "+selfName(t) {
		t.Errorf("chain = %q", chain)
	}
}
