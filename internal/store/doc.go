// Package store keeps Weir's state on disk: the home directory, the
// per-install key that every fingerprint and digest is keyed with, the
// identity of the client session a proxy serves, and the state store that
// the proxies of one client share.
//
// # Why a shared store
//
// An MCP client starts one `weir run` process per MCP server. Taint read
// through one server must block a leak through another server of the same
// client, so the proxies of one client share their session's flow state
// through a SQLite file ($WEIR_HOME/state.db) in WAL mode. Each tool result
// leaves a [flow.Observation] (tool name, labels, time, and keyed
// fingerprints, digests and identifier digests, never text); a proxy appends
// it with [SQLite.Append], and every proxy of the session keeps an in-memory
// [flow.Session] mirror current with [SQLite.Sync], which pulls only the rows
// above the mirror's watermark with one indexed query before each decision.
//
// The proxies of a session also share its rate limits: [SQLite.Take] counts
// a call against a policy rule's limit of n calls per window, exactly (a
// sliding window over the calls recorded, not a token bucket), in one write
// transaction, so the proxies of one client together never exceed it.
//
// State must never leak between two different clients: every row carries the
// session key, every read is filtered by it, and the key names one client
// process (see [SessionKey]), so two clients, or one client restarted, never
// see each other's rows.
//
// # Layout of the home directory
//
//	$WEIR_HOME (default ~/.weir, mode 0700)
//	  key        32 random bytes, mode 0600: keys every fingerprint and digest
//	  state.db   the SQLite state store (plus its -wal and -shm files)
//
// # What is stored
//
// Only keyed hashes and metadata: tool names, labels, times, session keys,
// and 64-bit keyed fingerprints, digests and identifier digests packed as
// little-endian arrays; for rate limits, the rule id and time of each call a
// limit let through (a later call on that rule deletes it once it has left
// the window). Argument values and result text never reach this package
// (DESIGN rule 2).
//
// The records table holds what weir replay and weir learn read (package
// recording writes the bodies: labels, argument digests and keyed facts,
// never values), one row per decision, with [SQLite.AppendRecords],
// [SQLite.Records] and [SQLite.PruneRecords]; the policies table the
// policy texts they were decided under, by hash.
//
// # Schema versions
//
// The schema carries its version; opening a store from an older Weir
// migrates it in place, in one transaction, whichever proxy opens it first
// (the others wait for it). Version 2 added identifier digests (rows written
// before have none) and rate-limit events; version 6 recordings. A store from a newer Weir is
// refused with an error rather than guessed at, so after an upgrade a proxy
// of the old Weir that is still running keeps working, but one started after
// the migration does not open the store: restart the clients once Weir is
// upgraded.
//
// # Using it
//
//	home, err := store.Home()
//	key, err := store.LoadKey(home)           // for the fingerprinter
//	session, how, err := store.SessionKey()   // log `how` at start-up
//	st, err := store.OpenSQLite(ctx, filepath.Join(home, "state.db"))
//	defer st.Close()
//
//	var mirror flow.Session
//	// before each decision:
//	err = st.Sync(ctx, session, &mirror)
//	// after each tool result:
//	seq, err := st.Append(ctx, session, &obs)
//	// before a call a rate-limited rule matches (n calls per `per`):
//	ok, retryAfter, err := st.Take(ctx, session, rule.ID, n, per, time.Now())
//
// Every method returns an error rather than guessing; in enforce mode the
// caller blocks the call it was deciding (DESIGN rule 1).
package store
