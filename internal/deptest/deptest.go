// Package deptest checks a package's transitive imports in a test, in the
// style of Tailscale's tstest/deptest: a package that must stay pure (the
// engine) lists the packages it may never depend on, however indirectly,
// and the test fails the day one appears.
package deptest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// Check fails t when the package in dir, or anything it imports, directly
// or not, is one of bad (import path → why it is banned). A bad entry
// ending in "/..." bans the package and everything under it. It runs `go
// list`, so it needs the go command, as `go test` does.
func Check(t TB, dir string, bad map[string]string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", dir).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", dir, err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", dir, err)
	}
	var pkg struct {
		ImportPath string
		Deps       []string
	}
	if err := json.Unmarshal(out, &pkg); err != nil {
		t.Fatalf("go list output: %v", err)
	}
	if len(pkg.Deps) == 0 {
		t.Fatalf("go list reports no dependencies for %s; the check would pass vacuously", dir)
	}
	for _, dep := range pkg.Deps {
		for b, why := range bad {
			if banned(dep, b) {
				t.Errorf("%s depends on %s: %s", pkg.ImportPath, dep, why)
			}
		}
	}
}

// TB is the part of testing.TB that Check uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

var _ TB = (*testing.T)(nil)

// banned reports whether dep is the banned pattern b or, for b ending in
// "/...", lies under it.
func banned(dep, b string) bool {
	if root, ok := strings.CutSuffix(b, "/..."); ok {
		return dep == root || strings.HasPrefix(dep, root+"/")
	}
	return dep == b
}
