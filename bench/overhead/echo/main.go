// Command echo is the Go MCP server of the overhead benchmark: MCP over
// stdio (newline-delimited JSON-RPC) with one tool, echo, that answers with
// a text of exactly arguments.size bytes (or, given arguments.message,
// that message). It does as little as an MCP server can, so what the
// benchmark times around it is the transport and whatever sits in it.
//
// arguments.seed picks a different text of the same kind, so that a long
// session's results do not repeat. A second tool, send, takes {to, body}
// and answers "sent": the sink the long-session run's joining proxy must
// judge. With -catalogue FILE, tools/list answers with the tools array of
// FILE (a testdata/catalogues file) instead, byte for byte as it is there,
// for the tools/list measurement; echo and send are still served.
//
// Calls are answered concurrently, each as soon as it is read, so
// pipelined requests overlap the way they do with a real server.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/weir-sec/weir/bench/overhead/internal/prose"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Arguments       struct {
			Size    *int    `json:"size"`
			Seed    uint64  `json:"seed"`
			Message *string `json:"message"`
			Body    *string `json:"body"`
		} `json:"arguments"`
	} `json:"params"`
}

var tools = `{"tools":[{"name":"echo","description":"Answers with a text of the requested size, or echoes a message.",` +
	`"inputSchema":{"type":"object","properties":{"size":{"type":"integer","minimum":0},"seed":{"type":"integer","minimum":0},"message":{"type":"string"}}}},` +
	`{"name":"send","description":"Sends a message to a recipient.",` +
	`"inputSchema":{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to","body"]}}]}`

func main() {
	catalogue := flag.String("catalogue", "", "serve the tools array of this catalogue file in tools/list")
	flag.Parse()
	if *catalogue != "" {
		t, err := loadCatalogue(*catalogue)
		if err != nil {
			fmt.Fprintln(os.Stderr, "echo:", err)
			os.Exit(2)
		}
		tools = t
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	var (
		mu      sync.Mutex
		pending sync.WaitGroup // calls still being answered
	)
	send := func(parts ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range parts {
			out.WriteString(p)
		}
		out.WriteByte('\n')
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			handle(line, send, &pending)
		}
		if err == io.EOF {
			pending.Wait()
			return
		}
		if err != nil {
			os.Exit(1)
		}
	}
}

func handle(line []byte, send func(...string), pending *sync.WaitGroup) {
	var r request
	if err := json.Unmarshal(line, &r); err != nil {
		send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		return
	}
	if len(r.ID) == 0 || r.Method == "" {
		return // a notification, or a response to nothing we asked
	}
	id := string(r.ID)
	switch r.Method {
	case "initialize":
		v := r.Params.ProtocolVersion
		if v == "" {
			v = "2025-11-25"
		}
		send(`{"jsonrpc":"2.0","id":`, id, `,"result":{"protocolVersion":`, strconv.Quote(v),
			`,"capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1"}}}`)
	case "ping":
		send(`{"jsonrpc":"2.0","id":`, id, `,"result":{}}`)
	case "tools/list":
		send(`{"jsonrpc":"2.0","id":`, id, `,"result":`, tools, `}`)
	case "tools/call":
		a := r.Params.Arguments
		switch {
		case r.Params.Name == "send" && a.Body != nil:
			send(`{"jsonrpc":"2.0","id":`, id, `,"result":{"content":[{"type":"text","text":"sent `, strconv.Itoa(len(*a.Body)), ` bytes"}]}}`)
		case r.Params.Name != "echo":
			send(`{"jsonrpc":"2.0","id":`, id, `,"error":{"code":-32602,"message":"unknown tool"}}`)
		case a.Message != nil:
			pending.Go(func() {
				text, _ := json.Marshal(*a.Message)
				send(`{"jsonrpc":"2.0","id":`, id, `,"result":{"content":[{"type":"text","text":`, string(text), `}]}}`)
			})
		case a.Size != nil && *a.Size >= 0 && *a.Size <= prose.Max:
			// prose.Text needs no escaping: it is its own JSON string body.
			pending.Go(func() {
				send(`{"jsonrpc":"2.0","id":`, id, `,"result":{"content":[{"type":"text","text":"`, prose.Seeded(a.Seed, *a.Size), `"}]}}`)
			})
		default:
			send(`{"jsonrpc":"2.0","id":`, id, `,"result":{"content":[{"type":"text","text":"size must be 0..`, strconv.Itoa(prose.Max), `"}],"isError":true}}`)
		}
	default:
		send(`{"jsonrpc":"2.0","id":`, id, `,"error":{"code":-32601,"message":"method not found"}}`)
	}
}

// loadCatalogue returns {"tools": …} with the file's tools array as it is
// written there (raw, so nothing of the real definitions is lost).
func loadCatalogue(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var c struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Tools) == 0 || c.Tools[0] != '[' {
		return "", fmt.Errorf("%s: no tools array", path)
	}
	// Compacted: a newline inside would end the message on the wire.
	var b bytes.Buffer
	if err := json.Compact(&b, c.Tools); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return `{"tools":` + b.String() + `}`, nil
}
