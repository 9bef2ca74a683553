// Package gateway is Weir as an HTTP service: `weir serve` (one remote
// server behind a local Streamable HTTP endpoint) and, later, `weir
// gateway` (many servers behind one endpoint).
//
// It wraps the Streamable HTTP front (internal/transport) in what a
// network-facing service needs before any byte reaches a relay:
//
//	request → Host check (loopback) → Origin check → bearer token →
//	per-tenant rate limit → body cap → transport.Front → relay → upstream
//
// Bound to loopback it may run without credentials; bound anywhere else it
// refuses to start without them. Each token belongs to one tenant, whose
// sessions, approvals and pins are namespaced by the tenant's name, so a
// tenant never reaches another's state. The client's own Authorization is
// never forwarded: upstream credentials come only from Weir's
// configuration. /healthz says whether Weir and its upstreams are up;
// /metrics exposes decisions, latencies and sessions in Prometheus format.
package gateway
