package scratch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/weir-sec/weir/internal/flow"
)

// TestStatementGate pins the lexical layer on its own: what it admits, and
// what it cuts off the end.
func TestStatementGate(t *testing.T) {
	ok := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"  select 1 ;  ", "select 1"},
		{"SELECT 1;;", "SELECT 1"},
		{"SELECT 1; -- done\n/* really */", "SELECT 1"},
		{"SELECT 1 -- trailing comment", "SELECT 1"},
		{"SELECT ';' AS semi", "SELECT ';' AS semi"},
		{"SELECT 'it''s; fine'", "SELECT 'it''s; fine'"},
		{`SELECT "a;b", [c;d], ` + "`e;f`", `SELECT "a;b", [c;d], ` + "`e;f`"},
		{"SELECT x'00ff'", "SELECT x'00ff'"},
		{"WITH a(x) AS (SELECT 1) SELECT x FROM a", "WITH a(x) AS (SELECT 1) SELECT x FROM a"},
		{"SELECT json_extract(j, '$.a') FROM t", "SELECT json_extract(j, '$.a') FROM t"},
		{`SELECT "update", "pragma" FROM t`, `SELECT "update", "pragma" FROM t`},
		{"SELECT 1 /* ; DROP TABLE t */", "SELECT 1"},
	}
	for _, c := range ok {
		got, err := statement(c.in, 1000)
		if err != nil || got != c.want {
			t.Errorf("statement(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, why string }{
		{"", "empty"},
		{"-- only a comment", "empty"},
		{";", "empty"},
		{"SELECT 1; SELECT 2", "more than one statement"},
		{"SELECT 1; DROP TABLE t", "more than one statement"},
		{"SELECT 1 -- c\n; DELETE FROM t", "more than one statement"},
		{"SELECT 1 /* c */ ; VACUUM", "more than one statement"},
		{"SELECT ';' ; ATTACH 'x' AS y", "more than one statement"},
		{"SELECT (1; 2)", "inside parentheses"},
		{"SELECT 1) SELECT 1; SELECT (1", "unbalanced ')'"},
		{"SELECT (1", "unbalanced '('"},
		{"SELECT 1 /* never closed", "unterminated /*"},
		{"SELECT 'never closed", "unterminated quote"},
		{`SELECT "never closed`, "unterminated quote"},
		{"SELECT [never closed", "unterminated [identifier]"},
		{"SELECT ?", "parameter"},
		{"SELECT ?1", "parameter"},
		{"SELECT :a", "parameter"},
		{"SELECT @a", "parameter"},
		{"SELECT $a", "parameter"},
		{"SELECT $x(;) FROM t", "parameter"},
		{"SELECT #a", "parameter"},
		{"SELECT 1\x00; DROP TABLE t", "NUL"},
		{"SELECT '\xff'", "UTF-8"},
		{"VALUES (1)", "must start with SELECT or WITH"},
		{"EXPLAIN SELECT 1", "must start with SELECT or WITH"},
		{"(SELECT 1)", "must start with SELECT or WITH"},
		{"PRAGMA query_only = 0", "PRAGMA"},
		{"ATTACH 'file:x?mode=memory' AS x", "ATTACH"},
		{"DETACH x", "DETACH"},
		{"INSERT INTO t VALUES (1)", "INSERT"},
		{"REPLACE INTO t VALUES (1)", "must start with SELECT or WITH"},
		{"UPDATE t SET a = 1", "UPDATE"},
		{"DELETE FROM t", "DELETE"},
		{"CREATE TABLE x (a)", "CREATE"},
		{"CREATE TEMP TABLE x AS SELECT 1", "CREATE"},
		{"DROP TABLE t", "DROP"},
		{"ALTER TABLE t ADD b", "ALTER"},
		{"BEGIN", "BEGIN"},
		{"COMMIT", "COMMIT"},
		{"ROLLBACK", "ROLLBACK"},
		{"SAVEPOINT a", "SAVEPOINT"},
		{"RELEASE a", "RELEASE"},
		{"REINDEX", "REINDEX"},
		{"ANALYZE", "ANALYZE"},
		{"VACUUM", "VACUUM"},
		{"VACUUM INTO '/tmp/x.db'", "VACUUM"},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", "INSERT"},
		{"WITH x AS (SELECT 1) DELETE FROM t", "DELETE"},
		{"SELECT 1 RETURNING 1", "RETURNING"},
		{strings.Repeat("x", 1001), "1001 bytes"},
	}
	for _, c := range bad {
		_, err := statement(c.in, 1000)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("statement(%q) = %v; want a refusal naming %q", c.in, err, c.why)
		}
	}
}

// gateFixture is a session with a private and an untrusted table, and a
// second session with a table of its own.
type gateFixture struct {
	db, other   *DB
	priv, untr  Handle
	foreign     Handle
	objects     int
	privateRows int
}

func newGateFixture(t *testing.T) *gateFixture {
	t.Helper()
	o := Options{QueryTimeout: 250 * time.Millisecond}
	f := &gateFixture{db: openDB(t, o), other: openDB(t, o), privateRows: 40}
	f.priv = mustStore(t, f.db, flow.Private, structured(issues(f.privateRows)))
	f.untr = mustStore(t, f.db, flow.Untrusted, structured(map[string]any{"items": issues(30)}))
	f.foreign = mustStore(t, f.other, flow.Private, structured(issues(25)))
	f.objects = schemaObjects(t, f.db)
	return f
}

// TestGateRefusesBypasses runs every bypass we could think of through
// Query. Each must fail, with the kind of error named, and leave the
// database as it was.
func TestGateRefusesBypasses(t *testing.T) {
	f := newGateFixture(t)
	P, U, F := f.priv.Table, f.untr.Table, f.foreign.Table
	dir := t.TempDir()
	file := filepath.Join(dir, "leak.db")
	cases := []struct {
		name, sql string
		kinds     []error
	}{
		// No catalogue.
		{"sqlite_master", "SELECT name FROM sqlite_master", []error{ErrRefused}},
		{"sqlite_schema", "SELECT sql FROM sqlite_schema", []error{ErrRefused}},
		{"sqlite_temp_master", "SELECT * FROM sqlite_temp_master", []error{ErrRefused}},
		{"sqlite_temp_schema", "SELECT * FROM sqlite_temp_schema", []error{ErrRefused}},
		{"main.sqlite_master", "SELECT * FROM main.sqlite_master", []error{ErrRefused}},
		{"temp.sqlite_master", "SELECT * FROM temp.sqlite_master", []error{ErrRefused}},
		{"upper case", "sElEcT * FrOm SQLITE_MASTER", []error{ErrRefused}},
		{"schema in a subquery", "SELECT (SELECT group_concat(name) FROM sqlite_master)", []error{ErrRefused}},
		{"schema in a CTE", "WITH x AS (SELECT * FROM sqlite_master) SELECT * FROM x", []error{ErrRefused}},
		{"schema joined", "SELECT * FROM " + P + ", sqlite_master", []error{ErrRefused}},
		{"counting the schema", "SELECT count(*) FROM sqlite_master", []error{ErrRefused}},
		{"counting the schema, qualified", "SELECT count(*) FROM main.sqlite_master", []error{ErrRefused}},
		{"the schema joined unread", "SELECT 1 FROM " + P + ", sqlite_master", []error{ErrRefused}},
		{"counting dbstat", "SELECT count(*) FROM dbstat", []error{ErrRefused}},
		{"counting a pragma", "SELECT count(*) FROM pragma_module_list", []error{ErrRefused}},
		{"counting json_each", "SELECT count(*) FROM json_each('[1,2]')", []error{ErrRefused}},
		{"schema in WHERE", "SELECT 1 FROM " + P + " WHERE EXISTS (SELECT 1 FROM sqlite_master)", []error{ErrRefused}},
		{"CTE shadowing a session table over the schema", "WITH " + P + " AS (SELECT * FROM sqlite_master) SELECT * FROM " + P, []error{ErrRefused}},
		{"recursive CTE over the schema", "WITH RECURSIVE r(n) AS (SELECT name FROM sqlite_master UNION SELECT n FROM r) SELECT * FROM r", []error{ErrRefused}},
		// Schema-qualified names of things that are not this session's tables.
		{"temp table", "SELECT * FROM temp." + P, []error{ErrSQL}},
		{"unknown schema", "SELECT * FROM other." + P, []error{ErrSQL}},
		// Table-valued functions and virtual tables.
		{"pragma function", "SELECT * FROM pragma_table_info('" + P + "')", []error{ErrRefused}},
		{"pragma_query_only", "SELECT * FROM pragma_query_only", []error{ErrRefused}},
		{"json_each", "SELECT * FROM json_each('[1,2]')", []error{ErrRefused}},
		{"json_each on a path", "SELECT * FROM json_each('/etc/passwd')", []error{ErrRefused}},
		{"json_tree", "SELECT * FROM json_tree('{\"a\":1}')", []error{ErrRefused}},
		{"dbstat", "SELECT * FROM dbstat", []error{ErrRefused}},
		{"sqlite_dbpage", "SELECT * FROM sqlite_dbpage", []error{ErrRefused}},
		{"fts5 vocab", "SELECT * FROM fts5vocab('x', 'row')", []error{ErrRefused, ErrSQL}},
		{"generate_series", "SELECT * FROM generate_series(1, 10)", []error{ErrRefused, ErrSQL}},
		// Functions that touch files, extensions or the connection.
		{"load_extension", "SELECT load_extension('/tmp/evil.so')", []error{ErrRefused}},
		{"readfile", "SELECT readfile('/etc/passwd')", []error{ErrRefused, ErrSQL}},
		{"writefile", "SELECT writefile('" + file + "', 'x')", []error{ErrRefused, ErrSQL}},
		{"edit", "SELECT edit('x', 'vi')", []error{ErrRefused, ErrSQL}},
		{"fts3_tokenizer", "SELECT fts3_tokenizer('simple')", []error{ErrRefused, ErrSQL}},
		{"sqlite_compileoption_get", "SELECT sqlite_compileoption_get(0)", []error{ErrRefused}},
		{"changes", "SELECT changes()", []error{ErrRefused}},
		{"the sink", "SELECT weir_row('0123', 1)", []error{ErrRefused}},
		{"the sink in a subquery", "SELECT (SELECT weir_row('x', number) FROM " + P + ")", []error{ErrRefused}},
		{"zeroblob", "SELECT zeroblob(1000000000)", []error{ErrRefused}},
		{"randomblob", "SELECT randomblob(1000000000)", []error{ErrRefused}},
		// Statements that are not SELECTs, alone or hidden.
		{"PRAGMA", "PRAGMA query_only = 0", []error{ErrRefused}},
		{"PRAGMA writable_schema", "PRAGMA writable_schema = ON", []error{ErrRefused}},
		{"ATTACH", "ATTACH 'file:" + file + "' AS x", []error{ErrRefused}},
		{"ATTACH memory", "ATTACH 'file:weir-scratch-x?mode=memory&cache=shared' AS x", []error{ErrRefused}},
		{"VACUUM INTO", "VACUUM INTO '" + file + "'", []error{ErrRefused}},
		{"INSERT", "INSERT INTO " + P + " (number) VALUES (1)", []error{ErrRefused}},
		{"INSERT … SELECT", "WITH x AS (SELECT 1) INSERT INTO " + P + " (number) SELECT * FROM x", []error{ErrRefused}},
		{"UPDATE", "UPDATE " + P + " SET title = 'x'", []error{ErrRefused}},
		{"DELETE", "DELETE FROM " + P, []error{ErrRefused}},
		{"CREATE", "CREATE TABLE x AS SELECT * FROM " + P, []error{ErrRefused}},
		{"CREATE TEMP", "CREATE TEMP VIEW v AS SELECT * FROM " + P, []error{ErrRefused}},
		{"DROP", "DROP TABLE " + P, []error{ErrRefused}},
		{"ALTER", "ALTER TABLE " + P + " RENAME TO x", []error{ErrRefused}},
		{"BEGIN", "BEGIN IMMEDIATE", []error{ErrRefused}},
		{"SAVEPOINT", "SAVEPOINT s", []error{ErrRefused}},
		{"REINDEX", "REINDEX", []error{ErrRefused}},
		{"ANALYZE", "ANALYZE", []error{ErrRefused}},
		{"VACUUM", "VACUUM", []error{ErrRefused}},
		{"two statements", "SELECT 1; DELETE FROM " + P, []error{ErrRefused}},
		{"two SELECTs", "SELECT 1; SELECT 2", []error{ErrRefused}},
		{"a line comment hiding a second statement", "SELECT 1 --\n; DROP TABLE " + P, []error{ErrRefused}},
		{"a block comment before a second statement", "SELECT 1 /* x */; SELECT name FROM sqlite_master", []error{ErrRefused}},
		{"a string holding ';' then a statement", "SELECT ';'; DROP TABLE " + P, []error{ErrRefused}},
		{"escaping the wrapper", "SELECT 1) SELECT name FROM sqlite_master; SELECT (1", []error{ErrRefused}},
		{"a comment eating the wrapper", "SELECT 1 /*", []error{ErrRefused}},
		{"a NUL cutting the text", "SELECT 1\x00; DROP TABLE " + P, []error{ErrRefused}},
		{"a Tcl variable hiding a quote", "SELECT $x(') ; DELETE FROM " + P + "; --')", []error{ErrRefused}},
		// Tables of another session, and handles that are not tables here.
		{"another session's table", "SELECT * FROM " + F, []error{ErrUnknownTable}},
		{"another session's table, quoted", `SELECT * FROM "` + strings.ToUpper(F) + `"`, []error{ErrUnknownTable}},
		{"a table never made", "SELECT * FROM t_" + f.db.scope + "_999", []error{ErrUnknownTable}},
		{"a table that is not a handle", "SELECT * FROM users", []error{ErrSQL}},
		// Bombs: bounded by the limits and the deadline, and fast.
		{"recursive CTE counting forever", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", []error{ErrTimeout}},
		{"recursive CTE deduplicating forever", "WITH RECURSIVE c(x) AS (SELECT 1 UNION SELECT x+1 FROM c) SELECT max(x) FROM c", []error{ErrTimeout}},
		{"recursive CTE that never matches", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c WHERE x = 0", []error{ErrTimeout}},
		{"cross join sort", "SELECT a.title FROM " + P + " a, " + P + " b, " + P + " c, " + P + " d, " + P + " e ORDER BY random()", []error{ErrTimeout}},
		{"huge printf", "SELECT printf('%.*c', 2000000000, 'x')", []error{ErrSQL}},
		{"huge replace", "SELECT replace(printf('%.*c', 1000000, 'x'), 'x', 'yy')", []error{ErrSQL}},
		{"huge group_concat", "SELECT length(group_concat(printf('%.*c', 100000, 'x'))) FROM " + P, []error{ErrSQL}},
		{"deep expression", "SELECT " + strings.Repeat("abs(", 150) + "1" + strings.Repeat(")", 150), []error{ErrSQL}},
		{"many compound terms", "SELECT 1" + strings.Repeat(" UNION SELECT 1", 60), []error{ErrSQL}},
		{"long LIKE pattern", "SELECT 'a' LIKE '" + strings.Repeat("%a", 600) + "'", []error{ErrSQL}},
		{"too long", "SELECT '" + strings.Repeat("x", DefaultMaxSQLBytes) + "'", []error{ErrRefused}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r, err := f.db.Query(context.Background(), c.sql)
			if err == nil {
				t.Fatalf("Query succeeded:\n%s", r.Text)
			}
			if !isKind(err, c.kinds...) {
				t.Fatalf("Query error = %v; want one of %v", err, c.kinds)
			}
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Errorf("error %v is not an *Error with a message", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	if n := schemaObjects(t, f.db); n != f.objects {
		t.Errorf("the schema holds %d objects, was %d", n, f.objects)
	}
	if got := one(t, f.db, "SELECT count(*) FROM "+P); got != int64(f.privateRows) {
		t.Errorf("the private table has %v rows, want %d", got, f.privateRows)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s exists: %v", file, err)
	}
	_ = U
}

// TestGateAllowsHarmlessLookalikes: what looks like a bypass but reads only
// what the session may read works, and says nothing about the schema.
func TestGateAllowsHarmlessLookalikes(t *testing.T) {
	f := newGateFixture(t)
	P := f.priv.Table
	for _, c := range []struct{ sql, want string }{
		// A CTE named like the schema table is only the CTE.
		{"WITH sqlite_master(name) AS (SELECT 'shadow') SELECT name FROM sqlite_master", "shadow"},
		// A CTE named like a session table shadows it, within the statement.
		{"WITH " + P + "(title) AS (SELECT 'shadow') SELECT title FROM " + P, "shadow"},
		// main. is where the session's tables are.
		{"SELECT title FROM main." + P + " WHERE number = 1", "Issue number 1"},
		{"SELECT 'a;b' || ';'", "a;b;"},
		{"SELECT '--' || '/*'", "--/*"},
		{`SELECT "update" FROM (SELECT 'x' AS "update")`, "x"},
		{"SELECT json_extract('{\"a\":\"v\"}', '$.a')", "v"},
		{"SELECT labels ->> '$[0].name' FROM " + P + " LIMIT 1", "bug"},
	} {
		if got := one(t, f.db, c.sql); got != c.want {
			t.Errorf("%s = %v, want %q", c.sql, got, c.want)
		}
	}
	// Recursion is allowed, and its rows stop at the row cap.
	r := mustQuery(t, f.db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c")
	if len(r.Rows) != DefaultRowCap || !r.MoreRows {
		t.Errorf("unbounded recursion: %d rows, more=%v", len(r.Rows), r.MoreRows)
	}
}

// TestReaderLayersStandAlone takes away one layer at a time and shows the
// others still hold.
func TestReaderLayersStandAlone(t *testing.T) {
	f := newGateFixture(t)
	ctx := context.Background()
	f.db.mu.Lock()
	defer f.db.mu.Unlock()

	// With no query in progress the reader's authorizer denies everything,
	// a plain SELECT included.
	if _, err := f.db.rc.ExecContext(ctx, "SELECT 1"); err == nil {
		t.Error("the reader ran a statement outside Query")
	}
	// The writer's authorizer refuses what Weir's own SQL never does.
	for _, s := range []string{
		"DELETE FROM " + f.priv.Table,
		"INSERT INTO " + f.priv.Table + " (number) VALUES (1)",
		"CREATE TABLE x (a)",
		"DROP TABLE " + f.priv.Table,
		"ATTACH 'file:x?mode=memory' AS x",
		"PRAGMA query_only = 1",
		"SELECT load_extension('x')",
		"SELECT * FROM " + f.priv.Table,
	} {
		if _, err := f.db.wc.ExecContext(ctx, s); err == nil {
			t.Errorf("the writer ran %q", s)
		}
	}
	// With the reader's authorizer replaced by one that allows everything,
	// query_only still refuses every write, and the attach limit refuses
	// ATTACH.
	err := f.db.rc.Raw(func(dc any) error {
		return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(func(sqlite.AuthorizerActionCode, string, string, string, string) sqlite.AuthorizerReturnCode {
			return sqlite.AuthorizerOK
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.db.rc.Raw(func(dc any) error {
		return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(f.db.authorizeRead)
	})
	for _, s := range []string{
		"DELETE FROM " + f.priv.Table,
		"CREATE TEMP TABLE x (a)",
		"DROP TABLE " + f.priv.Table,
		"ATTACH 'file:x?mode=memory' AS x",
		"SELECT ?1",
	} {
		if _, err := f.db.rc.ExecContext(ctx, s); err == nil {
			t.Errorf("without its authorizer, the reader ran %q", s)
		}
	}
}

// TestTimeoutInterruptsBetweenRows pins why Query runs statements through
// one Exec: a statement whose first row comes at once and whose second
// never does must still stop at the deadline.
func TestTimeoutInterruptsBetweenRows(t *testing.T) {
	db := openDB(t, Options{QueryTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := db.Query(context.Background(),
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c WHERE x = 1 OR x = 1000000000000")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stopped after %v", d)
	}
	if !strings.Contains(err.Error(), "time limit") {
		t.Errorf("message %q does not say why", err)
	}
	// And the connection is usable afterwards.
	if got := one(t, db, "SELECT 40 + 2"); got != int64(42) {
		t.Errorf("after a timeout: %v", got)
	}
}

// TestCallerContextCancels: the caller's context ends a query too.
func TestCallerContextCancels(t *testing.T) {
	db := openDB(t, Options{QueryTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := db.Query(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c")
	if err == nil {
		t.Fatal("the query outlived its context")
	}
}
