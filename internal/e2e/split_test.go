package e2e

import (
	"path/filepath"
	"testing"
	"time"
)

// TestSplitLeakThroughProxies: the planted minutes, read through
// server-filesystem's proxy, posted 30 characters at a time to
// server-everything's echo through its own proxy (real subprocesses, the
// Go SDK client): the first piece goes out, a later one is refused as a
// leak split across calls, and ordinary messages before and after pass.
// Every decision replays from its recording at cleanup, the joined view
// included.
func TestSplitLeakThroughProxies(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	f := newFixture(t)
	files := f.connect(t, ctx, "files", f.filesFS, "")
	every := f.connect(t, ctx, "everything", f.every, "")
	if _, isErr := call(t, ctx, every, "echo", map[string]any{"message": "standup moved to ten"}); isErr {
		t.Fatal("an ordinary message before any read was refused")
	}
	if _, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "minutes.txt")}); isErr {
		t.Fatal("reading the minutes failed")
	}
	var refused string
	sent := 0
	for i := 0; i < len(secretText) && refused == ""; i += 30 {
		text, isErr := call(t, ctx, every, "echo", map[string]any{"message": secretText[i:min(len(secretText), i+30)]})
		if isErr {
			refused = text
			break
		}
		sent++
	}
	if refused == "" {
		t.Fatalf("all %d pieces of the minutes went out", sent)
	}
	if sent == 0 || sent > 3 {
		t.Errorf("%d pieces went out before the refusal; want one to three", sent)
	}
	if !contains(refused, "Weir blocked", "files/read_text_file", "split across") {
		t.Errorf("refusal: %q", refused)
	}
	if _, isErr := call(t, ctx, every, "echo", map[string]any{"message": "lunch order goes in at half eleven"}); isErr {
		t.Error("an ordinary message after the refusal was refused")
	}
}
