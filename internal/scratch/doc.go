// Package scratch is the scratch database: big tool results become tables
// in an in-memory SQLite database of the proxy, and a read-only weir_query
// tool runs SQL over them.
//
// An agent handed 400 GitHub issues as 90 KB of JSON re-reads them on every
// turn and still gets the median wrong. Stored as a table, the payload
// becomes a short handle, the bulk stays out of the model's context, and
// aggregation is exact. Labels flow through SQL: a table made from a
// private result is private, and a query's answer carries the union of the
// labels of the tables it read, so a sink call that carries it is judged
// as if it carried those results.
//
// # Use
//
// One DB per proxy session:
//
//	db, err := scratch.Open(scratch.Options{}) // defaults: min_rows 20, 1 MiB ceiling, 256 MiB a session
//	defer db.Close()
//
// For a tools/call result of a tool the policy opts in:
//
//	h, ok, err := db.Materialise(ctx, "github:list_issues", labels, result)
//	if err != nil {
//		log.Debug("scratch", "err", err) // never fails the call
//	}
//	if !ok {
//		forward(result) // or scratch.PassThrough(result, h.Note)
//	} else {
//		forward(h.Result()) // the preview and the handle instead of the payload
//	}
//
// Weir adds scratch.ToolDefinition(opts) to tools/list and answers its
// calls itself:
//
//	result, labels := db.CallTool(ctx, params.Arguments)
//	// record result under labels, exactly like a tool result
//
// or, for programs, db.Query(ctx, "SELECT state, count(*) FROM t_… GROUP BY 1").
//
// # What is stored
//
// A result is eligible when it is not an error, has only text content (or
// none), is at most MaxPayloadBytes, and its structuredContent or a text
// item is a JSON array of at least MinRows objects, or an object whose
// largest array of objects (among its members and their members) is. The
// array's objects become rows; column types are Weir's own:
//
//   - integer: JSON integers; exact while every value is within ±2^53.
//   - real: numbers with a fraction or exponent (or integers mixed with
//     them); never exact, a decimal literal becomes the nearest float64.
//   - boolean: true and false as 1 and 0.
//   - text: strings, kept as written (ISO-8601 timestamps stay text and
//     sort chronologically when they share a format and offset); scalars of
//     mixed types are kept as their JSON text, and are not exact.
//   - json: objects and arrays as compact JSON text, for json_extract, ->
//     and ->>.
//
// Members of nested objects are flattened one level, user.login becoming
// the column user_login, while MaxColumns allows. A missing key and JSON
// null are both NULL: that loss is documented in every preview.
//
// Tables are named t_<scope>_<n>, where the scope is 128 random bits drawn
// per session: a handle cannot be guessed, a handle from another session is
// recognised as such, and there is no catalogue to enumerate (sqlite_master
// cannot be read). The oldest tables are evicted first to stay within
// MaxSessionBytes and MaxTables; a query that names an evicted table says
// so and asks for the tool to be called again.
//
// # The read-only gate
//
// A weir_query statement passes five layers, each sufficient for what it
// checks:
//
//  1. A statement gate with SQLite's tokenizer rules: exactly one
//     statement, starting with SELECT or WITH, parentheses balanced, no
//     parameters, no word that only writing statements use (INSERT,
//     PRAGMA, ATTACH, BEGIN, VACUUM, …) outside quotes.
//  2. SQLite's own parser: the statement is compiled only as the body of a
//     common table expression, where its grammar admits nothing but a
//     SELECT. The statement itself is prepared alone first, never run.
//  3. SQLite's authorizer, installed on each connection as it opens (so no
//     connection is ever without one) and fail-closed: a query may read
//     only the live tables of this session and call only an allowlist of
//     functions. PRAGMA, ATTACH (and so VACUUM INTO), writes, DDL,
//     transactions, savepoints, load_extension, the schema table and every
//     virtual table (json_each, pragma_*, dbstat, sqlite_dbpage) are
//     denied at prepare time. Its SQLITE_READ callbacks, which also report
//     tables read without a column (count(*)), are where a result's labels
//     come from.
//  4. A reader connection that runs nothing but these statements, opened
//     with query_only, defensive mode, double-quoted strings off,
//     trusted_schema off and temp_store in memory (intermediate rows never
//     reach a disk file), and SQLite limits lowered: value length, SQL
//     length, expression depth, compound selects, VDBE size, LIKE pattern
//     length, attached databases (0) and parameters (0).
//  5. Execution within QueryTimeout and MaxQueryMemory. The statement runs
//     in a single ExecContext with its rows handed to a Go function as
//     SQLite makes them, because modernc.org/sqlite interrupts an Exec
//     whenever its context ends but does not interrupt rows read after a
//     Query's first step (a statement whose second row never comes would
//     run on); that function also stops the statement once RowCap rows or
//     ByteCap bytes are in. A watchdog interrupts a statement that grows
//     the process by more than MaxQueryMemory: a sort over a cross join of
//     a 1 MiB table otherwise took 660 MiB in the two seconds before its
//     deadline. Every cut (rows, cells, bytes) is stated in the result
//     text; a stopped statement returns an error saying which limit
//     stopped it.
//
// temp_store=2 is load-bearing: with SQLite's default, the sorter spills a
// large query's intermediate rows, which are result text, to an unlinked
// file under /var/tmp. TestIntermediateRowsNeverReachDisk holds it.
//
// # Aggregates
//
// median(x) and quantile(x, q) interpolate linearly between the nearest
// ranks (PERCENTILE_CONT). On integers they compute in rationals and return
// an integer when the answer is one, else the nearest float64; median is
// exact for all integers within ±2^52, and for integers within ±2^53
// whenever the answer is an integer.
package scratch
