package scratch

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"

	"github.com/weir-sec/weir/internal/flow"
)

// QueryResult is the answer to one weir_query statement.
type QueryResult struct {
	// Text is the rendered answer for the client: a pipe table, the row
	// count, and a sentence for every cap that cut it.
	Text    string
	Columns []string
	// Rows are the values shown in Text: int64, float64, string, []byte or
	// nil, with strings and blobs longer than CellCap cut.
	Rows [][]any
	// Labels is the union of the labels of the tables the statement read.
	// The relay records the result under them, as if it were the results
	// the tables were made from.
	Labels flow.Labels
	// Tables are the tables the statement read, sorted.
	Tables []string
	// MoreRows: the statement returns more rows than RowCap (or than fit
	// ByteCap before the stop); only the first ones are in Rows.
	MoreRows bool
	// CellsCut counts cells cut to CellCap.
	CellsCut int
	// BytesCut: rows were left out of Text to keep it within ByteCap.
	BytesCut bool
}

// maxResultColumns bounds the columns of a result: each is an argument of
// the sink call, and a wider table would not render usefully anyway.
const maxResultColumns = 200

// sinkFunction is the function the wrapper calls once per result row.
const sinkFunction = "weir_row"

// Query runs one read-only statement over this session's tables.
//
// The statement is exactly one SELECT (or WITH … SELECT) over tables this
// session stored, named as their handles name them. It runs under the
// gate described in doc.go, within QueryTimeout, and returns at most RowCap
// rows, CellCap bytes a cell and ByteCap bytes of text; each cut is stated
// in the text, never silent.
//
// The error is an *Error: its message is for the model. Even with an error
// the result's Labels hold the labels of every table the statement named
// or read, because whether and how a statement fails can depend on the
// data it read.
func (db *DB) Query(ctx context.Context, sqlText string) (QueryResult, error) {
	stmt, err := statement(sqlText, db.opts.MaxSQLBytes)
	if err != nil {
		return QueryResult{}, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return QueryResult{}, &Error{Kind: ErrClosed, Msg: "The scratch database is closed."}
	}
	// Labels from the text, first: a table name is 128 random bits, so a
	// statement can only read a table whose name it spells out. This is the
	// floor; the authorizer's reads below add to it, never remove from it.
	res := QueryResult{Labels: db.mentioned(stmt)}
	if err := db.checkHandles(stmt); err != nil {
		return res, err
	}

	ctx, cancel := context.WithTimeout(ctx, db.opts.QueryTimeout)
	defer cancel()
	q := &queryState{read: map[string]bool{}}
	q.overMemory = watchMemory(ctx, db.opts.MaxQueryMemory, cancel)
	db.query = q
	defer func() { db.query = nil }()
	record := func() {
		for name := range q.read {
			if t, ok := db.tables[name]; ok {
				res.Labels |= t.labels
			}
		}
		res.Tables = slices.Sorted(func(yield func(string) bool) {
			for name := range q.read {
				if !yield(name) {
					return
				}
			}
		})
	}

	// Prepare the statement alone, never run it: the authorizer sees
	// every table and function it uses, and SQLite names its columns.
	var cols []sqlite.ColumnInfo
	err = db.rc.Raw(func(dc any) error {
		ci, ok := dc.(interface {
			ColumnInfo(string) ([]sqlite.ColumnInfo, error)
		})
		if !ok {
			return errors.New("scratch: the driver cannot describe a statement")
		}
		var err error
		cols, err = ci.ColumnInfo(stmt)
		return err
	})
	record()
	if err != nil {
		return res, db.queryError(ctx, q, err)
	}
	if len(cols) == 0 {
		return res, refused("The statement returns no columns; weir_query runs one SELECT.")
	}
	if len(cols) > maxResultColumns {
		return res, refused(fmt.Sprintf("The statement returns %d columns; weir_query returns at most %d. Name the columns you need.", len(cols), maxResultColumns))
	}
	res.Columns = make([]string, len(cols))
	for i, c := range cols {
		res.Columns[i] = c.Name
	}

	// Run it as the body of a CTE whose rows go to the sink, in one
	// ExecContext: the driver interrupts an Exec when ctx ends at any point
	// of the statement, whereas rows read one by one after a Query's first
	// step are not interrupted at all. The sink also stops the statement
	// as soon as the caps are reached.
	col := &collector{rowCap: db.opts.RowCap, cellCap: db.opts.CellCap, byteCap: db.opts.ByteCap, ncol: len(cols)}
	token := randomHex()
	sinks.Store(token, col)
	defer sinks.Delete(token)
	q.wrapped = true
	_, err = db.rc.ExecContext(ctx, wrap(stmt, token, len(cols)))
	record()
	if err != nil && !col.stopped {
		return res, db.queryError(ctx, q, err)
	}
	res.Rows, res.MoreRows, res.CellsCut = col.rows, col.more, col.cut
	db.render(&res)
	return res, nil
}

// wrap puts the statement in the CTE the sink reads. The newlines matter:
// a -- comment on the statement's last line ends before the ')'.
func wrap(stmt, token string, n int) string {
	var b strings.Builder
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d", i)
	}
	list := strings.Join(cols, ", ")
	b.WriteString("WITH weir_result(" + list + ") AS (\n")
	b.WriteString(stmt)
	b.WriteString("\n) SELECT " + sinkFunction + "('" + token + "', " + list + ") FROM weir_result")
	return b.String()
}

func (db *DB) queryError(ctx context.Context, q *queryState, err error) error {
	switch {
	case q.overMemory != nil && q.overMemory.Load():
		return &Error{Kind: ErrMemory, Err: err, Msg: fmt.Sprintf(
			"The query took more than %d MiB of memory and was stopped; nothing was returned. Narrow it (WHERE, LIMIT), aggregate, or avoid sorting a join.", db.opts.MaxQueryMemory>>20)}
	case q.denied != "":
		return &Error{Kind: ErrRefused, Err: err, Msg: fmt.Sprintf(
			"weir_query refused the statement: %s. It runs one read-only SELECT over the tables this session stored, with SQLite's scalar, aggregate, window, date, math and JSON functions.", q.denied)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: ErrTimeout, Err: err, Msg: fmt.Sprintf(
			"The query ran past the %v time limit and was stopped; nothing was returned. Narrow it (WHERE, LIMIT) or aggregate.", db.opts.QueryTimeout)}
	case ctx.Err() != nil:
		return &Error{Kind: ErrSQL, Err: ctx.Err(), Msg: "The query was cancelled."}
	}
	return &Error{Kind: ErrSQL, Err: err, Msg: "SQLite rejected the statement: " + sqliteMessage(err)}
}

// sqliteMessage is the driver's error without its framing: "SQL logic
// error: no such column: x (1)" becomes "no such column: x".
func sqliteMessage(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "SQL logic error: ")
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	return s
}

// watchMemory cancels a query whose process grows by more than limit bytes
// of resident memory while it runs, polling every 10ms until ctx ends, and
// returns the flag it sets when it does. SQLite's own heap limit would be
// exact, but it is process-wide and would fail the state store's
// allocations too; the sorter and temp b-trees a query fills are in no
// per-connection count. Without /proc/self/statm it watches nothing.
func watchMemory(ctx context.Context, limit int64, cancel context.CancelFunc) *atomic.Bool {
	base, ok := residentBytes()
	if !ok {
		return nil
	}
	over := new(atomic.Bool)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if rss, ok := residentBytes(); ok && rss-base > limit {
					over.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	return over
}

// residentBytes is the process's resident set size, from /proc/self/statm.
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

var handlePattern = regexp.MustCompile(`(?i)\bt_([0-9a-f]{32})_([0-9]+)\b`)

// checkHandles fails loudly on a table handle the session cannot serve:
// one evicted, one from another session, one never made.
func (db *DB) checkHandles(stmt string) error {
	for _, m := range handlePattern.FindAllStringSubmatch(stmt, -1) {
		name := strings.ToLower(m[0])
		if _, ok := db.tables[name]; ok {
			continue
		}
		if limit, ok := db.evicted[name]; ok {
			return &Error{Kind: ErrEvicted, Msg: fmt.Sprintf(
				"table %s was evicted to stay within %s; call the tool again", name, limit)}
		}
		if strings.ToLower(m[1]) != db.scope {
			return &Error{Kind: ErrUnknownTable, Msg: fmt.Sprintf(
				"table %s is not from this session: a handle works only in the session whose tool call made it; call the tool again", name)}
		}
		return &Error{Kind: ErrUnknownTable, Msg: fmt.Sprintf(
			"there is no table %s in this session; use the table name from a handle", name)}
	}
	return nil
}

// mentioned is the union of the labels of the live tables whose names the
// statement text contains, anywhere: identifiers, quoted names, strings.
func (db *DB) mentioned(stmt string) flow.Labels {
	lower := strings.ToLower(stmt)
	var l flow.Labels
	for _, t := range db.order {
		if strings.Contains(lower, t.name) {
			l |= t.labels
		}
	}
	return l
}

// render writes res.Text and trims res.Rows to what it shows.
func (db *DB) render(res *QueryResult) {
	o := db.opts
	var notes []string
	// Reserve room for the notes so the whole text stays within ByteCap.
	noteRoom := min(400, o.ByteCap/4)
	table, shown := tableText(res.Columns, res.Rows, o.CellCap+len("…"), o.ByteCap-noteRoom)
	if shown < len(res.Rows) {
		res.BytesCut = true
		res.Rows = res.Rows[:shown]
	}
	var b strings.Builder
	switch n := len(res.Rows); {
	case res.MoreRows || res.BytesCut:
		fmt.Fprintf(&b, "The first %d rows (the query returns more):\n", n)
	case n == 1:
		b.WriteString("1 row:\n")
	default:
		fmt.Fprintf(&b, "%d rows:\n", n)
	}
	b.WriteString(table)
	if res.MoreRows && !res.BytesCut {
		notes = append(notes, fmt.Sprintf("Truncated at the row cap of %d rows: aggregate, or page with LIMIT and OFFSET.", o.RowCap))
	}
	if res.BytesCut {
		notes = append(notes, fmt.Sprintf("Truncated to %d rows to stay within the byte cap of %d bytes: select fewer or narrower columns, or page with LIMIT and OFFSET.", len(res.Rows), o.ByteCap))
	}
	if res.CellsCut > 0 {
		notes = append(notes, fmt.Sprintf("%d cells were cut to the cell cap of %d bytes (marked …): use substr() to read a long value in parts.", res.CellsCut, o.CellCap))
	}
	for _, n := range notes {
		b.WriteString("\n" + n)
	}
	res.Text = b.String()
}

// sinks maps the token of each query in progress to its collector. The
// token, 128 random bits written into the wrapper, is how the sink, which
// SQLite calls with no handle on the connection, finds its query; a
// statement cannot call the sink itself (the authorizer allows it only in
// the wrapper), let alone guess another query's token.
var sinks sync.Map // string → *collector

var errStop = errors.New("weir: the result is complete")

// collector gathers a query's rows as SQLite produces them, and stops the
// statement once it has all the caps let it show.
type collector struct {
	rowCap, cellCap, byteCap, ncol int

	rows    [][]any
	size    int  // rendered bytes so far, roughly
	cut     int  // cells cut to cellCap
	more    bool // a row past the caps exists
	stopped bool // the sink ended the statement
}

func sink(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) == 0 {
		return nil, errors.New("weir_row: no token")
	}
	token, _ := args[0].(string)
	v, ok := sinks.Load(token)
	if !ok {
		return nil, errors.New("weir_row: no query in progress")
	}
	return nil, v.(*collector).add(args[1:])
}

func (c *collector) add(vals []driver.Value) error {
	if len(vals) != c.ncol {
		return fmt.Errorf("weir_row: %d values for %d columns", len(vals), c.ncol)
	}
	if len(c.rows) >= c.rowCap || c.size > c.byteCap {
		c.more, c.stopped = true, true
		return errStop
	}
	row := make([]any, len(vals))
	for i, v := range vals {
		v, cut := clip(v, c.cellCap)
		if cut {
			c.cut++
		}
		row[i] = v
		c.size += len(formatCell(v)) + 3
	}
	c.rows = append(c.rows, row)
	return nil
}
