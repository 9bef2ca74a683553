package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// toolsCall builds a tools/call request of about size bytes shaped like the
// large calls agents send: a file write whose content is prose with quotes,
// escapes and brackets in it, plus a list of small structured edits.
func toolsCall(size int) []byte {
	const para = `Line with "quoted" text, a path C:\\dir\\file and [brackets] {braces} inside a string.\n`
	type edit struct {
		OldText string         `json:"oldText"`
		NewText string         `json:"newText"`
		Range   map[string]any `json:"range"`
		Tags    []string       `json:"tags"`
	}
	var content strings.Builder
	for content.Len() < size/2 {
		content.WriteString(para)
	}
	var edits []edit
	args := map[string]any{"path": "/home/user/project/src/main.go", "content": content.String(), "dryRun": false}
	base, _ := json.Marshal(args)
	total := len(base) + 160 // the envelope and params around arguments
	for n := 0; total < size; n++ {
		e := edit{
			OldText: fmt.Sprintf("func old%d() {}", n),
			NewText: fmt.Sprintf("func new%d() { return }", n),
			Range:   map[string]any{"start": map[string]int{"line": n, "col": 1}, "end": map[string]int{"line": n + 1, "col": 0}},
			Tags:    []string{"refactor", "rename"},
		}
		b, _ := json.Marshal(e)
		total += len(b) + 1
		edits = append(edits, e)
	}
	args["edits"] = edits
	params, _ := json.Marshal(map[string]any{"name": "write_file", "arguments": args, "_meta": map[string]any{"progressToken": 17}})
	return []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":` + string(params) + `}`)
}

func BenchmarkParse(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		msg := toolsCall(size)
		if _, err := Parse(msg); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValid measures Valid, the one-pass validator every message
// crosses, beside encoding/json.Valid on the same bytes.
func BenchmarkValid(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		msg := toolsCall(size)
		for _, v := range []struct {
			name  string
			valid func([]byte) bool
		}{{"weir", Valid}, {"encoding-json", json.Valid}} {
			b.Run(fmt.Sprintf("%s/%dKB", v.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(msg)))
				for b.Loop() {
					if !v.valid(msg) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}
