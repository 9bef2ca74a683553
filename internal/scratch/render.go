package scratch

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// previewCellCap keeps preview cells short: the preview shows what the
// rows look like, the table holds the values.
const previewCellCap = 48

// formatCell renders one SQL value for a text table: NULL, numbers as Go
// prints them exactly (the shortest float that reads back the same), blobs
// as x'…', text with '|' and control characters escaped so a cell never
// breaks its row.
func formatCell(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []byte:
		return "x'" + hex.EncodeToString(v) + "'"
	case string:
		return escapeCell(v)
	}
	return escapeCell(fmt.Sprint(v))
}

func escapeCell(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == '|' || r == '\\' || r < 0x20 || r == 0x7f }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '|':
			b.WriteString(`\|`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clip cuts a string longer than n bytes to n bytes (at a rune boundary)
// followed by "…", and reports whether it cut. A blob whose hex would be
// longer than n becomes the cut hex text, x'…'…, since it no longer is the
// value.
func clip(v any, n int) (any, bool) {
	switch x := v.(type) {
	case string:
		if len(x) <= n {
			return x, false
		}
		cut := n
		for cut > 0 && !utf8.RuneStart(x[cut]) {
			cut--
		}
		return x[:cut] + "…", true
	case []byte:
		if 2*len(x)+3 <= n {
			return x, false
		}
		return "x'" + hex.EncodeToString(x[:max(0, (n-3)/2)]) + "'…", true
	}
	return v, false
}

// tableText renders a pipe table of the header and as many rows as fit in
// budget bytes, and returns how many rows it rendered. The header always
// renders, even past the budget, so the columns are never hidden.
func tableText(cols []string, rows [][]any, cellCap, budget int) (string, int) {
	var b strings.Builder
	line := func(cells []string) string {
		return "| " + strings.Join(cells, " | ") + " |\n"
	}
	hdr := make([]string, len(cols))
	sep := make([]string, len(cols))
	for i, c := range cols {
		hdr[i] = escapeCell(c)
		sep[i] = "---"
	}
	b.WriteString(line(hdr))
	b.WriteString(line(sep))
	shown := 0
	cells := make([]string, len(cols))
	for _, row := range rows {
		for i, v := range row {
			v, _ = clip(v, cellCap)
			cells[i] = formatCell(v)
		}
		l := line(cells)
		if b.Len()+len(l) > budget {
			break
		}
		b.WriteString(l)
		shown++
	}
	return b.String(), shown
}

// preview is the text a client gets instead of a stored result. It fits
// in o.PreviewBytes: the summary and the hint always, then as many column
// lines and preview rows as the rest allows.
func preview(h Handle, rows [][]any, o Options) string {
	var head strings.Builder
	tool, _ := clip(h.Tool, 100)
	fmt.Fprintf(&head, "Weir stored this result of %s as the table %s (%d rows, %d columns) instead of passing it through; the rows came from %s at %s.\n",
		tool, h.Table, h.Rows, len(h.Columns), h.Source, h.Path)
	const tail = "\nMissing keys and JSON null are both NULL. median(x) and quantile(x, q) are exact on integers.\n\n" + QueryHint
	budget := o.PreviewBytes - head.Len() - len(tail)

	// Columns take at most two thirds of what is left; rows get the rest.
	var cols strings.Builder
	cols.WriteString("\nColumns:\n")
	colBudget := budget * 2 / 3
	listed := 0
	for _, c := range h.Columns {
		l := "- " + c.Name
		if c.Path != "$."+c.Name {
			l += " (" + c.Path + ")"
		}
		l += ": " + string(c.Type)
		if c.Exact {
			l += ", exact"
		} else {
			l += ", not exact"
		}
		l += "\n"
		if cols.Len()+len(l)+80 > colBudget {
			break
		}
		cols.WriteString(l)
		listed++
	}
	if more := len(h.Columns) - listed; more > 0 {
		fmt.Fprintf(&cols, "…and %d more: SELECT * FROM %s LIMIT 1 shows them all.\n", more, h.Table)
	}
	budget -= cols.Len()

	var body strings.Builder
	if len(rows) > 0 && budget > 0 {
		names := make([]string, len(h.Columns))
		for i, c := range h.Columns {
			names[i] = c.Name
		}
		const title = "\nFirst rows:\n"
		table, shown := tableText(names, rows, previewCellCap, budget-len(title))
		if shown > 0 && len(title)+len(table) <= budget {
			body.WriteString(title)
			body.WriteString(table)
		}
	}
	return head.String() + cols.String() + body.String() + tail
}
