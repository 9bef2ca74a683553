package audit

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestBuildReport(t *testing.T) {
	path := writeSample(t, sampleTime)
	rep, err := NewReport([]string{path}, ReportOptions{Now: sampleBase.Add(24 * time.Hour), Product: "weir test"})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Counts
	for name, got := range map[string][2]int{
		"records":   {c.Records, 16},
		"sessions":  {c.Sessions, 3},
		"servers":   {c.Servers, 5},
		"calls":     {c.Calls, 9},
		"allow":     {c.Verdicts["allow"], 4},
		"block":     {c.Verdicts["block"], 3},
		"escalate":  {c.Verdicts["escalate"], 1},
		"warn":      {c.Verdicts["warn"], 1},
		"redact":    {c.Verdicts["redact"], 0}, // the redaction is a result's
		"monitored": {c.Monitored, 1},
		"approvals": {c.Approvals, 2},
		"trifecta":  {c.Trifecta, 1},
		"flagged":   {c.Withheld, 1},
	} {
		if got[0] != got[1] {
			t.Errorf("%s = %d, want %d", name, got[0], got[1])
		}
	}
	if rep.Chain.State != "intact" || rep.Chain.Records != 16 || rep.Chain.Head == "" {
		t.Errorf("chain = %+v", rep.Chain)
	}
	if len(rep.Trifecta) != 1 {
		t.Fatalf("trifecta = %+v", rep.Trifecta)
	}
	tri := rep.Trifecta[0]
	if tri.Session != "pid:4242" || tri.Private.Tool != "notes/read_note" || tri.Untrusted.Tool != "web/fetch" || len(tri.Sinks) != 2 || tri.Stopped != 2 ||
		tri.Sinks[0].Rule != "flow.exfiltration" || tri.Sinks[1].Rule != "flow.trifecta" {
		t.Errorf("trifecta session = %+v", tri)
	}
	if len(rep.Approvals) != 2 || rep.Approvals[0].Answer != "approved" || rep.Approvals[0].Latency != "4.2s" || rep.Approvals[1].Channel != "cli" {
		t.Errorf("approvals = %+v", rep.Approvals)
	}
	if len(rep.Rules) == 0 || rep.Rules[0].Rule != "flow.exfiltration" || rep.Rules[0].Total != 2 {
		t.Errorf("rules = %+v", rep.Rules)
	}
	if len(rep.Tools) == 0 || rep.Tools[0].Tool != "mail/send_email" || rep.Tools[0].Calls != 4 {
		t.Errorf("tools = %+v", rep.Tools)
	}
	tl := rep.Timeline
	if tl.Label != "per 5 minutes" || len(tl.Buckets) < 30 || tl.Max == 0 {
		t.Errorf("timeline: %s, %d buckets, max %d", tl.Label, len(tl.Buckets), tl.Max)
	}
	total := 0
	for _, b := range tl.Buckets {
		total += b.Total
	}
	if total != 14 {
		t.Errorf("timeline counts %d records, want the 14 that are not answers to escalations", total)
	}
}

// TestTrifectaNeedsBothLegsBeforeTheSink pins how the report derives the
// trifecta: legs come from results, in time order, before a sink call; a
// withheld result is no leg; flow.trifecta counts on its own.
func TestTrifectaNeedsBothLegsBeforeTheSink(t *testing.T) {
	n := 0
	rec := func(session, event, tool, verdict string, enforced bool, rule string, labels ...string) Record {
		n++ // a second apart
		return Record{Seq: int64(n), Time: FormatTime(sampleBase.Add(time.Duration(n) * time.Second)), Session: session, Server: "s", Event: event, Tool: tool,
			Verdict: verdict, Enforced: enforced, Rule: rule, Labels: labels}
	}
	recs := []Record{
		// a: the sink comes before the untrusted leg.
		rec("a", "result", "read", "allow", true, "", "private"),
		rec("a", "call", "send", "allow", true, "", "sink"),
		rec("a", "result", "fetch", "allow", true, "", "untrusted"),
		// b: the private result was withheld, so the model never saw it.
		rec("b", "result", "read", "block", true, "internal", "private"),
		rec("b", "result", "fetch", "allow", true, "", "untrusted"),
		rec("b", "call", "send", "allow", true, "", "sink"),
		// c: both legs in one result, then a sink allowed in monitor mode.
		rec("c", "result", "mixed", "allow", true, "", "private", "untrusted"),
		rec("c", "call", "send", "block", false, "flow.trifecta", "sink"),
		// d: the legs are older than the records read.
		rec("d", "call", "send", "warn", true, "flow.trifecta", "sink"),
		// e: legs in another session do not count.
		rec("e", "call", "send", "allow", true, "", "sink"),
	}
	got := trifecta(byTime(recs))
	if len(got) != 2 || got[0].Session != "c" || got[1].Session != "d" {
		t.Fatalf("trifecta sessions = %+v, want c and d", got)
	}
	if got[0].Private.Tool != "s/mixed" || got[0].Untrusted.Tool != "s/mixed" || got[0].Stopped != 0 {
		t.Errorf("c = %+v (a monitored block stops nothing)", got[0])
	}
	if got[1].Private.Tool != "" || len(got[1].Sinks) != 1 {
		t.Errorf("d = %+v", got[1])
	}
}

// TestTrifectaAcrossProxies: proxies write their records in batches, so
// the log holds them out of time order, and a result's record is stamped
// after the scan that follows relaying it, so a call through another proxy
// can be decided on its labels a few milliseconds before that stamp.
func TestTrifectaAcrossProxies(t *testing.T) {
	at := func(ms int) string { return FormatTime(sampleBase.Add(time.Duration(ms) * time.Millisecond)) }
	recs := []Record{
		// The mail proxy's batch, written first.
		{Seq: 1, Time: at(74), Session: "s", Server: "mail", Event: "call", Tool: "send", Labels: []string{"sink"}, Verdict: "escalate", Enforced: true, Rule: "flow.exfiltration"},
		{Seq: 2, Time: at(5000), Session: "s", Server: "mail", Event: "call", Tool: "send", Labels: []string{"sink"}, Verdict: "allow", Enforced: true},
		// The web and notes proxies' batches.
		{Seq: 3, Time: at(69), Session: "s", Server: "web", Event: "call", Tool: "fetch", Labels: []string{"untrusted"}, Verdict: "allow", Enforced: true},
		{Seq: 4, Time: at(71), Session: "s", Server: "web", Event: "result", Tool: "fetch", Labels: []string{"untrusted"}, Verdict: "allow", Enforced: true},
		{Seq: 5, Time: at(72), Session: "s", Server: "notes", Event: "call", Tool: "read", Labels: []string{"private"}, Verdict: "allow", Enforced: true},
		{Seq: 6, Time: at(78), Session: "s", Server: "notes", Event: "result", Tool: "read", Labels: []string{"private"}, Verdict: "allow", Enforced: true},
		// Another session's sink, before its own untrusted result by more
		// than the slack: it did not hold the trifecta.
		{Seq: 7, Time: at(100), Session: "t", Server: "notes", Event: "result", Tool: "read", Labels: []string{"private"}, Verdict: "allow", Enforced: true},
		{Seq: 8, Time: at(200), Session: "t", Server: "mail", Event: "call", Tool: "send", Labels: []string{"sink"}, Verdict: "allow", Enforced: true},
		{Seq: 9, Time: at(900), Session: "t", Server: "web", Event: "result", Tool: "fetch", Labels: []string{"untrusted"}, Verdict: "allow", Enforced: true},
	}
	got := trifecta(byTime(recs))
	if len(got) != 1 || got[0].Session != "s" || len(got[0].Sinks) != 2 || got[0].Sinks[0].Seq != 1 || got[0].Stopped != 1 ||
		got[0].Private.Tool != "notes/read" || got[0].Untrusted.Tool != "web/fetch" {
		t.Fatalf("trifecta = %+v, want session s with both sink calls", got)
	}
}

func TestReportHTMLEscapesAndIsSelfContained(t *testing.T) {
	path := writeSample(t, sampleTime)
	rep, err := NewReport([]string{path}, ReportOptions{Product: "weir test"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<img", "<script", "<link", "<iframe", `src="`, `href="`, "http://", "https://", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	for _, want := range []string{
		`&lt;img src=x onerror=alert(1)&gt;`,
		`&lt;IMPORTANT&gt; markup`,
		`id="count-calls">9<`, `id="count-block">3<`, `id="count-trifecta">1<`,
		`data-state="intact"`, `data-session="pid:4242"`,
		`<svg id="timeline-chart"`, `class="approval-row"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`<rect class="bar"`).FindAllString(page, -1)); n < 10 {
		t.Errorf("the timeline has %d bars", n)
	}
}

func TestReportBrokenChain(t *testing.T) {
	path := writeSample(t, sampleTime)
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"verdict":"block"`), []byte(`"verdict":"allow"`), 1)
	os.WriteFile(path, data, 0o600)
	rep, err := NewReport([]string{path}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chain.State != "broken" || !strings.Contains(rep.Chain.Message, "line 2") || !strings.Contains(rep.Chain.Message, "hash mismatch") {
		t.Errorf("chain = %+v", rep.Chain)
	}
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-state="broken"`) || !strings.Contains(b.String(), "NOT intact") {
		t.Error("the page does not say the chain is broken")
	}
}

func TestReportEmptyAndSince(t *testing.T) {
	path := writeSample(t, sampleTime)
	rep, err := NewReport([]string{path}, ReportOptions{Since: sampleBase.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.Records != 0 || rep.Chain.Records != 16 {
		t.Fatalf("records %d, chain %d", rep.Counts.Records, rep.Chain.Records)
	}
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No decisions in this period", "No session held the lethal trifecta", `id="count-records">0<`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the empty report lacks %q", want)
		}
	}
	// Since the sink calls of pid:4242: its legs are older, and the
	// flow.trifecta verdict alone still names it.
	rep, err = NewReport([]string{path}, ReportOptions{Since: sampleTime(7)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.Records != 9 || len(rep.Trifecta) != 1 || rep.Trifecta[0].Private.Tool != "" {
		t.Errorf("since record 8: %d records, trifecta %+v", rep.Counts.Records, rep.Trifecta)
	}
}

func TestTimelineBuckets(t *testing.T) {
	for _, c := range []struct {
		span  time.Duration
		label string
	}{
		{30 * time.Second, "per minute"},
		{50 * time.Minute, "per minute"},
		{3 * time.Hour, "per 5 minutes"},
		{2 * 24 * time.Hour, "per hour"},
		{10 * 24 * time.Hour, "per 6 hours"},
		{40 * 24 * time.Hour, "per day"},
		{400 * 24 * time.Hour, "per week"},
	} {
		recs := []Record{{Time: FormatTime(sampleBase), Verdict: "allow"}, {Time: FormatTime(sampleBase.Add(c.span)), Verdict: "block"}}
		tl := timeline(recs)
		if tl.Label != c.label {
			t.Errorf("span %v: %s, want %s", c.span, tl.Label, c.label)
		}
		if len(tl.Buckets) > maxBuckets && c.label != "per week" {
			t.Errorf("span %v: %d buckets", c.span, len(tl.Buckets))
		}
		if tl.Buckets[0].Verdicts["allow"] != 1 || tl.Buckets[len(tl.Buckets)-1].Verdicts["block"] != 1 {
			t.Errorf("span %v: first and last buckets %+v %+v", c.span, tl.Buckets[0], tl.Buckets[len(tl.Buckets)-1])
		}
	}
}
