package policyfile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sec/weir/internal/policy"
)

// maxRate bounds N: a limit above it is not a limit anyone means.
const maxRate = 1_000_000

// rateUnits are the units a rate limit may name. The short forms are the
// ones people write without thinking (10/min, 5/sec, 100/hr); one-letter
// forms are not accepted, since "m" could as well be a month.
var rateUnits = []struct {
	names []string
	per   time.Duration
}{
	{[]string{"second", "sec"}, time.Second},
	{[]string{"minute", "min"}, time.Minute},
	{[]string{"hour", "hr"}, time.Hour},
}

func rateUnitNames() []string {
	var out []string
	for _, u := range rateUnits {
		out = append(out, u.names...)
	}
	return out
}

// ParseRateLimit parses "N/unit": N a whole number from 1 to 1000000,
// unit one of second (sec), minute (min) or hour (hr). Spaces around the
// parts are allowed ("10 / minute"); plurals are not.
func ParseRateLimit(s string) (policy.RateLimit, error) {
	const example = `write "N/second", "N/minute" or "N/hour", e.g. "10/minute"`
	count, unit, ok := strings.Cut(s, "/")
	if !ok {
		return policy.RateLimit{}, fmt.Errorf("%s has no \"/\"; %s", quote(s), example)
	}
	count, unit = strings.TrimSpace(count), strings.TrimSpace(unit)
	n, err := strconv.Atoi(count)
	if err != nil || count[0] == '+' {
		return policy.RateLimit{}, fmt.Errorf("%s is not a whole number of calls; %s", quote(count), example)
	}
	if n < 1 {
		return policy.RateLimit{}, fmt.Errorf("the limit must allow at least 1 call, got %d; to refuse every call use a rule with action: block and when: 'true'", n)
	}
	if n > maxRate {
		return policy.RateLimit{}, fmt.Errorf("%d calls is more than the largest limit, %d; drop the rate_limit if you mean no limit", n, maxRate)
	}
	for _, u := range rateUnits {
		for _, name := range u.names {
			if unit == name {
				return policy.RateLimit{N: n, Per: u.per, Text: s}, nil
			}
		}
	}
	hint := didYouMean(unit, rateUnitNames())
	if hint == "" {
		if t := strings.TrimSuffix(unit, "s"); t != unit && suggest(t, rateUnitNames()) != "" {
			hint = fmt.Sprintf("; did you mean %q?", suggest(t, rateUnitNames()))
		}
	}
	return policy.RateLimit{}, fmt.Errorf("unknown unit %s; want second, minute or hour%s", quote(unit), hint)
}
