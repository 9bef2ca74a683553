package flow

import "fmt"

// Verdict is what Weir decides for one event. Verdicts are ordered by
// severity, so combining decisions is taking the maximum.
type Verdict uint8

const (
	// Allow lets the call through.
	Allow Verdict = iota
	// Warn lets the call through and records a warning.
	Warn
	// Redact lets a result through with parts replaced.
	Redact
	// Escalate asks a human; where no human can be asked it acts as Block.
	Escalate
	// Block refuses the call; it never reaches the server.
	Block
)

var verdictNames = [...]string{Allow: "allow", Warn: "warn", Redact: "redact", Escalate: "escalate", Block: "block"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", v)
}

// ParseVerdict parses a verdict name as written in a policy.
func ParseVerdict(s string) (Verdict, error) {
	for v, n := range verdictNames {
		if s == n {
			return Verdict(v), nil
		}
	}
	return 0, fmt.Errorf("unknown action %q (want allow, warn, block or escalate)", s)
}

// Stops reports whether the verdict keeps a call from the server.
func (v Verdict) Stops() bool { return v >= Escalate }

// Max returns the more severe of two verdicts.
func Max(a, b Verdict) Verdict {
	if a > b {
		return a
	}
	return b
}
