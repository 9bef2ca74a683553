package scratch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

func TestColumnInference(t *testing.T) {
	db := openDB(t, Options{MinRows: 2})
	rows := `[
		{"id": 1, "big": 9007199254740993, "f": 1.5, "mixed": 1, "flag": true, "when": "2025-01-02T03:04:05Z", "tags": ["a"], "user": {"login": "ann", "id": 7, "org": {"name": "x"}}, "onlynull": null, "weird key!": "w", "ID": 10, "n": 3},
		{"id": 2, "big": 1, "f": 2, "mixed": "two", "flag": false, "when": "2025-01-03", "tags": [], "user": null, "onlynull": null, "weird key!": "v", "ID": 20, "n": null},
		{"id": 3, "big": 2, "f": -0.5, "mixed": true, "flag": true, "tags": {"k": 1}, "user": {"login": "bob", "id": 8}, "ID": 30}
	]`
	h := mustStore(t, db, flow.Private, textResult(rows))
	want := []Column{
		{"id", "$.id", Integer, true},
		{"big", "$.big", Integer, false},
		{"f", "$.f", Real, false},
		{"mixed", "$.mixed", Text, false},
		{"flag", "$.flag", Boolean, true},
		{"when", "$.when", Text, true},
		{"tags", "$.tags", JSON, true},
		{"user_login", "$.user.login", Text, true},
		{"user_id", "$.user.id", Integer, true},
		{"user_org", "$.user.org", JSON, true},
		{"onlynull", "$.onlynull", Null, true},
		{"weird_key_", `$."weird key!"`, Text, true},
		{"ID_2", "$.ID", Integer, true},
		{"n", "$.n", Integer, true},
	}
	if !slices.Equal(h.Columns, want) {
		t.Errorf("columns:\n got %v\nwant %v", h.Columns, want)
	}
	if h.Source != "content[0].text" || h.Path != "$" || h.Rows != 3 {
		t.Errorf("source %q path %q rows %d", h.Source, h.Path, h.Rows)
	}
	r := mustQuery(t, db, "SELECT big, f, mixed, flag, tags, user_login, user_org, typeof(onlynull), n, ID_2 FROM "+h.Table+" ORDER BY id")
	wantRows := [][]any{
		{int64(9007199254740993), 1.5, "1", int64(1), `["a"]`, "ann", `{"name":"x"}`, "null", int64(3), int64(10)},
		{int64(1), 2.0, "two", int64(0), `[]`, nil, nil, "null", nil, int64(20)},
		// A missing key and JSON null are both NULL: the documented loss.
		{int64(2), -0.5, "true", int64(1), `{"k":1}`, "bob", nil, "null", nil, int64(30)},
	}
	for i := range wantRows {
		if !slices.Equal(r.Rows[i], wantRows[i]) {
			t.Errorf("row %d = %#v, want %#v", i, r.Rows[i], wantRows[i])
		}
	}
}

func TestFlatteningRespectsMaxColumns(t *testing.T) {
	db := openDB(t, Options{MinRows: 1, MaxColumns: 4})
	h := mustStore(t, db, 0, textResult(`[{"a": 1, "small": {"x": 1, "y": 2}, "wide": {"p": 1, "q": 2, "r": 3}}]`))
	var names []string
	for _, c := range h.Columns {
		names = append(names, c.Name)
	}
	// small fits (a, small_x, small_y, wide = 4); wide would not.
	if want := []string{"a", "small_x", "small_y", "wide"}; !slices.Equal(names, want) {
		t.Errorf("columns %v, want %v", names, want)
	}
	_, ok, _ := db.Materialise(context.Background(), "t", 0, textResult(`[{"a":1,"b":2,"c":3,"d":4,"e":5}]`))
	if ok {
		t.Error("a row with more keys than MaxColumns was stored")
	}
}

func TestDominantArray(t *testing.T) {
	db := openDB(t, Options{MinRows: 3})
	for _, c := range []struct {
		name   string
		result json.RawMessage
		source string
		path   string
		rows   int
	}{
		{"top-level array", structured(issues(5)), "structuredContent", "$", 5},
		{"object with items", structured(map[string]any{"total_count": 7, "items": issues(7)}), "structuredContent", "$.items", 7},
		{"the largest of two arrays", structured(map[string]any{"a": issues(3), "b": issues(6)}), "structuredContent", "$.b", 6},
		{"one level down", structured(map[string]any{"data": map[string]any{"repo issues": issues(4)}}), "structuredContent", `$.data."repo issues"`, 4},
		{"second text item", textItems("Found some issues:", mustJSON(issues(4))), "content[1].text", "$", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := mustStore(t, db, 0, c.result)
			if h.Source != c.source || h.Path != c.path || h.Rows != c.rows {
				t.Errorf("got %s %s %d rows, want %s %s %d", h.Source, h.Path, h.Rows, c.source, c.path, c.rows)
			}
			if got := one(t, db, "SELECT count(*) FROM "+h.Table); got != int64(c.rows) {
				t.Errorf("table has %v rows", got)
			}
		})
	}
}

func textItems(texts ...string) json.RawMessage {
	var items []any
	for _, s := range texts {
		items = append(items, map[string]any{"type": "text", "text": s})
	}
	return resultJSON(map[string]any{"content": items})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestIneligiblePassesThrough: every reason not to store comes back as
// ok=false with no error and a short note, and PassThrough keeps the
// result as it was apart from the note.
func TestIneligiblePassesThrough(t *testing.T) {
	db := openDB(t, Options{MaxPayloadBytes: 4000})
	for _, c := range []struct {
		name   string
		result string
		note   string
	}{
		{"error result", `{"content":[{"type":"text","text":"failed"}],"structuredContent":[` + strings.Repeat(`{"a":1},`, 30) + `{"a":1}],"isError":true}`, "error result"},
		{"image", `{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"[]"}]}`, "binary content (image)"},
		{"audio", `{"content":[{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}`, "binary content (audio)"},
		{"resource link", `{"content":[{"type":"resource_link","uri":"file:///x","name":"x"}]}`, "resource_link content"},
		{"over the ceiling", `{"content":[{"type":"text","text":` + quote(strings.Repeat("x", 5000)) + `}]}`, "over the ceiling"},
		{"too few rows", `{"content":[{"type":"text","text":` + quote(mustJSON(issues(3))) + `}]}`, "has 3 rows; min_rows is 20"},
		{"plain text", `{"content":[{"type":"text","text":"hello"}]}`, "no eligible array"},
		{"array of scalars", `{"content":[{"type":"text","text":"[1,2,3]"}]}`, "no eligible array"},
		{"mixed array", `{"structuredContent":[{"a":1},2]}`, "no eligible array"},
		{"empty", `{"content":[]}`, "no eligible array"},
		{"not an object", `[1,2]`, "not a JSON object"},
		{"not JSON", `{"content":`, "not a JSON object"},
		{"bad content", `{"content":{"type":"text"}}`, "not an array of items"},
		{"rows without keys", `{"structuredContent":[` + strings.Repeat(`{},`, 24) + `{}]}`, "no keys"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, ok, err := db.Materialise(context.Background(), "t", flow.Private, json.RawMessage(c.result))
			if ok || err != nil {
				t.Fatalf("ok=%v err=%v", ok, err)
			}
			if !strings.Contains(h.Note, c.note) || !strings.HasPrefix(h.Note, "not stored as a table: ") {
				t.Errorf("note %q, want it to say %q", h.Note, c.note)
			}
			pt := PassThrough(json.RawMessage(c.result), h.Note)
			if !json.Valid([]byte(c.result)) {
				if string(pt) != c.result {
					t.Errorf("PassThrough changed invalid JSON: %s", pt)
				}
				return
			}
			var orig, got map[string]any
			json.Unmarshal([]byte(c.result), &orig)
			if err := json.Unmarshal(pt, &got); err != nil && orig != nil {
				t.Fatalf("PassThrough made invalid JSON: %s", pt)
			}
			if orig == nil {
				return
			}
			meta, _ := got["_meta"].(map[string]any)
			delete(got, "_meta")
			if mustJSON(got) != mustJSON(orig) {
				t.Errorf("PassThrough changed the result:\n%s", pt)
			}
			if note, _ := meta[MetaKey].(map[string]any)["note"].(string); note != h.Note {
				t.Errorf("PassThrough note = %v", meta)
			}
		})
	}
	if s, _ := db.Stats(); s.Tables != 0 {
		t.Errorf("%d tables stored", s.Tables)
	}
}

func quote(s string) string { return mustJSON(s) }

// TestIsErrorReadLikeTheClient: Weir reads isError with exact key matching
// and the last duplicate winning, as the client's JSON.parse does.
func TestIsErrorReadLikeTheClient(t *testing.T) {
	db := openDB(t, Options{})
	rows := mustJSON(issues(25))
	for _, c := range []struct {
		result string
		stored bool
	}{
		{`{"structuredContent":` + rows + `,"isError":false}`, true},
		{`{"structuredContent":` + rows + `,"isError":false,"isError":true}`, false},
		{`{"structuredContent":` + rows + `,"isError":true,"IsError":false}`, false},
		{`{"structuredContent":` + rows + `,"ISERROR":true}`, true},
	} {
		_, ok, _ := db.Materialise(context.Background(), "t", 0, json.RawMessage(c.result))
		if ok != c.stored {
			t.Errorf("%s…: stored=%v, want %v", c.result[len(c.result)-40:], ok, c.stored)
		}
	}
}

func TestHandleResultAndPreview(t *testing.T) {
	db := openDB(t, Options{PreviewBytes: 1500})
	in := structured(map[string]any{"items": issues(60)})
	// A result's own _meta survives the rewrite.
	var m map[string]any
	json.Unmarshal(in, &m)
	m["_meta"] = map[string]any{"progressToken": "p1"}
	h := mustStore(t, db, flow.Private|flow.Sink, resultJSON(m))
	if h.Labels != flow.Private {
		t.Errorf("labels %v, want private (sink dropped)", h.Labels)
	}
	if len(h.Preview) > 1500 {
		t.Errorf("preview is %d bytes, over its 1500-byte budget:\n%s", len(h.Preview), h.Preview)
	}
	for _, want := range []string{h.Table, "60 rows", "structuredContent at $.items", "- number: integer, exact", "user_login ($.user.login)", "First rows:", "| 1 |"} {
		if !strings.Contains(h.Preview, want) {
			t.Errorf("preview lacks %q:\n%s", want, h.Preview)
		}
	}
	if !strings.HasSuffix(h.Preview, QueryHint) {
		t.Errorf("preview does not end with the hint:\n%s", h.Preview)
	}
	var res struct {
		Content []struct{ Type, Text string }
		Meta    map[string]json.RawMessage `json:"_meta"`
		SC      json.RawMessage            `json:"structuredContent"`
	}
	if err := json.Unmarshal(h.Result(), &res); err != nil {
		t.Fatalf("Result is not JSON: %v\n%s", err, h.Result())
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != h.Preview || res.SC != nil {
		t.Errorf("Result content: %s", h.Result())
	}
	if string(res.Meta["progressToken"]) != `"p1"` {
		t.Errorf("the result's _meta was lost: %s", h.Result())
	}
	var hm struct {
		Stored  bool
		Table   string
		Rows    int
		Columns []Column
	}
	json.Unmarshal(res.Meta[MetaKey], &hm)
	if !hm.Stored || hm.Table != h.Table || hm.Rows != 60 || !slices.Equal(hm.Columns, h.Columns) {
		t.Errorf("handle in _meta: %+v", hm)
	}

	// A tiny budget still names the table and ends with the hint.
	db2 := openDB(t, Options{PreviewBytes: 1})
	h2 := mustStore(t, db2, 0, in)
	if len(h2.Preview) > minPreviewBytes || !strings.HasSuffix(h2.Preview, QueryHint) || !strings.Contains(h2.Preview, h2.Table) {
		t.Errorf("tiny preview (%d bytes):\n%s", len(h2.Preview), h2.Preview)
	}
}

// TestLabelsFlowThroughSQL: a query's labels are the union of the labels of
// the tables it read, however it read them.
func TestLabelsFlowThroughSQL(t *testing.T) {
	db := openDB(t, Options{})
	P := mustStore(t, db, flow.Private, structured(issues(30))).Table
	U := mustStore(t, db, flow.Untrusted, structured(issues(30))).Table
	N := mustStore(t, db, 0, structured(issues(30))).Table
	both := flow.Private | flow.Untrusted
	for _, c := range []struct {
		sql  string
		want flow.Labels
	}{
		{"SELECT 1", 0},
		{"SELECT count(*) FROM " + N, 0},
		{"SELECT title FROM " + P, flow.Private},
		{"SELECT count(*) FROM " + P, flow.Private},
		{"SELECT 1 FROM " + P + " LIMIT 1", flow.Private},
		{"SELECT median(number) FROM " + U, flow.Untrusted},
		{"SELECT p.title, u.title FROM " + P + " p JOIN " + U + " u USING (number)", both},
		{"SELECT count(*) FROM " + P + ", " + U, both},
		{"SELECT title FROM " + N + " WHERE number IN (SELECT number FROM " + P + ")", flow.Private},
		{"SELECT 1 WHERE EXISTS (SELECT 1 FROM " + P + " WHERE title LIKE 'x%')", flow.Private},
		{"WITH c AS (SELECT number FROM " + P + ") SELECT count(*) FROM c", flow.Private},
		{"SELECT title FROM " + N + " UNION ALL SELECT title FROM " + U, flow.Untrusted},
		{"SELECT (SELECT max(comments) FROM " + P + ") + (SELECT min(comments) FROM " + U + ")", both},
		// Over-approximation, on purpose: a statement that spells a table's
		// name carries its labels even if it does not read it.
		{"SELECT '" + P + "'", flow.Private},
	} {
		r := mustQuery(t, db, c.sql)
		if r.Labels != c.want {
			t.Errorf("%s: labels %v, want %v", c.sql, r.Labels, c.want)
		}
	}
	// A failing statement still carries the labels of what it read: whether
	// it fails can depend on the data.
	r, err := db.Query(context.Background(), "SELECT CASE WHEN title = 'Issue number 1' THEN json('not json') END FROM "+P)
	if err == nil || r.Labels != flow.Private {
		t.Errorf("failing query: err=%v labels=%v", err, r.Labels)
	}
	// Labels added after the table was stored (the detectors found an
	// injection in its result) reach later queries; sink is not a label a
	// table carries, and an evicted or unknown table is ignored.
	db.AddLabels(N, flow.Untrusted|flow.Sink)
	db.AddLabels("t_nosuchtable", flow.Private)
	if r := mustQuery(t, db, "SELECT count(*) FROM "+N); r.Labels != flow.Untrusted {
		t.Errorf("after AddLabels: labels %v, want untrusted", r.Labels)
	}
	// CallTool reports the same labels.
	res, labels := db.CallTool(context.Background(), json.RawMessage(`{"sql":"SELECT count(*) FROM `+U+`"}`))
	if labels != flow.Untrusted || !strings.Contains(string(res), "30") {
		t.Errorf("CallTool: %s %v", res, labels)
	}
}

func TestEviction(t *testing.T) {
	t.Run("max_session_calls", func(t *testing.T) {
		db := openDB(t, Options{MaxTables: 2})
		var hs []Handle
		for range 3 {
			hs = append(hs, mustStore(t, db, 0, structured(issues(25))))
		}
		_, err := db.Query(context.Background(), "SELECT * FROM "+hs[0].Table)
		want := "table " + hs[0].Table + " was evicted to stay within max_session_calls; call the tool again"
		if !errors.Is(err, ErrEvicted) || err.Error() != want {
			t.Errorf("err = %v", err)
		}
		for _, h := range hs[1:] {
			mustQuery(t, db, "SELECT count(*) FROM "+h.Table)
		}
		if s, _ := db.Stats(); s.Tables != 2 || s.Evicted != 1 {
			t.Errorf("stats %+v", s)
		}
	})
	t.Run("max_session_bytes", func(t *testing.T) {
		// The second table's size: the first also pays for the database's
		// own pages.
		probe := openDB(t, Options{})
		mustStore(t, probe, 0, structured(issues(200)))
		size := mustStore(t, probe, 0, structured(issues(200))).Bytes
		if size <= 0 {
			t.Fatalf("table size %d", size)
		}
		db := openDB(t, Options{MaxSessionBytes: size*2 + size/2})
		var hs []Handle
		for range 4 {
			hs = append(hs, mustStore(t, db, 0, structured(issues(200))))
		}
		for i, h := range hs {
			_, err := db.Query(context.Background(), "SELECT count(*) FROM "+h.Table)
			if i < 2 && (!errors.Is(err, ErrEvicted) || !strings.Contains(err.Error(), "max_session_bytes")) {
				t.Errorf("table %d: err = %v, want evicted", i, err)
			}
			if i >= 2 && err != nil {
				t.Errorf("table %d: %v", i, err)
			}
		}
		s, _ := db.Stats()
		if s.Bytes > db.opts.MaxSessionBytes || s.Tables != 2 {
			t.Errorf("stats %+v over %d", s, db.opts.MaxSessionBytes)
		}
		// Eviction frees the memory: the database is no larger than what
		// the live tables hold, plus its first page.
		if s.Bytes < 2*size {
			t.Errorf("live bytes %d for two tables of %d", s.Bytes, size)
		}
		// A table that alone is over the limit is not stored, and evicts
		// nothing.
		small := openDB(t, Options{MaxSessionBytes: size / 2})
		h, ok, err := small.Materialise(context.Background(), "t", 0, structured(issues(200)))
		if ok || err != nil || !strings.Contains(h.Note, "over max_session_bytes") {
			t.Errorf("oversized table: ok=%v err=%v note=%q", ok, err, h.Note)
		}
	})
	t.Run("unknown and foreign handles", func(t *testing.T) {
		a, b := openDB(t, Options{}), openDB(t, Options{})
		hb := mustStore(t, b, 0, structured(issues(25)))
		_, err := a.Query(context.Background(), "SELECT * FROM "+hb.Table)
		if !errors.Is(err, ErrUnknownTable) || !strings.Contains(err.Error(), "not from this session") {
			t.Errorf("foreign: %v", err)
		}
		_, err = a.Query(context.Background(), "SELECT * FROM t_"+a.scope+"_7")
		if !errors.Is(err, ErrUnknownTable) || !strings.Contains(err.Error(), "no table") {
			t.Errorf("never made: %v", err)
		}
	})
}

func TestTruncationIsStated(t *testing.T) {
	rows := issues(50)
	for i := range rows {
		rows[i]["body"] = strings.Repeat("long body text ", 40) + fmt.Sprint(i)
	}
	in := structured(rows)
	t.Run("row cap", func(t *testing.T) {
		db := openDB(t, Options{RowCap: 7})
		T := mustStore(t, db, 0, in).Table
		r := mustQuery(t, db, "SELECT number FROM "+T+" ORDER BY number")
		if len(r.Rows) != 7 || !r.MoreRows || !strings.Contains(r.Text, "Truncated at the row cap of 7 rows") || !strings.HasPrefix(r.Text, "The first 7 rows (the query returns more)") {
			t.Errorf("%d rows, more=%v:\n%s", len(r.Rows), r.MoreRows, r.Text)
		}
		// Exactly RowCap rows is not a truncation.
		r = mustQuery(t, db, "SELECT number FROM "+T+" LIMIT 7")
		if r.MoreRows || strings.Contains(r.Text, "Truncated") || !strings.HasPrefix(r.Text, "7 rows:") {
			t.Errorf("exactly the cap:\n%s", r.Text)
		}
	})
	t.Run("cell cap", func(t *testing.T) {
		db := openDB(t, Options{CellCap: 40})
		T := mustStore(t, db, 0, in).Table
		r := mustQuery(t, db, "SELECT number, body FROM "+T+" ORDER BY number LIMIT 3")
		if r.CellsCut != 3 || !strings.Contains(r.Text, "3 cells were cut to the cell cap of 40 bytes") {
			t.Errorf("cut %d:\n%s", r.CellsCut, r.Text)
		}
		if s := r.Rows[0][1].(string); !strings.HasSuffix(s, "…") || len(s) != 40+len("…") {
			t.Errorf("cut cell %q", s)
		}
		// The value in the table is whole.
		if n := one(t, db, "SELECT length(body) FROM "+T+" WHERE number = 1"); n != int64(601) {
			t.Errorf("stored body length %v", n)
		}
	})
	t.Run("byte cap", func(t *testing.T) {
		db := openDB(t, Options{ByteCap: 2000, CellCap: 1000})
		T := mustStore(t, db, 0, in).Table
		r := mustQuery(t, db, "SELECT body FROM "+T+" ORDER BY number")
		if !r.BytesCut || len(r.Text) > 2000 || !strings.Contains(r.Text, "to stay within the byte cap of 2000 bytes") {
			t.Errorf("bytes cut %v, %d bytes:\n%s", r.BytesCut, len(r.Text), r.Text)
		}
		if len(r.Rows) == 0 || len(r.Rows) >= 50 || !strings.Contains(r.Text, fmt.Sprintf("Truncated to %d rows", len(r.Rows))) {
			t.Errorf("%d rows:\n%s", len(r.Rows), r.Text)
		}
	})
}

func TestAggregates(t *testing.T) {
	db := openDB(t, Options{MinRows: 1})
	T := mustStore(t, db, 0, textResult(`[{"x":1,"f":1.5,"s":"a"},{"x":2,"f":2.5,"s":"b"},{"x":3,"f":null,"s":"c"},{"x":10,"f":4.0,"s":"d"},{"x":null}]`)).Table
	for _, c := range []struct {
		sql  string
		want any
	}{
		{"SELECT median(x) FROM " + T, 2.5},
		{"SELECT median(x) FROM " + T + " WHERE x < 10", int64(2)},
		{"SELECT quantile(x, 0) FROM " + T, int64(1)},
		{"SELECT quantile(x, 1) FROM " + T, int64(10)},
		{"SELECT quantile(x, 0.5) FROM " + T, 2.5},
		{"SELECT quantile(x, 0.75) FROM " + T, 4.75},
		{"SELECT median(f) FROM " + T, 2.5},
		{"SELECT median(x) FROM " + T + " WHERE x > 100", nil},
		{"SELECT median(9007199254740993 + x) FROM " + T + " WHERE x IN (1, 3)", int64(9007199254740995)},
		// As a window function.
		{"SELECT group_concat(m, ',') FROM (SELECT median(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS m FROM " + T + " WHERE x IS NOT NULL)", "1,1.5,2.5,6.5"},
	} {
		if got := one(t, db, c.sql); got != c.want {
			t.Errorf("%s = %#v, want %#v", c.sql, got, c.want)
		}
	}
	for _, bad := range []string{
		"SELECT median(s) FROM " + T,
		"SELECT quantile(x, 2) FROM " + T,
		"SELECT quantile(x, 'a') FROM " + T,
		"SELECT quantile(x, x) FROM " + T,
	} {
		if _, err := db.Query(context.Background(), bad); !errors.Is(err, ErrSQL) {
			t.Errorf("%s: err = %v, want ErrSQL", bad, err)
		}
	}
}

func TestCallTool(t *testing.T) {
	db := openDB(t, Options{})
	T := mustStore(t, db, flow.Private, structured(issues(30))).Table
	res, labels := db.CallTool(context.Background(), json.RawMessage(`{"sql":"SELECT state, count(*) AS n FROM `+T+` GROUP BY state ORDER BY state"}`))
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	json.Unmarshal(res, &r)
	want := "2 rows:\n| state | n |\n| --- | --- |\n| closed | 15 |\n| open | 15 |\n"
	if r.IsError || r.Content[0].Text != want || labels != flow.Private {
		t.Errorf("CallTool = %s (%v)", res, labels)
	}
	for _, args := range []string{`{}`, `{"query":"SELECT 1"}`, `[]`, `{"sql":1}`} {
		res, _ := db.CallTool(context.Background(), json.RawMessage(args))
		if !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), `{\"sql\": \"SELECT …\"}`) {
			t.Errorf("CallTool(%s) = %s", args, res)
		}
	}
	res, _ = db.CallTool(context.Background(), json.RawMessage(`{"sql":"DELETE FROM `+T+`"}`))
	if !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "DELETE is not allowed") {
		t.Errorf("refused CallTool = %s", res)
	}
	var def struct {
		Name        string
		InputSchema struct{ Required []string }
	}
	if err := json.Unmarshal(ToolDefinition(Options{}), &def); err != nil || def.Name != ToolName || def.InputSchema.Required[0] != "sql" {
		t.Errorf("ToolDefinition: %s", ToolDefinition(Options{}))
	}
}

func TestClosed(t *testing.T) {
	db, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := mustStore(t, db, 0, structured(issues(25)))
	db.Close()
	if _, err := db.Query(context.Background(), "SELECT * FROM "+h.Table); !errors.Is(err, ErrClosed) {
		t.Errorf("query after close: %v", err)
	}
	if _, ok, err := db.Materialise(context.Background(), "t", 0, structured(issues(25))); ok || !errors.Is(err, ErrClosed) {
		t.Errorf("materialise after close: %v %v", ok, err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOptions(t *testing.T) {
	if _, err := Open(Options{RowCap: -1}); err == nil {
		t.Error("negative option accepted")
	}
	if _, err := Open(Options{MaxColumns: 10000}); err == nil {
		t.Error("MaxColumns over the ceiling accepted")
	}
}
