package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

// catalogueResult is the tools/list result of one real server, from the
// poisoning evaluation set's benign definitions.
func catalogueResult(b testing.TB, server string) json.RawMessage {
	b.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "poisoning", "benign.jsonl"))
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	var tools []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct {
			Server      string          `json:"server"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations json.RawMessage `json:"annotations,omitempty"`
		}
		if json.Unmarshal(sc.Bytes(), &d) != nil || d.Server != server {
			continue
		}
		t, _ := json.Marshal(d)
		tools = append(tools, t)
	}
	if len(tools) == 0 {
		b.Skipf("no tools of %s", server)
	}
	res, _ := json.Marshal(map[string]any{"tools": tools})
	return res
}

// BenchmarkToolList is the relay's work on a tools/list result of a real
// 89-tool catalogue (cloudflare's), listed again and again as clients do:
// reading, labelling, detectors, pins and the decision.
func BenchmarkToolList(b *testing.B) {
	raw := catalogueResult(b, "cloudflare")
	pol, _ := policyfile.Preset("default")
	x := New(Options{Server: "cloudflare", Session: "s", Policy: pol, Store: store.NewMemory()})
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(raw)})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := &pending{method: "tools/list"}
		if _, ok := x.onList(ctx, p, raw, line); !ok {
			b.Fatal("list refused")
		}
	}
}

// BenchmarkToolListFirst is the same list seen for the first time in a
// process: nothing cached.
func BenchmarkToolListFirst(b *testing.B) {
	raw := catalogueResult(b, "cloudflare")
	pol, _ := policyfile.Preset("default")
	x := New(Options{Server: "cloudflare", Session: "s", Policy: pol, Store: store.NewMemory()})
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(raw)})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		x.gather.Cache = NewListCache()
		if _, ok := x.onList(ctx, &pending{method: "tools/list"}, raw, line); !ok {
			b.Fatal("list refused")
		}
	}
}

// BenchmarkToolListRepeated is a large real catalogue (gitlab's 118
// tools, 160 KB) listed again and again through a relay on a real SQLite
// state file: the path a client's repeated tools/list takes, from the
// line read off the server to the line sent to the client.
func BenchmarkToolListRepeated(b *testing.B) {
	var c struct {
		Tools json.RawMessage `json:"tools"`
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "catalogues", "gitlab.json"))
	if err != nil {
		b.Skip(err)
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	pol, _ := policyfile.Preset("default")
	x := New(Options{Server: "gitlab", Session: "s", Policy: pol, Store: st})
	result, _ := json.Marshal(map[string]any{"tools": c.Tools})
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(result)})
	for range 2 { // the first pins, the second is kept
		if _, ok := x.onList(ctx, &pending{method: "tools/list"}, result, line); !ok {
			b.Fatal("list refused")
		}
	}
	decided := x.listsDecided
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := x.onList(ctx, &pending{method: "tools/list"}, result, line); !ok {
			b.Fatal("list refused")
		}
	}
	if x.listsDecided != decided {
		b.Fatalf("%d lists decided in full again", x.listsDecided-decided)
	}
}
