package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRateLimitSharedAcrossProxies: a rule's rate limit counts the calls of
// every proxy of the session, through the state store.
func TestRateLimitSharedAcrossProxies(t *testing.T) {
	e := newWeirEnv(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(pol, []byte("version: 1\nrules:\n  - id: three-a-minute\n    match: \"fake*:echo\"\n    rate_limit: 3/minute\n"), 0o600)
	a, atr := startFake(t, e, "normal", "--policy", pol)
	e2 := *e
	// A second proxy of the same session, under another server name.
	b := startPeer(t, e2.environ("WEIR_E2E_FAKE=normal"), append([]string{weirBin, "run", "--name", "fake2", "--policy", pol, "--"}, fake()...)...)
	btr := &transcript{}
	b.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	btr.await(t, b, "1")

	echo := func(p *peer, tr *transcript, id string) msg {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"n":` + id + `}}}`)
		return tr.await(t, p, id)
	}
	for i, step := range []struct {
		p       *peer
		tr      *transcript
		blocked bool
	}{{a, atr, false}, {b, btr, false}, {a, atr, false}, {b, btr, true}, {a, atr, true}} {
		m := echo(step.p, step.tr, string(rune('5'+i)))
		got := strings.Contains(string(m.Result), `"isError":true`)
		if got != step.blocked {
			t.Errorf("call %d: blocked %v, want %v: %s", i+1, got, step.blocked, m.Result)
		}
		if step.blocked && !strings.Contains(string(m.Result), "rate limit of rule three-a-minute (3/minute)") {
			t.Errorf("call %d: block reason: %s", i+1, m.Result)
		}
	}
}

// TestWithinAgainstRealFilesystem: a within rule on server-filesystem lets
// reads inside the allowed directory through and stops a symlink that
// points outside it, resolved on disk before the decision.
func TestWithinAgainstRealFilesystem(t *testing.T) {
	f := newFixture(t)
	allowed := filepath.Join(f.dir, "projects")
	os.Mkdir(allowed, 0o700)
	os.WriteFile(filepath.Join(allowed, "ok.txt"), []byte("fine to read\n"), 0o600)
	os.Symlink(filepath.Join(f.dir, "minutes.txt"), filepath.Join(allowed, "innocent.txt"))
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(pol, []byte("version: 1\nrules:\n  - id: projects-only\n    match: \"files:read_*\"\n    args:\n      path: {within: [\""+allowed+"\"]}\n    because: \"only the projects folder may be read\"\n"), 0o600)
	f.policy = pol
	ctx := ctxT(t, 60*time.Second)
	files := f.connect(t, ctx, "files", f.filesFS, "")
	if text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(allowed, "ok.txt")}); isErr {
		t.Errorf("a file inside the allowed folder was refused: %s", text)
	}
	for _, p := range []string{
		filepath.Join(allowed, "innocent.txt"),
		filepath.Join(allowed, "..", "minutes.txt"),
		allowed + "-evil/x.txt",
	} {
		text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": p})
		if !isErr || !strings.Contains(text, "rule projects-only") || !strings.Contains(text, "only the projects folder may be read") {
			t.Errorf("%s: want a block by projects-only, got %q", p, text)
		}
	}
}

// TestPolicyReloadOnSIGHUP: SIGHUP swaps the policy without dropping the
// session; a policy that fails to load keeps the old one.
func TestPolicyReloadOnSIGHUP(t *testing.T) {
	e := newWeirEnv(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(pol, []byte("version: 1\n"), 0o600)
	p, tr := startFake(t, e, "normal", "--policy", pol)
	echo := func(id string) bool {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
		return strings.Contains(string(tr.await(t, p, id).Result), `"isError":true`)
	}
	if echo("10") {
		t.Fatal("echo blocked before any rule")
	}
	hup := func() {
		p.cmd.Process.Signal(syscall.SIGHUP)
		time.Sleep(300 * time.Millisecond)
	}
	os.WriteFile(pol, []byte("version: 1\nrules:\n  - {id: no-echo, match: \"fake:echo\", when: 'true', because: no echo today}\n"), 0o600)
	hup()
	if !echo("11") {
		t.Errorf("the reloaded policy was not applied; stderr:\n%s", p.stderr.String())
	}
	os.WriteFile(pol, []byte("version: 1\nflow: {exfiltraton: block}\n"), 0o600)
	hup()
	if !echo("12") {
		t.Error("a policy that failed to load replaced the working one")
	}
	if !strings.Contains(p.stderr.String(), "policy reload failed; keeping the current policy") || !strings.Contains(p.stderr.String(), "exfiltraton") {
		t.Errorf("stderr does not explain the failed reload:\n%s", p.stderr.String())
	}
}
