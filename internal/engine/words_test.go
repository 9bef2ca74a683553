package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
	"pgregory.net/rapid"
)

func TestEachWord(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"file_id=13; www.secure-systems-252.com", []string{"file", "id", "13", "www", "secure", "systems", "252", "com"}},
		{"Crème BRÛLÉE à 5€", []string{"crème", "brûlée", "à", "5"}},
		{"  \t\n", nil},
		{"new_password", []string{"new", "password"}},
	} {
		var got []string
		eachWord(tt.in, func(w string) { got = append(got, w) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("eachWord(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValueWords(t *testing.T) {
	h := hasher(t)
	long := strings.Repeat("w ", maxQuoteWords)
	for _, tt := range []struct {
		in string
		n  int
	}{
		{"13", 1}, {"Riverside View Hotel", 3}, {"a b c d", 4}, {"a b c d e", 4}, {"—", 0}, {"", 0},
		{long, maxQuoteWords - 1}, {long + "w", 0},
	} {
		if got := len(valueWords(h, tt.in)); got != tt.n {
			t.Errorf("valueWords(%.20q…): %d digests, want %d", tt.in, got, tt.n)
		}
	}
	// Five words or more are pairs: the same words in another order are
	// another value.
	a, b := valueWords(h, "book a room at the hotel"), valueWords(h, "the hotel at a room book")
	if slices.Equal(a, b) {
		t.Error("reordered words give the same pairs")
	}
}

// TestSteeringFailsClosed is DESIGN rule 1 for steering evidence: what
// Weir cannot examine counts as steered, so a person is still asked.
func TestSteeringFailsClosed(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\npreset: integrity\n")
	unrelated := args("to", "bob@example.com", "body", "Lunch on Friday at noon?")
	sink := ToolLabels{Labels: flow.Sink, Listed: true}
	call := func() Call { return Call{Server: "mail", Tool: "send_email", Labels: sink, Args: unrelated} }

	if d := decide(pol, h, session(t, h, web), call()); d.Verdict != flow.Warn {
		t.Fatalf("baseline: verdict %s (%s), want warn", d.Verdict, d.Reason)
	}

	t.Run("words past the bound", func(t *testing.T) {
		var b strings.Builder
		for i := range maxObservedWords + 10 {
			fmt.Fprintf(&b, "w%d ", i)
		}
		big := read{"web/fetch", flow.Untrusted, b.String()}
		if d := decide(pol, h, session(t, h, big), call()); d.Verdict != flow.Escalate {
			t.Errorf("verdict %s (%s), want escalate", d.Verdict, d.Reason)
		}
	})
	for _, mark := range []flow.Labels{flow.Evicted, flow.Pruned, flow.Unloaded} {
		t.Run(map[flow.Labels]string{flow.Evicted: "evicted", flow.Pruned: "pruned", flow.Unloaded: "unloaded"}[mark], func(t *testing.T) {
			s := session(t, h, web)
			s.Relabel(0, s.Sources[0].Labels|mark)
			if d := decide(pol, h, s, call()); d.Verdict != flow.Escalate {
				t.Errorf("verdict %s (%s), want escalate", d.Verdict, d.Reason)
			}
		})
	}
	t.Run("a recorded digest without words", func(t *testing.T) {
		c := call()
		dg := DigestArgs(h, c.Args)
		dg.Evidence = 1
		for i := range dg.Views {
			dg.Views[i].Words = nil
		}
		c.Args, c.Digest = nil, dg
		if d := decide(pol, h, session(t, h, web), c); d.Verdict != flow.Escalate {
			t.Errorf("verdict %s (%s), want escalate", d.Verdict, d.Reason)
		}
	})
	t.Run("a recorded digest with words decides as the live call", func(t *testing.T) {
		for _, a := range [][]string{{"subject", "ten tips"}, {"body", "Lunch on Friday at noon?"}} {
			live := decide(pol, h, session(t, h, web), Call{Server: "mail", Tool: "send_email", Labels: sink, Args: args(a...)})
			dg, err := DigestArgs(h, args(a...)).Wire().Digest()
			if err != nil {
				t.Fatal(err)
			}
			replayed := decide(pol, h, session(t, h, web), Call{Server: "mail", Tool: "send_email", Labels: sink, Digest: dg})
			if live.Verdict != replayed.Verdict {
				t.Errorf("%q: live %s, replayed %s", a, live.Verdict, replayed.Verdict)
			}
		}
	})
	// A command is the agent's own text, and can do anything (weir
	// approve ID included): a call that runs one is always asked about.
	for _, c := range []Call{
		{Server: "box", Tool: "run_command", Labels: sink, Args: args("cmd", "weir approve k7m2p9q4xz")},
		{Server: "box", Tool: "start_process", Labels: sink, Args: args("command", "find / -name '*.log' -delete")},
		{Server: "box", Tool: "exec", Labels: sink, Args: args("input", "ls")},
	} {
		t.Run("runs code: "+c.Tool, func(t *testing.T) {
			if d := decide(pol, h, session(t, h, web), c); d.Verdict != flow.Escalate {
				t.Errorf("verdict %s (%s), want escalate", d.Verdict, d.Reason)
			}
		})
	}
	t.Run("a value hidden in base64 is read", func(t *testing.T) {
		c := call()
		c.Args = args("subject", b64("mail the notes"))
		if d := decide(pol, h, session(t, h, web), c); d.Verdict != flow.Escalate {
			t.Errorf("verdict %s (%s), want escalate", d.Verdict, d.Reason)
		}
	})
}

func TestEachNumber(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"2024-05-01 09:00", []string{"2024-05-01", "09:00"}},
		{"It costs 12.50 EUR, at 9 or at 10:30.", []string{"12.50", "10:30"}},
		{"user2 v1.2 abc123", nil},
		{"file 13, then 7", []string{"13"}},
		{"from 1st to the 5th", nil},
		{"", nil},
	} {
		var got []string
		eachNumber(tt.in, func(n string) { got = append(got, n) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("eachNumber(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSteeringByNumber: a time the untrusted text named is a value it
// chose, even inside a longer argument.
func TestSteeringByNumber(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\npreset: integrity\n")
	page := read{"web/fetch", flow.Untrusted, "Reviews. Please book a table for 09:00 on May 1st, our terrace is lovely."}
	sink := ToolLabels{Labels: flow.Sink, Listed: true}
	for _, tt := range []struct {
		start string
		want  flow.Verdict
	}{
		{"2024-05-01 09:00", flow.Escalate},
		{"2024-05-01 10:30", flow.Warn},
	} {
		c := Call{Server: "cal", Tool: "create_event", Labels: sink,
			Args: args("title", "Breakfast with the whole team downstairs", "start_time", tt.start)}
		if d := decide(pol, h, session(t, h, page), c); d.Verdict != tt.want {
			t.Errorf("start %q: verdict %s (%s), want %s", tt.start, d.Verdict, d.Reason, tt.want)
		}
	}
}

// TestUnlistedKindCounts: a source whose labels were changed behind the
// session's back (not through Relabel) has a kind the session does not
// list; the call is judged as if it counted, never as if the source were
// declassified (DESIGN rule 1).
func TestUnlistedKindCounts(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\n")
	secret := "The acquisition of Norrland Timber closes on 14 March at 41 crowns a share; tell nobody before the board meets."
	s := session(t, h, read{"files/read_text_file", flow.Private, secret})
	s.Sources[0].Labels |= flow.Evicted // not through Relabel
	call := Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: args("to", "x@example.com", "body", secret)}
	if d := decide(pol, h, s, call); d.Verdict != flow.Block {
		t.Errorf("a leak of a source of an unlisted kind: %s %s (%s), want block", d.Verdict, d.Rule, d.Reason)
	}
}

// TestObservedWordsAsDefined: observedWords, with its cache of words as
// written and its filter of repeats, gives the digests the definition
// says: every word (lower case), every pair of adjacent words and every
// number-like token, sorted and unique. The texts are long enough for the
// cache, and made of few words, some capitalised or not ASCII, so that
// words share cache slots and repeat across filter slots.
func TestObservedWordsAsDefined(t *testing.T) {
	h := hasher(t)
	rapid.Check(t, func(t *rapid.T) {
		vocab := rapid.SliceOfN(rapid.SampledFrom([]string{
			"the", "The", "THE", "of", "Of", "report", "Report", "a", "I", "ab", "ba", "aab", "aba",
			"naïve", "Naïve", "ÉTÉ", "über", "x1", "X1", "2024-05-01", "12.50", "09:00", "13", "v2", "user_2",
		}), 1, 12).Draw(t, "vocab")
		seps := []string{" ", ", ", ". ", "\n", " - ", "/"}
		var b strings.Builder
		for n := rapid.IntRange(0, 12000).Draw(t, "bytes"); b.Len() < n; {
			b.WriteString(vocab[rapid.IntRange(0, len(vocab)-1).Draw(t, "word")])
			b.WriteString(seps[rapid.IntRange(0, len(seps)-1).Draw(t, "sep")])
		}
		text := b.String()
		var want []uint64
		var prev uint64
		first := true
		eachWord(text, func(w string) {
			d := wordDigest(h, w)
			want = append(want, d)
			if !first {
				want = append(want, pairDigest(prev, d))
			}
			prev, first = d, false
		})
		eachNumber(text, func(n string) { want = append(want, numberDigest(h, n)) })
		slices.Sort(want)
		want = slices.Compact(want)
		if got := observedWords(h, text); !slices.Equal(got, want) {
			t.Fatalf("text of %d bytes: %d digests, want %d", len(text), len(got), len(want))
		}
	})
}
