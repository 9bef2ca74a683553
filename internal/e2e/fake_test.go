package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// fakeServer is a deliberately misbehaving MCP server, run by re-executing
// the test binary with WEIR_E2E_FAKE set. It answers initialize and
// tools/list, and for tools/call does what the tool's name says:
//
//	echo       answers normally
//	crash      exits with status 3 without answering
//	truncated  answers with a response cut off mid-JSON
//	garbage    writes a line that is not JSON, then answers normally
//	huge       answers with a result of WEIR_E2E_HUGE bytes
//
// With WEIR_E2E_FAKE=stubborn it also ignores the end of its input, so the
// proxy has to terminate it.
func fakeServer() {
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
		case "tools/list":
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"crash","inputSchema":{"type":"object"}},{"name":"truncated","inputSchema":{"type":"object"}},{"name":"garbage","inputSchema":{"type":"object"}},{"name":"huge","inputSchema":{"type":"object"}}]}}`)
		case "tools/call":
			switch m.Params.Name {
			case "crash":
				os.Exit(3)
			case "truncated":
				send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"cut o`)
				continue
			case "garbage":
				send(`this is not JSON`)
			case "huge":
				var n int
				fmt.Sscan(os.Getenv("WEIR_E2E_HUGE"), &n)
				send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", n) + `"}]}}`)
				continue
			}
			b, _ := json.Marshal(m.Params.Arguments)
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(mustJSON(string(b))) + `}]}}`)
		default:
			send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"method not found"}}`)
		}
	}
	if os.Getenv("WEIR_E2E_FAKE") == "stubborn" {
		time.Sleep(time.Hour)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
