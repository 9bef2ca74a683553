package scratch

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// genRow is one generated row: n is an integer within the exactness domain
// (±2^53) or absent, written as missing or as null; g is a group key or
// absent.
type genRow struct {
	n      *int64
	nNull  bool // absent n written as "n": null rather than left out
	g      *string
	gNull  bool
	filler int64
}

func drawRows(t *rapid.T) []genRow {
	// Mostly small values, so that groups, ties and medians of equal values
	// happen, and sometimes values at the edges of ±2^53.
	value := rapid.OneOf(
		rapid.Int64Range(-5, 5),
		rapid.Int64Range(-1000, 1000),
		rapid.Int64Range(-maxExact, maxExact),
		rapid.SampledFrom([]int64{-maxExact, maxExact, maxExact - 1, -maxExact + 1, 0}),
	)
	n := rapid.IntRange(DefaultMinRows, 150).Draw(t, "rows")
	rows := make([]genRow, n)
	for i := range rows {
		r := &rows[i]
		if i == 0 || rapid.IntRange(0, 9).Draw(t, "has n") > 0 {
			v := value.Draw(t, "n")
			r.n = &v
		} else {
			r.nNull = rapid.Bool().Draw(t, "n null")
		}
		if i == 0 || rapid.IntRange(0, 9).Draw(t, "has g") > 0 {
			g := rapid.SampledFrom([]string{"a", "b", "c", "d", "e"}).Draw(t, "g")
			r.g = &g
		} else {
			r.gNull = rapid.Bool().Draw(t, "g null")
		}
		r.filler = int64(i)
	}
	return rows
}

// encode writes the rows as a tools/call result in one of the shapes a
// server may use.
func encode(t *rapid.T, rows []genRow) json.RawMessage {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"i":%d`, r.filler)
		switch {
		case r.n != nil:
			fmt.Fprintf(&b, `,"n":%d`, *r.n)
		case r.nNull:
			b.WriteString(`,"n":null`)
		}
		switch {
		case r.g != nil:
			fmt.Fprintf(&b, `,"g":%q`, *r.g)
		case r.gNull:
			b.WriteString(`,"g":null`)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	arr := b.String()
	switch rapid.IntRange(0, 3).Draw(t, "shape") {
	case 0:
		return json.RawMessage(`{"content":[{"type":"text","text":` + mustJSON(arr) + `}]}`)
	case 1:
		return json.RawMessage(`{"structuredContent":` + arr + `}`)
	case 2:
		return json.RawMessage(`{"content":[{"type":"text","text":"x"}],"structuredContent":{"total":` + strconv.Itoa(len(rows)) + `,"items":` + arr + `}}`)
	}
	return json.RawMessage(`{"content":[{"type":"text","text":` + mustJSON(`{"page":{"items":`+arr+`}}`) + `}]}`)
}

// exactQuantile is the reference: linear interpolation between the two
// nearest ranks, in rationals, returned as the aggregate must return it.
func exactQuantile(sorted []int64, q float64) driver.Value {
	if len(sorted) == 0 {
		return nil
	}
	h := new(big.Rat).Mul(new(big.Rat).SetFloat64(q), big.NewRat(int64(len(sorted)-1), 1))
	lo := new(big.Int).Div(h.Num(), h.Denom())
	i := int(lo.Int64())
	v := new(big.Rat).SetInt64(sorted[i])
	if i+1 < len(sorted) {
		frac := new(big.Rat).Sub(h, new(big.Rat).SetInt(lo))
		d := new(big.Rat).SetInt64(sorted[i+1] - sorted[i])
		v.Add(v, d.Mul(d, frac))
	}
	if v.IsInt() {
		return v.Num().Int64()
	}
	f, _ := v.Float64()
	return f
}

// TestPropertyAggregatesMatchGo: count, sum, min, max, median, quantile
// and group-by counts over a stored array equal the same computed in Go,
// for integers within ±2^53, whatever shape the result had and whether
// absent values were missing or null.
func TestPropertyAggregatesMatchGo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows := drawRows(t)
		db, err := Open(Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		h, ok, err := db.Materialise(context.Background(), "gen", 0, encode(t, rows))
		if !ok || err != nil {
			t.Fatalf("not stored: %v %s", err, h.Note)
		}
		for _, c := range h.Columns {
			if c.Name == "n" && (c.Type != Integer || !c.Exact) {
				t.Fatalf("column n is %s exact=%v", c.Type, c.Exact)
			}
		}
		T := h.Table

		var ns []int64
		var sum int64
		groups := map[string]int64{}
		for _, r := range rows {
			if r.n != nil {
				ns = append(ns, *r.n)
				sum += *r.n
			}
			key := "NULL"
			if r.g != nil {
				key = *r.g
			}
			groups[key]++
		}
		slices.Sort(ns)

		q := rapid.SampledFrom([]float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.0 / 3}).Draw(t, "q")
		got := query(t, db, fmt.Sprintf("SELECT count(*), count(n), sum(n), min(n), max(n), median(n), quantile(n, %v) FROM %s", q, T))
		want := []any{int64(len(rows)), int64(len(ns)), sum, ns[0], ns[len(ns)-1], exactQuantile(ns, 0.5), exactQuantile(ns, q)}
		if !slices.Equal(got.Rows[0], want) {
			t.Fatalf("aggregates:\n got %#v\nwant %#v", got.Rows[0], want)
		}

		// Group-by counts; NULL sorts first.
		got = query(t, db, "SELECT coalesce(g, 'NULL'), count(*) FROM "+T+" GROUP BY g ORDER BY g")
		if len(got.Rows) != len(groups) {
			t.Fatalf("%d groups, want %d", len(got.Rows), len(groups))
		}
		for _, r := range got.Rows {
			if groups[r[0].(string)] != r[1].(int64) {
				t.Fatalf("group %v has %v rows, want %d", r[0], r[1], groups[r[0].(string)])
			}
		}

		// ORDER BY is kept through Weir's wrapper, and the row cap takes
		// the first rows of that order.
		got = query(t, db, "SELECT n FROM "+T+" WHERE n IS NOT NULL ORDER BY n DESC")
		desc := slices.Clone(ns)
		slices.Reverse(desc)
		desc = desc[:min(len(desc), DefaultRowCap)]
		for i, r := range got.Rows {
			if r[0] != desc[i] {
				t.Fatalf("row %d of ORDER BY n DESC is %v, want %d", i, r[0], desc[i])
			}
		}
		if len(got.Rows) != len(desc) || got.MoreRows != (len(ns) > DefaultRowCap) {
			t.Fatalf("%d rows (more=%v) for %d values", len(got.Rows), got.MoreRows, len(ns))
		}
	})
}

func query(t *rapid.T, db *DB, sql string) QueryResult {
	r, err := db.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r
}

// TestPropertyQuantileAgainstSorting checks the aggregate alone, beyond
// the sizes a table is stored at: any multiset of integers within ±2^53,
// any q.
func TestPropertyQuantileAgainstSorting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.Int64Range(-maxExact, maxExact), 1, 50).Draw(t, "xs")
		q := rapid.Float64Range(0, 1).Draw(t, "q")
		a := &quantileAgg{name: "quantile", takesQ: true}
		for _, x := range xs {
			if err := a.Step(nil, []driver.Value{x, q}); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := a.WindowValue(nil)
		sorted := slices.Sorted(slices.Values(xs))
		if want := exactQuantile(sorted, q); got != want {
			t.Fatalf("quantile(%v, %v) = %#v, want %#v", xs, q, got, want)
		}
		// median of values within ±2^52 is exact: twice it is an integer.
		half := make([]int64, len(xs))
		for i, x := range xs {
			half[i] = x / 2
		}
		m := &quantileAgg{name: "median", q: 0.5}
		for _, x := range half {
			m.Step(nil, []driver.Value{x})
		}
		mv, _ := m.WindowValue(nil)
		slices.Sort(half)
		n := len(half)
		twice := new(big.Int).Add(big.NewInt(half[(n-1)/2]), big.NewInt(half[n/2]))
		var gotTwice *big.Int
		switch v := mv.(type) {
		case int64:
			gotTwice = big.NewInt(2 * v)
		case float64:
			gotTwice, _ = new(big.Float).SetFloat64(2 * v).Int(nil)
		}
		if gotTwice.Cmp(twice) != 0 {
			t.Fatalf("median(%v) = %v, want %v/2", half, mv, twice)
		}
	})
}
