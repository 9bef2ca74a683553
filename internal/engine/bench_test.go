package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
)

// prose returns n bytes of deterministic English-like text.
func prose(seed uint64, n int) string {
	words := strings.Fields("the of and to in is was for on that with as by at from his her it an are were be this which or had not but what all when we there can more if no out so said up about into than them only some could time these two may then first any like now my such make over our even most after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three")
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
		if r.IntN(12) == 0 {
			fmt.Fprintf(&b, "%d. ", r.IntN(10000))
		}
	}
	return b.String()[:n]
}

// benchSession holds total bytes of private results, read in 64 KB pieces.
func benchSession(b *testing.B, h *fingerprint.Hasher, total int) *flow.Session {
	var s flow.Session
	for i := 0; i*65536 < total; i++ {
		raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": prose(uint64(i), 65536)}}})
		o, err := Observe(h, Result{Server: "files", Tool: "read_file", Labels: flow.Private, Raw: raw})
		if err != nil {
			b.Fatal(err)
		}
		s.Apply(int64(i+1), o)
	}
	return &s
}

// BenchmarkDecide is the decision for a sink call with a 4 KB argument
// against a session holding 1 MB of private text: the argument is fresh
// text (the common case, nothing to find), the same after earlier calls
// to the tool (512 bytes of history joined, see Earlier), or a
// base64-encoded leak. It reports the median and 99th percentile per
// decision.
func BenchmarkDecide(b *testing.B) {
	h := hasher(b)
	pol := mustPolicy(b, "version: 1\n")
	s := benchSession(b, h, 1<<20)
	leak := prose(3, 3000) // from the session's fourth result
	cases := map[string]json.RawMessage{
		"benign-4KB": args("to", "bob@example.com", "body", prose(999, 4096)),
		"leak-base64-4KB": func() json.RawMessage {
			raw, _ := json.Marshal(map[string]string{"body": b64(leak)})
			return raw
		}(),
	}
	cases["benign-4KB-after-calls"] = cases["benign-4KB"]
	for _, name := range []string{"benign-4KB", "benign-4KB-after-calls", "leak-base64-4KB"} {
		b.Run(name, func(b *testing.B) {
			call := Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: cases[name]}
			if strings.HasSuffix(name, "after-calls") {
				call.Earlier = &Earlier{}
				for i := range 12 { // the most 512 bytes of history hold in pieces of 40
					call.Earlier.Parts = append(call.Earlier.Parts, prose(uint64(900+i), 40))
				}
			}
			want := flow.Allow
			if strings.HasPrefix(name, "leak") {
				want = flow.Block
			}
			if d := decide(pol, h, s, call); d.Verdict != want {
				b.Fatalf("verdict %s, want %s (%s)", d.Verdict, want, d.Reason)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				decide(pol, h, s, call)
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkObserve fingerprints a 1 MB private result.
func BenchmarkObserve(b *testing.B) {
	h := hasher(b)
	raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": prose(7, 1<<20)}}})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Observe(h, Result{Server: "files", Tool: "read_file", Labels: flow.Private, Raw: raw}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObserve64KB observes a 64 KB page as private and as untrusted
// content: the difference is the words, word pairs and numbers steering
// evidence reads.
func BenchmarkObserve64KB(b *testing.B) {
	h := hasher(b)
	raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": prose(7, 64<<10)}}})
	for _, l := range []flow.Labels{flow.Private, flow.Untrusted} {
		b.Run(l.String(), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Observe(h, Result{Server: "web", Tool: "fetch", Labels: l, Raw: raw}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// rulesPolicy is a 50-rule policy: 40 argument rules and 10 CEL rules over
// five servers; ten of them (two CEL) match mail:send_email.
func rulesPolicy() string {
	var b strings.Builder
	b.WriteString("version: 1\nconfig:\n  allowed_domains: [corp.example, partner.example]\nrules:\n")
	servers := []string{"mail", "files", "slack", "bank", "web"}
	for i := range 40 {
		srv := servers[i%5]
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "  - {id: r%d, match: \"%s:*\", args: {to: {deny: ['(?i)@evil\\.example$', 'pastebin']}}}\n", i, srv)
		case 1:
			fmt.Fprintf(&b, "  - {id: r%d, match: \"%s:send_*\", args: {subject: {max_length: 200}}}\n", i, srv)
		case 2:
			fmt.Fprintf(&b, "  - {id: r%d, match: \"%s:*\", args: {amount: {min: 0, max: 10000}}}\n", i, srv)
		case 3:
			fmt.Fprintf(&b, "  - {id: r%d, match: \"%s:post_*\", args: {channel: {one_of: [\"#eng\", \"#ops\"]}}}\n", i, srv)
		}
	}
	for i := range 10 {
		srv := servers[i%5]
		fmt.Fprintf(&b, "  - {id: c%d, match: \"%s:*\", when: 'recipient_domains.exists(d, !(d in config.allowed_domains)) && size(args) < 100', action: warn}\n", i, srv)
	}
	return b.String()
}

// BenchmarkDecideRules measures what 50 rules (10 of them CEL) add to the
// decision of a sink call with a 4 KB argument, against the same call under
// a policy with no rules.
func BenchmarkDecideRules(b *testing.B) {
	h := hasher(b)
	s := benchSession(b, h, 1<<20)
	callArgs := args("to", "ann@corp.example", "subject", "minutes", "body", prose(999, 4096))
	for _, tc := range []struct{ name, policy string }{
		{"no-rules", "version: 1\n"},
		{"50-rules-10-cel", rulesPolicy()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			pol := mustPolicy(b, tc.policy)
			call := Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: callArgs}
			if d := decide(pol, h, s, call); d.Verdict != flow.Allow {
				b.Fatalf("verdict %s (%s)", d.Verdict, d.Reason)
			}
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				decide(pol, h, s, call)
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkDecideResult is the work on a result before it is forwarded: an
// unlabelled tool's (reading and cleaning the text) and a private one's
// (fingerprints too), at 64 KB and 1 MB.
func BenchmarkDecideResult(b *testing.B) {
	h := hasher(b)
	pol := mustPolicy(b, "version: 1\n")
	for _, size := range []int{64 << 10, 1 << 20} {
		raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": prose(7, size)}}})
		for _, l := range []flow.Labels{0, flow.Private} {
			b.Run(fmt.Sprintf("%s/%dKB", l, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					Decide(Inputs{Policy: pol, Hasher: h}, Result{Server: "files", Tool: "read_file", Labels: l, Raw: raw})
				}
			})
		}
	}
}
