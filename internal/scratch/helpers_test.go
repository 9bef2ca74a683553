package scratch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

func openDB(t testing.TB, o Options) *DB {
	t.Helper()
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// structured is a tools/call result whose structuredContent is sc, with
// the same JSON as its text item, as the MCP spec recommends.
func structured(sc any) json.RawMessage {
	b, err := json.Marshal(sc)
	if err != nil {
		panic(err)
	}
	return resultJSON(map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": string(b)}},
		"structuredContent": json.RawMessage(b),
	})
}

// textResult is a tools/call result with one text item holding text.
func textResult(text string) json.RawMessage {
	return resultJSON(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
}

func resultJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// issues are n GitHub-issue-like rows.
func issues(n int) []map[string]any {
	states := []string{"open", "closed"}
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{
			"number":     i + 1,
			"title":      fmt.Sprintf("Issue number %d", i+1),
			"state":      states[i%2],
			"comments":   (i * 7) % 13,
			"created_at": fmt.Sprintf("2025-01-%02dT10:00:00Z", i%28+1),
			"user":       map[string]any{"login": fmt.Sprintf("user%d", i%5), "id": 1000 + i%5},
			"labels":     []any{map[string]any{"name": "bug"}},
		}
	}
	return rows
}

// mustStore materialises result and fails the test if it is not stored.
func mustStore(t testing.TB, db *DB, labels flow.Labels, result json.RawMessage) Handle {
	t.Helper()
	h, ok, err := db.Materialise(context.Background(), "test:tool", labels, result)
	if err != nil || !ok {
		t.Fatalf("Materialise: ok=%v err=%v note=%q", ok, err, h.Note)
	}
	return h
}

func mustQuery(t testing.TB, db *DB, sql string) QueryResult {
	t.Helper()
	r, err := db.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("Query(%q): %v", sql, err)
	}
	return r
}

// one is the single value of a one-row, one-column result.
func one(t testing.TB, db *DB, sql string) any {
	t.Helper()
	r := mustQuery(t, db, sql)
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		t.Fatalf("Query(%q) = %v, want one value", sql, r.Rows)
	}
	return r.Rows[0][0]
}

// schemaObjects counts what the database holds, read through the writer
// (whose authorizer may read the schema), to prove a statement changed
// nothing.
func schemaObjects(t testing.TB, db *DB) int {
	t.Helper()
	db.mu.Lock()
	defer db.mu.Unlock()
	rows, err := db.wc.QueryContext(context.Background(), "SELECT name FROM sqlite_master")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func isKind(err error, kinds ...error) bool {
	for _, k := range kinds {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
