package engine

import (
	"go/build"
	"strings"
	"testing"
)

// TestEngineIsPure keeps the engine a pure function: it may import only
// packages that do no I/O and read no clock. A new import here is a design
// change, not a convenience.
func TestEngineIsPure(t *testing.T) {
	allowed := map[string]bool{
		"bytes": true, "encoding/json": true, "errors": true, "fmt": true, "maps": true, "slices": true,
		"sort": true, "strconv": true, "strings": true, "unicode": true,
		"github.com/weir-sec/weir/internal/flow":        true,
		"github.com/weir-sec/weir/internal/fingerprint": true,
		"github.com/weir-sec/weir/internal/jsonrpc":     true, // JSON walking only
		"github.com/weir-sec/weir/internal/policy":      true,
	}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if !allowed[imp] {
			t.Errorf("internal/engine imports %q; the engine must stay pure (no I/O, no clock)", imp)
		}
		if strings.HasPrefix(imp, "time") || imp == "os" || strings.HasPrefix(imp, "net") {
			t.Errorf("internal/engine imports %q", imp)
		}
	}
}
