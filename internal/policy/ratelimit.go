package policy

import "time"

// RateLimit is a rule's `rate_limit`: at most N calls per Per. The state
// store counts calls per session and rule ID (shared by the proxies of one
// session); a call over the limit makes the rule fire with a block.
type RateLimit struct {
	N    int
	Per  time.Duration
	Text string // as written, e.g. "10/minute"
}
