package scan

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for people, as `weir scan` prints it: each
// file, each server with its tools, labels, findings and notes, the
// trifecta verdict, then the summary and the exit status (set by Finish).
// color adds ANSI colours, for a terminal.
func (r Report) WriteText(w io.Writer, color bool) error {
	bw := bufio.NewWriter(w)
	p := &textPrinter{w: bw, color: color}
	p.report(r)
	return bw.Flush()
}

// textPrinter renders a scan report for people.
type textPrinter struct {
	w     io.Writer
	color bool
}

func (p *textPrinter) paint(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *textPrinter) severity(s string) string {
	switch s {
	case "high":
		return p.paint("1;31", "HIGH  ")
	case "medium":
		return p.paint("33", "MEDIUM")
	case "low":
		return p.paint("36", "LOW   ")
	}
	return strings.ToUpper(s)
}

func (p *textPrinter) report(rep Report) {
	for i, c := range rep.Configs {
		if i > 0 {
			fmt.Fprintln(p.w)
		}
		p.config(c)
	}
	if len(rep.Configs) > 0 {
		fmt.Fprintln(p.w)
	}
	verdict := p.paint("32", "OK")
	switch rep.ExitCode {
	case ExitFindings:
		verdict = p.paint("1;31", fmt.Sprintf("FAIL: findings at or above %s", rep.FailOn))
	case ExitUsage:
		verdict = p.paint("1;31", "ERROR: a configuration file could not be read")
	case ExitUnreachable:
		verdict = p.paint("33", "INCOMPLETE: some servers could not be scanned")
	}
	fmt.Fprintf(p.w, "%s\n%s (exit %d)\n", rep.Summary, verdict, rep.ExitCode)
}

func (p *textPrinter) config(c ConfigReport) {
	name := c.ClientName
	if name == "" {
		name = "MCP client"
	}
	if c.Scope != "" {
		name += " (" + c.Scope + ")"
	}
	fmt.Fprintf(p.w, "%s %s\n", p.paint("1", name), c.Path)
	if c.Error != "" {
		fmt.Fprintf(p.w, "  %s %s\n", p.paint("1;31", "cannot read:"), c.Error)
		return
	}
	if len(c.Servers) == 0 {
		fmt.Fprintln(p.w, "  no MCP servers")
		return
	}
	for _, s := range c.Servers {
		p.server(s)
	}
	p.trifecta(c.Trifecta)
}

func (p *textPrinter) server(s ServerReport) {
	var head []string
	if s.Project != "" {
		head = append(head, "project "+s.Project)
	}
	head = append(head, s.Transport)
	switch s.Status {
	case StatusScanned:
		if s.Info != nil && s.Info.Name != "" {
			head = append(head, strings.TrimSpace(s.Info.Name+" "+s.Info.Version))
		}
		head = append(head, count(len(s.Tools), "tool"))
		if n := len(s.Prompts); n > 0 {
			head = append(head, count(n, "prompt"))
		}
		if n := len(s.Resources); n > 0 {
			head = append(head, count(n, "resource"))
		}
		if s.Wrapped {
			head = append(head, p.paint("32", "behind Weir"))
		} else {
			head = append(head, "not behind Weir")
		}
	case StatusSkipped:
		head = append(head, p.paint("2", "skipped: "+s.Error))
	default:
		head = append(head, p.paint("1;31", strings.ToUpper(s.Status)+": "+s.Error))
	}
	line := fmt.Sprintf("  %s  %s", p.paint("1", s.Name), strings.Join(head, " · "))
	if s.Line > 0 {
		line += p.paint("2", fmt.Sprintf("  (line %d)", s.Line))
	}
	fmt.Fprintln(p.w, line)
	if s.Stderr != "" {
		for _, l := range strings.Split(s.Stderr, "\n") {
			fmt.Fprintf(p.w, "      %s %s\n", p.paint("2", "stderr:"), l)
		}
	}
	for _, n := range s.Notes {
		fmt.Fprintf(p.w, "      note: %s\n", n)
	}
	width := 0
	for _, t := range s.Tools {
		width = max(width, len(t.Name))
	}
	for _, t := range s.Tools {
		labels := strings.Join(t.Labels, ", ")
		if labels == "" {
			labels = "-"
		}
		pin := ""
		if t.Pin != PinUnknown && t.Pin != "" {
			pin = "  pin " + t.Pin
			if t.Pin == PinChanged {
				pin = p.paint("1;31", pin)
			}
		}
		why := ""
		if len(t.Why) > 0 {
			why = "  " + p.paint("2", strings.Join(t.Why, "; "))
		}
		fmt.Fprintln(p.w, strings.TrimRight(fmt.Sprintf("    %-*s  %-16s%s%s", width, t.Name, labels, pin, why), " "))
		for _, f := range t.Findings {
			p.finding(f)
		}
	}
	for _, f := range s.Findings {
		p.finding(f)
	}
}

func (p *textPrinter) finding(f Finding) {
	ev := ""
	if f.Evidence != "" {
		ev = fmt.Sprintf(" %q", f.Evidence)
	}
	fmt.Fprintf(p.w, "      %s %s in %s%s\n", p.severity(f.Severity), f.Detector, f.Field, ev)
	fmt.Fprintf(p.w, "             %s\n", f.Message)
}

func (p *textPrinter) trifecta(t Trifecta) {
	if !t.Known {
		// No legs to list: "none" under each would read as absent.
		fmt.Fprintf(p.w, "  %s %s\n", p.paint("1", "lethal trifecta:"), p.paint("33", "UNKNOWN, no server could be scanned"))
		fmt.Fprintf(p.w, "    %s\n", t.Summary)
		return
	}
	state := p.paint("32", "absent")
	switch {
	case t.Present && len(t.Unguarded) > 0:
		state = p.paint("1;31", "PRESENT, not behind Weir")
	case t.Present:
		state = p.paint("33", "present, every leg behind Weir")
	}
	fmt.Fprintf(p.w, "  %s %s\n", p.paint("1", "lethal trifecta:"), state)
	leg := func(name string, tools []string) {
		if len(tools) == 0 {
			fmt.Fprintf(p.w, "    %-10s %s\n", name, p.paint("2", "none"))
			return
		}
		fmt.Fprintf(p.w, "    %-10s %s\n", name, strings.Join(tools, ", "))
	}
	leg("private", t.Private)
	leg("untrusted", t.Untrusted)
	leg("sink", t.Sink)
	fmt.Fprintf(p.w, "    %s\n", t.Summary)
}
