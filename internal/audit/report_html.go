package audit

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"
)

//go:embed report.html.tmpl
var reportTemplate string

// reportPage is the report's HTML, parsed once. html/template escapes
// everything the log holds (tool names and reasons come from servers and
// policies, and may carry markup) for the context it lands in.
var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"f1":      func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"color":   verdictColor,
	"upper":   strings.ToUpper,
	"nounder": func(s string) string { return strings.ReplaceAll(s, "_", " ") },
	"shorthash": func(h string) string {
		if len(h) > 16 {
			return h[:16] + "…"
		}
		return h
	},
}).Parse(reportTemplate))

// verdictColors are the verdicts' colours in every chart.
var verdictColors = map[string]string{
	"allow":    "#3a9b5c",
	"warn":     "#d89b1d",
	"redact":   "#3b7dd8",
	"escalate": "#8e5bd8",
	"block":    "#d64545",
}

func verdictColor(v string) string {
	if c, ok := verdictColors[v]; ok {
		return c
	}
	return "#888888"
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS,
// charts as inline SVG drawn here, no script, no font, no image or other
// asset fetched from anywhere (its Content-Security-Policy forbids it).
func (r *Report) WriteHTML(w io.Writer) error {
	v := htmlView{Report: r, Verdicts: Verdicts}
	v.Timeline = timelineChart(r.Timeline)
	for _, row := range r.Rules {
		v.RuleBars = append(v.RuleBars, bar(row.Rule, "", row.Verdicts, row.Total, maxTotal(r.Rules, func(x RuleRow) int { return x.Total })))
	}
	for _, row := range r.Tools {
		v.ToolBars = append(v.ToolBars, bar(row.Tool, row.Labels, row.Verdicts, row.Calls, maxTotal(r.Tools, func(x ToolRow) int { return x.Calls })))
	}
	for _, name := range Verdicts {
		v.CallVerdicts = append(v.CallVerdicts, Count{name, r.Counts.Verdicts[name]})
	}
	if err := reportPage.Execute(w, v); err != nil {
		return fmt.Errorf("audit: report: %w", err)
	}
	return nil
}

// htmlView is what the template reads: the report and its charts' shapes.
type htmlView struct {
	*Report
	Verdicts     []string
	CallVerdicts []Count
	Timeline     chart
	RuleBars     []barRow
	ToolBars     []barRow
}

type rect struct {
	X, Y, W, H float64
	Fill       string
	Title      string
}

type tick struct {
	X, Y  float64
	Label string
}

type chart struct {
	W, H         float64
	Left, Bottom float64 // the plot's left edge and baseline
	Rects        []rect
	YTicks       []tick
	XTicks       []tick
}

type barRow struct {
	Name   string
	Labels string
	Total  int
	Rects  []rect
	Counts []Count // non-zero verdicts, in order
}

const barWidth = 320.0

// bar is one row's stacked bar, scaled so that the largest row fills it.
func bar(name, labels string, verdicts map[string]int, total, largest int) barRow {
	row := barRow{Name: name, Labels: labels, Total: total}
	x := 0.0
	for _, v := range Verdicts {
		n := verdicts[v]
		if n == 0 {
			continue
		}
		w := barWidth * float64(n) / float64(max(largest, 1))
		row.Rects = append(row.Rects, rect{X: x, W: w, H: 14, Fill: verdictColor(v), Title: fmt.Sprintf("%s: %d", v, n)})
		row.Counts = append(row.Counts, Count{v, n})
		x += w
	}
	return row
}

func maxTotal[R any](rows []R, n func(R) int) int {
	m := 0
	for _, r := range rows {
		m = max(m, n(r))
	}
	return m
}

// timelineChart lays out the timeline as stacked bars, allow at the bottom
// and block on top, with a few labels on each axis.
func timelineChart(tl Timeline) chart {
	c := chart{W: 1000, H: 240, Left: 48, Bottom: 200}
	if len(tl.Buckets) == 0 || tl.Max == 0 {
		return c
	}
	plotW, plotH := c.W-c.Left-8, c.Bottom-10
	slot := plotW / float64(len(tl.Buckets))
	w := min(slot-min(slot*0.2, 4), 56) // a few buckets make wide slots, not wide bars
	for i, b := range tl.Buckets {
		x := c.Left + float64(i)*slot + (slot-w)/2
		y := c.Bottom
		for _, v := range Verdicts {
			n := b.Verdicts[v]
			if n == 0 {
				continue
			}
			h := plotH * float64(n) / float64(tl.Max)
			y -= h
			c.Rects = append(c.Rects, rect{X: x, Y: y, W: w, H: h, Fill: verdictColor(v),
				Title: fmt.Sprintf("%s: %d %s", bucketLabel(b.Start, tl.Bucket, true), n, v)})
		}
	}
	for _, f := range []float64{0, 0.5, 1} {
		n := int(float64(tl.Max)*f + 0.5)
		c.YTicks = append(c.YTicks, tick{X: c.Left - 6, Y: c.Bottom - plotH*float64(n)/float64(tl.Max), Label: strconv.Itoa(n)})
	}
	every := max(1, (len(tl.Buckets)+7)/8)
	for i := 0; i < len(tl.Buckets); i += every {
		c.XTicks = append(c.XTicks, tick{X: c.Left + (float64(i)+0.5)*slot, Y: c.Bottom + 18, Label: bucketLabel(tl.Buckets[i].Start, tl.Bucket, i == 0)})
	}
	return c
}

// bucketLabel names a bucket by its start, in UTC: the time of day for
// buckets under a day (with the date on the first), the date otherwise.
func bucketLabel(t time.Time, size time.Duration, withDate bool) string {
	t = t.UTC()
	switch {
	case size >= 24*time.Hour:
		return t.Format("Jan 2")
	case withDate:
		return t.Format("Jan 2 15:04")
	default:
		return t.Format("15:04")
	}
}
