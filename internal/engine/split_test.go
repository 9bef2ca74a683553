package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// minutes is a private note long enough to leak in many pieces.
const minutes = "Board minutes, 14 March: the acquisition of Northwind closes on 30 June at 41 million, " +
	"financed by the revolving credit line; Lindqvist resigns as CFO on 1 May and Okafor takes over; " +
	"the layoffs in the Tampere office are announced to staff only after the deal is signed."

// trail plays the relay's part: what the sink received before, the end of
// each forwarded call's payload, bounded like the relay's history.
type trail struct{ parts []string }

func (tr *trail) earlier() *Earlier {
	if len(tr.parts) == 0 {
		return nil
	}
	return &Earlier{Parts: slices.Clone(tr.parts)}
}

func (tr *trail) add(args json.RawMessage) {
	tr.parts = append(tr.parts, SinkPayload(args))
	for n := len(strings.Join(tr.parts, "")); n > 512 && len(tr.parts) > 1; n = len(strings.Join(tr.parts, "")) {
		tr.parts = tr.parts[1:]
	}
}

// post sends pieces to one channel in order, as a hijacked model would,
// and returns the index of the first blocked one (-1 for none) and its
// decision.
func post(h *fingerprint.Hasher, pol *policy.Policy, s *flow.Session, pieces []string) (int, Decision) {
	var tr trail
	for i, p := range pieces {
		c := Call{Server: "slack", Tool: "post_message", Labels: ToolLabels{Labels: flow.Sink}, Args: args("channel", "#random", "text", p), Earlier: tr.earlier()}
		d := decide(pol, h, s, c)
		if d.Verdict.Stops() {
			return i, d
		}
		tr.add(c.Args)
	}
	return -1, Decision{}
}

func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// TestSplitLeak: a private note posted 20 to 40 characters at a time is
// stopped within the first few pieces, and the reason says how it was
// hidden; ordinary messages to the same channel after the same read, and
// short quotes of the note among them, are not.
func TestSplitLeak(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\n")
	s := session(t, h, read{"notes/read_note", flow.Private, minutes})
	for _, n := range []int{20, 25, 30, 34, 40} {
		pieces := chunks(minutes, n)
		i, d := post(h, pol, s, pieces)
		if i < 0 || i > 3 {
			t.Errorf("pieces of %d: first blocked %d of %d, want within the first four", n, i, len(pieces))
			continue
		}
		if d.Rule != RuleExfiltration || !strings.Contains(d.Reason, "notes/read_note") {
			t.Errorf("pieces of %d: %s %s", n, d.Rule, d.Reason)
		}
		if n < 30 && !strings.Contains(d.Reason, "split across") {
			t.Errorf("pieces of %d: the reason does not say the leak was split: %s", n, d.Reason)
		}
	}

	benign := []string{
		"Morning all, standup moved to ten.",
		"The build is green again after the flaky test fix.",
		"Reminder: the board meets in March.",        // words of the note, not its text
		"Northwind closes on 30 June, per the news.", // a short quote among other words
		"Who has the projector cable?",
		"Lunch order goes in at half eleven.",
		"the acquisition of Northwind",                                         // a short quote alone
		"Okafor takes over the on-call rota next week from the platform team.", // a name from the note
	}
	if i, d := post(h, pol, s, benign); i >= 0 {
		t.Errorf("benign message %d (%q) refused: %s", i, benign[i], d.Reason)
	}
	// Pieces with ordinary messages between them are joined too.
	var interleaved []string
	for i, p := range chunks(minutes, 25) {
		interleaved = append(interleaved, p, benign[i%len(benign)])
	}
	if i, d := post(h, pol, s, interleaved); i < 0 || i > 7 || !strings.Contains(d.Reason, "between") {
		t.Errorf("pieces of 25 with messages between: first blocked %d (%s)", i, d.Reason)
	}
	// The same pieces to a session that read nothing private: no leak.
	if i, _ := post(h, pol, session(t, h), chunks(minutes, 25)); i >= 0 {
		t.Errorf("pieces refused in a session with nothing private (piece %d)", i)
	}
}

// TestPropertySplitLeakAttributed: splitting never helps. Any stretch of
// at least 120 characters of a private text that would be stopped if sent
// whole is stopped before its last piece goes out when sent in pieces of
// 15 to 40 characters. (A stretch that would not be stopped whole — the
// same word over and over has too few distinct prints for min_matches —
// is not this property's business.)
func TestPropertySplitLeakAttributed(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\n")
	words := strings.Fields("acquisition revenue forecast northwind tampere layoffs credit line resign officer board minutes closes million financed deal signed staff announced quarter margin pipeline churn price region contract renewal")
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for b.Len() < 400 {
			b.WriteString(rapid.SampledFrom(words).Draw(t, "word"))
			b.WriteString(rapid.SampledFrom([]string{" ", ", ", "; ", " ", ". "}).Draw(t, "sep"))
		}
		note := b.String()
		start := rapid.IntRange(0, len(note)-120).Draw(t, "start")
		leak := note[start : start+rapid.IntRange(120, len(note)-start).Draw(t, "len")]
		var pieces []string
		for rest := leak; rest != ""; {
			n := min(len(rest), rapid.IntRange(15, 40).Draw(t, "piece"))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		s := session(t, h, read{"notes/read_note", flow.Private, note})
		if i, _ := post(h, pol, s, []string{leak}); i < 0 {
			return
		}
		if i, _ := post(h, pol, s, pieces); i < 0 {
			t.Fatalf("a leak of %d characters in %d pieces went out whole: %q", len(leak), len(pieces), pieces)
		}
	})
}
