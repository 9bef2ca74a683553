package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// replayReport is what weir replay --json says, read loosely.
type replayReport struct {
	Calls    int `json:"calls"`
	Sessions int `json:"sessions"`
	Counts   struct {
		Unchanged      int `json:"unchanged"`
		Mismatch       int `json:"mismatch"`
		NewlyBlocked   int `json:"newly_blocked"`
		NewlyEscalated int `json:"newly_escalated"`
		NewlyAllowed   int `json:"newly_allowed"`
	} `json:"counts"`
	Outcomes []struct {
		Server, Tool, Change, Verdict, Rule string
	} `json:"outcomes"`
}

// replay runs weir replay --json over a home's recordings.
func replay(t testing.TB, home string, args ...string) (replayReport, int) {
	t.Helper()
	cmd := exec.Command(weirBin, append([]string{"replay", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), "WEIR_HOME="+home, "NO_COLOR=1")
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("weir replay: %v", err)
	}
	var rep replayReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("weir replay --json: %v\n%s", err, out)
	}
	return rep, code
}

// assertReplayClean: every decision a test's proxies recorded is derived
// again, exactly, from the recordings alone.
func assertReplayClean(t *testing.T, home string) {
	t.Helper()
	rep, code := replay(t, home)
	if code != 0 || rep.Counts.Mismatch != 0 || rep.Calls == 0 || rep.Counts.Unchanged != rep.Calls {
		t.Errorf("weir replay (exit %d): %d calls, %d unchanged, %d mismatches: %+v", code, rep.Calls, rep.Counts.Unchanged, rep.Counts.Mismatch, rep.Outcomes)
	}
}

// TestRecordReplayLearn records a session through real npm servers
// (server-filesystem, server-everything, server-memory) and checks the
// three things the recordings are for:
//
//   - replay under the recorded policy finds no mismatch, and after the
//     session the recordings, like every file Weir writes, hold no value;
//   - replay against strict lists exactly the calls a live run of the same
//     session under strict blocks that the recorded run did not;
//   - weir learn writes a policy that weir policy check accepts, that
//     replayed against the recordings blocks nothing new, and that, run
//     live, allows the session's calls and refuses a tool it never used.
func TestRecordReplayLearn(t *testing.T) {
	ctx := ctxT(t, 120*time.Second)
	f := newFixture(t)
	// The session: read a private file, list its folder, keep a note in
	// the memory graph, search the web page-like echo, leak the file.
	const labels = "tools:\n  - {match: \"everything:echo\", labels: [sink]}\n  - {match: \"everything:get-annotated-message\", labels: [untrusted]}\n"
	if err := os.WriteFile(f.policy, []byte("version: 1\n"+labels), 0o600); err != nil {
		t.Fatal(err)
	}
	// run plays the session and returns, per step, whether Weir blocked it.
	run := func(t *testing.T, f *fixture, session string) map[string]bool {
		t.Helper()
		files := f.connect(t, ctx, "files", f.filesFS, session)
		every := f.connect(t, ctx, "everything", f.every, session)
		memory := f.connect(t, ctx, "memory", serverMemory(t), session)
		// The session ends before its recordings are read: a live proxy
		// stores them in batches (up to 250 ms late), one that ends
		// stores the rest.
		defer func() { files.Close(); every.Close(); memory.Close() }()
		blocked := map[string]bool{}
		for _, c := range []struct {
			server string
			call   func() (string, bool)
		}{
			{"files/read_text_file", func() (string, bool) {
				return call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "minutes.txt")})
			}},
			{"files/list_directory", func() (string, bool) {
				return call(t, ctx, files, "list_directory", map[string]any{"path": f.dir})
			}},
			{"memory/create_entities", func() (string, bool) {
				return call(t, ctx, memory, "create_entities", map[string]any{"entities": []map[string]any{{"name": "standup", "entityType": "meeting", "observations": []string{"moved to ten"}}}})
			}},
			{"everything/get-annotated-message", func() (string, bool) {
				return call(t, ctx, every, "get-annotated-message", map[string]any{"messageType": "success"})
			}},
			{"everything/echo", func() (string, bool) {
				return call(t, ctx, every, "echo", map[string]any{"message": "status: all green"})
			}},
			{"everything/echo#leak", func() (string, bool) {
				return call(t, ctx, every, "echo", map[string]any{"message": "FYI: " + secretText})
			}},
		} {
			text, isErr := c.call()
			if isErr && strings.Contains(text, "Weir blocked") {
				blocked[c.server] = true
			}
		}
		return blocked
	}
	recorded := run(t, f, "")
	if !recorded["everything/echo#leak"] || len(recorded) != 1 {
		t.Fatalf("recorded run blocked %v, want only the leak through everything/echo", recorded)
	}
	assertReplayClean(t, f.env.home)
	assertNoSecretAtRest(t, f.env.home)

	// Strict (with the same labels), replayed and live.
	strict := newFixture(t)
	if err := os.WriteFile(strict.policy, []byte("version: 1\npreset: strict\n"+labels), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, _ := replay(t, f.env.home, "--policy", strict.policy)
	var replayed []string
	for _, o := range rep.Outcomes {
		if o.Change == "newly blocked" {
			replayed = append(replayed, o.Server+"/"+o.Tool)
		}
	}
	// The same files, so the same text is read.
	strict.dir, strict.filesFS = f.dir, f.filesFS
	var live []string
	for step := range run(t, strict, "") {
		if !recorded[step] {
			tool, _, _ := strings.Cut(step, "#")
			live = append(live, tool)
		}
	}
	slices.Sort(replayed)
	slices.Sort(live)
	if len(live) == 0 || !slices.Equal(replayed, live) {
		t.Errorf("replay against strict newly blocks %v; a live run under strict newly blocks %v", replayed, live)
	}

	// Learn, check, replay, run.
	learned := filepath.Join(t.TempDir(), "learned.yaml")
	cmd := exec.Command(weirBin, "learn", "-o", learned)
	cmd.Env = append(os.Environ(), "WEIR_HOME="+f.env.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("weir learn: %v\n%s", err, out)
	}
	text, _ := os.ReadFile(learned)
	if out, err := exec.Command(weirBin, "policy", "check", learned).CombinedOutput(); err != nil {
		t.Fatalf("weir policy check of the learned policy: %v\n%s\n%s", err, out, text)
	}
	for _, want := range []string{"default_action: deny", `"files:read_text_file"`, "within: [", `#   "files:read_text_file -> everything:echo"`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("learned policy lacks %q:\n%s", want, text)
		}
	}
	if rep, code := replay(t, f.env.home, "--policy", learned, "--fail-on", "blocked"); code != 0 || rep.Counts.NewlyBlocked+rep.Counts.NewlyEscalated != 0 {
		t.Errorf("replay against the learned policy (exit %d): %+v\n%s", code, rep, text)
	}
	f.policy = learned
	files := f.connect(t, ctx, "files", f.filesFS, "learned")
	if text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "minutes.txt")}); isErr {
		t.Errorf("under the learned policy, the recorded read is refused: %s", text)
	}
	if text, isErr := call(t, ctx, files, "write_file", map[string]any{"path": filepath.Join(f.dir, "x.txt"), "content": "x"}); !isErr || !strings.Contains(text, "default_action") {
		t.Errorf("under the learned policy, a tool the session never used is allowed: %s", text)
	}
	if text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": "/etc/hostname"}); !isErr || !strings.Contains(text, "outside") {
		t.Errorf("under the learned policy, a read outside the folders the session read is allowed: %s", text)
	}
}
