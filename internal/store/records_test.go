package store

import (
	"context"
	"testing"
	"time"
)

// TestRecords: records come back in order, by session and time, and
// pruning drops whole sessions whose last record is older than the cut-off,
// oldest first, never part of a session.
func TestRecords(t *testing.T) { forEachBackend(t, testRecords) }

func testRecords(t *testing.T, open opener) {
	st := open(t)
	ctx := context.Background()
	day := int64(24 * time.Hour / time.Millisecond)
	now := time.Now()
	at := func(daysAgo int) int64 { return now.UnixMilli() - int64(daysAgo)*day }
	recs := []Rec{
		{Session: "old", At: at(40), Kind: "call", Server: "s", Tool: "a", Body: []byte(`{}`)},
		{Session: "old", At: at(35), Kind: "call", Server: "s", Tool: "b", Body: []byte(`{}`)},
		{Session: "spans", At: at(40), Kind: "call", Server: "s", Tool: "a", Body: []byte(`{}`)},
		{Session: "spans", At: at(2), Kind: "result", Server: "s", Tool: "a", Body: []byte(`{}`)},
		{Session: "new", At: at(1), Kind: "list", Server: "s", Body: []byte(`{"tools":[]}`)},
	}
	if err := st.AppendRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendRecords(ctx, []Rec{{At: 1, Kind: "call"}}); err == nil {
		t.Error("a record without a session was stored")
	}
	read := func(since int64, session string) []string {
		var out []string
		if err := st.Records(ctx, since, session, func(r Rec) error {
			out = append(out, r.Session+"/"+r.Tool)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read(0, ""); len(got) != 5 || got[0] != "old/a" || got[4] != "new/" {
		t.Errorf("all records: %v", got)
	}
	if got := read(0, "spans"); len(got) != 2 {
		t.Errorf("one session: %v", got)
	}
	if got := read(at(3), ""); len(got) != 2 {
		t.Errorf("since 3 days: %v", got)
	}
	n, err := st.PruneRecords(ctx, now.AddDate(0, 0, -30))
	if err != nil {
		t.Fatal(err)
	}
	if got := read(0, ""); n != 2 || len(got) != 3 || got[0] != "spans/a" {
		t.Errorf("after pruning (%d deleted): %v; want the old session gone and the spanning one whole", n, got)
	}

	if err := st.PutPolicy(ctx, "h1", "policy.yaml", []byte("version: 1\n"), now); err != nil {
		t.Fatal(err)
	}
	if err := st.PutPolicy(ctx, "h1", "other.yaml", []byte("changed"), now); err != nil {
		t.Fatal(err)
	}
	src, text, err := st.Policy(ctx, "h1")
	if err != nil || src != "policy.yaml" || string(text) != "version: 1\n" {
		t.Errorf("policy h1: %q %q %v; want the first text, kept", src, text, err)
	}
	if _, _, err := st.Policy(ctx, "missing"); err == nil {
		t.Error("a policy never stored was found")
	}
}
