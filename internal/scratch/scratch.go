package scratch

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/weir-sec/weir/internal/flow"
)

// Options bounds one scratch database. The zero value of each field means
// its default; the policy's scratch block maps onto these one for one
// (min_rows, max_payload_bytes, max_session_bytes, max_session_calls, …).
type Options struct {
	// MinRows is the fewest rows an array needs to become a table
	// (min_rows). Default 20.
	MinRows int
	// MaxPayloadBytes is the ceiling on a result's size in bytes
	// (max_payload_bytes); a larger result passes through. Default 1 MiB.
	MaxPayloadBytes int
	// MaxSessionBytes bounds the bytes all of a session's tables hold at
	// once (max_session_bytes); the oldest tables are evicted first to stay
	// within it. Default 256 MiB.
	MaxSessionBytes int64
	// MaxTables bounds how many tables a session holds at once
	// (max_session_calls); the oldest is evicted first. Default 64.
	MaxTables int
	// MaxColumns bounds the columns of one table. Rows with more distinct
	// keys than this are not stored; nested objects that would push a table
	// past it are kept as JSON text instead of being flattened. Default 128.
	MaxColumns int
	// PreviewRows is how many rows the handle's preview shows. Default 5.
	PreviewRows int
	// PreviewBytes is the byte budget of the handle's preview text, the
	// whole text the client gets instead of the payload. Default 4 KiB.
	PreviewBytes int
	// RowCap is the most rows one query returns (row cap). Default 100.
	RowCap int
	// CellCap is the longest cell, in bytes, a query result shows; longer
	// cells are cut and the cut is stated. Default 256.
	CellCap int
	// ByteCap is the longest rendered query result in bytes. Default 16 KiB.
	ByteCap int
	// MaxSQLBytes is the longest statement weir_query accepts. Default 16 KiB.
	MaxSQLBytes int
	// QueryTimeout is the wall-clock budget of one query. Default 2s.
	QueryTimeout time.Duration
	// MaxQueryMemory stops a query once the process's resident memory has
	// grown by this many bytes since the query began: a sort over a cross
	// join can otherwise take hundreds of MiB a second until the deadline.
	// It is coarse (the whole process is measured, every 10ms) and works
	// where /proc/self/statm exists. Default 256 MiB.
	MaxQueryMemory int64
}

// Defaults, exported so the policy loader and the CLI can show them.
const (
	DefaultMinRows         = 20
	DefaultMaxPayloadBytes = 1 << 20
	DefaultMaxSessionBytes = 256 << 20
	DefaultMaxTables       = 64
	DefaultMaxColumns      = 128
	DefaultPreviewRows     = 5
	DefaultPreviewBytes    = 4 << 10
	DefaultRowCap          = 100
	DefaultCellCap         = 256
	DefaultByteCap         = 16 << 10
	DefaultMaxSQLBytes     = 16 << 10
	DefaultQueryTimeout    = 2 * time.Second
	DefaultMaxQueryMemory  = 256 << 20
)

// Floors below which a budget cannot hold what it must: the preview has to
// name the table and end with the hint, a cell has to show something.
const (
	minPreviewBytes = 512
	minCellCap      = 16
	minByteCap      = 256
	// maxColumnsCeiling keeps a row of bound parameters, and the sink call
	// that carries a result row, well inside SQLite's own limits.
	maxColumnsCeiling = 500
)

func (o Options) withDefaults() (Options, error) {
	if o.MinRows < 0 || o.MaxPayloadBytes < 0 || o.MaxSessionBytes < 0 || o.MaxTables < 0 ||
		o.MaxColumns < 0 || o.PreviewRows < 0 || o.PreviewBytes < 0 || o.RowCap < 0 ||
		o.CellCap < 0 || o.ByteCap < 0 || o.MaxSQLBytes < 0 || o.QueryTimeout < 0 || o.MaxQueryMemory < 0 {
		return o, errors.New("scratch: options must not be negative")
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MinRows, DefaultMinRows)
	def(&o.MaxPayloadBytes, DefaultMaxPayloadBytes)
	def(&o.MaxTables, DefaultMaxTables)
	def(&o.MaxColumns, DefaultMaxColumns)
	def(&o.PreviewRows, DefaultPreviewRows)
	def(&o.PreviewBytes, DefaultPreviewBytes)
	def(&o.RowCap, DefaultRowCap)
	def(&o.CellCap, DefaultCellCap)
	def(&o.ByteCap, DefaultByteCap)
	def(&o.MaxSQLBytes, DefaultMaxSQLBytes)
	if o.MaxSessionBytes == 0 {
		o.MaxSessionBytes = DefaultMaxSessionBytes
	}
	if o.QueryTimeout == 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.MaxQueryMemory == 0 {
		o.MaxQueryMemory = DefaultMaxQueryMemory
	}
	if o.MaxColumns > maxColumnsCeiling {
		return o, fmt.Errorf("scratch: MaxColumns %d is over the ceiling of %d", o.MaxColumns, maxColumnsCeiling)
	}
	o.PreviewBytes = max(o.PreviewBytes, minPreviewBytes)
	o.CellCap = max(o.CellCap, minCellCap)
	o.ByteCap = max(o.ByteCap, minByteCap)
	return o, nil
}

// DB is the scratch database of one proxy session: an in-memory SQLite
// database that only this DB's two connections can reach. It is safe for
// concurrent use; materialisations and queries run one at a time.
type DB struct {
	opts  Options
	scope string // 128-bit random hex; every table name of this session carries it

	mu     sync.Mutex
	closed bool
	// The writer runs only SQL that Weir builds (CREATE TABLE, INSERT with
	// bound values, DROP TABLE, two PRAGMAs that read the page counts). The
	// reader runs the agent's statements and never anything else, so its
	// read-only settings are fixed when it opens and nothing ever needs to
	// switch them off again.
	w, r     *sql.DB
	wc, rc   *sql.Conn
	pageSize int64

	seq     int
	tables  map[string]*table // live tables by name
	order   []*table          // live tables, oldest first
	evicted map[string]string // evicted table name → the limit that evicted it
	modules map[string]bool   // the virtual table modules SQLite has, by lower-case name
	total   int64             // bytes held by live tables

	// Authorizer state, read by the callbacks SQLite makes while it
	// prepares a statement on the goroutine that holds mu.
	write writeState
	query *queryState
}

type table struct {
	name   string
	labels flow.Labels
	rows   int
	bytes  int64
}

// writeState names the only objects the writer may touch right now.
type writeState struct {
	create  string // the table being created and filled
	drop    string // the table being dropped
	opening bool   // Open is listing the virtual table modules
}

// Open creates an empty scratch database with its own name, unguessable and
// unique in the process, and the two connections that reach it.
func Open(opts Options) (*DB, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	db := &DB{
		opts:    o,
		scope:   randomHex(),
		tables:  make(map[string]*table),
		evicted: make(map[string]string),
	}
	// Both connections share one in-memory database through SQLite's shared
	// cache: the name is process-wide, so it carries 128 random bits, and no
	// statement can name another database anyway (ATTACH is denied and the
	// attach limit is zero).
	base := "file:weir-scratch-" + randomHex() + "?mode=memory&cache=shared" +
		"&_defensive=1&_dqs=0&_pragma=trusted_schema(0)&_pragma=temp_store(2)"
	// temp_store(2) keeps sorter and temp-b-tree spill in memory: a query's
	// intermediate rows hold result data and must never reach a disk file.
	// auto_vacuum=full gives an evicted table's pages back at once, so the
	// session byte bound is a bound on memory, not on live rows.
	ctx := context.Background()
	db.w = sql.OpenDB(connector{dsn: base + "&_auto_vacuum=full", auth: db.authorizeWrite})
	db.w.SetMaxOpenConns(1)
	if db.wc, err = db.w.Conn(ctx); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("scratch: opening the writer: %w", err)
	}
	db.r = sql.OpenDB(connector{dsn: base + "&_query_only=1", auth: db.authorizeRead})
	db.r.SetMaxOpenConns(1)
	if db.rc, err = db.r.Conn(ctx); err != nil {
		db.closeConns()
		return nil, fmt.Errorf("scratch: opening the reader: %w", err)
	}
	if err := db.setLimits(); err != nil {
		db.closeConns()
		return nil, err
	}
	if err := db.wc.QueryRowContext(ctx, "PRAGMA page_size").Scan(&db.pageSize); err != nil {
		db.closeConns()
		return nil, fmt.Errorf("scratch: reading the page size: %w", err)
	}
	if db.modules, err = db.listModules(ctx); err != nil {
		db.closeConns()
		return nil, fmt.Errorf("scratch: listing the virtual table modules: %w", err)
	}
	return db, nil
}

// listModules reads the names of the virtual table modules, which the
// reader's authorizer must know to tell a real object from a CTE alias.
func (db *DB) listModules(ctx context.Context) (map[string]bool, error) {
	db.write.opening = true
	defer func() { db.write.opening = false }()
	rows, err := db.wc.QueryContext(ctx, "PRAGMA module_list")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		m[strings.ToLower(name)] = true
	}
	return m, rows.Err()
}

// setLimits lowers SQLite's run-time limits on the reader to what a
// read-only query over a few tables needs, so that a statement built to
// exhaust the proxy fails at prepare time or at the first oversized value.
func (db *DB) setLimits() error {
	length := max(db.opts.MaxPayloadBytes, 1<<20)
	limits := []struct {
		id, v int
		name  string
	}{
		// No value (string, blob or row) longer than any payload Weir
		// stores: zeroblob, printf and replace bombs stop here.
		{sqlite3.SQLITE_LIMIT_LENGTH, length, "length"},
		// The statement plus the wrapper Weir puts around it.
		{sqlite3.SQLITE_LIMIT_SQL_LENGTH, db.opts.MaxSQLBytes + 8*maxResultColumns + 256, "sql_length"},
		{sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 100, "expr_depth"},
		{sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 50, "compound_select"},
		{sqlite3.SQLITE_LIMIT_VDBE_OP, 250_000, "vdbe_op"},
		{sqlite3.SQLITE_LIMIT_ATTACHED, 0, "attached"},
		{sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000, "like_pattern_length"},
		// weir_query binds nothing; a parameter can only be a mistake.
		{sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 0, "variable_number"},
		{sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH, 1, "trigger_depth"},
		{sqlite3.SQLITE_LIMIT_WORKER_THREADS, 0, "worker_threads"},
	}
	for _, l := range limits {
		if _, err := sqlite.Limit(db.rc, l.id, l.v); err != nil {
			return fmt.Errorf("scratch: setting the %s limit: %w", l.name, err)
		}
	}
	// The writer only runs Weir's SQL, but it must not attach either.
	if _, err := sqlite.Limit(db.wc, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return fmt.Errorf("scratch: setting the writer's attached limit: %w", err)
	}
	return nil
}

// Close drops every table and frees the database. Later calls fail with
// ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	db.tables, db.order = map[string]*table{}, nil
	return db.closeConns()
}

func (db *DB) closeConns() error {
	var errs []error
	for _, c := range []*sql.Conn{db.rc, db.wc} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	for _, d := range []*sql.DB{db.r, db.w} {
		if d != nil {
			errs = append(errs, d.Close())
		}
	}
	return errors.Join(errs...)
}

// Stats describes what a scratch database holds.
type Stats struct {
	Tables  int   // live tables
	Bytes   int64 // bytes the live tables hold, as counted against MaxSessionBytes
	Evicted int   // tables evicted so far
	// CacheBytes is SQLite's own count of the page-cache memory of the
	// database (SQLITE_DBSTATUS_CACHE_USED): with an in-memory database,
	// that is where every table lives.
	CacheBytes int64
}

// Stats reports what the database holds now.
func (db *DB) Stats() (Stats, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return Stats{}, ErrClosed
	}
	s := Stats{Tables: len(db.order), Bytes: db.total, Evicted: len(db.evicted)}
	err := db.wc.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			return errors.New("scratch: the driver reports no memory status")
		}
		cur, _, err := st.Status(sqlite.DBStatusCacheUsed, false)
		s.CacheBytes = int64(cur)
		return err
	})
	return s, err
}

// drv is a driver of Weir's own, so that the functions registered for the
// scratch database (median, quantile and the result sink) reach only its
// connections and never the state store's.
var drv = newDriver()

func newDriver() *sqlite.Driver {
	d := &sqlite.Driver{}
	d.MustRegisterFunction("median", &sqlite.FunctionImpl{
		NArgs: 1, Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &quantileAgg{name: "median", q: 0.5}, nil
		},
	})
	d.MustRegisterFunction("quantile", &sqlite.FunctionImpl{
		NArgs: 2, Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &quantileAgg{name: "quantile", takesQ: true}, nil
		},
	})
	// The sink is not deterministic on purpose: SQLite must call it once
	// per row, never fold or reuse a call.
	d.MustRegisterFunction(sinkFunction, &sqlite.FunctionImpl{NArgs: -1, Scalar: sink})
	return d
}

// connector opens one physical connection of drv and installs the
// authorizer on it before database/sql can use it. Every connection the
// pool could ever open goes through here, so none runs without one.
type connector struct {
	dsn  string
	auth sqlite.AuthorizerFn
}

func (c connector) Connect(context.Context) (driver.Conn, error) {
	conn, err := drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	reg, ok := conn.(sqlite.AuthorizerRegisterer)
	if !ok {
		conn.Close()
		return nil, errors.New("scratch: the SQLite driver offers no authorizer")
	}
	if err := reg.RegisterAuthorizer(c.auth); err != nil {
		conn.Close()
		return nil, fmt.Errorf("scratch: installing the authorizer: %w", err)
	}
	return conn, nil
}

func (c connector) Driver() driver.Driver { return drv }

// authorizeWrite is the writer's authorizer: it lets through exactly the
// steps of creating, filling and dropping the one table named in db.write,
// and reading the page counts. The writer never runs the agent's SQL; this
// keeps a bug in how Weir builds its own SQL (a column name, say) from
// doing anything else.
func (db *DB) authorizeWrite(action sqlite.AuthorizerActionCode, arg1, arg2, dbName, _ string) sqlite.AuthorizerReturnCode {
	main := dbName == "main" || dbName == ""
	schema := main && isSchemaTable(arg1)
	w := db.write
	ok := false
	switch action {
	case sqlite.AuthTransaction, sqlite.AuthSelect:
		ok = true
	case sqlite.AuthCreateTable:
		ok = main && w.create != "" && arg1 == w.create
	case sqlite.AuthInsert:
		ok = schema || (main && w.create != "" && arg1 == w.create)
	case sqlite.AuthUpdate, sqlite.AuthRead:
		ok = schema
	case sqlite.AuthDropTable:
		ok = main && w.drop != "" && arg1 == w.drop
	case sqlite.AuthDelete:
		ok = schema || (main && w.drop != "" && arg1 == w.drop)
	case sqlite.AuthPragma:
		ok = arg2 == "" && (arg1 == "page_count" || arg1 == "freelist_count" || arg1 == "page_size" ||
			(w.opening && arg1 == "module_list"))
	}
	if ok {
		return sqlite.AuthorizerOK
	}
	return sqlite.AuthorizerDeny
}

func isSchemaTable(name string) bool {
	return name == "sqlite_master" || name == "sqlite_schema"
}

func randomHex() string {
	var b [16]byte
	rand.Read(b[:]) // never fails; see crypto/rand.Read
	return hex.EncodeToString(b[:])
}
