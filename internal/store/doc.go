// Package store keeps Weir's state: the home directory, the per-install
// key that every fingerprint and digest is keyed with, the identity of the
// client session a proxy serves, and the state store that the proxies of
// one client (SQLite) or the replicas of a gateway (PostgreSQL) share.
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
// The audit table holds audit chains, one per tenant ([audit.Tenant] of a
// record's session), for stores that keep them instead of a file of each
// home: a replicated gateway's PostgreSQL store. [AuditLog] is the relay's
// Auditor for them; [SQLite.AppendAudit] chains records from the tenant's
// last row under the store's write lock (PostgreSQL: the tenant's advisory
// transaction lock), and [SQLite.WriteAudit] writes a chain out as the
// bytes of a log file, for `weir audit verify` and `export`. Rows hold the
// records' lines as the audit package defines them: labels, shapes and
// keyed hashes, no values.
//
// # Schema versions
//
// The schema carries its version; opening a store from an older Weir
// migrates it in place, in one transaction, whichever proxy opens it first
// (the others wait for it). Version 2 added identifier digests (rows written
// before have none) and rate-limit events; version 6 recordings; version 8
// audit chains; version 9 each session's byte count, which
// [SQLite.SetSessionMaxBytes] bounds. A store from a newer Weir is refused
// with an error rather than guessed at, so after an upgrade a proxy
// of the old Weir that is still running keeps working, but one started after
// the migration does not open the store: restart the clients once Weir is
// upgraded.
//
// # The PostgreSQL store
//
// Replicas of `weir gateway` on several machines share one PostgreSQL
// database through [Postgres] ([OpenPostgres] with a postgres:// URL): the
// same operations as [SQLite], the same tables and columns (text names,
// bigint times and sequence numbers, packed hashes as bytea, never a value
// or a text of a call or result), and the same schema versions, migrated
// the same way: in one transaction, by whichever replica opens the
// database first, a store from a newer Weir refused. Text columns are
// COLLATE "C" so that they compare and sort bytewise, as SQLite's do. One
// difference: PostgreSQL text holds no NUL byte and only valid UTF-8, so
// a name that is not (a tool a server named with "\u0000") is refused
// with an error, never stored as something else that could collide with
// another name.
//
// Where SQLite has one writer at a time, PostgreSQL runs writers at once,
// and three places need them serialised. Each takes an advisory
// transaction lock (pg_advisory_xact_lock) keyed by a hash of what it
// serialises, released when its transaction ends however it ends; a
// session-level advisory lock would stay held by a pooled connection after
// it is released to the pool, blocking every replica behind it.
//
//   - Migrations: openers take one lock first, so two replicas starting on
//     a new database do not both create the schema.
//   - Appends to a session: sequence numbers come from an identity column,
//     drawn at insert, not at commit, so two appends to one session could
//     commit in the other order, and a mirror that synced between them
//     would move its watermark past the lower row and never pull it (the
//     concurrency test misses about one row in ten without the lock). With
//     the session's lock held from before the insert to the commit, a row's
//     number is drawn only after every earlier row of its session has
//     committed, so a snapshot that sees a row sees every row below it and
//     the watermark query stays exact. Written entries, which readers also
//     follow by watermark, take a lock per server identity for the same
//     reason; Prune takes the lock of each session it tombstones, in name
//     order, and checks under it that the session is still stale.
//   - Rate limits: Take holds the (session, key)'s lock while it counts and
//     records, in one round trip (a batch is one implicit transaction), so
//     replicas together never let more than n calls through. Its counting
//     statement runs after the lock is granted, so its snapshot includes
//     every event the previous holder committed.
//
// Approvals need no lock: a single UPDATE … WHERE status = from, or an
// INSERT … ON CONFLICT DO NOTHING for nonces, has exactly one winner.
//
// # The change feed
//
// Append also runs pg_notify on the channel weir_observations, with a
// hash of the session, in its transaction: PostgreSQL delivers it when,
// and only if, the row commits. Each Postgres store keeps one connection
// listening. The watermark query stays the truth; the feed only lets Sync
// skip it, when it can prove nothing was appended to the session since its
// last query left the mirror at its watermark:
//
//  1. That query began after the listener was confirmed listening (LISTEN
//     had returned), on the connection that is still the listener: every
//     transaction that committed after the query's snapshot notified it.
//  2. A barrier (a trivial query on the listener connection) that began after
//     this Sync began has completed: PostgreSQL signals listeners before it
//     acknowledges a commit, and a listening backend sends the
//     notifications it holds before its next ReadyForQuery, so every commit
//     acknowledged before this Sync (on any replica, hence anything the
//     client could have seen) has been counted.
//  3. No notification for the session's hash was counted since the mark
//     taken before that query.
//
// Anything short of that proof queries: the listener down, reconnecting or
// not yet listening (a reconnect starts a new epoch, and marks of the old
// one are void), a failed barrier (among them one that ran on another
// backend than the listening one, as behind a pooler in transaction mode,
// where the feed never proves anything), a mirror at another watermark, a
// notification that is not Weir's, the feed's bookkeeping at its bound. NOTIFY
// alone would not do: it is delivered at most once, lost while the
// listener reconnects, and read some time after the commit, so a replica
// trusting it could decide on a mirror that misses a row the client has
// already seen written through another replica.
//
// A barrier costs a round trip, like the query it replaces, but a trivial
// one, and one barrier serves every Sync that was waiting when it was sent:
// many sessions syncing at once cost one trivial query between them instead of
// an indexed query each (BenchmarkAppendSync/postgres/sync-idle-parallel).
// The Sync that needs a barrier runs it on the listener connection
// itself; Syncs that arrive while one runs wait for the next, which one of
// them runs. A store's own appends mark their session changed, so the Sync
// a proxy runs right after appending queries without a barrier. What it
// costs: on an idle single session a barrier is about the price of the
// query it replaces, and a Sync after another replica's append pays both
// (the barrier finds the notification, then the query pulls the row); the
// saving is under load, when many sessions' syncs share one barrier.
//
// Two costs come with it. Every writer must notify: a replica that
// appended without it would make the others' skips unsound, so notifying
// is part of the schema's contract, and changing it needs a new schema
// version. And PostgreSQL serialises the commits of notifying
// transactions on one cluster-wide lock (so that its queue is in commit
// order), held through the commit's WAL flush: appends from all replicas
// commit one at a time, as SQLite's writers do. With synchronous_commit
// on, that bounds appends per second by the flush latency.
//
// # Using it
//
//	home, err := store.Home()
//	key, err := store.LoadKey(home)           // for the fingerprinter
//	session, how, err := store.SessionKey()   // log `how` at start-up
//	st, err := store.OpenSQLite(ctx, filepath.Join(home, "state.db"))
//	// or, for the replicas of a gateway:
//	st, err := store.OpenPostgres(ctx, "postgres://weir@db.internal:5432/weir")
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
