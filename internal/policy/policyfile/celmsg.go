package policyfile

import (
	"fmt"
	"regexp"

	"github.com/weir-sec/weir/internal/policy"
)

var (
	undeclaredRE = regexp.MustCompile(`^undeclared reference to '([^']+)'`)
	expectingRE  = regexp.MustCompile(` expecting \{[^}]*IDENTIFIER[^}]*\}$`)
)

// celMessage turns a CEL message into policy-error copy: what CEL said,
// and a hint when we can give one.
func celMessage(msg string) string {
	if m := undeclaredRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown name %s; the variables are %s%s", quote(m[1]), andList(policy.PredicateVariables()), didYouMean(m[1], policy.PredicateVariables()))
	}
	// The parser lists every token it could take; "an expression" says it.
	msg = expectingRE.ReplaceAllString(msg, " expecting an expression")
	return "invalid CEL: " + msg
}
