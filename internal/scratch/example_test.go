package scratch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/scratch"
)

func Example() {
	ctx := context.Background()
	db, err := scratch.Open(scratch.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()

	// A list tool's result: 400 issues.
	var issues []map[string]any
	for i := range 400 {
		issues = append(issues, map[string]any{"number": i + 1, "comments": i % 17, "state": []string{"open", "closed"}[i%3/2]})
	}
	sc, _ := json.Marshal(map[string]any{"total_count": 400, "items": issues})
	result, _ := json.Marshal(map[string]any{"structuredContent": json.RawMessage(sc)})

	h, ok, _ := db.Materialise(ctx, "github:list_issues", flow.Private, result)
	fmt.Println(ok, h.Rows, h.Path, strings.HasSuffix(h.Preview, scratch.QueryHint))

	r, err := db.Query(ctx, "SELECT state, count(*) AS n, median(comments) AS median FROM "+h.Table+" GROUP BY state ORDER BY state")
	if err != nil {
		panic(err)
	}
	fmt.Print(r.Text)
	fmt.Println("labels:", r.Labels)
	// Output:
	// true 400 $.items true
	// 2 rows:
	// | state | n | median |
	// | --- | --- | --- |
	// | closed | 133 | 8 |
	// | open | 267 | 8 |
	// labels: private
}
