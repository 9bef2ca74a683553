// Package e2e holds Weir's end-to-end tests. They build the real weir
// binary and run it between real MCP peers: the npm reference servers
// (server-everything, server-filesystem, server-memory), the go-sdk's
// conformance everything-server (which speaks both protocol generations),
// the go-sdk client and the TypeScript SDK client. TestRealServers also runs
// Weir over 22 popular npm servers pinned in testdata/npm (realServers),
// started with dummy credentials, and checks their labels against the
// reviewed testdata/realservers.golden.json (rewrite it with -update).
//
// The npm peers are installed from testdata/npm by `make test` (and by
// .ci/run). Without them the tests that need them skip, unless
// WEIR_E2E_REQUIRE=1 is set, as CI does, in which case they fail.
package e2e
