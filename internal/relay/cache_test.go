package relay

import (
	"slices"
	"testing"

	"github.com/weir-sec/weir/internal/engine"
)

// TestListCacheDefs: a definition read again comes from the cache, one
// changed by a byte is read afresh, and a nil cache reads every time.
func TestListCacheDefs(t *testing.T) {
	cache := NewListCache()
	list := func(schema string) ([]engine.ToolDef, []engine.ToolDef) {
		t.Helper()
		tools, elems, err := engine.ReadToolList("mail", []byte(`{"tools":[{"name":"send","inputSchema":`+schema+`}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var none *ListCache
		return []engine.ToolDef{cache.def("mail", tools[0], elems[0])}, []engine.ToolDef{none.def("mail", tools[0], elems[0])}
	}
	for _, tt := range []struct {
		schema string
		params []string
	}{
		{`{"type":"object","properties":{"to":{"type":"string"}}}`, []string{"to"}},
		{`{"type":"object","properties":{"to":{"type":"string"}}}`, []string{"to"}},
		{`{"type":"object","properties":{"to":{"type":"string"},"bcc":{"type":"string"}}}`, []string{"bcc", "to"}},
		{`{"type":"object","properties":{"to":{"type":"string"}}}`, []string{"to"}},
	} {
		cached, fresh := list(tt.schema)
		if !slices.Equal(cached[0].Params, tt.params) || !slices.Equal(fresh[0].Params, tt.params) {
			t.Errorf("%s: params %q (cached) %q (no cache), want %q", tt.schema, cached[0].Params, fresh[0].Params, tt.params)
		}
	}
	if len(cache.defs) != 2 {
		t.Errorf("%d definitions cached, want 2", len(cache.defs))
	}
}
