package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

// Exit statuses of weir scan.
const (
	scanOK          = 0 // nothing at or above --fail-on, every server scanned
	scanFindings    = 1 // a finding at or above --fail-on
	scanUsage       = 2 // bad flags, or a configuration or policy file that cannot be read or parsed
	scanUnreachable = 3 // some server could not be scanned, and neither 1 nor 2 applies
)

func newScanCmd() *cobra.Command {
	var (
		format, outFile, failOn, policyFile string
		timeout                             time.Duration
		remote                              bool
		concurrency                         int
	)
	cmd := &cobra.Command{
		Use:   "scan [CONFIG...] [--format text|json|sarif] [-o FILE] [--fail-on low|medium|high] [--timeout 15s] [--remote] [--policy FILE]",
		Short: "Audit the MCP servers your clients start: labels, poisoned tools, the lethal trifecta",
		Long: `Scan reads MCP client configuration files — the ones weir clients lists, or
the CONFIG files named — and launches every stdio server in them the way the
client would (its command, arguments, env and cwd; for an entry already
behind weir run, the server behind it). It initializes each, lists its tools,
prompts and resources, and shuts it down. A server that hangs, crashes or
writes something other than JSON-RPC is stopped (with everything it started)
when --timeout runs out, and reported with the reason. Servers are scanned a
few at a time.

For each tool it reports the labels Weir would give it and why (private,
untrusted, sink; from --policy, else $WEIR_HOME/policy.yaml, else the default
preset; an entry wrapped with its own --policy is labelled with that), and
what the tool-poisoning detectors find in its definition, with the evidence.
For each file it gives the lethal-trifecta verdict: which tools supply
private data, untrusted input and a way out, and whether every server
supplying a leg runs behind Weir. The trifecta counts as a high finding
while some of those servers do not, and as a low one once all do.

Remote (HTTP and SSE) servers are listed, and contacted only with --remote.
Disabled entries and servers a client provides itself are not started.

Formats: text (colour on a terminal), json (stable: keys sorted, fields
documented in internal/clients), sarif (SARIF 2.1.0 for code scanning: one
rule per detector plus lethal-trifecta and server-unreachable, each result at
the line of the server's entry in the file).

Exit status:
  0  no finding at or above --fail-on, and every server that was started
     could be scanned
  1  a finding at or above --fail-on (default high), the trifecta verdict
     included
  2  usage error, or a configuration or policy file that cannot be read or
     parsed (the other files are still scanned and reported)
  3  some server could not be scanned (did not start, crashed, hung, wrote
     garbage, or its entry cannot be started as written), and neither 1
     nor 2 applies
When several apply, 2 wins over 1, and 1 over 3.`,
		Example: `  weir scan
  weir scan ~/.cursor/mcp.json --fail-on medium
  weir scan .mcp.json --format sarif -o weir.sarif
  weir scan --format json | jq '.configs[].trifecta'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" && format != "sarif" {
				return &exitError{code: scanUsage, err: fmt.Errorf("unknown --format %q; want text, json or sarif", format)}
			}
			threshold, ok := severityOf(failOn)
			if !ok {
				return &exitError{code: scanUsage, err: fmt.Errorf("unknown --fail-on %q; want low, medium or high", failOn)}
			}
			if timeout <= 0 {
				return &exitError{code: scanUsage, err: fmt.Errorf("--timeout must be positive")}
			}
			home := weirHomePath()
			pol, err := policyfile.Resolve(policyFile, home)
			if err != nil {
				return &exitError{code: scanUsage, err: err}
			}
			opts := clients.ScanOptions{Policy: pol, Timeout: timeout, Remote: remote, Concurrency: concurrency}
			if policyFile == "" {
				// Entries wrapped with their own --policy are labelled
				// with it, as their weir run would.
				opts.PolicyFor = func(f string) (*policy.Policy, error) { return policyfile.Resolve(f, home) }
			}
			if ps := pinStatus(cmd.Context(), home); ps != nil {
				opts.PinStatus = ps.status
				defer ps.close()
			}

			configs := loadConfigs(args)
			if len(args) == 0 && len(configs) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "weir scan: no MCP client configuration found in the usual places; name one: weir scan PATH")
			}
			progress := isTerminal(os.Stderr) && outFile == ""
			var reports []clients.ConfigReport
			for _, c := range configs {
				if c.err != nil {
					reports = append(reports, clients.ConfigReport{Client: c.loc.Client.ID, ClientName: c.loc.Client.Name, Scope: c.loc.Scope,
						Format: c.loc.Format, Path: c.loc.Path, Error: c.err.Error(), Servers: []clients.ServerReport{}, Trifecta: clients.AssessTrifecta(nil)})
					continue
				}
				if progress {
					fmt.Fprintf(os.Stderr, "scanning %s (%d servers)…\r", c.loc.Path, len(c.cfg.Servers))
				}
				reports = append(reports, clients.ScanConfig(cmd.Context(), c.cfg, opts))
				if progress {
					fmt.Fprint(os.Stderr, "\x1b[2K\r")
				}
			}
			rep := clients.NewReport(reports)
			code := scanOK
			if rep.Summary.Failed+rep.Summary.Invalid > 0 {
				code = scanUnreachable
			}
			if highest, _ := severityOf(rep.Summary.Highest); highest >= threshold {
				code = scanFindings
			}
			if rep.Summary.ConfigErrors > 0 {
				code = scanUsage
			}
			rep.Weir, rep.FailOn, rep.ExitCode = version, failOn, code

			var out []byte
			switch format {
			case "json":
				out, err = rep.JSON()
			case "sarif":
				out, err = rep.SARIF(version)
			default:
				var b strings.Builder
				w := io.Writer(cmd.OutOrStdout())
				if outFile != "" {
					w = &b
				}
				tp := &scanPrinter{w: w, color: outFile == "" && isTerminal(w)}
				tp.report(rep, threshold)
				out = []byte(b.String())
			}
			if err != nil {
				return &exitError{code: scanUsage, err: err}
			}
			switch {
			case outFile != "":
				if err := os.WriteFile(outFile, out, 0o644); err != nil {
					return &exitError{code: scanUsage, err: err}
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "weir scan: wrote %s (%s)\n", outFile, summaryLine(rep))
			case format != "text":
				if _, err := cmd.OutOrStdout().Write(out); err != nil {
					return err
				}
			}
			for _, c := range rep.Configs {
				if c.Error != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "weir scan: %s\n", c.Error)
				}
			}
			if code != scanOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json or sarif")
	cmd.Flags().StringVarP(&outFile, "output", "o", "", "write the report to FILE instead of stdout")
	cmd.Flags().StringVar(&failOn, "fail-on", "high", "exit 1 on a finding of this severity or higher: low, medium or high")
	cmd.Flags().DurationVar(&timeout, "timeout", clients.DefaultScanTimeout, "time each server gets, from launch to shutdown")
	cmd.Flags().BoolVar(&remote, "remote", false, "also connect to HTTP and SSE servers")
	cmd.Flags().StringVar(&policyFile, "policy", "", "policy that labels the tools (default $WEIR_HOME/policy.yaml, else the default preset)")
	cmd.Flags().IntVar(&concurrency, "parallel", 4, "servers scanned at once")
	return cmd
}

func severityOf(s string) (detect.Severity, bool) {
	for _, x := range []detect.Severity{detect.None, detect.Low, detect.Medium, detect.High} {
		if x.String() == s {
			return x, true
		}
	}
	return detect.None, false
}

// weirHomePath is $WEIR_HOME or ~/.weir, without creating it: scanning
// reads a policy from there if one exists, and writes nothing.
func weirHomePath() string {
	if h := os.Getenv("WEIR_HOME"); h != "" {
		if abs, err := filepath.Abs(h); err == nil {
			return abs
		}
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".weir")
}

type loadedConfig struct {
	loc clients.Location
	cfg *clients.Config
	err error
}

// loadConfigs reads the files named, or every discovered one.
func loadConfigs(paths []string) []loadedConfig {
	env := clients.FromOS()
	var out []loadedConfig
	if len(paths) == 0 {
		for _, loc := range clients.Discover(env) {
			c, err := clients.Read(loc)
			out = append(out, loadedConfig{loc: loc, cfg: c, err: err})
		}
		return out
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			out = append(out, loadedConfig{loc: clients.Location{Client: clients.Unknown, Path: p}, err: fmt.Errorf("%s: cannot read the file: %w", p, unwrapPathErr(err))})
			continue
		}
		loc, err := clients.Identify(env, p, data)
		if err != nil {
			out = append(out, loadedConfig{loc: clients.Location{Client: clients.Unknown, Path: p}, err: err})
			continue
		}
		c, err := clients.Parse(loc, data)
		out = append(out, loadedConfig{loc: loc, cfg: c, err: err})
	}
	return out
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func summaryLine(rep clients.Report) string {
	s := rep.Summary
	parts := []string{fmt.Sprintf("%d scanned", s.Scanned)}
	if s.Failed+s.Invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d could not be scanned", s.Failed+s.Invalid))
	}
	if s.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", s.Skipped))
	}
	line := fmt.Sprintf("%s, %s (%s), %s; findings: %d high, %d medium, %d low",
		count(s.Configs, "config file"), count(s.Servers, "server"), strings.Join(parts, ", "), count(s.Tools, "tool"),
		s.Findings["high"], s.Findings["medium"], s.Findings["low"])
	if s.Trifecta > 0 {
		line += fmt.Sprintf("; lethal trifecta in %s", count(s.Trifecta, "file"))
		if s.Unguarded > 0 {
			line += fmt.Sprintf(" (%d not behind Weir)", s.Unguarded)
		}
	}
	return line
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// scanPrinter renders a scan report for people.
type scanPrinter struct {
	w     io.Writer
	color bool
}

func (p *scanPrinter) paint(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *scanPrinter) severity(s string) string {
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

func (p *scanPrinter) report(rep clients.Report, threshold detect.Severity) {
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
	case scanFindings:
		verdict = p.paint("1;31", fmt.Sprintf("FAIL: findings at or above %s", threshold))
	case scanUsage:
		verdict = p.paint("1;31", "ERROR: a configuration file could not be read")
	case scanUnreachable:
		verdict = p.paint("33", "INCOMPLETE: some servers could not be scanned")
	}
	fmt.Fprintf(p.w, "%s\n%s (exit %d)\n", summaryLine(rep), verdict, rep.ExitCode)
}

func (p *scanPrinter) config(c clients.ConfigReport) {
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

func (p *scanPrinter) server(s clients.ServerReport) {
	var head []string
	if s.Project != "" {
		head = append(head, "project "+s.Project)
	}
	head = append(head, s.Transport)
	switch s.Status {
	case clients.StatusScanned:
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
	case clients.StatusSkipped:
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
		if t.Pin != clients.PinUnknown && t.Pin != "" {
			pin = "  pin " + t.Pin
			if t.Pin == clients.PinChanged {
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

func (p *scanPrinter) finding(f clients.Finding) {
	ev := ""
	if f.Evidence != "" {
		ev = fmt.Sprintf(" %q", f.Evidence)
	}
	fmt.Fprintf(p.w, "      %s %s in %s%s\n", p.severity(f.Severity), f.Detector, f.Field, ev)
	fmt.Fprintf(p.w, "             %s\n", f.Message)
}

func (p *scanPrinter) trifecta(t clients.Trifecta) {
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

// pinLookup answers the scan's pin-status questions from the state store,
// the way weir run would judge the same definitions.
type pinLookup struct {
	ctx   context.Context
	st    *store.SQLite
	mu    sync.Mutex
	cache map[string]map[string]store.Pin // identity → tool → pin
}

// pinStatus opens the pin store, or returns nil when there is none yet
// (every tool is then new) or it cannot be read.
func pinStatus(ctx context.Context, home string) *pinLookup {
	path := filepath.Join(home, "state.db")
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	st, err := store.OpenSQLite(ctx, path)
	if err != nil {
		return nil
	}
	return &pinLookup{ctx: ctx, st: st, cache: map[string]map[string]store.Pin{}}
}

func (p *pinLookup) close() { p.st.Close() }

func (p *pinLookup) status(server string, command []string, instructions string, t detect.Tool) string {
	id := pin.Identity(server, command, "")
	p.mu.Lock()
	pins, ok := p.cache[id]
	if !ok {
		pins, _ = p.st.Pins(p.ctx, id)
		p.cache[id] = pins
	}
	p.mu.Unlock()
	got, ok := pins[t.Name]
	_, hash := pin.Encode(t, instructions)
	switch {
	case !ok || got.Hash == "":
		return clients.PinNew // never approved: pinned (or quarantined) on first use
	case got.Hash == hash:
		return clients.PinUnchanged
	default:
		return clients.PinChanged
	}
}
