package scratch

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// The read-only gate has layers, each enough on its own for what it checks
// and none trusting the others:
//
//  1. statement, below: a lexer with SQLite's tokenizer rules admits one
//     statement that starts with SELECT or WITH, has balanced parentheses,
//     binds no parameters and holds no word that only statements changing
//     the database use.
//  2. SQLite's parser: Query compiles the statement only as the body of a
//     common table expression, WITH weir_result(…) AS (<statement>) SELECT
//     …, where SQLite's grammar admits a SELECT and nothing else.
//  3. authorizeRead, the authorizer installed on the reader connection
//     when it opens: reads of this session's live tables and an allowlist
//     of functions; everything else (ATTACH, PRAGMA, writes, DDL,
//     transactions, virtual tables such as json_each, dbstat or
//     sqlite_dbpage, the schema table, load_extension) is denied while the
//     statement is prepared, before it can run.
//  4. The reader connection itself: query_only, defensive mode, no
//     double-quoted strings, untrusted schema, temp data in memory, and
//     SQLite limits (length, SQL length, expression depth, compound
//     selects, attached databases, parameters).
//  5. Execution: the statement runs inside one call that the query's
//     deadline interrupts, and the row, cell and byte caps stop it early.

// writeWords are words SQLite uses only in statements that change a
// database or its connection. Unquoted, none can appear in a SELECT except
// as a column name, and a column of that name can be quoted.
var writeWords = map[string]bool{
	"ALTER": true, "ANALYZE": true, "ATTACH": true, "BEGIN": true, "COMMIT": true,
	"CREATE": true, "DELETE": true, "DETACH": true, "DROP": true,
	"INSERT": true, "PRAGMA": true, "REINDEX": true, "RELEASE": true,
	"RETURNING": true, "ROLLBACK": true, "SAVEPOINT": true, "UPDATE": true,
	"VACUUM": true,
}

// statement checks sql with SQLite's tokenizer rules and returns the one
// statement it holds, without trailing semicolons, comments or space.
//
// The rules are those of SQLite's tokenizer (tokenize.c): '...', "..." and
// `...` quote with the quote doubled as the only escape, [...] quotes with
// no escape, -- comments run to the end of the line and /* comments to */.
// Where SQLite would be lenient (an unterminated comment swallows the rest)
// this is strict and refuses, so that it never sees less of the text as SQL
// than SQLite does.
func statement(sql string, maxBytes int) (string, error) {
	const only = "weir_query runs exactly one read-only SELECT (or WITH … SELECT) over this session's tables"
	if len(sql) > maxBytes {
		return "", refused(fmt.Sprintf("The statement is %d bytes; weir_query takes at most %d.", len(sql), maxBytes))
	}
	// SQLite reads the text as a C string and would stop at a NUL.
	if strings.IndexByte(sql, 0) >= 0 {
		return "", refused("The statement holds a NUL byte; " + only + ".")
	}
	if !utf8.ValidString(sql) {
		return "", refused("The statement is not valid UTF-8.")
	}
	var (
		depth int
		start = -1 // start of the first significant token
		end   = -1 // end of the last significant token
		first string
		ended bool // a ';' closed the statement
	)
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(sql)
			}
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return "", refused("The statement has an unterminated /* comment.")
			}
			i += 2 + j + 2
			continue
		case c == ';':
			if depth != 0 {
				return "", refused("The statement has a ';' inside parentheses; " + only + ".")
			}
			ended = true
			i++
			continue
		}
		if ended {
			return "", refused("The text holds more than one statement; " + only + ".")
		}
		if start < 0 {
			start = i
		}
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := quoteEnd(sql, i, c)
			if j < 0 {
				return "", refused("The statement has an unterminated quote.")
			}
			i = j
		case c == '[':
			j := strings.IndexByte(sql[i:], ']')
			if j < 0 {
				return "", refused("The statement has an unterminated [identifier].")
			}
			i += j + 1
		case c == '(':
			depth++
			i++
		case c == ')':
			if depth == 0 {
				return "", refused("The statement has an unbalanced ')'; " + only + ".")
			}
			depth--
			i++
		case c == '?' || c == ':' || c == '@' || c == '#' || c == '$':
			// Parameters: weir_query binds none, and SQLite's Tcl-style
			// $name(…) token can hold characters this lexer would read as
			// quotes.
			return "", refused("The statement has a parameter (?, :name, @name, $name); weir_query binds none: write the values into the SQL.")
		case isIDChar(c):
			j := i
			for j < len(sql) && isIDChar(sql[j]) {
				j++
			}
			word := strings.ToUpper(sql[i:j])
			if first == "" {
				first = word
			}
			if writeWords[word] {
				return "", refused(fmt.Sprintf("%s is not allowed: %s. (A column named %s can be written quoted, \"%s\".)",
					word, only, strings.ToLower(word), sql[i:j]))
			}
			i = j
		default:
			i++ // an operator or punctuation: one byte is one token here
		}
		if first == "" {
			first = "?"
		}
		end = i
	}
	if end < 0 {
		return "", refused("The statement is empty; " + only + ".")
	}
	if depth != 0 {
		return "", refused("The statement has an unbalanced '('.")
	}
	if first != "SELECT" && first != "WITH" {
		return "", refused("The statement must start with SELECT or WITH; " + only + ".")
	}
	return sql[start:end], nil
}

// quoteEnd returns the index just past the quoted token starting at i, or
// -1 if the quote never closes.
func quoteEnd(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++ // a doubled quote is the quote character itself
				continue
			}
			return j + 1
		}
	}
	return -1
}

// isSpace is SQLite's sqlite3Isspace.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// isIDChar is SQLite's IdChar: the bytes an identifier, keyword or number
// is made of. Bytes of multi-byte UTF-8 characters count, as in SQLite.
func isIDChar(c byte) bool {
	return c >= 0x80 || c == '_' || c == '$' ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// queryState is what the reader's authorizer knows about the statement
// being prepared.
type queryState struct {
	wrapped bool            // the statement is Weir's wrapper, which may call the sink
	read    map[string]bool // session tables the statement reads
	denied  string          // the first thing the authorizer denied, for the message

	overMemory *atomic.Bool // set when the memory watchdog stopped the query
}

func (q *queryState) deny(what string) sqlite.AuthorizerReturnCode {
	if q.denied == "" {
		q.denied = what
	}
	return sqlite.AuthorizerDeny
}

// authorizeRead is the reader's authorizer, installed on the connection
// when it opens and never removed. With no query in progress it denies
// everything, so nothing can be prepared on the reader outside Query.
func (db *DB) authorizeRead(action sqlite.AuthorizerActionCode, arg1, arg2, dbName, _ string) sqlite.AuthorizerReturnCode {
	q := db.query
	if q == nil {
		return sqlite.AuthorizerDeny
	}
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRecursive:
		// Every SELECT, and WITH RECURSIVE: the recursion is bounded by
		// the row cap, the length limit and the deadline.
		return sqlite.AuthorizerOK
	case sqlite.AuthRead:
		// SQLite reports a table that is read with no column (count(*),
		// SELECT 1 FROM t) with an empty column and database name, so the
		// tables a statement reads are all seen here: this is where the
		// result's labels come from.
		name := strings.ToLower(arg1)
		if dbName == "main" || dbName == "" {
			if t, ok := db.tables[name]; ok {
				q.read[t.name] = true
				return sqlite.AuthorizerOK
			}
		}
		// SQLite also reports a FROM item that is read with no column under
		// its name alone (no column, no database), and for a CTE or an
		// aliased subquery that name is the alias: SELECT count(*) FROM c.
		// Whatever such an item reads is authorized on its own, so the alias
		// is allowed, unless the name is that of a real object of the
		// database that is not a session table, where the report is the
		// only read there is (SELECT count(*) FROM sqlite_master).
		if arg2 == "" && dbName == "" && !db.isRealObject(name) {
			return sqlite.AuthorizerOK
		}
		if isSchemaTable(name) || name == "sqlite_temp_master" || name == "sqlite_temp_schema" {
			return q.deny("there is no catalogue to read (" + arg1 + "); each handle lists its table's columns")
		}
		return q.deny("it reads " + arg1 + ", and only the tables this session stored can be read")
	case sqlite.AuthFunction:
		name := strings.ToLower(arg2)
		if allowedFunctions[name] || (q.wrapped && name == sinkFunction) {
			return sqlite.AuthorizerOK
		}
		return q.deny("it calls " + arg2 + "(), which weir_query does not offer")
	}
	return q.deny(actionName(action) + " is not allowed")
}

// isRealObject reports whether name is a table or table-valued function
// the database has besides the session's tables: the schema tables, the
// pragma functions, and the eponymous virtual tables of the build.
func (db *DB) isRealObject(name string) bool {
	switch name {
	case "sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema",
		"json_each", "json_tree", "jsonb_each", "jsonb_tree", "sqlite_stmt", "generate_series", "carray":
		return true
	}
	return strings.HasPrefix(name, "pragma_") || db.modules[name]
}

func actionName(a sqlite.AuthorizerActionCode) string {
	switch a {
	case sqlite.AuthPragma:
		return "PRAGMA"
	case sqlite.AuthAttach:
		return "ATTACH"
	case sqlite.AuthDetach:
		return "DETACH"
	case sqlite.AuthTransaction:
		return "a transaction"
	case sqlite.AuthSavepoint:
		return "a savepoint"
	case sqlite.AuthInsert:
		return "INSERT"
	case sqlite.AuthUpdate:
		return "UPDATE"
	case sqlite.AuthDelete:
		return "DELETE"
	case sqlite.AuthAnalyze:
		return "ANALYZE"
	case sqlite.AuthReindex:
		return "REINDEX"
	case sqlite.AuthAlterTable:
		return "ALTER TABLE"
	case sqlite.AuthCreateVTable, sqlite.AuthDropVTable:
		return "a virtual table"
	}
	return "creating or dropping a schema object"
}

// allowedFunctions are the SQL functions a query may call: SQLite's core
// scalar, aggregate, window, date, math and JSON functions, and Weir's
// median and quantile. Left out on purpose: load_extension; randomblob and
// zeroblob (nothing to analyse, only memory to take); the functions that
// report on the connection rather than the data (changes,
// last_insert_rowid, sqlite_offset, sqlite_compileoption_*, …); and every
// table-valued function (json_each, json_tree, pragma_*, …), which the
// authorizer sees as a table and denies.
var allowedFunctions = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(`
		abs char coalesce concat concat_ws format glob hex if iif ifnull instr
		length like likelihood likely lower ltrim max min nullif octet_length
		printf quote random replace round rtrim sign soundex substr substring
		trim typeof unhex unicode unistr unistr_quote unlikely upper
		date time datetime julianday unixepoch strftime timediff
		current_date current_time current_timestamp
		avg count group_concat string_agg sum total median quantile
		row_number rank dense_rank percent_rank cume_dist ntile lag lead
		first_value last_value nth_value
		acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees
		exp floor ln log log10 log2 mod pi pow power radians sin sinh sqrt
		tan tanh trunc
		json json_array json_array_length json_extract json_insert json_object
		json_patch json_pretty json_quote json_remove json_replace json_set
		json_type json_valid json_error_position json_group_array
		json_group_object -> ->>`) {
		m[f] = true
	}
	return m
}()
