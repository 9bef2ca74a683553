package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScratchTypeScriptClient stores a real server's list result as a
// table and queries it, end to end: the TypeScript SDK client, weir run,
// and server-filesystem's directory_tree over a generated folder of 45
// entries. The client gets a handle instead of the tree, weir_query
// answers exactly (counts per type, the longest name), and sending on a
// query's answer over the private table to a sink is blocked — the answer
// is text that appears nowhere in the tree itself — while an ordinary
// message passes.
func TestScratchTypeScriptClient(t *testing.T) {
	f := newFixture(t)
	tree := filepath.Join(f.dir, "board")
	for i := range 40 {
		name := fmt.Sprintf("minutes-%03d-acquisition-of-northwind-%s.txt", i, strings.Repeat("x", i%7))
		if err := os.MkdirAll(tree, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, name), []byte("minutes\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if err := os.Mkdir(filepath.Join(tree, fmt.Sprintf("archive-%d", i)), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	pol := "version: 1\nscratch: {tools: [\"files:directory_tree\"]}\ntools:\n" +
		"  - {match: \"files:directory_tree\", labels: [private]}\n" +
		"  - {match: \"everything:echo\", labels: [sink]}\n"
	if err := os.WriteFile(f.policy, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	server := func(name string, argv []string) map[string]any {
		return map[string]any{
			"command": weirBin,
			"args":    append([]string{"run", "--name", name, "--policy", f.policy, "--"}, argv...),
			"env":     map[string]string{"WEIR_HOME": f.env.home},
		}
	}
	query := func(sql string) map[string]any {
		return map[string]any{"server": "files", "tool": "weir_query", "arguments": map[string]string{"sql": sql}}
	}
	got := runTSClient(t, npmPeer(t, "client.mjs"), map[string]any{
		"servers": map[string]any{"files": server("files", f.filesFS), "everything": server("everything", f.every)},
		"calls": []map[string]any{
			{"server": "files", "tool": "directory_tree", "arguments": map[string]string{"path": tree}},
			query("SELECT type, count(*) AS n FROM {{handle}} GROUP BY type ORDER BY type"),
			query("SELECT max(length(name)) AS longest FROM {{handle}}"),
			query("SELECT group_concat(length(name) * 104729 + 7919, ' ') AS code FROM {{handle}}"),
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": "{{last}}"}},
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": "the tree is stored"}},
		},
	})
	if len(got) != 6 {
		t.Fatalf("%d results, want 6", len(got))
	}
	handle := got[0].Text
	if got[0].IsError || !contains(handle, "45 rows", "weir_query", "name", "type") || strings.Contains(handle, "minutes-039") {
		t.Errorf("directory_tree: want a handle of 45 rows and a preview, got %q", handle)
	}
	if got[1].IsError || !contains(got[1].Text, "| directory | 5 |", "| file | 40 |") {
		t.Errorf("counts per type: %q", got[1].Text)
	}
	if got[2].IsError || !contains(got[2].Text, "| 47 |") { // minutes-NNN-acquisition-of-northwind-xxxxxx.txt
		t.Errorf("longest name: %q", got[2].Text)
	}
	if got[3].IsError || !strings.Contains(got[3].Text, fmt.Sprint(41*104729+7919)) {
		t.Errorf("derived code: %q", got[3].Text)
	}
	if !got[4].IsError || !contains(got[4].Text, "Weir blocked", "files/weir_query") {
		t.Errorf("sending on the private query's answer: isError %v, %q", got[4].IsError, got[4].Text)
	}
	if got[5].IsError {
		t.Errorf("an ordinary message was refused: %q", got[5].Text)
	}
	assertNoSecretAtRest(t, f.env.home)
}
