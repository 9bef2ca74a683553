package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/scan"
	"github.com/weir-sec/weir/internal/store"
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
when --timeout runs out, and reported with the reason. A server whose
prompts or resources cannot be listed still has its tools scanned, with a
note saying which listing failed and why. Servers are scanned a few at a
time.

For each tool it reports the labels Weir would give it and why (private,
untrusted, sink; from --policy, else $WEIR_HOME/policy.yaml, else the default
preset; an entry wrapped with its own --policy is labelled with that), and
what the tool-poisoning detectors find in its definition, with the evidence.
For each file it gives the lethal-trifecta verdict: which tools supply
private data, untrusted input and a way out, and whether every server
supplying a leg runs behind Weir. The trifecta counts as a high finding
while some of those servers do not, and as a low one once all do. When no
server of a file could be scanned, its verdict is unknown, not absent.

Remote (HTTP and SSE) servers are listed, and contacted only with --remote,
with the entry's headers. An entry weir wrap put behind weir run --upstream
is scanned the same way, as the remote server it reaches: with its --header
values (${VAR} expanded from its env, then weir scan's environment, as weir
run would), labelled under its --name and --policy, and counted as behind
Weir. Disabled entries and servers a client provides itself are not started.

Formats: text (colour on a terminal), json (stable: keys sorted, fields
documented in internal/scan), sarif (SARIF 2.1.0 for code scanning: one
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
				return &exitError{code: scan.ExitUsage, err: fmt.Errorf("unknown --format %q; want text, json or sarif", format)}
			}
			threshold, ok := scan.ParseSeverity(failOn)
			if !ok {
				return &exitError{code: scan.ExitUsage, err: fmt.Errorf("unknown --fail-on %q; want low, medium or high", failOn)}
			}
			if timeout <= 0 {
				return &exitError{code: scan.ExitUsage, err: fmt.Errorf("--timeout must be positive")}
			}
			home := weirHomePath()
			pol, err := policyfile.Resolve(policyFile, home)
			if err != nil {
				return &exitError{code: scan.ExitUsage, err: err}
			}
			opts := scan.Options{Policy: pol, Timeout: timeout, Remote: remote, Concurrency: concurrency}
			if policyFile == "" {
				// Entries wrapped with their own --policy are labelled
				// with it, as their weir run would.
				opts.PolicyFor = func(f string) (*policy.Policy, error) { return policyfile.Resolve(f, home) }
			}
			if st := openPins(cmd.Context(), home); st != nil {
				opts.Pins = st
				defer st.Close()
			}

			configs := loadConfigs(args)
			if len(args) == 0 && len(configs) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "weir scan: no MCP client configuration found in the usual places; name one: weir scan PATH")
			}
			progress := isTerminal(os.Stderr) && outFile == ""
			var reports []scan.ConfigReport
			for _, c := range configs {
				if c.err != nil {
					reports = append(reports, scan.Unreadable(c.loc, c.err))
					continue
				}
				if progress {
					fmt.Fprintf(os.Stderr, "scanning %s (%d servers)…\r", c.loc.Path, len(c.cfg.Servers))
				}
				reports = append(reports, scanConfig(cmd.Context(), c.cfg, opts))
				if progress {
					fmt.Fprint(os.Stderr, "\x1b[2K\r")
				}
			}
			rep := scan.NewReport(reports)
			rep.Finish(version, threshold)
			code := rep.ExitCode

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
				if err := rep.WriteText(w, outFile == "" && isTerminal(w)); err != nil {
					return err
				}
				out = []byte(b.String())
			}
			if err != nil {
				return &exitError{code: scan.ExitUsage, err: err}
			}
			switch {
			case outFile != "":
				if err := os.WriteFile(outFile, out, 0o644); err != nil {
					return &exitError{code: scan.ExitUsage, err: err}
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "weir scan: wrote %s (%s)\n", outFile, rep.Summary)
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
			if code != scan.ExitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json or sarif")
	cmd.Flags().StringVarP(&outFile, "output", "o", "", "write the report to FILE instead of stdout")
	cmd.Flags().StringVar(&failOn, "fail-on", "high", "exit 1 on a finding of this severity or higher: low, medium or high")
	cmd.Flags().DurationVar(&timeout, "timeout", scan.DefaultTimeout, "time each server gets, from launch to shutdown")
	cmd.Flags().BoolVar(&remote, "remote", false, "also connect to HTTP and SSE servers")
	cmd.Flags().StringVar(&policyFile, "policy", "", "policy that labels the tools (default $WEIR_HOME/policy.yaml, else the default preset)")
	cmd.Flags().IntVar(&concurrency, "parallel", 4, "servers scanned at once")
	return cmd
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

// openPins opens the pin store weir run keeps, so the scan judges each
// tool as weir run would on its next launch, or returns nil when there is
// none yet (every tool is then judged as on its first launch) or it
// cannot be opened.
func openPins(ctx context.Context, home string) store.State {
	if _, err := os.Stat(filepath.Join(home, "state.db")); err != nil && os.Getenv(store.URLEnv) == "" {
		return nil
	}
	st, err := store.Open(ctx, home, "")
	if err != nil {
		return nil
	}
	return st
}

// scanConfig scans one file with scan.Config. An entry behind `weir run
// --upstream URL` (how weir wrap puts a remote server behind Weir) is a
// stdio entry to its client, but what it reaches is the remote server at
// URL: scan.Config would launch weir run itself, which would connect
// without --remote, pin the tools in the state store and withhold some of
// them from the listing. So it is shown to scan.Config as the remote server
// it reaches, through the wrapped-entry path that names its server the
// way weir run does: its weir run line is given as --name NAME [--policy
// FILE] -- URL, whose "server behind weir run" is the URL (engine.PackageOf
// takes a URL as the remote server's identity, as for any remote entry),
// with the headers weir run would send. It is then reached only with
// --remote, labelled under its --name and with its --policy, and counts as
// behind Weir; the report gives no command for it, as for any remote entry.
func scanConfig(ctx context.Context, cfg *clients.Config, opts scan.Options) scan.ConfigReport {
	view := *cfg
	view.Servers = slices.Clone(cfg.Servers)
	notes := map[int][]string{}
	var remote []int
	for i, s := range cfg.Servers {
		u, hs, ok := s.Upstream()
		if !ok {
			continue
		}
		remote = append(remote, i)
		name, policy := s.RunFlags()
		if name == "" {
			if p, err := url.Parse(u); err == nil {
				name = p.Hostname() // weir run's default
			}
		}
		args := []string{"run", "--name", name}
		if policy != "" {
			args = append(args, "--policy", policy)
		}
		headers, why := upstreamHeaderMap(hs, s.Env)
		notes[i] = why
		view.Servers[i] = clients.Server{
			Name: s.Name, Transport: clients.TransportHTTP, URL: u, Headers: headers,
			Command: s.Command, Args: append(args, "--", u), Wrapped: true,
			Disabled: s.Disabled, Project: s.Project, Path: s.Path, Problem: s.Problem,
		}
	}
	rep := scan.Config(ctx, &view, opts)
	for _, i := range remote {
		r := &rep.Servers[i]
		r.Command = nil
		if r.Status == scan.StatusScanned || r.Status == scan.StatusFailed {
			r.Notes = append(r.Notes, notes[i]...)
		}
	}
	return rep
}

// upstreamHeaderMap is what weir run --header sends for the values hs,
// with ${VAR} expanded from the entry's env, then this process's
// environment. A header weir run could not send (a variable not set here)
// is left out, and a note says so.
func upstreamHeaderMap(hs []string, env map[string]string) (map[string]string, []string) {
	lookup := func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	}
	out := map[string]string{}
	var notes []string
	for _, h := range hs {
		hdr, err := upstreamHeaders([]string{h}, lookup)
		if err != nil {
			// The error names the variable; any other would quote the value.
			name, _, _ := strings.Cut(h, ":")
			why := "weir run would refuse it"
			if strings.Contains(err.Error(), "is not set") {
				why = err.Error()
			}
			notes = append(notes, fmt.Sprintf("the header %s was not sent: %s", strings.TrimSpace(name), why))
			continue
		}
		for k, v := range hdr {
			out[k] = v[0]
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, notes
}
