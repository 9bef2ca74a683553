package scratch

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"slices"

	"modernc.org/sqlite"
)

// quantileAgg is the median(x) and quantile(x, q) aggregate, also usable
// as a window function. It keeps every value it is given: a quantile needs
// them all, and a table is at most MaxPayloadBytes of JSON.
//
// quantile interpolates linearly between the two nearest ranks (SQL's
// PERCENTILE_CONT, numpy's default): with the n values sorted, it is at
// rank h = (n-1)·q, between x[⌊h⌋] and x[⌊h⌋+1]. median(x) is
// quantile(x, 0.5). NULLs are skipped; text and blobs are an error, not a
// silent zero.
//
// On integers the answer is computed exactly, in rationals, and then
// returned as an integer when it is one (exact) and otherwise as the
// float64 nearest to the exact value. For median that float is exact too
// whenever the two middle values sum to less than 2^53 in magnitude, which
// holds for all integers within ±2^52; beyond that the .5 is rounded, never
// truncated. Once any value is a float, the arithmetic is float64.
type quantileAgg struct {
	name   string
	takesQ bool // quantile: q is the second argument and must not vary
	q      float64
	haveQ  bool
	ints   []int64
	floats []float64
}

var _ sqlite.AggregateFunction = (*quantileAgg)(nil)

func (a *quantileAgg) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if a.takesQ {
		q, err := a.quantileArg(args[1])
		if err != nil {
			return err
		}
		if a.haveQ && q != a.q {
			return fmt.Errorf("%s: q must be the same for every row", a.name)
		}
		a.q, a.haveQ = q, true
	}
	switch v := args[0].(type) {
	case nil:
	case int64:
		a.ints = append(a.ints, v)
	case float64:
		a.floats = append(a.floats, v)
	default:
		return fmt.Errorf("%s takes numbers, not %s: CAST the column first", a.name, typeName(v))
	}
	return nil
}

func (a *quantileAgg) WindowInverse(_ *sqlite.FunctionContext, args []driver.Value) error {
	switch v := args[0].(type) {
	case int64:
		if i := slices.Index(a.ints, v); i >= 0 {
			a.ints = slices.Delete(a.ints, i, i+1)
		}
	case float64:
		if i := slices.Index(a.floats, v); i >= 0 {
			a.floats = slices.Delete(a.floats, i, i+1)
		}
	}
	return nil
}

func (a *quantileAgg) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if len(a.ints)+len(a.floats) == 0 {
		return nil, nil
	}
	if len(a.floats) == 0 {
		return quantileInts(slices.Sorted(slices.Values(a.ints)), a.q), nil
	}
	xs := make([]float64, 0, len(a.ints)+len(a.floats))
	for _, v := range a.ints {
		xs = append(xs, float64(v))
	}
	xs = append(xs, a.floats...)
	slices.Sort(xs)
	return quantileFloats(xs, a.q), nil
}

func (a *quantileAgg) Final(*sqlite.FunctionContext) {}

func (a *quantileAgg) quantileArg(v driver.Value) (float64, error) {
	var q float64
	switch v := v.(type) {
	case int64:
		q = float64(v)
	case float64:
		q = v
	default:
		return 0, fmt.Errorf("%s: q must be a number between 0 and 1, not %s", a.name, typeName(v))
	}
	if !(q >= 0 && q <= 1) {
		return 0, fmt.Errorf("%s: q must be between 0 and 1, not %v", a.name, q)
	}
	return q, nil
}

// quantileInts is the exact quantile of sorted integers: an int64 when the
// interpolated value is an integer, else the nearest float64.
func quantileInts(xs []int64, q float64) driver.Value {
	n := len(xs)
	// h = (n-1)·q exactly: q is a binary float, so it is a rational.
	h := new(big.Rat).SetFloat64(q)
	h.Mul(h, new(big.Rat).SetInt64(int64(n-1)))
	lo := new(big.Int).Quo(h.Num(), h.Denom()) // ⌊h⌋, h ≥ 0
	i := int(lo.Int64())
	if i >= n-1 {
		return xs[n-1]
	}
	frac := new(big.Rat).Sub(h, new(big.Rat).SetInt(lo))
	if frac.Sign() == 0 {
		return xs[i]
	}
	// x[i] + frac·(x[i+1] − x[i])
	d := new(big.Rat).SetInt(new(big.Int).Sub(big.NewInt(xs[i+1]), big.NewInt(xs[i])))
	v := d.Mul(d, frac)
	v.Add(v, new(big.Rat).SetInt64(xs[i]))
	if v.IsInt() && v.Num().IsInt64() {
		return v.Num().Int64()
	}
	f, _ := v.Float64() // nearest float64
	return f
}

func quantileFloats(xs []float64, q float64) driver.Value {
	n := len(xs)
	h := float64(n-1) * q
	i := int(math.Floor(h))
	if i >= n-1 {
		return xs[n-1]
	}
	frac := h - float64(i)
	if frac == 0 {
		return xs[i]
	}
	return xs[i] + frac*(xs[i+1]-xs[i])
}

func typeName(v driver.Value) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case int64:
		return "an integer"
	case float64:
		return "a real"
	case string:
		return "text"
	case []byte:
		return "a blob"
	}
	return fmt.Sprintf("%T", v)
}
