package scratch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weir-sec/weir/internal/flow"
)

// ColumnType is the type Weir inferred for a column.
type ColumnType string

const (
	// Integer: every value is a JSON integer that fits in 64 bits.
	Integer ColumnType = "integer"
	// Real: numbers, at least one with a fraction or an exponent.
	Real ColumnType = "real"
	// Boolean: true and false, stored as 1 and 0.
	Boolean ColumnType = "boolean"
	// Text: strings, or scalars of mixed types stored as their JSON text.
	Text ColumnType = "text"
	// JSON: objects or arrays (and anything mixed with them), stored as
	// compact JSON text; read them with json_extract, -> and ->>.
	JSON ColumnType = "json"
	// Null: the key is present only with null values.
	Null ColumnType = "null"
)

// Column describes one column of a stored table.
type Column struct {
	// Name is the SQL column name: the JSON key, with characters other than
	// letters, digits and '_' replaced by '_', and a flattened member of a
	// nested object named parent_child.
	Name string `json:"name"`
	// Path is where the value sits in each row object, as a JSON path:
	// $.number, $.user.login.
	Path string     `json:"path"`
	Type ColumnType `json:"type"`
	// Exact reports whether every value is held as the JSON wrote it, so
	// comparisons and aggregates over the column are exact: integer
	// columns whose values all lie within ±2^53 (where integer arithmetic,
	// float conversion and JSON round trips all agree), boolean, text of
	// strings, and json columns. It is false for real columns (a decimal
	// literal becomes the nearest float64), for integers beyond ±2^53 and
	// for text made by coercing mixed scalar types (they compare as text).
	Exact bool `json:"exact"`
}

// Handle is what the client gets instead of a materialised result.
type Handle struct {
	Table string // t_<session scope>_<n>: the name to use in SQL
	Tool  string // the tool whose result this is
	Rows  int
	// Source is where the array was found in the tools/call result:
	// "structuredContent" or "content[i].text".
	Source string
	// Path is the JSON path of the array within the source: "$" for a
	// top-level array, "$.items" for an object's dominant array.
	Path    string
	Columns []Column
	// Labels are the labels of the table: the labels of the result it was
	// made from (private, untrusted). Queries that read it carry them.
	Labels flow.Labels
	// Bytes is the memory the table holds, as counted against
	// MaxSessionBytes.
	Bytes int64
	// Preview is the text for the client: what was stored, the columns,
	// the first rows, within Options.PreviewBytes, ending with QueryHint.
	Preview string
	// Note says why a result was not stored, when Materialise returns
	// ok=false.
	Note string

	meta json.RawMessage // the original result's _meta, kept in Result
}

// QueryHint ends every handle preview.
const QueryHint = "Run SQL over this with the `weir_query` tool."

// MetaKey is the _meta member Weir adds to a result it rewrote or passed
// through with a note.
const MetaKey = "weir/scratch"

// Materialise stores an eligible tools/call result as a table.
//
// A result is eligible when it is not an error, has no content other than
// text, is at most MaxPayloadBytes, and its structuredContent or one of
// its text items is a JSON array of at least MinRows objects, or an object
// whose largest array of objects (a member, or a member of a member) is.
// The first of them that holds one is stored: structuredContent, then the
// text items in order.
// Rows become table rows; nested objects are flattened one level.
//
// The labels are those of the result (only flow.Private and
// flow.Untrusted matter; flow.Sink is dropped): the table keeps them, and
// every query that reads it carries them.
//
// With ok=false the result is to be passed through unchanged, and
// Handle.Note says why in a short sentence (see PassThrough). Materialise
// never turns a successful call into a failure: an ineligible result, a
// parse failure and a failure to store all come back as ok=false. A
// non-nil error comes only with ok=false and is for the log: SQLite failed
// to store an eligible result, the context ended, or the database is
// closed.
//
// Lossy, and documented as such: a missing key and JSON null are both
// NULL; strings with invalid UTF-8 get U+FFFD; object member order within
// a json column is kept, duplicate keys are not (the last wins).
func (db *DB) Materialise(ctx context.Context, tool string, labels flow.Labels, result json.RawMessage) (h Handle, ok bool, err error) {
	h.Tool = tool
	o := db.opts
	if len(result) > o.MaxPayloadBytes {
		h.Note = fmt.Sprintf("not stored as a table: over the ceiling (%d bytes; max_payload_bytes is %d)", len(result), o.MaxPayloadBytes)
		return h, false, nil
	}
	f, note := extract(result, o.MinRows)
	if note != "" {
		h.Note = "not stored as a table: " + note
		return h, false, nil
	}
	p, note := plan(f.rows, o.MaxColumns)
	if note != "" {
		h.Note = "not stored as a table: " + note
		return h, false, nil
	}
	values, err := p.values(f.rows)
	if err != nil {
		h.Note = "not stored as a table: the rows could not be read"
		return h, false, nil
	}
	f.rows = nil // the decoded members are no longer needed: let them go before SQLite fills up

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		h.Note = "not stored as a table: the scratch database is closed"
		return h, false, ErrClosed
	}
	t, note, err := db.store(ctx, p, values, labels&flow.Legs, int64(len(result)))
	if note != "" || err != nil {
		h.Note = "not stored as a table: " + note
		if err != nil {
			h.Note = "not stored as a table: the scratch database could not store it"
		}
		return h, false, err
	}
	h.Table, h.Rows, h.Source, h.Path = t.name, t.rows, f.source, f.path
	h.Columns, h.Labels, h.Bytes, h.meta = p.columns(), t.labels, t.bytes, f.meta
	h.Preview = preview(h, values[:min(len(values), o.PreviewRows)], o)
	return h, true, nil
}

// found is the array a result holds.
type found struct {
	source, path string
	rows         [][]member
	meta         json.RawMessage
}

type member struct {
	key string
	raw json.RawMessage
}

// extract finds the array to store, or says in a note why there is none.
func extract(result json.RawMessage, minRows int) (found, string) {
	top, err := members(result)
	if err != nil {
		return found{}, "the result is not a JSON object"
	}
	var content, structured, isError json.RawMessage
	var f found
	for _, m := range top {
		// Keys match exactly, and the last of a duplicated key wins, as in
		// the client's JSON.parse: Weir must read the result the way the
		// client will.
		switch m.key {
		case "content":
			content = m.raw
		case "structuredContent":
			structured = m.raw
		case "isError":
			isError = m.raw
		case "_meta":
			f.meta = m.raw
		}
	}
	if string(isError) == "true" {
		return found{}, "error result"
	}
	type source struct {
		name  string
		data  []byte
		valid bool // data is part of the validated result
	}
	var sources []source
	if len(structured) > 0 && string(structured) != "null" {
		sources = append(sources, source{"structuredContent", structured, true})
	}
	if len(content) > 0 && string(content) != "null" {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(content, &items); err != nil {
			return found{}, "the result's content is not an array of items"
		}
		for i, it := range items {
			var typ, text string
			if json.Unmarshal(it["type"], &typ) != nil {
				return found{}, "a content item has no type"
			}
			switch typ {
			case "text":
				if json.Unmarshal(it["text"], &text) != nil {
					return found{}, "a text item has no text"
				}
				sources = append(sources, source{fmt.Sprintf("content[%d].text", i), []byte(text), false})
			case "image", "audio":
				return found{}, "binary content (" + typ + ")"
			default:
				return found{}, "the result has " + typ + " content; only text and structured results are stored"
			}
		}
	}
	// The first source with an eligible array wins: structuredContent,
	// then the text items in order. A server that sends both usually sends
	// the same JSON twice, and it need not be read twice.
	best := -1
	for _, s := range sources {
		if !s.valid && !json.Valid(s.data) {
			continue
		}
		path, rows, err := dominantArray(s.data)
		if err != nil || len(rows) <= best {
			continue
		}
		best = len(rows)
		f.source, f.path, f.rows = s.name, path, rows
		if best >= minRows {
			break
		}
	}
	switch {
	case best < 0:
		return found{}, "no eligible array (no JSON array of objects in structuredContent or a text item)"
	case best < minRows:
		return found{}, fmt.Sprintf("no eligible array (the largest array of objects has %d rows; min_rows is %d)", best, minRows)
	}
	return f, ""
}

// dominantArray returns the array of objects data (valid JSON) is, or the
// largest one among its members and their members (the first in document
// order on a tie), split into each row's members.
func dominantArray(data []byte) (string, [][]member, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "", nil, errors.New("empty")
	}
	switch data[0] {
	case '[':
		rows, err := objectRows(data)
		return "$", rows, err
	case '{':
	default:
		return "", nil, errors.New("not an array or object")
	}
	top, err := splitObject(data)
	if err != nil {
		return "", nil, err
	}
	var (
		bestPath string
		best     [][]member
		found    bool
	)
	consider := func(path string, raw json.RawMessage) {
		if rows, err := objectRows(raw); err == nil && (!found || len(rows) > len(best)) {
			bestPath, best, found = path, rows, true
		}
	}
	for _, m := range top {
		switch firstByte(m.raw) {
		case '[':
			consider("$"+pathKey(m.key), m.raw)
		case '{':
			inner, err := splitObject(m.raw)
			if err != nil {
				continue
			}
			for _, n := range inner {
				if firstByte(n.raw) == '[' {
					consider("$"+pathKey(m.key)+pathKey(n.key), n.raw)
				}
			}
		}
	}
	if !found {
		return "", nil, errors.New("no array of objects")
	}
	return bestPath, best, nil
}

// objectRows splits a valid JSON array whose every element is an object
// into each row's members.
func objectRows(raw []byte) ([][]member, error) {
	els, err := splitArray(raw)
	if err != nil {
		return nil, err
	}
	rows := make([][]member, len(els))
	keys := map[string]string{}
	size := 0
	for i, el := range els {
		if firstByte(el) != '{' {
			return nil, errors.New("an element is not an object")
		}
		if rows[i], err = splitObjectKeys(el, keys, size); err != nil {
			return nil, err
		}
		size = len(rows[i])
	}
	return rows, nil
}

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// kind is a set of the JSON kinds seen in one column.
type kind uint8

const (
	kBool kind = 1 << iota
	kInt
	kReal
	kString
	kObject
	kArray
	kNumText // a number float64 cannot hold (1e400)
)

// maxExact is 2^53: integers within ±maxExact are exact in float64 and in
// every JSON reader.
const maxExact = 1 << 53

// classify returns the kind of a JSON value (0 for null), and whether an
// integer lies outside ±2^53.
func classify(raw json.RawMessage) (kind, bool) {
	switch firstByte(raw) {
	case 'n':
		return 0, false
	case 't', 'f':
		return kBool, false
	case '"':
		return kString, false
	case '{':
		return kObject, false
	case '[':
		return kArray, false
	}
	s := string(raw)
	if !strings.ContainsAny(s, ".eE") {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return kInt, v > maxExact || v < -maxExact
		}
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return kNumText, false // out of range: kept as its literal text
	}
	return kReal, false
}

// column is one planned column: where its values come from and how they
// are stored.
type column struct {
	Column
	key, child string // the top-level key, and the member of it when flattened
	flat       bool
	kinds      kind
	big        bool
	idx        int // index among the top-level keys
}

type tablePlan struct {
	cols []*column
	keys map[string]int // top-level key → index
}

func (p *tablePlan) columns() []Column {
	out := make([]Column, len(p.cols))
	for i, c := range p.cols {
		out[i] = c.Column
	}
	return out
}

// plan infers the columns: one per top-level key, in order of first
// appearance, except that a key whose values are all objects (or null) is
// flattened into one column per member while the column budget allows.
func plan(rows [][]member, maxColumns int) (*tablePlan, string) {
	type keyStat struct {
		key      string
		kinds    kind
		big      bool
		children []*column
		childIdx map[string]int
	}
	var keys []*keyStat
	index := map[string]int{}
	for _, row := range rows {
		for _, m := range row {
			i, ok := index[m.key]
			if !ok {
				i = len(keys)
				index[m.key] = i
				keys = append(keys, &keyStat{key: m.key, childIdx: map[string]int{}})
				if len(keys) > maxColumns {
					return nil, fmt.Sprintf("the rows have more than %d distinct keys", maxColumns)
				}
			}
			k, big := classify(m.raw)
			ks := keys[i]
			ks.kinds |= k
			ks.big = ks.big || big
			// Gather the members of objects while the key can still be
			// flattened; a key with other values never is.
			if k == kObject && ks.kinds == kObject && len(ks.children) <= maxColumns {
				inner, err := splitObject(m.raw)
				if err != nil {
					return nil, "a row could not be read"
				}
				for _, n := range inner {
					j, ok := ks.childIdx[n.key]
					if !ok {
						j = len(ks.children)
						ks.childIdx[n.key] = j
						ks.children = append(ks.children, &column{key: m.key, child: n.key, flat: true, idx: i})
					}
					ck, cbig := classify(n.raw)
					ks.children[j].kinds |= ck
					ks.children[j].big = ks.children[j].big || cbig
				}
			}
		}
	}
	if len(keys) == 0 {
		return nil, "the rows have no keys"
	}
	p := &tablePlan{keys: index}
	budget := maxColumns - len(keys)
	names := map[string]bool{}
	add := func(c *column, name, path string) {
		c.Name, c.Path = uniqueName(name, names), path
		c.Type, c.Exact = columnType(c.kinds, c.big)
		p.cols = append(p.cols, c)
	}
	for i, ks := range keys {
		if ks.kinds == kObject && len(ks.children) > 0 && len(ks.children)-1 <= budget {
			budget -= len(ks.children) - 1
			for _, c := range ks.children {
				add(c, sanitize(ks.key)+"_"+sanitize(c.child), "$"+pathKey(ks.key)+pathKey(c.child))
			}
			continue
		}
		add(&column{key: ks.key, kinds: ks.kinds, big: ks.big, idx: i}, sanitize(ks.key), "$"+pathKey(ks.key))
	}
	return p, ""
}

func columnType(k kind, big bool) (ColumnType, bool) {
	switch {
	case k == 0:
		return Null, true
	case k&(kObject|kArray) != 0:
		return JSON, true
	case k == kInt:
		return Integer, !big
	case k&^(kInt|kReal) == 0:
		return Real, false
	case k == kBool:
		return Boolean, true
	case k == kString:
		return Text, true
	}
	return Text, false
}

// values converts the rows into the Go values bound into SQLite, one slice
// per row in column order.
func (p *tablePlan) values(rows [][]member) ([][]any, error) {
	out := make([][]any, len(rows))
	byKey := make([]json.RawMessage, len(p.keys))
	var inner map[string]json.RawMessage
	for r, row := range rows {
		clear(byKey)
		for _, m := range row {
			byKey[p.keys[m.key]] = m.raw // the last of a duplicated key wins
		}
		vals := make([]any, len(p.cols))
		lastParent := -1
		for i, c := range p.cols {
			raw := byKey[c.idx]
			if c.flat {
				if firstByte(raw) != '{' {
					continue // the parent is null or missing: so is every member
				}
				if c.idx != lastParent {
					ms, err := splitObject(raw)
					if err != nil {
						return nil, err
					}
					inner = make(map[string]json.RawMessage, len(ms))
					for _, m := range ms {
						inner[m.key] = m.raw
					}
					lastParent = c.idx
				}
				raw = inner[c.child]
			}
			v, err := convert(raw, c.Type)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		out[r] = vals
	}
	return out, nil
}

// convert turns one JSON value into what SQLite stores for a column of
// type t. Missing and null are both nil: the documented loss.
func convert(raw json.RawMessage, t ColumnType) (any, error) {
	if len(raw) == 0 || firstByte(raw) == 'n' || t == Null {
		return nil, nil
	}
	switch t {
	case Integer:
		return strconv.ParseInt(string(raw), 10, 64)
	case Real:
		return strconv.ParseFloat(string(raw), 64)
	case Boolean:
		if firstByte(raw) == 't' {
			return int64(1), nil
		}
		return int64(0), nil
	case JSON:
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		return b.String(), nil
	}
	switch firstByte(raw) {
	case '"':
		return unquote(raw)
	case 't':
		return "true", nil
	case 'f':
		return "false", nil
	}
	return string(raw), nil // a number in a mixed column: its literal text
}

// sanitize makes a JSON key into a column name that needs no quoting
// unless it is an SQL keyword: letters, digits and '_', not starting with
// a digit, at most 64 bytes.
func sanitize(key string) string {
	var b strings.Builder
	for _, r := range key {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if b.Len()+utf8.RuneLen(r) > 64 {
				break
			}
			b.WriteRune(r)
		} else if b.Len() < 64 {
			b.WriteByte('_')
		}
	}
	s := b.String()
	switch {
	case s == "":
		return "col"
	case s[0] >= '0' && s[0] <= '9':
		return "c_" + s
	}
	return s
}

// uniqueName returns name, or name_2, name_3, … if a column already has it;
// SQLite column names are case-insensitive, so the check is too.
func uniqueName(name string, taken map[string]bool) string {
	n := name
	for i := 2; taken[strings.ToLower(n)]; i++ {
		n = name + "_" + strconv.Itoa(i)
	}
	taken[strings.ToLower(n)] = true
	return n
}

// pathKey is one step of a JSON path: .key, or ."key" when the key is not
// a plain identifier.
func pathKey(key string) string {
	plain := key != ""
	for i, r := range key {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			plain = false
			break
		}
	}
	if plain {
		return "." + key
	}
	q, _ := json.Marshal(key)
	return "." + string(q)
}

// store creates and fills the table, then evicts the oldest tables until
// the session is within its limits again. It runs with db.mu held.
func (db *DB) store(ctx context.Context, p *tablePlan, values [][]any, labels flow.Labels, payload int64) (*table, string, error) {
	for len(db.order) >= db.opts.MaxTables {
		db.evictOldest("max_session_calls")
	}
	db.seq++
	name := fmt.Sprintf("t_%s_%d", db.scope, db.seq)
	before, berr := db.usedBytes(ctx)
	if err := db.createAndFill(ctx, name, p, values); err != nil {
		db.drop(name)
		return nil, "", fmt.Errorf("scratch: storing %s: %w", name, err)
	}
	size := payload // if the pages cannot be counted, the payload is the estimate
	if after, aerr := db.usedBytes(ctx); berr == nil && aerr == nil && after > before {
		size = after - before
	}
	if size > db.opts.MaxSessionBytes {
		db.drop(name)
		return nil, fmt.Sprintf("the table would take %d bytes, over max_session_bytes (%d)", size, db.opts.MaxSessionBytes), nil
	}
	for db.total+size > db.opts.MaxSessionBytes && len(db.order) > 0 {
		db.evictOldest("max_session_bytes")
	}
	t := &table{name: name, labels: labels, rows: len(values), bytes: size}
	db.tables[name] = t
	db.order = append(db.order, t)
	db.total += size
	return t, "", nil
}

func (db *DB) createAndFill(ctx context.Context, name string, p *tablePlan, values [][]any) error {
	db.write.create = name
	defer func() { db.write.create = "" }()
	var ddl strings.Builder
	ddl.WriteString("CREATE TABLE " + quoteIdent(name) + " (")
	for i, c := range p.cols {
		if i > 0 {
			ddl.WriteString(", ")
		}
		ddl.WriteString(quoteIdent(c.Name) + " " + sqlType(c.Type))
	}
	// STRICT: SQLite enforces the declared types, so a value can never be
	// stored as anything other than what the column says.
	ddl.WriteString(") STRICT")
	tx, err := db.wc.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, ddl.String()); err != nil {
		return err
	}
	// Many rows per INSERT: one statement execution per row would cost
	// more than the insert itself.
	ncol := len(p.cols)
	batch := max(1, min(256, 30000/ncol))
	insert := func(n int) string {
		row := "(" + strings.Repeat("?,", ncol-1) + "?)"
		return "INSERT INTO " + quoteIdent(name) + " VALUES " + strings.Repeat(row+",", n-1) + row
	}
	stmt, err := tx.PrepareContext(ctx, insert(min(batch, len(values))))
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, 0, batch*ncol)
	for start := 0; start < len(values); start += batch {
		end := min(start+batch, len(values))
		args = args[:0]
		for _, row := range values[start:end] {
			args = append(args, row...)
		}
		if end-start == batch || start == 0 {
			_, err = stmt.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insert(end-start), args...)
		}
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}

func sqlType(t ColumnType) string {
	switch t {
	case Integer, Boolean:
		return "INTEGER"
	case Real:
		return "REAL"
	case Null:
		return "ANY"
	}
	return "TEXT"
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// usedBytes is the size of the pages in use: with auto_vacuum=full there
// are no free pages after a commit, but counting them keeps this right
// either way.
func (db *DB) usedBytes(ctx context.Context) (int64, error) {
	var pages, free int64
	if err := db.wc.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return 0, err
	}
	if err := db.wc.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
		return 0, err
	}
	return (pages - free) * db.pageSize, nil
}

// maxTombstones bounds the memory of evicted names; a query naming one
// forgotten since fails as an unknown table, which is still loud.
const maxTombstones = 4096

func (db *DB) evictOldest(limit string) {
	t := db.order[0]
	db.order = db.order[1:]
	delete(db.tables, t.name)
	db.total -= t.bytes
	if len(db.evicted) >= maxTombstones {
		clear(db.evicted)
	}
	db.evicted[t.name] = limit
	// Once out of db.tables the authorizer refuses every read of it, so a
	// failed DROP leaves the table unreachable, only not yet freed.
	db.drop(t.name)
}

func (db *DB) drop(name string) {
	db.write.drop = name
	defer func() { db.write.drop = "" }()
	db.wc.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+quoteIdent(name))
}

// Result is the tools/call result that replaces the stored one: the
// preview as the only content, and the handle in _meta[MetaKey] for
// programs. The original _meta members are kept. There is no
// structuredContent: the stored one no longer describes the result, so a
// tool's outputSchema must be withheld from the client for tools whose
// results may be stored.
func (h Handle) Result() json.RawMessage {
	type col struct {
		Name  string     `json:"name"`
		Path  string     `json:"path"`
		Type  ColumnType `json:"type"`
		Exact bool       `json:"exact"`
	}
	meta := struct {
		Stored  bool   `json:"stored"`
		Table   string `json:"table"`
		Rows    int    `json:"rows"`
		Source  string `json:"source"`
		Path    string `json:"path"`
		Columns []col  `json:"columns"`
	}{Stored: true, Table: h.Table, Rows: h.Rows, Source: h.Source, Path: h.Path}
	for _, c := range h.Columns {
		meta.Columns = append(meta.Columns, col(c))
	}
	text, _ := json.Marshal(h.Preview)
	return []byte(`{"content":[{"type":"text","text":` + string(text) + `}],"_meta":` + string(withMeta(h.meta, meta)) + `}`)
}

// PassThrough returns result with the note added as
// _meta[MetaKey] = {"stored": false, "note": note}, every other member as it
// was. It is optional: a relay that must pass results byte for byte logs
// the note instead. A result that is not a JSON object is returned as is.
func PassThrough(result json.RawMessage, note string) json.RawMessage {
	top, err := members(result)
	if err != nil {
		return result
	}
	info := struct {
		Stored bool   `json:"stored"`
		Note   string `json:"note"`
	}{false, note}
	var b bytes.Buffer
	b.WriteByte('{')
	var meta json.RawMessage
	for _, m := range top {
		if m.key == "_meta" {
			meta = m.raw
			continue
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.raw)
		b.WriteByte(',')
	}
	b.WriteString(`"_meta":`)
	b.Write(withMeta(meta, info))
	b.WriteByte('}')
	return b.Bytes()
}

// withMeta returns the _meta object meta with MetaKey set to v.
func withMeta(meta json.RawMessage, v any) []byte {
	val, _ := json.Marshal(v)
	var b bytes.Buffer
	b.WriteByte('{')
	if ms, err := members(meta); err == nil {
		for _, m := range ms {
			if m.key == MetaKey {
				continue
			}
			k, _ := json.Marshal(m.key)
			b.Write(k)
			b.WriteByte(':')
			b.Write(m.raw)
			b.WriteByte(',')
		}
	}
	k, _ := json.Marshal(MetaKey)
	b.Write(k)
	b.WriteByte(':')
	b.Write(val)
	b.WriteByte('}')
	return b.Bytes()
}
