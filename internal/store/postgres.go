package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
)

// Postgres is the state store that the replicas of a gateway share: the
// same tables, operations and guarantees as [SQLite], in one PostgreSQL
// database that any number of processes on any number of machines use at
// once. Its methods are safe for concurrent use; the mirror passed to Sync
// is not, and must not be used by anything else while Sync runs.
//
// What differs from SQLite, and why, is in the package documentation
// ("The PostgreSQL store").
type Postgres struct {
	name string // the database, for messages; never the password
	pool *pgxpool.Pool
	feed *feed // nil: every Sync queries

	// How many Syncs queried and how many the change feed let skip.
	queried, skipped atomic.Int64

	// The heads of the audit chains this store appended to (AppendAudit).
	auditMu sync.Mutex
	heads   map[string]auditHead

	bound

	pins pinCache

	// now is the clock for sessions.last_seen; tests replace it.
	now func() time.Time
}

// pgMigrations are [migrations] in PostgreSQL's dialect: the same
// versions, numbered the same, so a version names one data model in both
// stores. Never edit one that has shipped; append a new one, to both lists.
//
// Text columns are COLLATE "C" so that they compare and sort bytewise, as
// SQLite's do; packed hashes and bodies are bytea.
var pgMigrations = []string{
	// 1: observations, one row per tool result, and sessions.
	`CREATE TABLE observations (
		seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session text COLLATE "C" NOT NULL,
		at      bigint  NOT NULL,
		tool    text COLLATE "C" NOT NULL,
		labels  integer NOT NULL,
		prints  bytea,
		digests bytea
	);
	CREATE INDEX observations_session_seq ON observations (session, seq);
	CREATE TABLE sessions (
		session   text COLLATE "C" PRIMARY KEY,
		last_seen bigint NOT NULL
	);`,

	// 2: identifier digests and rate-limit events.
	`ALTER TABLE observations ADD COLUMN idents bytea;
	CREATE TABLE rate_events (
		session text COLLATE "C" NOT NULL,
		key     text COLLATE "C" NOT NULL,
		at      bigint NOT NULL
	);
	CREATE INDEX rate_events_session_key_at ON rate_events (session, key, at);`,

	// 3: tool-definition pins.
	`CREATE TABLE pins (
		identity     text COLLATE "C" NOT NULL,
		tool         text COLLATE "C" NOT NULL,
		server       text COLLATE "C" NOT NULL,
		hash         text COLLATE "C" NOT NULL,
		definition   bytea,
		pending_hash text COLLATE "C" NOT NULL,
		pending_def  bytea,
		pending_why  text COLLATE "C" NOT NULL,
		first_seen   bigint NOT NULL,
		updated      bigint NOT NULL,
		PRIMARY KEY (identity, tool)
	);
	CREATE INDEX pins_server ON pins (server);`,

	// 4: approval requests, session grants, spent nonces.
	`CREATE TABLE approvals (
		id         text COLLATE "C" PRIMARY KEY,
		session    text COLLATE "C" NOT NULL,
		server     text COLLATE "C" NOT NULL,
		tool       text COLLATE "C" NOT NULL,
		digest     text COLLATE "C" NOT NULL,
		dest       text COLLATE "C" NOT NULL,
		rule       text COLLATE "C" NOT NULL,
		sealed     bytea  NOT NULL,
		created    bigint NOT NULL,
		expires    bigint NOT NULL,
		status     text COLLATE "C" NOT NULL,
		scope      text COLLATE "C" NOT NULL,
		channel    text COLLATE "C" NOT NULL,
		decided_by text COLLATE "C" NOT NULL,
		decided    bigint NOT NULL
	);
	CREATE INDEX approvals_session_digest ON approvals (session, digest, created);
	CREATE TABLE approval_grants (
		session text COLLATE "C" NOT NULL,
		dest    text COLLATE "C" NOT NULL,
		at      bigint NOT NULL,
		PRIMARY KEY (session, dest)
	);
	CREATE TABLE approval_nonces (
		nonce   text COLLATE "C" PRIMARY KEY,
		expires bigint NOT NULL
	);`,

	// 5: pins keyed by the server's name alone, remembering the command
	// (pgRekeyPins moves rows of older identities).
	`ALTER TABLE pins ADD COLUMN command text COLLATE "C" NOT NULL DEFAULT '';`,

	// 6: recordings and the policy texts they were decided under.
	`CREATE TABLE records (
		seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session text COLLATE "C" NOT NULL,
		at      bigint NOT NULL,
		kind    text COLLATE "C" NOT NULL,
		server  text COLLATE "C" NOT NULL,
		tool    text COLLATE "C" NOT NULL,
		body    bytea  NOT NULL
	);
	CREATE INDEX records_session_seq ON records (session, seq);
	CREATE INDEX records_at ON records (at);
	CREATE TABLE policies (
		hash   text COLLATE "C" PRIMARY KEY,
		source text COLLATE "C" NOT NULL,
		text   bytea  NOT NULL,
		at     bigint NOT NULL
	);`,

	// 7: what calls wrote to a server while their sessions held private
	// or untrusted data.
	`CREATE TABLE written (
		seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		identity text COLLATE "C" NOT NULL,
		at       bigint  NOT NULL,
		labels   integer NOT NULL,
		prints   bytea,
		digests  bytea
	);
	CREATE INDEX written_identity_seq ON written (identity, seq);`,

	// 8: the audit chain, one per tenant.
	`CREATE TABLE audit (
		tenant text COLLATE "C" NOT NULL,
		seq    bigint NOT NULL,
		hash   text COLLATE "C" NOT NULL,
		line   bytea  NOT NULL,
		PRIMARY KEY (tenant, seq)
	);`,

	// 9: the bytes of hashes each session's observations hold.
	`ALTER TABLE sessions ADD COLUMN bytes bigint NOT NULL DEFAULT 0;
	UPDATE sessions SET bytes = (SELECT coalesce(sum(coalesce(length(prints), 0) + coalesce(length(digests), 0) + coalesce(length(idents), 0)), 0)
		FROM observations o WHERE o.session = sessions.session);`,

	// 10: the pins version counter, bumped once per statement that writes
	// pins.
	`CREATE TABLE pins_version (
		id      integer PRIMARY KEY CHECK (id = 0),
		version bigint  NOT NULL
	);
	INSERT INTO pins_version VALUES (0, 0);
	CREATE FUNCTION weir_pins_written() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE pins_version SET version = version + 1;
		RETURN NULL;
	END $$;
	CREATE TRIGGER pins_written AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pins
		FOR EACH STATEMENT EXECUTE FUNCTION weir_pins_written();`,
}

// pgGoMigrations are [goMigrations] for PostgreSQL.
var pgGoMigrations = map[int]func(ctx context.Context, tx pgx.Tx) error{5: pgRekeyPins}

// pgRekeyPins is [rekeyPins] for PostgreSQL.
func pgRekeyPins(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT DISTINCT server FROM pins`)
	if err != nil {
		return err
	}
	servers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, server := range servers {
		id := pin.Identity(server)
		for _, q := range []string{
			`DELETE FROM pins WHERE server = $1 AND identity <> $2 AND EXISTS (
				SELECT 1 FROM pins AS n WHERE n.server = $1 AND n.tool = pins.tool AND
					(n.updated > pins.updated OR n.updated = pins.updated AND n.identity > pins.identity))`,
			`DELETE FROM pins WHERE identity = $2 AND tool IN (SELECT tool FROM pins WHERE server = $1 AND identity <> $2)`,
			`UPDATE pins SET identity = $2 WHERE server = $1`,
		} {
			if _, err := tx.Exec(ctx, q, server, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// Advisory transaction locks. Every lock Weir takes is a transaction lock
// (pg_advisory_xact_lock): it is released when the transaction ends,
// however it ends, so a connection returned to the pool never holds one.
// Session-level advisory locks would stay held by the pooled connection
// after Release, and block every replica until that connection closed.
//
// Keys are 64-bit hashes of a tag and the names they serialise; two names
// that collide only wait for each other, which is slower, never wrong.
var (
	lockMigrate = lockKey("weir/migrate")
	lockPrune   = lockKey("weir/prune")
)

func lockKey(parts ...string) int64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// The statements of the decision path. Each runs as a batch: one round
// trip, one implicit transaction (pgx sends a batch's statements with one
// Sync), so the lock its first statement takes is held until the last has
// run and committed, and is then released.
const (
	pgLockQuery   = `SELECT pg_advisory_xact_lock($1)`
	pgInsertQuery = `INSERT INTO observations (session, at, tool, labels, prints, digests, idents)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq`
	pgTouchQuery = `INSERT INTO sessions (session, last_seen) VALUES ($1, $2)
		ON CONFLICT (session) DO UPDATE SET last_seen = excluded.last_seen
		WHERE sessions.last_seen < excluded.last_seen - 60000`
	pgGrowQuery   = `UPDATE sessions SET bytes = bytes + $2 WHERE session = $1 RETURNING bytes`
	pgNotifyQuery = `SELECT pg_notify('` + feedChannel + `', $1)`
	pgSyncQuery   = `SELECT seq, at, tool, labels, prints, digests, idents FROM observations
		WHERE session = $1 AND seq > $2 ORDER BY seq`

	// pgTakeQuery is Take after its lock, in one statement: it expires
	// the key's events at or before $4, records one at $3 when fewer than
	// $5 are in the window (and then touches the session at $6), and
	// returns the count before and the time of the event whose leaving
	// makes room. Its statement snapshot is taken after the lock was
	// granted, so it sees every event of the previous holder.
	pgTakeQuery = `WITH
		expire AS (DELETE FROM rate_events WHERE session = $1 AND key = $2 AND at <= $4),
		win    AS (SELECT count(*) AS n FROM rate_events WHERE session = $1 AND key = $2 AND at > $4),
		rec    AS (INSERT INTO rate_events (session, key, at) SELECT $1, $2, $3 FROM win WHERE win.n < $5 RETURNING 1),
		touch  AS (INSERT INTO sessions (session, last_seen) SELECT $1, $6 FROM rec
			ON CONFLICT (session) DO UPDATE SET last_seen = excluded.last_seen
			WHERE sessions.last_seen < excluded.last_seen - 60000)
		SELECT win.n, (SELECT at FROM rate_events WHERE session = $1 AND key = $2 AND at > $4
			ORDER BY at LIMIT 1 OFFSET greatest(win.n - $5, 0)) FROM win`
)

// OpenPostgres connects to the PostgreSQL database at url (a postgres://
// URL or a libpq key=value string; pool settings such as pool_max_conns
// are taken from it), brings its schema up to date, and starts the change
// feed's listener.
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	return openPostgres(ctx, url, true)
}

func openPostgres(ctx context.Context, url string, withFeed bool) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The error may quote the URL, password and all: say only what
		// was wrong with it.
		return nil, fmt.Errorf("state store: the PostgreSQL URL does not parse; want postgres://user@host:port/database: %w", redactedError{err})
	}
	name := pgName(cfg.ConnConfig)
	p := &Postgres{name: name, now: time.Now}
	p.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("state store %s: %w", name, err)
	}
	if err := p.migrate(ctx); err != nil {
		p.pool.Close()
		return nil, err
	}
	if withFeed {
		p.feed = startFeed(cfg.ConnConfig.Config.Copy(), name)
	}
	return p, nil
}

// redactedError keeps an error's chain but not its text, which may quote a
// password.
type redactedError struct{ err error }

func (e redactedError) Error() string {
	var pe *pgconn.ParseConfigError
	if errors.As(e.err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap().Error()
	}
	return "invalid connection string"
}
func (e redactedError) Unwrap() error { return e.err }

// pgName names the database for messages: postgres://user@host:port/db,
// never the password.
func pgName(c *pgx.ConnConfig) string {
	host := c.Host
	if strings.HasPrefix(host, "/") {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", c.User, host, c.Port, c.Database)
}

// migrate creates or upgrades the schema in one transaction. Openers
// serialise on an advisory transaction lock taken first, so two replicas
// starting on a new database do not both create it, and one that waited
// finds the schema current.
func (p *Postgres) migrate(ctx context.Context) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("state store %s: %w", p.name, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, pgLockQuery, lockMigrate); err != nil {
		return fmt.Errorf("state store %s: %w", p.name, err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    integer PRIMARY KEY,
		applied_at bigint  NOT NULL
	)`); err != nil {
		return fmt.Errorf("state store %s: %w", p.name, err)
	}
	var version int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
		return fmt.Errorf("state store %s: %w", p.name, err)
	}
	if version == 0 {
		// A new schema is empty; anything else is some other program's
		// tables, which Weir must not write into.
		var schema string
		var tables int
		if err := tx.QueryRow(ctx, `SELECT current_schema(), count(*) FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_name <> 'schema_version'
			GROUP BY current_schema()`).Scan(&schema, &tables); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("state store %s: %w", p.name, err)
		}
		if tables > 0 {
			return fmt.Errorf("state store %s: schema %q holds %d tables but is not a Weir state store; give Weir a database (or a schema, with search_path) of its own",
				p.name, schema, tables)
		}
	}
	if version > len(pgMigrations) {
		return fmt.Errorf("state store %s has schema version %d, newer than this Weir understands (%d); upgrade every replica's Weir, or give this one a new database",
			p.name, version, len(pgMigrations))
	}
	if version == len(pgMigrations) {
		return nil
	}
	for v := version; v < len(pgMigrations); v++ {
		if _, err := tx.Exec(ctx, pgMigrations[v]); err != nil {
			return fmt.Errorf("state store %s: migrating schema to version %d: %w", p.name, v+1, err)
		}
		if f := pgGoMigrations[v+1]; f != nil {
			if err := f(ctx, tx); err != nil {
				return fmt.Errorf("state store %s: migrating schema to version %d: %w", p.name, v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)`, v+1, p.now().UnixMilli()); err != nil {
			return fmt.Errorf("state store %s: %w", p.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("state store %s: %w", p.name, err)
	}
	return nil
}

// checkText reports an error when a string cannot be stored as
// PostgreSQL text exactly: text holds no NUL byte and only valid UTF-8
// (SQLite stores either). Refusing is better than storing something else:
// two names that differ only there would share state.
func (p *Postgres) checkText(op string, fields ...string) error {
	for _, f := range fields {
		if strings.IndexByte(f, 0) >= 0 {
			return fmt.Errorf("state store %s: %s: %q holds a NUL byte, which PostgreSQL text cannot store", p.name, op, f)
		}
		if !utf8.ValidString(f) {
			return fmt.Errorf("state store %s: %s: %q is not valid UTF-8, which PostgreSQL text requires", p.name, op, f)
		}
	}
	return nil
}

// Append stores an observation in session and returns its sequence
// number, as [SQLite.Append] does.
//
// Sequence numbers come from one identity column, so they increase across
// all sessions and replicas and are never reused. But PostgreSQL hands
// them out when a row is inserted, not when it commits: two appends to a
// session could commit in the other order, and a mirror that synced in
// between would move its watermark past the row still to come and never
// pull it. So appends to one session take that session's advisory
// transaction lock before they insert: within a session, a row's number is
// drawn only after every earlier row has committed, and any snapshot that
// sees a row sees every row below it.
func (p *Postgres) Append(ctx context.Context, session string, o *flow.Observation) (seq int64, err error) {
	if session == "" {
		return 0, fmt.Errorf("state store %s: append: empty session key", p.name)
	}
	if err := p.checkText("append", session, o.Tool); err != nil {
		return 0, err
	}
	b := &pgx.Batch{}
	b.Queue(pgLockQuery, lockKey("weir/session", session))
	b.Queue(pgInsertQuery, session, o.At, o.Tool, int64(o.Labels), packHashes(o.Prints), packHashes(o.Digests), packHashes(o.Idents)).
		QueryRow(func(r pgx.Row) error { return r.Scan(&seq) })
	b.Queue(pgTouchQuery, session, p.now().UnixMilli())
	var total int64
	b.Queue(pgGrowQuery, session, rowBytes(o)).QueryRow(func(r pgx.Row) error { return r.Scan(&total) })
	// The wake-up for other replicas' mirrors, in the same transaction:
	// PostgreSQL delivers it when, and only if, the row commits.
	b.Queue(pgNotifyQuery, feedPayload(session))
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return 0, fmt.Errorf("state store %s: append: %w", p.name, err)
	}
	if p.over(total) {
		_ = p.evict(ctx, session) // as SQLite's: never less tainted, retried
	}
	if p.feed != nil {
		// This store's own mirror of the session (the relay syncs right
		// after it appends) need not wait for a barrier to learn it.
		p.feed.changed(session)
	}
	return seq, nil
}

// Sync brings mirror up to date with session, as [SQLite.Sync] does: one
// indexed query for the rows above mirror.Watermark. When the change feed
// proves that nothing was appended to the session since this store's last
// query left the mirror at its watermark, Sync returns without the query
// (see the package documentation for the proof and when it falls back).
func (p *Postgres) Sync(ctx context.Context, session string, mirror *flow.Session) error {
	if err := p.checkText("sync", session); err != nil {
		return err
	}
	if p.feed == nil {
		p.queried.Add(1)
		return p.pull(ctx, session, mirror.Watermark, mirror.Apply)
	}
	same, err := p.feed.unchanged(ctx, session, mirror.Watermark)
	if err != nil {
		return fmt.Errorf("state store %s: sync: %w", p.name, err)
	}
	if same {
		p.skipped.Add(1)
		return nil
	}
	p.queried.Add(1)
	m := p.feed.mark()
	if err := p.pull(ctx, session, mirror.Watermark, mirror.Apply); err != nil {
		return err
	}
	p.feed.clean(session, mirror.Watermark, m)
	return nil
}

// SessionBytes is [SQLite.SessionBytes].
func (p *Postgres) SessionBytes(ctx context.Context, session string) (int64, error) {
	if err := p.checkText("session size", session); err != nil {
		return 0, err
	}
	var n int64
	err := p.pool.QueryRow(ctx, `SELECT bytes FROM sessions WHERE session = $1`, session).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state store %s: session size: %w", p.name, err)
	}
	return n, nil
}

// Outline is [SQLite.Outline]; the hash columns are TOASTed, so it reads
// a fraction of what Sync does here too.
func (p *Postgres) Outline(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error {
	if err := p.checkText("outline", session); err != nil {
		return err
	}
	rows, err := p.pool.Query(ctx, `SELECT seq, at, tool, labels FROM observations WHERE session = $1 ORDER BY seq`, session)
	if err != nil {
		return fmt.Errorf("state store %s: outline: %w", p.name, err)
	}
	defer rows.Close()
	if err := applyOutline(rows, apply); err != nil {
		return fmt.Errorf("state store %s: outline: %w", p.name, err)
	}
	return nil
}

// pull calls apply for each of session's rows above after, in sequence
// order, as [SQLite.pull] does.
func (p *Postgres) pull(ctx context.Context, session string, after int64, apply func(seq int64, o *flow.Observation)) error {
	rows, err := p.pool.Query(ctx, pgSyncQuery, session, after)
	if err != nil {
		return fmt.Errorf("state store %s: sync: %w", p.name, err)
	}
	defer rows.Close()
	var (
		o           flow.Observation
		seq, labels int64
	)
	for rows.Next() {
		// The hash columns are read raw (bytea arrives as its bytes) and
		// decoded straight into the observation's slices: one copy.
		if err := rows.Scan(&seq, &o.At, &o.Tool, &labels, nil, nil, nil); err != nil {
			return fmt.Errorf("state store %s: sync: %w", p.name, err)
		}
		if labels < 0 || labels > 0xff {
			return fmt.Errorf("state store %s: sync: row %d has labels %d out of range; the store is damaged", p.name, seq, labels)
		}
		o.Labels = flow.Labels(labels)
		raw := rows.RawValues()
		if o.Prints, err = unpackHashes(raw[4]); err != nil {
			return fmt.Errorf("state store %s: sync: row %d prints: %w", p.name, seq, err)
		}
		if o.Digests, err = unpackHashes(raw[5]); err != nil {
			return fmt.Errorf("state store %s: sync: row %d digests: %w", p.name, seq, err)
		}
		if o.Idents, err = unpackHashes(raw[6]); err != nil {
			return fmt.Errorf("state store %s: sync: row %d idents: %w", p.name, seq, err)
		}
		apply(seq, &o)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: sync: %w", p.name, err)
	}
	return nil
}

// Take records one call against the rate limit key of session and reports
// whether it is within n calls per per, exactly as [SQLite.Take] does and
// with the same window. The replicas share the limit: each Take holds the
// (session, key)'s advisory transaction lock while it counts and records,
// so two replicas can never both take the last place, and takes of other
// keys do not wait for it.
func (p *Postgres) Take(ctx context.Context, session, key string, n int, per time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error) {
	switch {
	case session == "":
		return false, 0, fmt.Errorf("state store %s: take: empty session key", p.name)
	case key == "":
		return false, 0, fmt.Errorf("state store %s: take: empty rate limit key", p.name)
	case n < 1:
		return false, 0, fmt.Errorf("state store %s: take %s: a limit of %d calls; it must be at least 1", p.name, key, n)
	case per < time.Millisecond || per%time.Millisecond != 0:
		return false, 0, fmt.Errorf("state store %s: take %s: a window of %v; it must be a positive whole number of milliseconds", p.name, key, per)
	}
	if err := p.checkText("take", session, key); err != nil {
		return false, 0, err
	}
	at := now.UnixMilli()
	from := at - per.Milliseconds() // the window holds the events after from
	var (
		count  int64
		oldest *int64
	)
	b := &pgx.Batch{}
	b.Queue(pgLockQuery, lockKey("weir/rate", session, key))
	b.Queue(pgTakeQuery, session, key, at, from, int64(n), p.now().UnixMilli()).
		QueryRow(func(r pgx.Row) error { return r.Scan(&count, &oldest) })
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return false, 0, fmt.Errorf("state store %s: take: %w", p.name, err)
	}
	if count < int64(n) {
		return true, 0, nil
	}
	if oldest == nil {
		return false, 0, fmt.Errorf("state store %s: take: %d events in the window but none found to leave it", p.name, count)
	}
	return false, time.Duration(*oldest-from) * time.Millisecond, nil
}

// Prune replaces the observations of every session whose last append or
// take was before olderThan with one tombstone, as [SQLite.Prune] does.
//
// Replicas may prune at once and append while they do: prunes serialise
// on one advisory lock, and each stale session is pruned under its own
// session lock (taken in name order, so two transactions never wait for
// each other in a cycle) after checking again, under it, that the session
// is still stale; a session that came back to life in between is left
// alone. Tombstones are announced on the change feed like appends.
func (p *Postgres) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	cutoff := olderThan.UnixMilli()
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, pgLockQuery, lockPrune); err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
	}
	rows, err := tx.Query(ctx, `SELECT o.session FROM observations o JOIN sessions s ON s.session = o.session
		WHERE s.last_seen < $1 GROUP BY o.session HAVING count(*) FILTER (WHERE o.tool <> $2) > 0`, cutoff, flow.PrunedTool)
	if err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
	}
	slices.Sort(stale) // byte order, the lock order
	pruned := 0
	for _, session := range stale {
		if _, err := tx.Exec(ctx, pgLockQuery, lockKey("weir/session", session)); err != nil {
			return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
		}
		var at, labels int64
		err := tx.QueryRow(ctx, `SELECT max(o.at), bit_or(o.labels & 3) FROM observations o JOIN sessions s ON s.session = o.session
			WHERE o.session = $1 AND s.last_seen < $2 HAVING count(*) FILTER (WHERE o.tool <> $3) > 0`,
			session, cutoff, flow.PrunedTool).Scan(&at, &labels)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // it came back to life since the first look
		}
		if err != nil {
			return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
		}
		for _, q := range []string{
			`DELETE FROM observations WHERE session = $1`,
			`DELETE FROM rate_events WHERE session = $1`,
			`DELETE FROM approval_grants WHERE session = $1`,
		} {
			if _, err := tx.Exec(ctx, q, session); err != nil {
				return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
			}
		}
		l := flow.Labels(labels)&flow.Legs | flow.Pruned
		if _, err := tx.Exec(ctx, `INSERT INTO observations (session, at, tool, labels) VALUES ($1, $2, $3, $4)`,
			session, at, flow.PrunedTool, int64(l)); err != nil {
			return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
		}
		if _, err := tx.Exec(ctx, pgNotifyQuery, feedPayload(session)); err != nil {
			return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
		}
		pruned++
	}
	if _, err := tx.Exec(ctx, `DELETE FROM rate_events WHERE session IN (SELECT session FROM sessions WHERE last_seen < $1)`, cutoff); err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", p.name, err)
	}
	return pruned, nil
}

// Close stops the change feed and closes the pool.
func (p *Postgres) Close() error {
	if p.feed != nil {
		p.feed.stop()
	}
	p.pool.Close()
	return nil
}

// String names the database, without its password.
func (p *Postgres) String() string { return p.name }

// feedPayload is a session's name on the change feed: a hash, so that a
// session key of any length fits a notification (8000 bytes at most) and
// none is sent in the clear. Two sessions that collide wake each other's
// mirrors, which then query: slower, never wrong.
func feedPayload(session string) string {
	return strconv.FormatUint(uint64(lockKey("weir/feed", session)), 16)
}
