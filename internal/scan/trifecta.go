package scan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/detect"
)

// Trifecta is the lethal-trifecta verdict for a whole configuration: an
// agent that can read private data, is exposed to text an attacker wrote,
// and can send data out can be made to leak. Each leg lists the tools that
// supply it, as "server/tool".
type Trifecta struct {
	// Known is false when the verdict rests on nothing: the file could not
	// be read, or none of the servers the client starts could be scanned
	// (each failed, cannot be started as written, or is remote and was
	// not contacted). Present is then false, the legs are empty and
	// Severity is none, and none of that means the trifecta is absent:
	// Summary says why it is unknown. With Known set and Unknown not
	// empty, the verdict covers the scanned servers only.
	Known bool `json:"known"`
	// Present is set when all three legs are supplied by the servers that
	// were scanned. Every sink then needs Weir's flow control.
	Present   bool     `json:"present"`
	Private   []string `json:"private"`
	Untrusted []string `json:"untrusted"`
	Sink      []string `json:"sink"`
	// Unguarded lists the servers that supply a leg but do not run behind
	// weir run: Weir cannot see their data or stop their calls. When the
	// trifecta is present and Unguarded is empty, Weir's flow control
	// covers it.
	Unguarded []string `json:"unguarded"`
	// Unknown lists the enabled servers whose tools are not known (not
	// scanned, failed, skipped): the verdict does not account for them.
	Unknown []string `json:"unknown"`
	// Severity is high when the trifecta is present and some server
	// supplying it is unguarded, low when it is present and every such
	// server runs behind Weir, and none otherwise (unknown included).
	Severity string `json:"severity"`
	// Summary says it in one sentence.
	Summary string `json:"summary"`
}

// emptyTrifecta has every list empty rather than nil, for the JSON.
func emptyTrifecta() Trifecta {
	return Trifecta{Private: []string{}, Untrusted: []string{}, Sink: []string{}, Unguarded: []string{}, Unknown: []string{}}
}

// unreadableTrifecta is the verdict for a file that could not be read.
func unreadableTrifecta() Trifecta {
	t := emptyTrifecta()
	t.Severity = detect.None.String()
	t.Summary = "Lethal trifecta unknown: the file could not be read, so nothing is known about its servers."
	return t
}

// AssessTrifecta gives the lethal-trifecta verdict for a set of scanned
// servers: which tools supply private data, untrusted input and a way out,
// whether all three are present, and whether every server supplying a leg
// runs behind Weir. Disabled servers are left out: the client does not
// start them. When servers are started but none could be scanned, the
// verdict is unknown (Known false), not absent.
func AssessTrifecta(reports []ServerReport) Trifecta {
	t := emptyTrifecta()
	scanned := 0
	var notScanned []ServerReport
	for _, r := range reports {
		if r.Disabled || r.Transport == clients.TransportBuiltin {
			continue
		}
		if r.Status != StatusScanned {
			t.Unknown = append(t.Unknown, r.Name)
			notScanned = append(notScanned, r)
			continue
		}
		scanned++
		supplies := false
		for _, tool := range r.Tools {
			id := r.WeirName + "/" + tool.Name
			for _, l := range tool.Labels {
				supplies = true
				switch l {
				case "private":
					t.Private = append(t.Private, id)
				case "untrusted":
					t.Untrusted = append(t.Untrusted, id)
				case "sink":
					t.Sink = append(t.Sink, id)
				}
			}
		}
		if supplies && !r.Wrapped && !slices.Contains(t.Unguarded, r.Name) {
			t.Unguarded = append(t.Unguarded, r.Name)
		}
	}
	t.Known = scanned > 0 || len(t.Unknown) == 0
	t.Present = len(t.Private) > 0 && len(t.Untrusted) > 0 && len(t.Sink) > 0
	unknown := ""
	if len(t.Unknown) > 0 {
		unknown = fmt.Sprintf(" (%s not scanned, so not counted)", count(len(t.Unknown), "server"))
	}
	switch {
	case !t.Known:
		t.Severity = detect.None.String()
		t.Summary = unknownSummary(notScanned)
	case t.Present && len(t.Unguarded) > 0:
		t.Severity = detect.High.String()
		t.Summary = fmt.Sprintf("Lethal trifecta present: %s; %s not behind Weir, so nothing stops a prompt-injected agent from leaking%s. Run weir wrap on this file.",
			legs(t), strings.Join(t.Unguarded, ", ")+isAre(len(t.Unguarded)), unknown)
	case t.Present:
		t.Severity = detect.Low.String()
		t.Summary = fmt.Sprintf("Lethal trifecta present: %s; every server supplying it runs behind Weir, whose flow control decides each sink call%s.",
			legs(t), unknown)
	default:
		t.Severity = detect.None.String()
		var missing []string
		if len(t.Private) == 0 {
			missing = append(missing, "private data")
		}
		if len(t.Untrusted) == 0 {
			missing = append(missing, "untrusted input")
		}
		if len(t.Sink) == 0 {
			missing = append(missing, "a way out (sink)")
		}
		t.Summary = fmt.Sprintf("No lethal trifecta: no tool supplies %s%s.", strings.Join(missing, " or "), unknown)
	}
	return t
}

// unknownSummary says why nothing is known: which servers could not be
// scanned, grouped by why.
func unknownSummary(rs []ServerReport) string {
	whys := []struct{ status, why string }{
		{StatusFailed, "failed"},
		{StatusInvalid, "cannot be started as written"},
		{StatusSkipped, "remote, not contacted without --remote"},
	}
	var parts []string
	remote := false
	for _, w := range whys {
		var names []string
		for _, r := range rs {
			if r.Status == w.status {
				names = append(names, r.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		remote = remote || w.status == StatusSkipped
		if len(rs) == 1 {
			parts = append(parts, w.why)
		} else {
			parts = append(parts, w.why+": "+strings.Join(names, ", "))
		}
	}
	var msg string
	if len(rs) == 1 {
		msg = fmt.Sprintf("Lethal trifecta unknown: %s, the only server the client starts, could not be scanned (%s), so nothing is known about what its tools can do.",
			rs[0].Name, strings.Join(parts, "; "))
	} else {
		msg = fmt.Sprintf("Lethal trifecta unknown: none of the %d servers the client starts could be scanned (%s), so nothing is known about what their tools can do.",
			len(rs), strings.Join(parts, "; "))
	}
	if remote {
		msg += " Scan again with --remote to include remote servers."
	}
	return msg
}

// legs says which legs how many tools supply.
func legs(t Trifecta) string {
	n := func(k int, one, many string) string { return count(k, "tool") + " " + plural(k, one, many) }
	return fmt.Sprintf("%s private data, %s untrusted input and %s data out",
		n(len(t.Private), "reads", "read"), n(len(t.Untrusted), "brings in", "bring in"), n(len(t.Sink), "can send", "can send"))
}

// count says "1 tool", "3 tools".
func count(n int, what string) string {
	return strconv.Itoa(n) + " " + plural(n, what, what+"s")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func isAre(n int) string {
	if n == 1 {
		return " is"
	}
	return " are"
}
