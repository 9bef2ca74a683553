package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/policy/policyfile"
)

// TestSplitLeakThroughRelay: the relay keeps what a sink tool was sent
// and joins it to the next call, so a private note posted 25 characters
// at a time is stopped within a few pieces, and the pieces before it
// reached the server.
func TestSplitLeakThroughRelay(t *testing.T) {
	pol, err := policyfile.Parse("p.yaml", []byte("version: 1\ntools:\n  - {match: \"srv:read_note\", labels: [private]}\n  - {match: \"srv:post_message\", labels: [sink]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	x := newHarness(t, nil, pol)
	x.readPrivate()
	x.clientGot()
	forwarded := 0
	for i := 0; i*25 < len(notesText); i++ {
		piece := notesText[i*25 : min(len(notesText), (i+1)*25)]
		args, _ := json.Marshal(map[string]string{"channel": "#random", "text": piece})
		x.client(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"post_message","arguments":%s}}`, 10+i, args))
		var got string
		select {
		case l := <-x.serverRx:
			forwarded++
			var m struct{ ID json.RawMessage }
			json.Unmarshal([]byte(l), &m)
			x.server(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID))
			x.clientGot()
			continue
		case got = <-x.clientRx:
		case <-time.After(5 * time.Second):
			t.Fatal("no answer")
		}
		if !strings.Contains(got, "split across") || !strings.Contains(got, "srv/read_note") {
			t.Fatalf("piece %d refused without naming the split: %s", i, got)
		}
		if i > 3 || forwarded == 0 {
			t.Errorf("stopped at piece %d after %d forwarded; want within the first four, after at least one", i, forwarded)
		}
		return
	}
	t.Fatalf("all %d pieces of the note were forwarded", forwarded)
}

// TestSinkHistoryBounded: 10,000 benign sink calls to 1,000 tools leave
// the history within its bounds.
func TestSinkHistoryBounded(t *testing.T) {
	var h sinkHistory
	for i := range 10_000 {
		args, _ := json.Marshal(map[string]string{"channel": "#c", "text": strings.Repeat(fmt.Sprintf("message %d ", i), 1+i%40)})
		h.add(fmt.Sprintf("tool_%d", i%1000), args)
		if tools, bytes := h.size(); tools > maxSinkTools || bytes > maxSinkTools*sinkTail {
			t.Fatalf("after %d calls: %d tools, %d bytes", i+1, tools, bytes)
		}
	}
	for i := range 10_000 {
		args, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("status %d: all green", i)})
		h.add("post", args)
	}
	e := h.earlier("post")
	text := strings.Join(e.Parts, "")
	if e == nil || len(text) > sinkTail || len(e.Parts) > sinkTail {
		t.Fatalf("one tool's history: %d calls, %d bytes", len(e.Parts), len(text))
	}
	if !strings.HasSuffix(text, "status 9999: all green") {
		t.Errorf("the history does not end with the last call: %q", text[len(text)-40:])
	}
	if h.earlier("tool_0") != nil && h.earlier("tool_999") == nil {
		t.Error("the most recently called tools were dropped before the oldest")
	}
}
