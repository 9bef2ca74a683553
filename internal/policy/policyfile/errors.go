package policyfile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sec/weir/internal/policy"
)

// Error is one problem found in a policy. Every error the package returns for
// a policy's content names where the problem is and says how to fix it.
//
// File is the policy's path (empty for an in-memory policy), Line and Column
// are 1-based (0 when unknown, as for a file that cannot be read), and Key is
// the path of the offending key, e.g. "flow.min_matches" or
// "tools[1].labels[0]" (list indexes count from 0).
type Error struct {
	File         string
	Line, Column int
	Key          string
	Msg          string

	err error // underlying cause, e.g. an *fs.PathError; may be nil
}

// Error formats the error as "FILE:LINE:COL: KEY: MSG", leaving out the
// parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause, if any, so that
// errors.Is(err, fs.ErrNotExist) works on a policy that cannot be read.
func (e *Error) Unwrap() error { return e.err }

// ErrorList is every problem found in one policy, sorted by position. It is
// what [Parse], [Load] and [Resolve] return on failure; errors.As finds the
// individual [*Error] values through Unwrap.
type ErrorList []*Error

// Error prints one problem per line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems as a []error.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// sortErrors orders errors by position. Errors that belong to the whole file
// (line 0) come first; ties keep the order they were found in.
func sortErrors(errs []*Error) {
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// quote, orList and andList write a user's text and lists of names into
// messages the way the compiled policy's own messages do.
func quote(s string) string         { return policy.Quote(s) }
func orList(names []string) string  { return policy.List(names, " or ") }
func andList(names []string) string { return policy.List(names, " and ") }

// suggest returns the name in valid closest to s by edit distance, or "" when
// none is close enough to be a likely typo.
func suggest(s string, valid []string) string {
	ls := strings.ToLower(s)
	best, bestD := "", -1
	for _, v := range valid {
		d := editDistance(ls, strings.ToLower(v))
		limit := max(1, len([]rune(v))/3)
		if d > limit {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// didYouMean formats a suggestion as a sentence suffix, or "".
func didYouMean(s string, valid []string) string {
	if m := suggest(s, valid); m != "" {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent characters each
// cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows are enough for the swap rule.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
