package policyfile

import (
	"errors"
	"strconv"
	"strings"
)

var sizeUnits = []struct {
	suffix string
	n      int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// ParseSize reads a size in bytes: "67108864", "64MiB", "64M" (binary),
// "64MB" (decimal), "512KiB", "1GiB"; "0", "off" or "none" for none.
func ParseSize(s string) (int64, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if l == "off" || l == "none" {
		return 0, nil
	}
	mult := int64(1)
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(l, u.suffix); ok {
			l, mult = strings.TrimSpace(num), u.n
			break
		}
	}
	n, err := strconv.ParseFloat(l, 64)
	if err != nil || !(n >= 0) || n*float64(mult) > 1<<62 {
		return 0, errors.New("want a size such as 64MiB, 512KiB or 1GB, or 0 (or off) for no rotation")
	}
	return int64(n * float64(mult)), nil
}

// FormatSize writes n bytes the way ParseSize reads them back: in the
// largest binary unit that divides it, else in bytes ("64MiB", "1536KiB",
// "1000").
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
