package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadBackAcrossSessions launders a private file through a real
// server-memory graph whose tools the policy leaves unlabelled (as a
// user's own notes server would be): session A reads it from
// server-filesystem and saves it as an observation (allowed: a local
// store); session B, a later client with nothing read, reads the graph
// back and tries to send the note out through server-everything's echo (a
// sink here). The text written while tainted is tainted when it comes
// back, so the send is blocked; a read that does not carry it is not.
func TestReadBackAcrossSessions(t *testing.T) {
	ctx := ctxT(t, 90*time.Second)
	f := newFixture(t)
	if err := os.WriteFile(f.policy, []byte(sinkPolicy+"  - {match: \"memory:*\", labels: []}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	memory := func(session string) []string {
		// One graph file for both sessions, as one user's memory server.
		return append([]string{"env", "MEMORY_FILE_PATH=" + memFile}, serverMemory(t)...)
	}
	files := f.connect(t, ctx, "files", f.filesFS, "a")
	memA := f.connect(t, ctx, "memory", memory("a"), "a")
	note, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "minutes.txt")})
	if isErr {
		t.Fatal(note)
	}
	entity := map[string]any{"entities": []map[string]any{
		{"name": "minutes", "entityType": "note", "observations": []string{strings.TrimSpace(note)}},
		{"name": "standup", "entityType": "meeting", "observations": []string{"Standup moves to ten on Fridays from next week onwards."}},
	}}
	if text, isErr := call(t, ctx, memA, "create_entities", entity); isErr {
		t.Fatalf("saving the note to the local memory graph was refused: %s", text)
	}
	memA.Close()

	memB := f.connect(t, ctx, "memory", memory("b"), "b")
	every := f.connect(t, ctx, "everything", f.every, "b")
	standup, isErr := call(t, ctx, memB, "search_nodes", map[string]any{"query": "standup"})
	if isErr || !strings.Contains(standup, "Standup moves") || strings.Contains(standup, secretText[:40]) {
		t.Fatalf("search_nodes: %v %.200s", isErr, standup)
	}
	if text, isErr := call(t, ctx, every, "echo", map[string]any{"message": "Standup moves to ten on Fridays from next week onwards."}); isErr {
		t.Errorf("text saved next to the note, read back without it, was blocked: %s", text)
	}
	graph, isErr := call(t, ctx, memB, "read_graph", map[string]any{})
	if isErr || !strings.Contains(graph, secretText[:40]) {
		t.Fatalf("read_graph: %v %.200s", isErr, graph)
	}
	text, isErr := call(t, ctx, every, "echo", map[string]any{"message": "minutes: " + secretText})
	if !isErr || !strings.Contains(text, "Weir blocked") || !strings.Contains(text, "memory/read_graph") {
		t.Errorf("sending the laundered note: blocked %v: %s", isErr, text)
	}
	// The memory proxy writes its records within milliseconds, on its own.
	readBack := 0
	for deadline := time.Now().Add(5 * time.Second); readBack == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, r := range auditRecords(t, f.env.home) {
			if r["rule"] == "flow.read_back" && r["tool"] == "read_graph" {
				readBack++
			}
		}
	}
	if readBack != 1 {
		t.Errorf("%d flow.read_back records of read_graph in the audit log, want 1", readBack)
	}
	assertNoSecretAtRest(t, f.env.home)
}
