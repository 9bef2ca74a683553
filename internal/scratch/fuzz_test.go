package scratch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

// FuzzMaterialise: Materialise never panics on any bytes, and what it
// stores is consistent with its handle.
func FuzzMaterialise(f *testing.F) {
	for _, seed := range []string{
		string(structured(issues(25))),
		string(structured(map[string]any{"items": issues(21), "next": nil})),
		string(textResult(mustJSON(issues(22)))),
		`{"content":[{"type":"text","text":"[{\"a\":1}]"}]}`,
		`{"structuredContent":[{"a":1e400,"b":-0,"c":"\u0000","d":{"e":{"f":[1]}},"":1,"A":2,"a":3}]}`,
		`{"structuredContent":[{"a":1},{"a":"x"},{"a":true},{"a":[1]},{"a":{"b":1}},{"a":null}]}`,
		`{"structuredContent":{"a":[{"x":1}],"b":{"c":[{"y":2},{"y":3}]}}}`,
		`{"isError":true}`,
		`{"content":[{"type":"image"}]}`,
		`[]`, `{}`, `null`, `{"content":null,"structuredContent":null}`,
		`{"structuredContent":[{"a":1}]}trailing`,
		`{"structuredContent":[{"a":18446744073709551616,"b":9007199254740993,"c":1.0}]}`,
	} {
		f.Add([]byte(seed))
	}
	db, err := Open(Options{MinRows: 1, MaxTables: 4, MaxPayloadBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		h, ok, err := db.Materialise(context.Background(), "fuzz", flow.Private, data)
		if !ok {
			if h.Note == "" {
				t.Fatalf("not stored, with no note (err %v)", err)
			}
			if json.Valid(data) && !json.Valid(PassThrough(data, h.Note)) {
				t.Fatalf("PassThrough made invalid JSON of %s", data)
			}
			return
		}
		if err != nil {
			t.Fatalf("stored, with an error: %v", err)
		}
		if !json.Valid(h.Result()) {
			t.Fatalf("Result is not JSON: %s", h.Result())
		}
		if !strings.HasSuffix(h.Preview, QueryHint) || len(h.Preview) > db.opts.PreviewBytes {
			t.Fatalf("preview of %d bytes:\n%s", len(h.Preview), h.Preview)
		}
		r, err := db.Query(context.Background(), "SELECT count(*) FROM "+h.Table)
		if err != nil || r.Rows[0][0] != int64(h.Rows) || r.Labels != flow.Private {
			t.Fatalf("count: %v %v, want %d", r.Rows, err, h.Rows)
		}
		if _, err := db.Query(context.Background(), "SELECT * FROM "+h.Table); err != nil {
			t.Fatalf("SELECT *: %v", err)
		}
	})
}

// FuzzStatement: the statement gate never panics, and what it admits is
// one piece of the input with no statement separator SQLite could see.
func FuzzStatement(f *testing.F) {
	for _, seed := range []string{
		"SELECT 1", "SELECT ';'", "SELECT 1; SELECT 2", "WITH a AS (SELECT 1) SELECT * FROM a",
		"SELECT 1 -- x\n", "SELECT /* ; */ 1", `SELECT "a""b"`, "SELECT [x]", "SELECT x'00'",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		got, err := statement(sql, 4096)
		if err != nil {
			return
		}
		if !strings.Contains(sql, got) {
			t.Fatalf("statement(%q) = %q, not part of the input", sql, got)
		}
		if _, err := statement(got, 4096); err != nil {
			t.Fatalf("statement(%q) admits %q, which it then refuses: %v", sql, got, err)
		}
	})
}
