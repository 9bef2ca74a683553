package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

// The JSON encoding of the report types below is the stable output of
// `weir scan --format json`; field names are part of the interface.

// Server statuses in a ServerReport.
const (
	StatusScanned = "scanned" // launched (or reached) and its tools listed; Notes say what else could not be listed
	StatusFailed  = "failed"  // launched (or reached), but its tools could not be listed: Error says why
	StatusInvalid = "invalid" // the entry cannot be started as written (Server.Problem); nothing was launched
	StatusSkipped = "skipped" // deliberately not launched: Error says why (disabled, builtin, HTTP without --remote)
)

// Pin statuses of a ToolReport: the engine's pin states (pin.State), or
// unknown when no pin store was consulted.
const (
	PinUnknown     = "unknown"     // no pin store consulted
	PinNew         = "new"         // never seen: it would be pinned on first use
	PinUnchanged   = "unchanged"   // the same definition as pinned
	PinChanged     = "changed"     // differs from the pinned definition (a rug pull, or an update to approve): withheld
	PinQuarantined = "quarantined" // not approved, and flagged as tool poisoning: withheld
	PinUnchecked   = "unchecked"   // the pins could not be read: withheld
)

// DefaultTimeout bounds each server's scan, from launch to shutdown.
const DefaultTimeout = 15 * time.Second

// protocolVersion is the protocol version the scanner asks for. The
// 2026-07-28 generation starts with server/discover, which the npm
// reference servers answer with an error; 2025-11-25 is what every current
// server speaks.
const protocolVersion = "2025-11-25"

// maxPages bounds pagination: a server that keeps returning a cursor does
// not keep the scan busy until its timeout.
const maxPages = 100

// Options says how the scanner reaches and judges servers.
type Options struct {
	// Policy labels the tools; nil means the built-in default preset.
	Policy *policy.Policy
	// PolicyFor, when set, loads the policy a wrapped entry names with
	// `weir run --policy FILE`, so that its tools are labelled as that proxy
	// would label them. nil labels every entry with Policy.
	PolicyFor func(file string) (*policy.Policy, error)
	// Timeout bounds each server, from launch to shutdown; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Remote allows connecting to HTTP and SSE servers; without it they are
	// listed and skipped.
	Remote bool
	// Concurrency is how many servers are scanned at once; 0 means 4.
	Concurrency int
	// Environ is the environment servers inherit before their own env is
	// merged over it; nil means os.Environ().
	Environ []string
	// Dir is the directory a relative cwd or envFile is taken from (the
	// configuration file's directory); "" means the current directory.
	Dir string
	// HTTPClient is used for HTTP and SSE servers; nil means a default
	// client.
	HTTPClient *http.Client

	// Pins, when set, is the pin store the tools' pins are read from (weir
	// scan opens $WEIR_HOME/state.db), so that each tool is judged as weir
	// run would judge it on its next launch; nil judges every tool as on
	// its first launch and reports its pin as unknown.
	Pins PinReader
}

// ServerReport is what the scan found out about one server entry.
type ServerReport struct {
	Name    string `json:"name"`    // the entry's name in the configuration
	Pointer string `json:"pointer"` // the entry's JSON pointer in the file
	Line    int    `json:"line"`    // the entry's line in the file (1-based; 0 unknown)
	Project string `json:"project,omitempty"`
	// WeirName is the server name Weir labels with: the entry's name, or
	// the --name it is wrapped with.
	WeirName  string `json:"weir_name"`
	Transport string `json:"transport"`
	// Command is what was launched for a stdio server: the command and its
	// arguments, as written; for a wrapped entry, the server behind weir run.
	Command  []string `json:"command,omitempty"`
	URL      string   `json:"url,omitempty"`
	Wrapped  bool     `json:"wrapped"` // the entry runs behind weir run
	Disabled bool     `json:"disabled"`
	// Policy is the policy the labels come from: a file, or "preset:NAME".
	Policy string `json:"policy"`

	Status string `json:"status"` // one of the Status constants
	// Error says, for people, why the server could not be scanned (or why
	// it was skipped).
	Error string `json:"error,omitempty"`
	// Stderr is the end of what the server wrote to stderr when it failed,
	// or when one of its listings failed.
	Stderr string `json:"stderr,omitempty"`
	// Notes are lesser problems: a listing (prompts/list, resources/list,
	// resources/templates/list) that failed after the tools were listed,
	// with the reason; an envFile that could not be read; a wrapped
	// entry's policy that does not load.
	Notes []string `json:"notes,omitempty"`

	Info      *ServerInfo  `json:"server_info,omitempty"`
	Tools     []ToolReport `json:"tools"`
	Prompts   []string     `json:"prompts"`
	Resources []string     `json:"resources"`
	// Findings are the detectors' findings outside tool definitions: the
	// server's instructions, prompts and resources.
	Findings []Finding `json:"findings"`

	policyFile string         // a wrapped entry's weir run --policy
	pol        *policy.Policy // what labels its tools
}

// ServerInfo is what a server said about itself when it was initialized.
type ServerInfo struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Protocol string `json:"protocol"`
}

// ToolReport is one tool of a scanned server.
type ToolReport struct {
	Name string `json:"name"`
	// Labels are the labels Weir would give the tool (private, untrusted,
	// sink), and Why the reason for each.
	Labels []string `json:"labels"`
	Why    []string `json:"why"`
	// Listed reports that a policy tools: entry matched the tool.
	Listed bool `json:"policy_listed"`
	// Severity is the highest severity among Findings: none, low, medium
	// or high.
	Severity string    `json:"severity"`
	Findings []Finding `json:"findings"`
	// Hash is the hex SHA-256 of the definition (detect.DefinitionHash),
	// what the pin store compares; Pin is the pin status.
	Hash string `json:"hash"`
	Pin  string `json:"pin"`
	// Withheld reports that weir run would withhold the tool from the
	// client (changed since approval, flagged as tool poisoning, or its pin
	// unreadable); Rule and Reason say why, as weir run's audit log would.
	// A tool that is only warned about has Rule and Reason but is not
	// withheld.
	Withheld bool   `json:"withheld"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Finding is one thing a tool-poisoning detector found.
type Finding struct {
	Detector string `json:"detector"`
	Severity string `json:"severity"` // low, medium or high
	Field    string `json:"field"`    // where: "description", "inputSchema.properties.path.description", `prompts["x"].description`...
	Evidence string `json:"evidence"` // the span found, made visible
	Message  string `json:"message"`
}

// ConfigReport is the scan of one configuration file.
type ConfigReport struct {
	Client     string `json:"client"`      // client id: "claude-desktop", "cursor"...
	ClientName string `json:"client_name"` // for people: "Claude Desktop"
	Scope      string `json:"scope"`
	Format     string `json:"format"`
	Path       string `json:"path"`
	// Error is set when the file could not be read or parsed; nothing
	// else is then known (Trifecta.Known is false).
	Error    string         `json:"error,omitempty"`
	Servers  []ServerReport `json:"servers"`
	Trifecta Trifecta       `json:"trifecta"`
}

// Config scans every server of one configuration file and judges the
// configuration as a whole. A relative cwd is taken from the file's
// directory unless opts.Dir says otherwise.
func Config(ctx context.Context, c *clients.Config, opts Options) ConfigReport {
	if opts.Dir == "" {
		opts.Dir = filepath.Dir(c.Location.Path)
	}
	r := ConfigReport{
		Client: c.Location.Client.ID, ClientName: c.Location.Client.Name,
		Scope: c.Location.Scope, Format: c.Location.Format, Path: c.Location.Path,
		Servers: Servers(ctx, c.Servers, opts),
	}
	lines := c.Lines()
	for i := range r.Servers {
		r.Servers[i].Line = lines[c.Servers[i].Path]
	}
	r.Trifecta = AssessTrifecta(r.Servers)
	return r
}

// Unreadable is the report of a configuration file that could not be read
// or parsed: err says why, and nothing else is known about it.
func Unreadable(loc clients.Location, err error) ConfigReport {
	return ConfigReport{
		Client: loc.Client.ID, ClientName: loc.Client.Name, Scope: loc.Scope, Format: loc.Format, Path: loc.Path,
		Error: err.Error(), Servers: []ServerReport{}, Trifecta: unreadableTrifecta(),
	}
}

// Servers launches every stdio server (through its inner command when it
// is wrapped), lists its tools, prompts and resources, shuts it down, and
// reports what Weir makes of it. Servers are scanned concurrently; each is
// bounded by opts.Timeout from launch to shutdown, and a server that hangs,
// crashes or writes something other than JSON-RPC is reported as failed
// with the reason, never waited for. The reports are in the order of
// servers.
func Servers(ctx context.Context, servers []clients.Server, opts Options) []ServerReport {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Policy == nil {
		p, err := policyfile.Preset("default")
		if err != nil {
			panic("scan: the default preset does not load: " + err.Error())
		}
		opts.Policy = p
	}
	reports := make([]ServerReport, len(servers))
	cats := make([]*catalogue, len(servers))
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	pols := map[string]*policy.Policy{}
	for i, s := range servers {
		reports[i] = newReport(s, opts)
		reports[i].pol = opts.Policy
		if f := reports[i].policyFile; f != "" && opts.PolicyFor != nil {
			p, ok := pols[f]
			if !ok {
				var err error
				if p, err = opts.PolicyFor(f); err != nil {
					reports[i].Notes = append(reports[i].Notes, fmt.Sprintf("the policy %s this entry's weir run uses does not load, so its tools are labelled with %s: %v", f, opts.Policy.Source, err))
				}
				pols[f] = p
			}
			if p != nil {
				reports[i].pol, reports[i].Policy = p, p.Source
			}
		}
		if reports[i].Status != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				reports[i].Status, reports[i].Error = StatusFailed, "the scan was interrupted before this server was started"
				return
			}
			defer func() { <-sem }()
			cats[i] = fetch(ctx, s, opts, &reports[i])
		}()
	}
	wg.Wait()

	// Judge with every catalogue at hand: shadowing compares each
	// server's definitions with the other servers' tool names.
	for i := range reports {
		if cats[i] == nil {
			continue
		}
		others := map[string][]string{}
		for j, c := range cats {
			if j != i && c != nil && reports[j].WeirName != reports[i].WeirName {
				for _, t := range c.tools {
					others[reports[j].WeirName] = append(others[reports[j].WeirName], t.Name)
				}
			}
		}
		r := &reports[i]
		r.Tools, r.Findings = judge(ctx, r.WeirName, r.Command, r.URL, r.pol, cats[i], others, opts.Pins)
		for _, p := range cats[i].prompts {
			r.Prompts = append(r.Prompts, p.Name)
		}
		for _, x := range cats[i].resources {
			r.Resources = append(r.Resources, x.Name)
		}
		slices.SortStableFunc(r.Tools, func(a, b ToolReport) int { return strings.Compare(a.Name, b.Name) })
		slices.Sort(r.Prompts)
		slices.Sort(r.Resources)
	}
	return reports
}

// newReport fills in what the entry says, and the status of an entry that
// is not to be launched.
func newReport(s clients.Server, opts Options) ServerReport {
	r := ServerReport{
		Name: s.Name, Pointer: s.Path, Project: s.Project, WeirName: s.Name,
		Transport: s.Transport, URL: s.URL, Wrapped: s.Wrapped, Disabled: s.Disabled,
		Policy: opts.Policy.Source, Tools: []ToolReport{}, Prompts: []string{}, Resources: []string{}, Findings: []Finding{},
	}
	if s.Transport == clients.TransportStdio {
		r.Command = append([]string{s.Command}, s.Args...)
	}
	if s.Wrapped {
		name, pfile := s.RunFlags()
		if name != "" {
			r.WeirName = name
		}
		if cmd, args, ok := s.Inner(); ok {
			r.Command = append([]string{cmd}, args...)
		}
		r.policyFile = pfile
	}
	switch {
	case s.Problem != "":
		r.Status, r.Error = StatusInvalid, "the entry cannot be started as written: "+s.Problem
	case s.Wrapped && len(r.Command) == 0:
		r.Status, r.Error = StatusInvalid, "the entry runs weir run but names no server command after it"
	case s.Disabled:
		r.Status, r.Error = StatusSkipped, "disabled in the configuration; not started"
	case s.Transport == clients.TransportBuiltin:
		r.Status, r.Error = StatusSkipped, "provided by the client itself; nothing to launch"
	case (s.Transport == clients.TransportHTTP || s.Transport == clients.TransportSSE) && !opts.Remote:
		r.Status, r.Error = StatusSkipped, "a remote server; not contacted without --remote"
	case s.Transport == "":
		r.Status, r.Error = StatusInvalid, "the entry names no transport Weir understands"
	}
	return r
}

// catalogue is what one server showed, as raw as it came.
type catalogue struct {
	instructions string
	tools        []detect.Tool // as listed, read by engine.ReadToolList
	prompts      []detect.NamedText
	resources    []detect.NamedText
	// failed are the listings that failed after the tools were listed.
	failed []failure
}

// failure is a listing that failed: the method, and the error.
type failure struct {
	phase string
	err   error
}

// fetch reaches one server and lists what it offers. It returns nil, with
// r.Status and r.Error set, when the server's tools could not be listed.
func fetch(ctx context.Context, s clients.Server, opts Options, r *ServerReport) *catalogue {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	rec := &recorder{pending: map[jsonrpc.ID]string{}, results: map[string][]json.RawMessage{}}
	var (
		cat *catalogue
		err error
	)
	if s.Transport == clients.TransportStdio {
		cat, err = fetchStdio(ctx, s, r, opts, rec)
	} else {
		cat, err = fetchRemote(ctx, s, r, opts, rec)
	}
	if err != nil {
		r.Status, r.Error = StatusFailed, err.Error()
		return nil
	}
	r.Status, r.Info = StatusScanned, rec.info
	return cat
}
