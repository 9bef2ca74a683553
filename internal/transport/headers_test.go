package transport

import (
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Every value survives encodeHeaderValue and decodeHeaderValue, and what
// is encoded is a valid header value (visible ASCII, no edge spaces).
func TestHeaderValueRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		enc := encodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("encoded %q has byte %#x", enc, enc[i])
			}
		}
		if strings.TrimSpace(enc) != enc {
			t.Fatalf("encoded %q has edge spaces", enc)
		}
		dec, ok := decodeHeaderValue(enc)
		if !ok || dec != s {
			t.Fatalf("round trip of %q = %q, %v", s, dec, ok)
		}
	})
}

func TestParamHeaders(t *testing.T) {
	var tab paramTable
	tab.learn([]byte(`{"tools":[{"name":"weather","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"units":{"type":"integer","x-mcp-header":"Units"}}},
		"bad":{"type":"string","x-mcp-header":"has space"}}}},
		{"name":"plain","inputSchema":{"type":"object"}}]}`))
	b := tab.of("weather")
	if len(b) != 2 {
		t.Fatalf("bindings = %+v, want region and opts.units (an invalid header name is ignored)", b)
	}
	if tab.of("plain") != nil {
		t.Fatal("a tool without x-mcp-header has bindings")
	}
	params := []byte(`{"name":"weather","arguments":{"region":"Zürich","opts":{"units":3}}}`)
	h := http.Header{}
	setParamHeaders(h, b, params)
	if got := h.Get("Mcp-Param-Units"); got != "3" {
		t.Errorf("Units = %q", got)
	}
	if got, _ := decodeHeaderValue(h.Get("Mcp-Param-Region")); got != "Zürich" {
		t.Errorf("Region = %q", h.Get("Mcp-Param-Region"))
	}
	if err := checkParamHeaders(h, b, params); err != nil {
		t.Errorf("headers Weir wrote fail its own check: %v", err)
	}
	for name, mutate := range map[string]func(http.Header){
		"missing":  func(h http.Header) { h.Del("Mcp-Param-Units") },
		"mismatch": func(h http.Header) { h.Set("Mcp-Param-Units", "4") },
		"not int":  func(h http.Header) { h.Set("Mcp-Param-Units", "3.5") },
		"bad b64":  func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?!!?=") },
	} {
		h2 := h.Clone()
		mutate(h2)
		if err := checkParamHeaders(h2, b, params); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A header for an argument that is absent is a mismatch too.
	h3 := h.Clone()
	if err := checkParamHeaders(h3, b, []byte(`{"name":"weather","arguments":{"opts":{"units":3}}}`)); err == nil {
		t.Error("a Region header with no region argument was accepted")
	}
	// "3.0" names the integer 3, as JSON does.
	h4 := h.Clone()
	h4.Set("Mcp-Param-Units", "3.0")
	if err := checkParamHeaders(h4, b, params); err != nil {
		t.Errorf("3.0 for 3: %v", err)
	}
}

func TestStatusOf(t *testing.T) {
	for code, want := range map[int64]int{-32601: 404, -32602: 400, CodeHeaderMismatch: 400, -32021: 400, -32022: 400, -32603: 0, -32001: 0, 0: 0} {
		if got := statusOf(code); got != want {
			t.Errorf("statusOf(%d) = %d, want %d", code, got, want)
		}
	}
}
