package engine

import (
	"encoding/json"
	"fmt"
	"slices"
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
	// Parts are the ends of their payloads (see SinkPayload), oldest
	// first, one a call.
	Parts []string
}

// maxSkipJoins bounds the earlier calls a payload is also joined to one by
// one, past the calls between: a leak whose pieces are interleaved with
// other messages to the same tool.
const maxSkipJoins = 4

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

// splitViews are the views of a call joined to what its tool received
// before: its payload's start after the end of all of it, and after each
// of the last maxSkipJoins calls alone (pieces of a leak sent with other
// messages between them). Each keeps only the prints neither side has
// alone; views with none are left out.
func splitViews(h *fingerprint.Hasher, leaves []leaf, e *Earlier) []ViewDigest {
	if e == nil || len(e.Parts) == 0 {
		return nil
	}
	// The start of the payload, and the path of its first argument.
	var b strings.Builder
	path := ""
	for _, l := range leaves {
		if b.Len() >= edgeBytes {
			break
		}
		if namesWhere(l) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		} else {
			path = l.path
		}
		b.WriteString(l.value[:min(len(l.value), edgeBytes)])
	}
	payload := b.String()
	if payload == "" {
		return nil
	}
	// Only windows that straddle the join are new, and a window spans
	// K+W−1 normalised bytes: the edges of the two sides (see edges) are
	// all a view needs, whatever their lengths. Prints of either edge
	// alone are not the join's: the earlier text was judged when it was
	// sent, and this call's own views hold its own.
	head := payload
	if len(head) > edgeBytes {
		head = head[:edgeBytes]
	}
	// The edges are a few hundred bytes: a few dozen prints each, which a
	// linear scan checks faster than a map is built.
	headPrints := h.Prints(nil, head)
	var leftPrints, joinedPrints []uint64
	join := func(left, via string) (ViewDigest, bool) {
		if len(left) > edgeBytes {
			left = left[len(left)-edgeBytes:]
		}
		leftPrints = h.Prints(leftPrints[:0], left)
		joined := left + "\n" + head
		joinedPrints = fingerprint.SortUnique(h.Prints(joinedPrints[:0], joined))
		v := ViewDigest{Path: path, Via: []string{via}, Payload: true, Len: len(strings.TrimSpace(joined))}
		for _, p := range joinedPrints {
			if !slices.Contains(headPrints, p) && !slices.Contains(leftPrints, p) {
				v.Prints = append(v.Prints, p)
			}
		}
		return v, len(v.Prints) > 0
	}
	var out []ViewDigest
	n := len(e.Parts)
	if v, ok := join(strings.Join(e.Parts, "\n"), fmt.Sprintf("split across %d calls", n+1)); ok {
		out = append(out, v)
	}
	for k := 1; k <= maxSkipJoins && k < n; k++ {
		// The part k calls before the last: k calls between it and this.
		if v, ok := join(e.Parts[n-1-k], fmt.Sprintf("split across calls, %d %s between", k, plural(k, "call", "calls"))); ok {
			out = append(out, v)
		}
	}
	return out
}
