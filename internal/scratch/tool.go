package scratch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weir-sec/weir/internal/flow"
)

// ToolName is the name of the tool Weir adds to tools/list when scratch is
// on.
const ToolName = "weir_query"

// toolDescription is product copy: the model reads it to decide how to use
// the tool.
const toolDescription = "Run one read-only SQL SELECT (SQLite dialect; WITH … SELECT too) over the tables Weir stored from this session's large tool results. " +
	"Each stored result came back as a handle naming its table (t_…) and columns; there is no catalogue to list them. " +
	"Besides SQLite's scalar, aggregate, window, date, math and JSON functions (json_extract, ->, ->>) there are median(x) and quantile(x, q), exact on integers. " +
	"Results show at most %d rows, %d bytes a cell and %d bytes in all, and say so when they cut anything; queries stop after %v. " +
	"Missing keys and JSON null are both NULL."

// ToolDefinition is the weir_query entry for tools/list, with the limits of
// these options in its description.
func ToolDefinition(opts Options) json.RawMessage {
	o, err := opts.withDefaults()
	if err != nil {
		o, _ = Options{}.withDefaults()
	}
	def := map[string]any{
		"name":        ToolName,
		"title":       "Query stored tool results",
		"description": fmt.Sprintf(toolDescription, o.RowCap, o.CellCap, o.ByteCap, o.QueryTimeout),
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"sql": map[string]any{
					"type":        "string",
					"description": "One SELECT statement over tables named by handles from this session, e.g. SELECT state, count(*) FROM t_… GROUP BY state",
				},
			},
			"required":             []string{"sql"},
			"additionalProperties": false,
		},
		"annotations": map[string]any{
			"readOnlyHint":   true,
			"idempotentHint": true,
			"openWorldHint":  false,
		},
	}
	b, _ := json.Marshal(def)
	return b
}

// CallTool answers a tools/call of weir_query: arguments is the call's
// arguments object. It always returns a tools/call result, with isError
// set when the statement was refused or failed, and the labels the result
// must be recorded under, which hold on errors too (see Query).
func (db *DB) CallTool(ctx context.Context, arguments json.RawMessage) (json.RawMessage, flow.Labels) {
	var args struct {
		SQL *string `json:"sql"`
	}
	dec := json.NewDecoder(bytes.NewReader(arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil || args.SQL == nil {
		return toolResult(`weir_query takes {"sql": "SELECT …"}: one read-only SELECT over tables this session stored.`, true), 0
	}
	res, err := db.Query(ctx, *args.SQL)
	if err != nil {
		msg := err.Error()
		var e *Error
		if !errors.As(err, &e) {
			msg = "The query failed."
		}
		return toolResult(msg, true), res.Labels
	}
	return toolResult(res.Text, false), res.Labels
}

func toolResult(text string, isError bool) json.RawMessage {
	b, _ := json.Marshal(struct {
		Content []map[string]string `json:"content"`
		IsError bool                `json:"isError,omitempty"`
	}{[]map[string]string{{"type": "text", "text": text}}, isError})
	return b
}

// ToolDefinition is the weir_query entry for tools/list, with this
// database's limits in its description.
func (db *DB) ToolDefinition() json.RawMessage { return ToolDefinition(db.opts) }

// AddLabels adds labels (private, untrusted) to a live table: what the
// injection detectors find in a result after it was stored reaches every
// later query that reads its table. A table no longer live is ignored.
func (db *DB) AddLabels(table string, labels flow.Labels) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if t, ok := db.tables[table]; ok {
		t.labels |= labels & flow.Legs
	}
}
