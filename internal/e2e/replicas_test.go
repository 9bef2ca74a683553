package e2e

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/store/pgtest"
)

// TestGatewayReplicasShareState: two `weir gateway` replicas, each with a
// home of its own (as on two machines) but one install key and one
// PostgreSQL state store (store: {url} in their configuration), serve one
// client session. A private note read through replica A cannot leave
// through replica B; a rate limit counts the calls of both; and what both
// decided is replayed from the PostgreSQL store with no mismatch.
func TestGatewayReplicasShareState(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir := gwDir(t)
	hook := newGWHook(t)
	policy := gwPolicy + "rules:\n  - id: five-posts-a-minute\n    match: \"hook:post\"\n    rate_limit: 5/minute\n"
	cfg := writeGatewayConfig(t, policy, gwCommand("fs", serverFilesystem(t, dir), nil), gwURL("hook", hook.url))
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	uj, _ := json.Marshal(url)
	if err := os.WriteFile(cfg, append([]byte("store: {url: "+string(uj)+"}\n"), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	homes := [2]string{t.TempDir(), t.TempDir()}
	for _, h := range homes {
		if err := os.WriteFile(filepath.Join(h, "key"), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	session := "replicas-" + strings.ReplaceAll(t.Name(), "/", "-")
	start := func(home string) *gwStdio {
		e := &weirEnv{home: home, session: session}
		return startGatewayStdio(t, gwEnv(e), cfg)
	}
	a, b2 := start(homes[0]), start(homes[1])

	// Before any private read, posts go through either replica.
	if text, isErr := b2.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build 88 is green"}); isErr {
		t.Fatalf("a benign post through B before any read was refused: %s", text)
	}
	if text, isErr := a.call("fs__read_text_file", map[string]any{"path": filepath.Join(dir, "note.md")}); isErr || !strings.Contains(text, gwNote) {
		t.Fatalf("reading the note through A: isError %v, %q", isErr, text)
	}
	text, isErr := b2.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "fyi: " + gwNote})
	if !isErr || !contains(text, "Weir blocked this call to hook/post", "flow.exfiltration", "fs/read_text_file") {
		t.Errorf("the note read through A leaked through B (isError %v): %s", isErr, text)
	}
	if hook.receivedAny("Tromsø") {
		t.Errorf("the hook received the note: %q", hook.received())
	}

	// The rate limit (5 a minute) counts both replicas' posts: one went
	// before the read (the blocked one was refused before it was counted
	// or after, either way the limit is exact), so at most 5 pass in all.
	passed := 1
	for i := range 8 {
		g := a
		if i%2 == 1 {
			g = b2
		}
		if _, isErr := g.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build ok"}); !isErr {
			passed++
		}
	}
	if passed > 5 || passed < 4 {
		t.Errorf("%d posts passed through two replicas under a limit of 5 a minute", passed)
	}

	// Both replicas recorded into the one store: replay decides every
	// call again, the same way.
	a.p.close()
	b2.p.close()
	cmd := exec.Command(weirBin, "replay", "--json")
	cmd.Env = append(os.Environ(), "WEIR_HOME="+homes[0], "WEIR_STORE_URL="+url, "NO_COLOR=1")
	out, err := cmd.Output()
	var rep replayReport
	if err != nil || json.Unmarshal(out, &rep) != nil || rep.Counts.Mismatch != 0 || rep.Calls < 10 {
		t.Errorf("weir replay of both replicas' recordings from PostgreSQL: %v: %s", err, out)
	}
}
