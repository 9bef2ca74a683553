package scratch

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGoldenMessages pins the text the model reads, the handle preview,
// query results with their truncation notes, and refusals, in
// testdata/messages.golden, so that a change to the copy is a reviewed
// diff. go test -run TestGoldenMessages -update rewrites it.
func TestGoldenMessages(t *testing.T) {
	db := openDB(t, Options{RowCap: 3, CellCap: 24, QueryTimeout: 100 * time.Millisecond, PreviewRows: 3})
	h := mustStore(t, db, flow.Private, structured(map[string]any{"total_count": 30, "items": issues(30)}))
	T := h.Table
	var b strings.Builder
	section := func(title, text string) {
		b.WriteString("-- " + title + " --\n" + text + "\n")
	}
	section("preview", h.Preview)
	for _, q := range []struct{ title, sql string }{
		{"group by", "SELECT state, count(*) AS n, median(comments) FROM " + T + " GROUP BY state ORDER BY state"},
		{"row and cell caps", "SELECT number, title || ' and more words' AS long_title FROM " + T + " ORDER BY number"},
		{"no rows", "SELECT number FROM " + T + " WHERE number < 0"},
		{"PRAGMA", "PRAGMA table_info(" + T + ")"},
		{"catalogue", "SELECT name FROM sqlite_master"},
		{"virtual table", "SELECT * FROM json_each('[1]')"},
		{"function", "SELECT load_extension('x')"},
		{"two statements", "SELECT 1; SELECT 2"},
		{"parameter", "SELECT * FROM " + T + " WHERE number = ?"},
		{"SQLite error", "SELECT nope FROM " + T},
		{"timeout", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"},
		{"unknown handle", "SELECT * FROM t_00000000000000000000000000000000_1"},
	} {
		r, err := db.Query(context.Background(), q.sql)
		if err != nil {
			section(q.title, "error: "+err.Error())
		} else {
			section(q.title, r.Text)
		}
	}
	got := regexp.MustCompile(`t_[0-9a-f]{32}_`).ReplaceAllStringFunc(b.String(), func(s string) string {
		if s == "t_00000000000000000000000000000000_" {
			return s
		}
		return "t_SCOPE_"
	})
	path := filepath.Join("testdata", "messages.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("messages differ from %s (run with -update and review the diff):\n%s", path, got)
	}
}
