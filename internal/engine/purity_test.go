package engine

import (
	"go/build"
	"slices"
	"testing"

	"github.com/weir-sec/weir/internal/deptest"
)

// TestEngineIsPure keeps the engine a pure function: nothing it depends
// on, however indirectly, runs processes, opens connections, reads a
// database, or touches the store, the audit log, the transports or the
// relay. A new dependency here is a design change, not a convenience.
func TestEngineIsPure(t *testing.T) {
	const io = "the engine must stay a pure function of its inputs (DESIGN: the engine does no I/O)"
	deptest.Check(t, ".", map[string]string{
		"os/exec":                 io,
		"os/signal":               io,
		"net":                     io,
		"net/http":                io,
		"database/sql":            io,
		"modernc.org/sqlite":      io,
		"github.com/jackc/pgx/v5": io,
		"github.com/weir-sec/weir/internal/store":             "the relay persists deltas; the engine only returns them",
		"github.com/weir-sec/weir/internal/audit":             "the relay audits decisions; the engine only makes them",
		"github.com/weir-sec/weir/internal/transport":         "transports move bytes; the engine never sees them",
		"github.com/weir-sec/weir/internal/relay":             "the relay calls the engine, never the reverse",
		"github.com/weir-sec/weir/internal/policy/policyfile": "the loader reads files and resolves paths on disk; the engine reads the compiled policy",
		"github.com/weir-sec/weir/internal/clients":           io,
		"github.com/modelcontextprotocol/go-sdk/mcp":          "the SDK's sessions and transports do I/O",
	})
}

// TestEngineReadsNoClock: the engine's own files import neither time nor
// os, so no decision can depend on the clock or the environment (events
// carry their own time). Transitive imports of both are unavoidable (fmt
// imports os), which is why this checks the package itself.
func TestEngineReadsNoClock(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"time", "os", "math/rand", "math/rand/v2", "crypto/rand"} {
		if slices.Contains(pkg.Imports, banned) {
			t.Errorf("internal/engine imports %q: a decision must not read the clock, the environment or randomness", banned)
		}
	}
}
