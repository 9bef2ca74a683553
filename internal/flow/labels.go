package flow

import (
	"fmt"
	"strings"
)

// Labels is a set of tool labels. The zero value is the empty set: a tool
// whose results are neither private nor untrusted and that cannot move data
// out.
type Labels uint8

const (
	// Private marks a tool whose results hold the user's own data.
	Private Labels = 1 << iota
	// Untrusted marks a tool whose results can hold text an attacker wrote.
	Untrusted
	// Sink marks a tool that can move data out or act on the world.
	Sink
	// Pruned marks what the state store keeps of a session's observations
	// once they are past retention (see PrunedTool): their labels without
	// their fingerprints. Private data Weir can no longer attribute is
	// treated as carried by every sink call (DESIGN rule 3: evicting
	// state widens taint, never narrows it). It is never a tool's label:
	// no policy can name it.
	Pruned
	// Evicted marks a source some of whose fingerprints a session mirror
	// dropped to keep within its memory bound (Session.MaxBytes), or
	// whose oldest observations the state store replaced with a tombstone
	// (an observation of the same tool with no hashes) to keep within
	// session.max_bytes. Like Pruned, it
	// widens taint: private data from it is treated as carried by every
	// sink call. It is never a tool's label.
	Evicted
	// Unloaded marks a source a proxy that joined a long session knows
	// only the labels of for now: its fingerprints are still being read
	// (see relay's join). Like Evicted it widens taint until they are in,
	// and it is never stored: the loaded mirror replaces the one that
	// holds it.
	Unloaded

	allLabels = Private | Untrusted | Sink
)

// PrunedTool is the source of a pruned session's tombstone observation.
const PrunedTool = "weir/pruned"

// Legs are the parts of the lethal trifecta a session can hold: private data
// seen and untrusted input seen. The third leg, the external action, is the
// sink call being decided.
const Legs = Private | Untrusted

var labelNames = [...]struct {
	l    Labels
	name string
}{
	{Private, "private"},
	{Untrusted, "untrusted"},
	{Sink, "sink"},
}

// Has reports whether l holds every label in x.
func (l Labels) Has(x Labels) bool { return l&x == x }

// Any reports whether l holds at least one label in x.
func (l Labels) Any(x Labels) bool { return l&x != 0 }

// String lists the labels comma-separated in a fixed order, or "none".
func (l Labels) String() string {
	if l&allLabels == 0 {
		return "none"
	}
	var b strings.Builder
	for _, n := range labelNames {
		if l&n.l != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.name)
		}
	}
	return b.String()
}

// Names returns the label names in a fixed order; nil for the empty set.
func (l Labels) Names() []string {
	var out []string
	for _, n := range labelNames {
		if l&n.l != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// ParseLabel parses one label name.
func ParseLabel(s string) (Labels, error) {
	for _, n := range labelNames {
		if s == n.name {
			return n.l, nil
		}
	}
	return 0, fmt.Errorf("unknown label %q (want private, untrusted or sink)", s)
}
