package audit

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Verdicts, least severe first: the words Record.Verdict holds.
var Verdicts = []string{"allow", "warn", "redact", "escalate", "block"}

// ChainStatus is what verifying the log said, for a report's header.
type ChainStatus struct {
	State   string // "intact", "torn" (intact, but a write was cut short) or "broken"
	Message string // for a person: what was found, and where
	Records int    // records that verified
	Head    string // hash of the last verified record
	Files   []string
}

// Report is what `weir audit report` shows: the decisions in a log (or the
// part of it since a time), counted and grouped. It is built from records
// alone, which hold labels, shapes and keyed hashes, so nothing in it is an
// argument value or result text. [NewReport] builds one, [Report.WriteHTML]
// renders it.
type Report struct {
	Generated string // when the report was made (RFC 3339)
	Since     string // the lower time bound, "" for the whole log
	Product   string // e.g. "weir dev"
	Chain     ChainStatus

	First, Last string // times of the first and last record shown
	Counts      Counts
	Timeline    Timeline
	Rules       []RuleRow // decisions by the rule that made them (answers to escalations are in Approvals)
	Tools       []ToolRow
	Trifecta    []TrifectaSession
	Approvals   []ApprovalRow
	Answers     []Count // approvals by answer
	Definitions []DefinitionRow
}

// Counts are the report's headline numbers.
type Counts struct {
	Records    int
	Sessions   int
	Servers    int
	Calls      int // tools/call decisions (event "call")
	Verdicts   map[string]int
	Monitored  int // calls decided to stop but not enforced (monitor mode)
	Approvals  int // records of escalations put to a person
	Trifecta   int // sessions that held the lethal trifecta
	Withheld   int // tool definitions flagged (poisoning, rug pulls)
	BlockedPct string
}

// Count is a labelled number.
type Count struct {
	Name string
	N    int
}

// Timeline is the decisions per time bucket, stacked by verdict.
type Timeline struct {
	Bucket  time.Duration
	Label   string // "per 5 minutes", "per hour", …
	Buckets []Bucket
	Max     int // the largest bucket's total
}

// Bucket is one bar of the timeline.
type Bucket struct {
	Start    time.Time
	Verdicts map[string]int
	Total    int
}

// RuleRow is one rule and the verdicts it gave.
type RuleRow struct {
	Rule     string
	Verdicts map[string]int
	Total    int
}

// ToolRow is one tool: how often it was called and what Weir decided.
type ToolRow struct {
	Tool     string // server/tool
	Labels   string // its labels, as the calls carried them
	Verdicts map[string]int
	Calls    int
}

// TrifectaSession is a session that held the lethal trifecta: private data
// and untrusted input in its results, then a call to a sink.
type TrifectaSession struct {
	Session   string
	Private   Step   // the first result labelled private
	Untrusted Step   // the first result labelled untrusted
	Sinks     []Step // the sink calls made while the session held both legs
	Stopped   int    // how many of them were blocked or escalated (and enforced)
}

// Step is one record of a session, as the report shows it.
type Step struct {
	Seq      int64
	Time     string
	Tool     string // server/tool
	Verdict  string
	Enforced bool
	Rule     string
	Reason   string
}

// ApprovalRow is one answer (or refusal) on an escalated call.
type ApprovalRow struct {
	Time       string
	Session    string
	Tool       string
	Channel    string
	Answer     string
	AnsweredBy string
	Latency    string // "" when not answered
	Rule       string
}

// DefinitionRow is a tool definition or server instructions Weir flagged.
type DefinitionRow struct {
	Time    string
	Tool    string
	Verdict string
	Rule    string
	Reason  string
}

// ReportOptions say what a report covers.
type ReportOptions struct {
	Since   time.Time // records from this time on; zero for all
	Now     time.Time // the report's time; zero for time.Now()
	Product string    // names the build in the footer
	Chain   ChainStatus
	TopN    int // rows in the top tools; 0 for 15
}

// NewReport verifies the log held in files (oldest first, as [Files] lists
// them) and builds a report of its records since opts.Since. A chain that
// does not verify is not an error: the report says so in its header, and
// shows what the files hold.
func NewReport(files []string, opts ReportOptions) (*Report, error) {
	opts.Chain = CheckChain(files)
	var recs []Record
	err := ReadFiles(files, opts.Since, func(r *Record, _ []byte) error {
		recs = append(recs, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return BuildReport(recs, opts), nil
}

// CheckChain verifies files as one chain, from Genesis, and says what it
// found.
func CheckChain(files []string) ChainStatus {
	st := ChainStatus{Files: files}
	sums, err := VerifyFiles(files, FromGenesis)
	for _, s := range sums {
		st.Records += s.Records
		if s.Head != "" {
			st.Head = s.Head
		}
	}
	var ve *VerifyError
	switch {
	case err == nil:
		st.State = "intact"
		st.Message = fmt.Sprintf("intact: %d records chain from the first without a break", st.Records)
		if len(files) > 1 {
			st.Message += fmt.Sprintf(", across %d files", len(files))
		}
	case errors.As(err, &ve) && ve.Torn:
		st.State = "torn"
		st.Message = fmt.Sprintf("intact, %d records, but a write was cut short: %s", st.Records, ve.Error())
	default:
		st.State = "broken"
		st.Message = "NOT intact: " + err.Error()
	}
	return st
}

// BuildReport counts and groups recs into a report.
//
// The records are taken in the order of their times, not of their place in
// the log: each proxy buffers its records and appends them in batches, so
// a decision of one proxy can be written after a later decision of another
// (the chain orders the writes, the times order the decisions). Records of
// one time keep their log order.
func BuildReport(recs []Record, opts ReportOptions) *Report {
	recs = byTime(recs)
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	topN := cmp.Or(opts.TopN, 15)
	rep := &Report{Generated: FormatTime(now), Product: opts.Product, Chain: opts.Chain}
	if !opts.Since.IsZero() {
		rep.Since = FormatTime(opts.Since)
	}
	c := &rep.Counts
	c.Verdicts = map[string]int{}
	sessions, servers := map[string]bool{}, map[string]bool{}
	rules := map[string]*RuleRow{}
	tools := map[string]*ToolRow{}
	answers := map[string]int{}
	for i := range recs {
		r := &recs[i]
		if i == 0 {
			rep.First = r.Time
		}
		rep.Last = r.Time
		c.Records++
		sessions[r.Session], servers[r.Server] = true, true
		v := verdictOf(r)
		if r.Rule != "" && r.Event != "approval" {
			row := rules[r.Rule]
			if row == nil {
				row = &RuleRow{Rule: r.Rule, Verdicts: map[string]int{}}
				rules[r.Rule] = row
			}
			row.Verdicts[v]++
			row.Total++
		}
		switch r.Event {
		case "call":
			c.Calls++
			c.Verdicts[v]++
			if !r.Enforced && (v == "block" || v == "escalate") {
				c.Monitored++
			}
			name := r.Server + "/" + r.Tool
			row := tools[name]
			if row == nil {
				row = &ToolRow{Tool: name, Verdicts: map[string]int{}}
				tools[name] = row
			}
			row.Calls++
			row.Verdicts[v]++
			if len(r.Labels) > 0 {
				row.Labels = strings.Join(r.Labels, ", ")
			}
		case "approval":
			c.Approvals++
			answers[cmp.Or(r.Answer, "unknown")]++
			a := ApprovalRow{Time: r.Time, Session: r.Session, Tool: r.Server + "/" + r.Tool, Channel: r.Channel,
				Answer: r.Answer, AnsweredBy: r.AnsweredBy, Rule: r.Rule}
			if r.LatencyMS != nil {
				a.Latency = latency(*r.LatencyMS)
			}
			rep.Approvals = append(rep.Approvals, a)
		case "definition", "instructions", "list":
			if v != "allow" {
				c.Withheld++
				rep.Definitions = append(rep.Definitions, DefinitionRow{Time: r.Time, Tool: r.Server + "/" + cmp.Or(r.Tool, r.Event),
					Verdict: v, Rule: r.Rule, Reason: r.Reason})
			}
		}
	}
	c.Sessions, c.Servers = len(sessions), len(servers)
	if c.Calls > 0 {
		c.BlockedPct = fmt.Sprintf("%.1f%%", 100*float64(c.Verdicts["block"])/float64(c.Calls))
	}

	rep.Rules = sortedRows(rules, func(r *RuleRow) (int, string) { return r.Total, r.Rule })
	rep.Tools = sortedRows(tools, func(r *ToolRow) (int, string) { return r.Calls, r.Tool })
	if len(rep.Tools) > topN {
		rep.Tools = rep.Tools[:topN]
	}
	for _, name := range slices.Sorted(maps.Keys(answers)) {
		rep.Answers = append(rep.Answers, Count{name, answers[name]})
	}
	rep.Trifecta = trifecta(recs)
	c.Trifecta = len(rep.Trifecta)
	rep.Timeline = timeline(recs)
	return rep
}

// latency says how long an answer took: to the millisecond under a
// second, to a tenth of a second above.
func latency(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return d.String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// byTime returns recs sorted by time (a time that does not parse sorts
// first), records of one time in log order.
func byTime(recs []Record) []Record {
	type keyed struct {
		t time.Time
		r *Record
	}
	ks := make([]keyed, len(recs))
	for i := range recs {
		t, _ := RecordTime(&recs[i])
		ks[i] = keyed{t, &recs[i]}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return a.t.Compare(b.t) })
	out := make([]Record, len(recs))
	for i, k := range ks {
		out[i] = *k.r
	}
	return out
}

// verdictOf is r's verdict, one of Verdicts ("allow" for one Weir does not
// know, so that every record is counted once).
func verdictOf(r *Record) string {
	if slices.Contains(Verdicts, r.Verdict) {
		return r.Verdict
	}
	return "allow"
}

// sortedRows returns the rows, largest first, then by name.
func sortedRows[R any](m map[string]*R, key func(*R) (int, string)) []R {
	rows := slices.Collect(maps.Values(m))
	slices.SortFunc(rows, func(a, b *R) int {
		na, sa := key(a)
		nb, sb := key(b)
		return cmp.Or(cmp.Compare(nb, na), cmp.Compare(sa, sb))
	})
	out := make([]R, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out
}

// legSlack is how long before its record's time a result may already have
// been in its session: the relay records a result after the injection scan
// that follows relaying it, so another proxy of the session can decide a
// call on its labels a little before the result's record is stamped.
const legSlack = 250 * time.Millisecond

// trifecta finds the sessions that held the lethal trifecta, from the
// records alone.
//
// A session's legs are read from its "result" records: the relay records a
// tool result with the labels it entered the session with (after any
// declassification, and including what the injection scan raised), so a
// result record labelled private is private data the model has seen, and
// one labelled untrusted is untrusted input it has seen. A result Weir
// withheld (verdict block, enforced) never reached the model and is no
// leg. All proxies of one client share the session key and the log, so a
// leg read through one server counts for a sink called through another.
//
// Order comes from the records' times, not their place in the log (each
// proxy appends its records in batches, so the log interleaves proxies
// out of time order), with legSlack for the lag of a result's record. The
// session holds both legs from the later of its first private and first
// untrusted result; every call to a tool labelled sink made from then on
// (less legSlack) is a sink call made while holding the trifecta, listed
// with what Weir decided. A record whose rule is flow.trifecta (the
// engine's own verdict that the session held both legs) counts too,
// whether or not its legs' results are in the records read: with --since
// they may be older.
//
// recs must be in time order (see byTime).
func trifecta(recs []Record) []TrifectaSession {
	type legs struct {
		private, untrusted *Step
		since              time.Time // when both were held, less legSlack; zero until then
	}
	stepOf := func(r *Record) Step {
		return Step{Seq: r.Seq, Time: r.Time, Tool: r.Server + "/" + r.Tool, Verdict: verdictOf(r), Enforced: r.Enforced, Rule: r.Rule, Reason: r.Reason}
	}
	bySession := map[string]*legs{}
	for i := range recs {
		r := &recs[i]
		if r.Event != "result" || (verdictOf(r) == "block" && r.Enforced) {
			continue
		}
		l := bySession[r.Session]
		if l == nil {
			l = &legs{}
			bySession[r.Session] = l
		}
		step := stepOf(r)
		if l.private == nil && slices.Contains(r.Labels, "private") {
			l.private = &step
		}
		if l.untrusted == nil && slices.Contains(r.Labels, "untrusted") {
			l.untrusted = &step
		}
		if l.since.IsZero() && l.private != nil && l.untrusted != nil {
			t, _ := RecordTime(r)
			l.since = t.Add(-legSlack)
		}
	}
	held := map[string]*TrifectaSession{}
	var out []*TrifectaSession
	for i := range recs {
		r := &recs[i]
		if r.Event != "call" {
			continue
		}
		l := bySession[r.Session]
		t, _ := RecordTime(r)
		holding := l != nil && !l.since.IsZero() && !t.Before(l.since) && slices.Contains(r.Labels, "sink")
		if !holding && r.Rule != "flow.trifecta" {
			continue
		}
		s := held[r.Session]
		if s == nil {
			s = &TrifectaSession{Session: r.Session}
			if l != nil && l.private != nil {
				s.Private = *l.private
			}
			if l != nil && l.untrusted != nil {
				s.Untrusted = *l.untrusted
			}
			held[r.Session] = s
			out = append(out, s)
		}
		step := stepOf(r)
		s.Sinks = append(s.Sinks, step)
		if r.Enforced && (step.Verdict == "block" || step.Verdict == "escalate") {
			s.Stopped++
		}
	}
	res := make([]TrifectaSession, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res
}

// bucketSizes are the timeline's bucket widths, smallest first; the first
// that makes at most maxBuckets bars is used.
var bucketSizes = []struct {
	d     time.Duration
	label string
}{
	{time.Minute, "per minute"},
	{5 * time.Minute, "per 5 minutes"},
	{15 * time.Minute, "per 15 minutes"},
	{time.Hour, "per hour"},
	{6 * time.Hour, "per 6 hours"},
	{24 * time.Hour, "per day"},
	{7 * 24 * time.Hour, "per week"},
}

const maxBuckets = 60

// timeline counts the decisions in recs (every record but the answers to
// escalations) per bucket of time, by verdict.
func timeline(recs []Record) Timeline {
	var first, last time.Time
	for i := range recs {
		t, ok := RecordTime(&recs[i])
		if !ok || recs[i].Event == "approval" {
			continue
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	if first.IsZero() {
		return Timeline{}
	}
	size := bucketSizes[len(bucketSizes)-1]
	for _, s := range bucketSizes {
		if int(last.Sub(first.Truncate(s.d))/s.d)+1 <= maxBuckets {
			size = s
			break
		}
	}
	start := first.Truncate(size.d)
	n := int(last.Sub(start)/size.d) + 1
	tl := Timeline{Bucket: size.d, Label: size.label, Buckets: make([]Bucket, n)}
	for i := range tl.Buckets {
		tl.Buckets[i] = Bucket{Start: start.Add(time.Duration(i) * size.d), Verdicts: map[string]int{}}
	}
	for i := range recs {
		t, ok := RecordTime(&recs[i])
		if !ok || recs[i].Event == "approval" {
			continue
		}
		b := &tl.Buckets[min(int(t.Sub(start)/size.d), n-1)]
		b.Verdicts[verdictOf(&recs[i])]++
		b.Total++
		tl.Max = max(tl.Max, b.Total)
	}
	return tl
}
