package transport

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// MCP 2026-07-28 (SEP-2243) mirrors parts of a request in headers so that
// an intermediary can route without reading the body: the method, the
// tool, prompt or resource it names, and each argument a tool's input
// schema marks with x-mcp-header. A server must refuse a request whose
// headers and body disagree. Weir checks them as a server on its front and
// writes them as a client toward its upstream; it learns which arguments
// a tool mirrors from the tools/list answers that pass through it.

// CodeHeaderMismatch is the JSON-RPC error for headers that disagree with
// the body (MCP 2026-07-28).
const CodeHeaderMismatch = -32020

const paramHeaderPrefix = "Mcp-Param-"

// paramBinding is one argument a tool mirrors in a header.
type paramBinding struct {
	path   []string
	header string
}

// paramTable holds what the tools/list answers seen so far say.
type paramTable struct {
	mu    sync.Mutex
	tools map[string][]paramBinding
}

// learn reads a tools/list result.
func (t *paramTable) learn(result []byte) {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tools == nil {
		t.tools = map[string][]paramBinding{}
	}
	for _, tool := range res.Tools {
		var s schemaProps
		if json.Unmarshal(tool.InputSchema, &s) != nil {
			continue
		}
		if b := s.bindings(nil, nil, 0); len(b) > 0 {
			t.tools[tool.Name] = b
		} else {
			delete(t.tools, tool.Name)
		}
	}
}

func (t *paramTable) of(tool string) []paramBinding {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tools[tool]
}

type schemaProps struct {
	Header     json.RawMessage        `json:"x-mcp-header"`
	Properties map[string]schemaProps `json:"properties"`
}

func (s schemaProps) bindings(prefix []string, out []paramBinding, depth int) []paramBinding {
	if depth > 32 {
		return out
	}
	for name, p := range s.Properties {
		path := append(append([]string(nil), prefix...), name)
		var h string
		if json.Unmarshal(p.Header, &h) == nil && h != "" && validToken(h) {
			out = append(out, paramBinding{path: path, header: h})
		}
		out = p.bindings(path, out, depth+1)
	}
	return out
}

func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// callArguments returns a tools/call's name and arguments.
func callArguments(params []byte) (string, map[string]json.RawMessage) {
	var p struct {
		Name      string                     `json:"name"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Name, p.Arguments
}

func lookupArg(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	if len(path) == 0 {
		return nil, false
	}
	cur, ok := args[path[0]]
	for _, part := range path[1:] {
		if !ok {
			return nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[part]
	}
	return cur, ok
}

// primitive is a mirrored argument's value as a header carries it: a
// string, a boolean, or an integer within ±2^53.
func primitive(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53-1 {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// setParamHeaders writes the Mcp-Param headers of a tools/call.
func setParamHeaders(h http.Header, b []paramBinding, params []byte) {
	if len(b) == 0 {
		return
	}
	_, args := callArguments(params)
	for _, pb := range b {
		raw, ok := lookupArg(args, pb.path)
		if !ok || string(raw) == "null" {
			continue
		}
		if v, ok := primitive(raw); ok {
			h.Set(paramHeaderPrefix+pb.header, encodeHeaderValue(v))
		}
	}
}

// checkParamHeaders checks a tools/call's Mcp-Param headers against its
// arguments.
func checkParamHeaders(h http.Header, b []paramBinding, params []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, args := callArguments(params)
	for _, pb := range b {
		name := paramHeaderPrefix + pb.header
		got := h.Get(name)
		raw, ok := lookupArg(args, pb.path)
		if !ok || string(raw) == "null" {
			if got != "" {
				return fmt.Errorf("header mismatch: %s is set but argument %q is absent", name, strings.Join(pb.path, "."))
			}
			continue
		}
		if got == "" {
			return fmt.Errorf("header mismatch: missing %s for argument %q", name, strings.Join(pb.path, "."))
		}
		dec, valid := decodeHeaderValue(got)
		want, prim := primitive(raw)
		if !valid || !prim || !sameValue(dec, want, raw) {
			return fmt.Errorf("header mismatch: %s does not match argument %q", name, strings.Join(pb.path, "."))
		}
	}
	return nil
}

// sameValue compares a header's value with the argument's; integers by
// value, so "42" and "42.0" agree as they do in JSON.
func sameValue(header, want string, raw json.RawMessage) bool {
	if header == want {
		return true
	}
	if len(raw) > 0 && raw[0] != '"' && raw[0] != 't' && raw[0] != 'f' {
		f, err := strconv.ParseFloat(header, 64)
		n, err2 := strconv.ParseInt(want, 10, 64)
		return err == nil && err2 == nil && f == math.Trunc(f) && int64(f) == n
	}
	return false
}

// encodeHeaderValue carries a value that is not plain visible ASCII (or
// that looks encoded) as =?base64?…?=, as 2026-07-28 spells it.
func encodeHeaderValue(s string) string {
	plain := !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	if s != "" && (s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		plain = false
	}
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// decodeHeaderValue reverses encodeHeaderValue.
func decodeHeaderValue(s string) (string, bool) {
	inner, ok := strings.CutPrefix(s, "=?base64?")
	if !ok {
		return s, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return s, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// statusOf is the HTTP status a 2026-07-28 server answers a protocol-level
// error with (0: 200, the error travels in the body).
func statusOf(code int64) int {
	switch code {
	case -32601: // method not found
		return http.StatusNotFound
	case -32602, CodeHeaderMismatch, -32021, -32022: // invalid params, header mismatch, missing capability, unsupported version
		return http.StatusBadRequest
	}
	return 0
}
