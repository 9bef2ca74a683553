package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/fingerprint"
)

// A leak can be split: a private note posted to one channel in pieces of
// 20–40 characters, each too short to match alone (a print needs K
// normalised bytes, and only runs of K+W−1 are sure to share one). The
// relay keeps, for each sink tool, the end of what the session's earlier
// calls that reached it carried, and the call is judged with one more
// view: that text joined with this call's payload. The view keeps only the
// prints that neither side has alone: what was let through before is
// not judged again, this call's own text is judged by its own views, and
// the view holds what straddles the join.
//
// The history is per sink tool, not per recipient: pieces sent to several
// channels or addresses of one tool are joined too, which is how an
// attacker who controls the recipients would spread them. It is held in
// the relay's memory only and never written (DESIGN rule 2); a recording
// keeps the joined view's prints, so a replay decides the same.

// Earlier is what a sink tool received in the session's earlier calls.
type Earlier struct {
	// Text is the end of their payloads (see SinkPayload), oldest first,
	// a line each.
	Text string
	// Calls is how many earlier calls Text holds some of.
	Calls int
}

// SinkPayload is the text a sink call carries out: its string arguments
// but those that name where it goes (a recipient, channel, host, a lone
// address), a line each, in document order. The relay keeps its end as
// the next call's Earlier.
func SinkPayload(args json.RawMessage) string {
	leaves, err := stringLeaves(args)
	if err != nil {
		return ""
	}
	return payloadText(leaves)
}

func payloadText(leaves []leaf) string {
	var b strings.Builder
	for _, l := range leaves {
		if namesWhere(l) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.value)
	}
	return b.String()
}

// namesWhere reports a leaf that says where a call goes rather than what
// it carries: a short value of an argument named as a destination, or a
// lone address.
func namesWhere(l leaf) bool {
	if isAddress(l.value) || isAddressee(l.value) {
		return true
	}
	if len(l.value) > 256 {
		return false
	}
	for _, w := range splitName(argName(l.path)) {
		if destinationWords[w] {
			return true
		}
	}
	return false
}

// argName is the top-level argument a leaf path is in ("$.to[0]" → "to").
func argName(path string) string {
	rest, ok := strings.CutPrefix(path, "$.")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, ".["); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// splitView is the view of a call joined to what its tool received
// before, or false when there is nothing to join or nothing new in it.
func splitView(h *fingerprint.Hasher, leaves []leaf, e *Earlier) (ViewDigest, bool) {
	if e == nil || e.Text == "" || e.Calls <= 0 {
		return ViewDigest{}, false
	}
	payload := payloadText(leaves)
	if payload == "" {
		return ViewDigest{}, false
	}
	path := ""
	for _, l := range leaves {
		if !namesWhere(l) {
			path = l.path
			break
		}
	}
	// Only windows that straddle the join are new, and a window spans
	// K+W−1 normalised bytes: the edges of the two sides (see edges) are
	// all the view needs, whatever their lengths. Prints of either edge
	// alone are not the join's: the earlier text was judged when it was
	// sent, and this call's own views hold its own.
	tail, head := e.Text, payload
	if len(tail) > edgeBytes {
		tail = tail[len(tail)-edgeBytes:]
	}
	if len(head) > edgeBytes {
		head = head[:edgeBytes]
	}
	before := map[uint64]bool{}
	for _, p := range h.Prints(h.Prints(nil, tail), head) {
		before[p] = true
	}
	joined := tail + "\n" + head
	v := ViewDigest{Path: path, Via: []string{fmt.Sprintf("split across %d calls", e.Calls+1)}, Payload: true, Len: len(strings.TrimSpace(joined))}
	for _, p := range fingerprint.SortUnique(h.Prints(nil, joined)) {
		if !before[p] {
			v.Prints = append(v.Prints, p)
		}
	}
	return v, len(v.Prints) > 0
}
