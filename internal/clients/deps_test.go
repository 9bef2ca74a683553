package clients

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNoWeirPackage: clients reads and writes configuration files
// and nothing else. Scanning (internal/scan) imports clients, never the
// reverse, and so do the engine, the detectors and the transports.
func TestImportsNoWeirPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/weir-sec/weir/") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
