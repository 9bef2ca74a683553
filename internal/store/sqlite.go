package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
)

// SQLite is the state store the proxies of one machine share: one SQLite file
// in WAL mode that several processes append to and sync from at once. Its
// methods are safe for concurrent use; the mirror passed to Sync is not, and
// must not be used by anything else while Sync runs.
type SQLite struct {
	path string
	db   *sql.DB

	insert *sql.Stmt // one observation row
	touch  *sql.Stmt // a session's last_seen
	grow   *sql.Stmt // a session's bytes, after an append
	sync   *sql.Stmt // one session's rows between two sequence numbers

	bound

	// Take's statements, over one (session, key)'s rate events.
	rateExpire *sql.Stmt // delete the events that left the window
	rateCount  *sql.Stmt // count the events in the window
	rateRecord *sql.Stmt // record one event
	rateOldest *sql.Stmt // the event whose leaving makes room

	pinsVersion *sql.Stmt // pins_version's counter
	pins        pinCache

	// now is the clock for sessions.last_seen; tests replace it.
	now func() time.Time
}

var _ interface {
	Append(context.Context, string, *flow.Observation) (int64, error)
	Sync(context.Context, string, *flow.Session) error
	Take(ctx context.Context, session, key string, n int, per time.Duration, now time.Time) (bool, time.Duration, error)
} = (*SQLite)(nil)

var _ interface {
	Append(context.Context, string, *flow.Observation) (int64, error)
	Sync(context.Context, string, *flow.Session) error
	Take(ctx context.Context, session, key string, n int, per time.Duration, now time.Time) (bool, time.Duration, error)
} = (*Postgres)(nil)

// migrations bring the schema from version i to i+1, in order. Never edit
// one that has shipped; append a new one.
var migrations = []string{
	// 1: observations, one row per tool result, and sessions.
	`CREATE TABLE observations (
		seq     INTEGER PRIMARY KEY AUTOINCREMENT,
		session TEXT    NOT NULL,
		at      INTEGER NOT NULL,
		tool    TEXT    NOT NULL,
		labels  INTEGER NOT NULL,
		prints  BLOB,
		digests BLOB
	);
	CREATE INDEX observations_session_seq ON observations (session, seq);
	CREATE TABLE sessions (
		session   TEXT    PRIMARY KEY,
		last_seen INTEGER NOT NULL
	) WITHOUT ROWID;`,

	// 2: identifier digests on observations (NULL in rows from version 1,
	// which read as none), and rate-limit events, one row per call a rate
	// limit let through. ADD COLUMN rewrites no rows, so migrating a large
	// store is instant, and a proxy of the previous version still running
	// keeps working: its statements name their columns.
	`ALTER TABLE observations ADD COLUMN idents BLOB;
	CREATE TABLE rate_events (
		session TEXT    NOT NULL,
		key     TEXT    NOT NULL,
		at      INTEGER NOT NULL
	);
	CREATE INDEX rate_events_session_key_at ON rate_events (session, key, at);`,

	// 3: tool-definition pins, one row per (server identity, tool): the
	// approved definition and, when the server now shows a different or a
	// quarantined one, that one awaiting approval.
	`CREATE TABLE pins (
		identity     TEXT    NOT NULL,
		tool         TEXT    NOT NULL,
		server       TEXT    NOT NULL,
		hash         TEXT    NOT NULL,
		definition   BLOB,
		pending_hash TEXT    NOT NULL,
		pending_def  BLOB,
		pending_why  TEXT    NOT NULL,
		first_seen   INTEGER NOT NULL,
		updated      INTEGER NOT NULL,
		PRIMARY KEY (identity, tool)
	) WITHOUT ROWID;
	CREATE INDEX pins_server ON pins (server);`,

	// 4: approval requests (one row per escalation a person was asked
	// about, or may be: their details sealed with the install key), session
	// grants ("approve for this session", by destination key) and the
	// nonces of spent input_required states.
	`CREATE TABLE approvals (
		id       TEXT    PRIMARY KEY,
		session  TEXT    NOT NULL,
		server   TEXT    NOT NULL,
		tool     TEXT    NOT NULL,
		digest   TEXT    NOT NULL,
		dest     TEXT    NOT NULL,
		rule     TEXT    NOT NULL,
		sealed   BLOB    NOT NULL,
		created  INTEGER NOT NULL,
		expires  INTEGER NOT NULL,
		status   TEXT    NOT NULL,
		scope    TEXT    NOT NULL,
		channel  TEXT    NOT NULL,
		decided_by TEXT  NOT NULL,
		decided  INTEGER NOT NULL
	) WITHOUT ROWID;
	CREATE INDEX approvals_session_digest ON approvals (session, digest, created);
	CREATE TABLE approval_grants (
		session TEXT    NOT NULL,
		dest    TEXT    NOT NULL,
		at      INTEGER NOT NULL,
		PRIMARY KEY (session, dest)
	) WITHOUT ROWID;
	CREATE TABLE approval_nonces (
		nonce   TEXT    PRIMARY KEY,
		expires INTEGER NOT NULL
	) WITHOUT ROWID;`,

	// 5: pins are keyed by the server's name alone (pin.Identity) and
	// remember the command line they were written under, so a changed
	// command is noticed, not trusted anew. rekeyPins (Go) moves rows of
	// the old name-and-command identities to the new one.
	`ALTER TABLE pins ADD COLUMN command TEXT NOT NULL DEFAULT '';`,

	// 6: recordings, for weir replay and weir learn: one row per decision
	// (kind list, call or result) with a value-free JSON body, and the
	// policy texts the decisions were made under, by hash.
	`CREATE TABLE records (
		seq     INTEGER PRIMARY KEY AUTOINCREMENT,
		session TEXT    NOT NULL,
		at      INTEGER NOT NULL,
		kind    TEXT    NOT NULL,
		server  TEXT    NOT NULL,
		tool    TEXT    NOT NULL,
		body    BLOB    NOT NULL
	);
	CREATE INDEX records_session_seq ON records (session, seq);
	CREATE INDEX records_at ON records (at);
	CREATE TABLE policies (
		hash   TEXT    PRIMARY KEY,
		source TEXT    NOT NULL,
		text   BLOB    NOT NULL,
		at     INTEGER NOT NULL
	) WITHOUT ROWID;`,

	// 7: what calls wrote to a server while their sessions held private
	// or untrusted data (fingerprints and digests, never text), by server
	// identity, across sessions: a result that carries it takes its
	// labels back.
	`CREATE TABLE written (
		seq      INTEGER PRIMARY KEY AUTOINCREMENT,
		identity TEXT    NOT NULL,
		at       INTEGER NOT NULL,
		labels   INTEGER NOT NULL,
		prints   BLOB,
		digests  BLOB
	);
	CREATE INDEX written_identity_seq ON written (identity, seq);`,

	// 8: the audit chain, one per tenant, for stores that keep it (a
	// replicated gateway's): each record's line exactly as a log file
	// would hold it, and its hash, by the record's seq.
	`CREATE TABLE audit (
		tenant TEXT    NOT NULL,
		seq    INTEGER NOT NULL,
		hash   TEXT    NOT NULL,
		line   BLOB    NOT NULL,
		PRIMARY KEY (tenant, seq)
	) WITHOUT ROWID;`,

	// 9: the bytes of hashes each session's observations hold, which
	// session.max_bytes bounds (see evict).
	`ALTER TABLE sessions ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
	UPDATE sessions SET bytes = (SELECT coalesce(sum(coalesce(length(prints), 0) + coalesce(length(digests), 0) + coalesce(length(idents), 0)), 0)
		FROM observations o WHERE o.session = sessions.session);`,

	// 10: a counter that every write to pins bumps, by triggers, so that
	// whoever writes (another proxy, `weir pins approve`, a Weir of an
	// older version still running) a proxy's cached pins are read afresh
	// (see pinCache), and one that lists its tools again reads one row.
	`CREATE TABLE pins_version (
		id      INTEGER PRIMARY KEY CHECK (id = 0),
		version INTEGER NOT NULL
	);
	INSERT INTO pins_version VALUES (0, 0);
	CREATE TRIGGER pins_inserted AFTER INSERT ON pins BEGIN UPDATE pins_version SET version = version + 1; END;
	CREATE TRIGGER pins_updated AFTER UPDATE ON pins BEGIN UPDATE pins_version SET version = version + 1; END;
	CREATE TRIGGER pins_deleted AFTER DELETE ON pins BEGIN UPDATE pins_version SET version = version + 1; END;`,
}

// goMigrations run, in the migration's transaction, after the SQL of the
// version they are keyed by.
var goMigrations = map[int]func(ctx context.Context, tx *sql.Tx) error{5: rekeyPins}

// rekeyPins gives every pin the identity of its server's name; where a
// server had pins under several identities (its command changed), the
// newest pin of each tool is kept.
func rekeyPins(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT server FROM pins`)
	if err != nil {
		return err
	}
	var servers []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		servers = append(servers, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, server := range servers {
		id := pin.Identity(server)
		if _, err := tx.ExecContext(ctx, `DELETE FROM pins WHERE server = ?1 AND identity != ?2 AND EXISTS (
			SELECT 1 FROM pins AS n WHERE n.server = ?1 AND n.tool = pins.tool AND
				(n.updated > pins.updated OR n.updated = pins.updated AND n.identity > pins.identity))`, server, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pins WHERE identity = ?2 AND tool IN (SELECT tool FROM pins WHERE server = ?1 AND identity != ?2)`, server, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pins SET identity = ?2 WHERE server = ?1`, server, id); err != nil {
			return err
		}
	}
	return nil
}

// The statements Append, Sync and Take run; syncQuery and the rate queries
// are also checked by a test with EXPLAIN QUERY PLAN.
const (
	insertQuery = `INSERT INTO observations (session, at, tool, labels, prints, digests, idents) VALUES (?, ?, ?, ?, ?, ?, ?)`
	touchQuery  = `INSERT INTO sessions (session, last_seen) VALUES (?1, ?2)
		ON CONFLICT (session) DO UPDATE SET last_seen = excluded.last_seen
		WHERE last_seen < excluded.last_seen - 60000`
	growQuery = `UPDATE sessions SET bytes = bytes + ?2 WHERE session = ?1 RETURNING bytes`
	syncQuery = `SELECT seq, at, tool, labels, prints, digests, idents FROM observations
		WHERE session = ? AND seq > ? AND seq < ? ORDER BY seq`
	outlineQuery = `SELECT seq, at, tool, labels FROM observations WHERE session = ? ORDER BY seq`

	// The window of a Take at now is every event after now-per: see Take
	// for why it has no upper end.
	rateExpireQuery = `DELETE FROM rate_events WHERE session = ? AND key = ? AND at <= ?`
	rateCountQuery  = `SELECT count(*) FROM rate_events WHERE session = ? AND key = ? AND at > ?`
	rateRecordQuery = `INSERT INTO rate_events (session, key, at) VALUES (?, ?, ?)`
	rateOldestQuery = `SELECT at FROM rate_events WHERE session = ? AND key = ? AND at > ?
		ORDER BY at LIMIT 1 OFFSET ?`
)

// OpenSQLite opens the state store at path, creating it if absent, and brings
// its schema up to date. The file is in WAL mode with a 5 s busy timeout
// (synchronous=NORMAL: a crash of the machine can lose the last appends, not
// corrupt the file), and write transactions begin IMMEDIATE, so several
// processes can append and sync at once without "database is locked" errors.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("state store %s: %w", path, err)
	}
	path = abs
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("state store %s: directory %s does not exist: %w", path, dir, err)
		}
		return nil, fmt.Errorf("state store %s: %w", path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("state store %s: %s is not a directory", path, dir)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("state store %s is not a regular file; move it aside (mv %s %s.bad) and Weir will start a new store", path, path, path)
	}

	// Create the file owner-only before SQLite does (it would use 0644); its
	// -wal and -shm files take the same mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("state store %s cannot be created; check that %s is writable by this user: %w", path, dir, err)
	}

	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, openError(path, err)
	}
	// A few connections: a proxy syncs before a decision while another
	// goroutine may be appending. Keep them open so prepared statements stay
	// warm.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)

	s := &SQLite{path: path, db: db, now: time.Now}
	if err := s.setWAL(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.insert, insertQuery}, {&s.touch, touchQuery}, {&s.grow, growQuery}, {&s.sync, syncQuery},
		{&s.rateExpire, rateExpireQuery}, {&s.rateCount, rateCountQuery},
		{&s.rateRecord, rateRecordQuery}, {&s.rateOldest, rateOldestQuery},
		{&s.pinsVersion, pinsVersionQuery},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, p.query); err != nil {
			db.Close()
			return nil, openError(path, err)
		}
	}
	return s, nil
}

// dsn builds the modernc.org/sqlite data source name for path. The path is
// a SQLite URI path, so characters that URIs treat specially are escaped.
//
// journal_mode is not in the DSN although the driver would take it there:
// the DSN's pragmas run on every new pooled connection, and switching a new
// file to WAL while another process does the same can fail with
// SQLITE_BUSY without waiting for the busy timeout. WAL is a property of the
// file, so setWAL sets it once per open, retrying.
func dsn(path string) string {
	p := filepath.ToSlash(path)
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	if filepath.VolumeName(path) != "" {
		p = "/" + p // file:/C:/dir/state.db
	}
	return "file:" + p +
		"?_pragma=busy_timeout(5000)" +
		"&_pragma=synchronous(NORMAL)" +
		// Takes effect only in a file that has no tables yet: new stores
		// give the space pruned sessions took back (Prune). An older file
		// keeps its mode (changing it needs a VACUUM of the whole file).
		"&_pragma=auto_vacuum(2)" +
		"&_txlock=immediate"
}

// busyTimeout is how long the store waits for another process's lock.
const busyTimeout = 5 * time.Second

// setWAL puts the file in WAL mode. Several processes opening a new file at
// once race to convert it, and the loser can get SQLITE_BUSY at once rather
// than after the busy timeout, so it retries for up to busyTimeout.
func (s *SQLite) setWAL(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		var mode string
		err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("state store %s: cannot use WAL mode (the file system left it in %q mode); keep $WEIR_HOME on a local disk", s.path, mode)
		case !isBusy(err) || time.Now().After(deadline):
			return openError(s.path, err)
		}
		select {
		case <-ctx.Done():
			return openError(s.path, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// migrate creates or upgrades the schema in one write transaction, so two
// processes opening a new store at once do not both create it.
func (s *SQLite) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return openError(s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return openError(s.path, err)
	}
	var version int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
		return openError(s.path, err)
	}
	if version == 0 {
		// A new file is empty; anything else is some other program's
		// database, which Weir must not write into.
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema
			WHERE name NOT LIKE 'sqlite_%' AND name != 'schema_version'`).Scan(&tables); err != nil {
			return openError(s.path, err)
		}
		if tables > 0 {
			return fmt.Errorf("state store %s is a SQLite database but not a Weir state store; move it aside (mv %s %s.bad) and Weir will start a new store",
				s.path, s.path, s.path)
		}
	}
	if version > len(migrations) {
		return fmt.Errorf("state store %s has schema version %d, newer than this Weir understands (%d); upgrade Weir, or move the file aside (mv %s %s.new) to start a new store",
			s.path, version, len(migrations), s.path, s.path)
	}
	if version == len(migrations) {
		return nil
	}
	for v := version; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return openError(s.path, fmt.Errorf("migrating schema to version %d: %w", v+1, err))
		}
		if f := goMigrations[v+1]; f != nil {
			if err := f(ctx, tx); err != nil {
				return openError(s.path, fmt.Errorf("migrating schema to version %d: %w", v+1, err))
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied_at) VALUES (?, ?)`, v+1, s.now().UnixMilli()); err != nil {
			return openError(s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return openError(s.path, err)
	}
	return nil
}

// openError explains a failure to open or create the store.
func openError(path string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("state store %s is not a SQLite database or is damaged; move it aside (mv %s %s.bad) and Weir will start a new store: %w",
				path, path, path, err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
			return fmt.Errorf("state store %s cannot be opened for writing; Weir needs to write it and its -wal and -shm files, so check that %s and those files are writable by this user: %w",
				path, filepath.Dir(path), err)
		}
	}
	return fmt.Errorf("state store %s: %w", path, err)
}

// Append stores an observation in session and returns its sequence number.
// Sequence numbers increase across all sessions and writers and are never
// reused, not even after Prune. Only the observation's metadata and keyed
// hashes are stored.
func (s *SQLite) Append(ctx context.Context, session string, o *flow.Observation) (seq int64, err error) {
	if session == "" {
		return 0, fmt.Errorf("state store %s: append: empty session key", s.path)
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return 0, fmt.Errorf("state store %s: append: %w", s.path, err)
	}
	defer tx.Rollback()
	res, err := tx.StmtContext(ctx, s.insert).ExecContext(ctx,
		session, o.At, o.Tool, int64(o.Labels), packHashes(o.Prints), packHashes(o.Digests), packHashes(o.Idents))
	if err != nil {
		return 0, fmt.Errorf("state store %s: append: %w", s.path, err)
	}
	if seq, err = res.LastInsertId(); err != nil {
		return 0, fmt.Errorf("state store %s: append: %w", s.path, err)
	}
	if _, err := tx.StmtContext(ctx, s.touch).ExecContext(ctx, session, s.now().UnixMilli()); err != nil {
		return 0, fmt.Errorf("state store %s: append: %w", s.path, err)
	}
	var total int64
	if err := tx.StmtContext(ctx, s.grow).QueryRowContext(ctx, session, rowBytes(o)).Scan(&total); err != nil {
		return 0, fmt.Errorf("state store %s: append: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("state store %s: append: %w", s.path, err)
	}
	if s.over(total) {
		// The row is stored either way; an eviction that fails leaves the
		// session over its bound (never less tainted), and the next
		// append tries again.
		_ = s.evict(ctx, session)
	}
	return seq, nil
}

// Sync brings mirror up to date with session: it pulls the session's rows
// above mirror.Watermark, in sequence order, with one indexed query, and
// applies each. A row the store cannot decode is an error; the rows before
// it stay applied, so the mirror is consistent either way.
func (s *SQLite) Sync(ctx context.Context, session string, mirror *flow.Session) error {
	return s.pull(ctx, session, mirror.Watermark, math.MaxInt64, mirror.Apply)
}

// SyncAppended is Sync after this process appended o to session as seq:
// it pulls only the session's rows between mirror.Watermark and seq (what
// another proxy appended meanwhile, usually nothing), and applies o as it
// is instead of reading it back, which cost a long session's proxy more
// than the append itself. Rows above seq wait for the next Sync.
func (s *SQLite) SyncAppended(ctx context.Context, session string, mirror *flow.Session, seq int64, o *flow.Observation) error {
	if err := s.pull(ctx, session, mirror.Watermark, seq, mirror.Apply); err != nil {
		return err
	}
	mirror.Apply(seq, o)
	return nil
}

// pull calls apply for each of session's rows above after and below
// before, in sequence order. The observation passed to apply is reused
// between rows, but its hash slices are not: each row gets its own.
func (s *SQLite) pull(ctx context.Context, session string, after, before int64, apply func(seq int64, o *flow.Observation)) error {
	rows, err := s.sync.QueryContext(ctx, session, after, before)
	if err != nil {
		return fmt.Errorf("state store %s: sync: %w", s.path, err)
	}
	defer rows.Close()
	var (
		o                       flow.Observation
		seq, labels             int64
		prints, digests, idents sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&seq, &o.At, &o.Tool, &labels, &prints, &digests, &idents); err != nil {
			return fmt.Errorf("state store %s: sync: %w", s.path, err)
		}
		if labels < 0 || labels > 0xff {
			return fmt.Errorf("state store %s: sync: row %d has labels %d out of range; the store is damaged", s.path, seq, labels)
		}
		o.Labels = flow.Labels(labels)
		if o.Prints, err = unpackHashes(prints); err != nil {
			return fmt.Errorf("state store %s: sync: row %d prints: %w", s.path, seq, err)
		}
		if o.Digests, err = unpackHashes(digests); err != nil {
			return fmt.Errorf("state store %s: sync: row %d digests: %w", s.path, seq, err)
		}
		if o.Idents, err = unpackHashes(idents); err != nil {
			return fmt.Errorf("state store %s: sync: row %d idents: %w", s.path, seq, err)
		}
		apply(seq, &o)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: sync: %w", s.path, err)
	}
	return nil
}

// SessionBytes is how many bytes of hashes session's observations hold
// (what session.max_bytes bounds); 0 for a session the store has not seen.
func (s *SQLite) SessionBytes(ctx context.Context, session string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT bytes FROM sessions WHERE session = ?`, session).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state store %s: session size: %w", s.path, err)
	}
	return n, nil
}

// Outline calls apply for each of session's observations, in sequence
// order, with its labels and none of its hashes. The hash columns come
// last in the row and live on overflow pages, so this reads a fraction
// of what Sync does.
func (s *SQLite) Outline(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error {
	rows, err := s.db.QueryContext(ctx, outlineQuery, session)
	if err != nil {
		return fmt.Errorf("state store %s: outline: %w", s.path, err)
	}
	defer rows.Close()
	if err := applyOutline(rows, apply); err != nil {
		return fmt.Errorf("state store %s: outline: %w", s.path, err)
	}
	return nil
}

// outlineRows are the rows of an outline query, from either backend.
type outlineRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// applyOutline calls apply for each row (seq, at, tool, labels) of rows.
func applyOutline(rows outlineRows, apply func(seq int64, o *flow.Observation)) error {
	var (
		o           flow.Observation
		seq, labels int64
	)
	for rows.Next() {
		if err := rows.Scan(&seq, &o.At, &o.Tool, &labels); err != nil {
			return err
		}
		if labels < 0 || labels > 0xff {
			return fmt.Errorf("row %d has labels %d out of range; the store is damaged", seq, labels)
		}
		o.Labels = flow.Labels(labels)
		apply(seq, &o)
	}
	return rows.Err()
}

// Take records one call against the rate limit key of session and reports
// whether it is within n calls per per: a sliding window over the last per,
// counted exactly, not approximated by a token bucket. The proxies of a
// session share the limit: one IMMEDIATE transaction counts the key's events
// in the window and, when there are fewer than n, records one at now, so two
// processes can never both take the last place. When the limit is reached
// Take records nothing and returns ok false with retryAfter, how long after
// now the oldest counted event leaves the window and makes room (after a limit
// was lowered, when enough of the oldest have left to make room).
//
// The window of a call at now is (now-per, now], in whole milliseconds, with
// one refinement: events stamped after now count too. Callers read the clock
// before Take waits for the write lock, so a proxy that read it later can
// commit first; counting its call stops a call that waited from slipping in
// under one that overtook it. Calls are counted at the time their caller
// passed, so a wait for the lock (normally well under a millisecond) is the
// only slack in the count. Take also deletes the key's events at or before
// now-per, which have left the window: a key never holds many more than n
// events, and a Take's work is bounded by n.
//
// session and key are stored as given: key names the limit (the policy rule
// id), never a value from a call. A call Take lets through counts as activity
// of the session for Prune, which drops a pruned session's rate events too.
// n must be at least 1 and per a positive whole number of milliseconds.
func (s *SQLite) Take(ctx context.Context, session, key string, n int, per time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error) {
	switch {
	case session == "":
		return false, 0, fmt.Errorf("state store %s: take: empty session key", s.path)
	case key == "":
		return false, 0, fmt.Errorf("state store %s: take: empty rate limit key", s.path)
	case n < 1:
		return false, 0, fmt.Errorf("state store %s: take %s: a limit of %d calls; it must be at least 1", s.path, key, n)
	case per < time.Millisecond || per%time.Millisecond != 0:
		return false, 0, fmt.Errorf("state store %s: take %s: a window of %v; it must be a positive whole number of milliseconds", s.path, key, per)
	}
	at := now.UnixMilli()
	from := at - per.Milliseconds()   // the window holds the events after from
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return false, 0, fmt.Errorf("state store %s: take: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.StmtContext(ctx, s.rateExpire).ExecContext(ctx, session, key, from); err != nil {
		return false, 0, fmt.Errorf("state store %s: take: %w", s.path, err)
	}
	var count int
	if err := tx.StmtContext(ctx, s.rateCount).QueryRowContext(ctx, session, key, from).Scan(&count); err != nil {
		return false, 0, fmt.Errorf("state store %s: take: %w", s.path, err)
	}
	if count < n {
		if _, err := tx.StmtContext(ctx, s.rateRecord).ExecContext(ctx, session, key, at); err != nil {
			return false, 0, fmt.Errorf("state store %s: take: %w", s.path, err)
		}
		if _, err := tx.StmtContext(ctx, s.touch).ExecContext(ctx, session, s.now().UnixMilli()); err != nil {
			return false, 0, fmt.Errorf("state store %s: take: %w", s.path, err)
		}
		ok = true
	} else {
		// Room is made when the events older than the n-1 newest have
		// left: when count == n, when the oldest has.
		var oldest int64
		if err := tx.StmtContext(ctx, s.rateOldest).QueryRowContext(ctx, session, key, from, count-n).Scan(&oldest); err != nil {
			return false, 0, fmt.Errorf("state store %s: take: %w", s.path, err)
		}
		retryAfter = time.Duration(oldest-from) * time.Millisecond
	}
	if err := tx.Commit(); err != nil {
		return false, 0, fmt.Errorf("state store %s: take: %w", s.path, err)
	}
	return ok, retryAfter, nil
}

// Prune replaces the observations of every session whose last append or
// take was before olderThan with one tombstone: an observation of
// flow.PrunedTool with the union of their labels and flow.Pruned, and no
// fingerprints. Their rate events and session grants are dropped, as are
// the rate events of every other session past olderThan. It returns how
// many sessions' observations it pruned. A session's last append or take is
// recorded to within a minute (they skip the write when the recorded time
// is fresher than that).
//
// What the tombstone keeps is what DESIGN rule 3 needs: a proxy that joins
// the session later, or one still serving it, learns that it held private
// or untrusted data, and judges every sink call as carrying what it can
// no longer attribute. Tombstones themselves are never pruned (a row a
// session); the space the observations took is returned to the file
// system (incremental vacuum) when the file was created with it.
func (s *SQLite) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	cutoff := olderThan.UnixMilli()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT o.session, max(o.at), max(o.labels & 1) | max(o.labels & 2)
		FROM observations o JOIN sessions s ON s.session = o.session
		WHERE s.last_seen < ?
		GROUP BY o.session
		HAVING sum(o.tool != ?) > 0`, cutoff, flow.PrunedTool)
	if err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
	}
	type stale struct {
		session string
		at      int64
		labels  int64
	}
	var old []stale
	for rows.Next() {
		var st stale
		if err := rows.Scan(&st.session, &st.at, &st.labels); err != nil {
			rows.Close()
			return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
		}
		old = append(old, st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
	}
	for _, st := range old {
		for _, q := range []string{
			`DELETE FROM observations WHERE session = ?`,
			`DELETE FROM rate_events WHERE session = ?`,
			`DELETE FROM approval_grants WHERE session = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, st.session); err != nil {
				return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
			}
		}
		labels := flow.Labels(st.labels)&flow.Legs | flow.Pruned
		if _, err := tx.ExecContext(ctx, `INSERT INTO observations (session, at, tool, labels) VALUES (?, ?, ?, ?)`,
			st.session, st.at, flow.PrunedTool, int64(labels)); err != nil {
			return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rate_events WHERE session IN (SELECT session FROM sessions WHERE last_seen < ?)`, cutoff); err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("state store %s: prune: %w", s.path, err)
	}
	if len(old) > 0 {
		// A no-op unless the file has auto_vacuum=incremental (new files do).
		if _, err := s.db.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
			return len(old), fmt.Errorf("state store %s: prune: vacuum: %w", s.path, err)
		}
	}
	return len(old), nil
}

// Close closes the store.
func (s *SQLite) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("state store %s: close: %w", s.path, err)
	}
	return nil
}

// packHashes packs hashes as little-endian uint64s, 8 bytes each; nil for
// none.
func packHashes(h []uint64) []byte {
	if len(h) == 0 {
		return nil
	}
	b := make([]byte, 8*len(h))
	for i, v := range h {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

// unpackHashes decodes packHashes' output with one allocation.
func unpackHashes(b []byte) ([]uint64, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("blob of %d bytes is not a whole number of hashes; the store is damaged", len(b))
	}
	h := make([]uint64, len(b)/8)
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return h, nil
}
