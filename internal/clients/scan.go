package clients

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

// Scanning: `weir scan` launches every stdio server of a configuration the
// way its client would, asks it what it offers (tools, prompts, resources),
// shuts it down, and judges what it saw: the labels Weir would give each
// tool, what the tool-poisoning detectors find in the definitions, and
// whether the configuration as a whole holds the lethal trifecta.
//
// The JSON encoding of the types below is the stable output of
// `weir scan --format json`; field names are part of the interface.

// Server statuses in a ServerReport.
const (
	StatusScanned = "scanned" // launched (or reached) and listed
	StatusFailed  = "failed"  // launched (or reached), but could not be listed: Error says why
	StatusInvalid = "invalid" // the entry cannot be started as written (Server.Problem); nothing was launched
	StatusSkipped = "skipped" // deliberately not launched: Error says why (disabled, builtin, HTTP without --remote)
)

// Pin statuses a ScanOptions.PinStatus hook returns.
const (
	PinUnknown   = "unknown"   // no pin store consulted
	PinNew       = "new"       // never seen: it would be pinned on first use
	PinUnchanged = "unchanged" // the same definition as pinned
	PinChanged   = "changed"   // differs from the pinned definition (a rug pull, or an update to approve)
)

// DefaultScanTimeout bounds each server's scan, from launch to shutdown.
const DefaultScanTimeout = 15 * time.Second

// scanProtocol is the protocol version the scanner asks for. The 2026-07-28
// generation starts with server/discover, which the npm reference servers
// answer with an error; 2025-11-25 is what every current server speaks.
const scanProtocol = "2025-11-25"

// maxPages bounds pagination: a server that keeps returning a cursor does
// not keep the scan busy until its timeout.
const maxPages = 100

// ScanOptions says how Scan reaches and judges servers.
type ScanOptions struct {
	// Policy labels the tools; nil means the built-in default preset.
	Policy *policy.Policy
	// PolicyFor, when set, loads the policy a wrapped entry names with
	// `weir run --policy FILE`, so that its tools are labelled as that proxy
	// would label them. nil labels every entry with Policy.
	PolicyFor func(file string) (*policy.Policy, error)
	// Timeout bounds each server, from launch to shutdown; 0 means
	// DefaultScanTimeout.
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

	// PinStatus reports a tool's pin status: given the server name Weir
	// uses, the command weir run would run it with, the server's
	// instructions and the tool's definition, it returns PinNew,
	// PinUnchanged or PinChanged. nil reports PinUnknown for every tool.
	// `weir scan` fills it from the pin store.
	PinStatus func(server string, command []string, instructions string, tool detect.Tool) string
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
	// Stderr is the end of what the server wrote to stderr when it failed.
	Stderr string `json:"stderr,omitempty"`
	// Notes are lesser problems: a list that failed while tools were
	// listed, an envFile that could not be read.
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
}

// Finding is one thing a tool-poisoning detector found.
type Finding struct {
	Detector string `json:"detector"`
	Severity string `json:"severity"` // low, medium or high
	Field    string `json:"field"`    // where: "description", "inputSchema.properties.path.description", `prompts["x"].description`...
	Evidence string `json:"evidence"` // the span found, made visible
	Message  string `json:"message"`
}

// Trifecta is the lethal-trifecta verdict for a whole configuration: an
// agent that can read private data, is exposed to text an attacker wrote,
// and can send data out can be made to leak. Each leg lists the tools that
// supply it, as "server/tool".
type Trifecta struct {
	// Present is set when all three legs are supplied by the servers that
	// were scanned. Every sink then needs Weir's flow control.
	Present   bool     `json:"present"`
	Private   []string `json:"private"`
	Untrusted []string `json:"untrusted"`
	Sink      []string `json:"sink"`
	// Unguarded lists the servers that supply a leg but do not run behind
	// weir run: Weir cannot see their data or stop their calls. When the
	// trifecta is present and Unguarded is empty, Weir's flow control
	// covers it.
	Unguarded []string `json:"unguarded"`
	// Unknown lists the enabled servers whose tools are not known (not
	// scanned, failed, skipped): the verdict does not account for them.
	Unknown []string `json:"unknown"`
	// Severity is high when the trifecta is present and some server
	// supplying it is unguarded, low when it is present and every such
	// server runs behind Weir, and none otherwise.
	Severity string `json:"severity"`
	// Summary says it in one sentence.
	Summary string `json:"summary"`
}

// ConfigReport is the scan of one configuration file.
type ConfigReport struct {
	Client     string `json:"client"`      // client id: "claude-desktop", "cursor"...
	ClientName string `json:"client_name"` // for people: "Claude Desktop"
	Scope      string `json:"scope"`
	Format     string `json:"format"`
	Path       string `json:"path"`
	// Error is set when the file could not be read or parsed; nothing
	// else is then known.
	Error    string         `json:"error,omitempty"`
	Servers  []ServerReport `json:"servers"`
	Trifecta Trifecta       `json:"trifecta"`
}

// ScanConfig scans every server of one configuration file and judges the
// configuration as a whole. A relative cwd is taken from the file's
// directory unless opts.Dir says otherwise.
func ScanConfig(ctx context.Context, c *Config, opts ScanOptions) ConfigReport {
	if opts.Dir == "" {
		opts.Dir = filepath.Dir(c.Location.Path)
	}
	r := ConfigReport{
		Client: c.Location.Client.ID, ClientName: c.Location.Client.Name,
		Scope: c.Location.Scope, Format: c.Location.Format, Path: c.Location.Path,
		Servers: Scan(ctx, c.Servers, opts),
	}
	lines := c.lines()
	for i := range r.Servers {
		r.Servers[i].Line = lines[c.Servers[i].Path]
	}
	r.Trifecta = AssessTrifecta(r.Servers)
	return r
}

// Scan launches every stdio server (through its inner command when it is
// wrapped), lists its tools, prompts and resources, shuts it down, and
// reports what Weir makes of it. Servers are scanned concurrently; each is
// bounded by opts.Timeout from launch to shutdown, and a server that hangs,
// crashes or writes something other than JSON-RPC is reported as failed
// with the reason, never waited for. The reports are in the order of
// servers.
func Scan(ctx context.Context, servers []Server, opts ScanOptions) []ServerReport {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultScanTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Policy == nil {
		p, err := policyfile.Preset("default")
		if err != nil {
			panic("clients: the default preset does not load: " + err.Error())
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
		judge(&reports[i], cats[i], others, opts)
	}
	return reports
}

// newReport fills in what the entry says, and the status of an entry that
// is not to be launched.
func newReport(s Server, opts ScanOptions) ServerReport {
	r := ServerReport{
		Name: s.Name, Pointer: s.Path, Project: s.Project, WeirName: s.Name,
		Transport: s.Transport, URL: s.URL, Wrapped: s.Wrapped, Disabled: s.Disabled,
		Policy: opts.Policy.Source, Tools: []ToolReport{}, Prompts: []string{}, Resources: []string{}, Findings: []Finding{},
	}
	if s.Transport == TransportStdio {
		r.Command = append([]string{s.Command}, s.Args...)
	}
	if s.Wrapped {
		_, name, pfile, _ := parseRun(s.Args)
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
	case s.Transport == TransportBuiltin:
		r.Status, r.Error = StatusSkipped, "provided by the client itself; nothing to launch"
	case (s.Transport == TransportHTTP || s.Transport == TransportSSE) && !opts.Remote:
		r.Status, r.Error = StatusSkipped, "a remote server; not contacted without --remote"
	case s.Transport == "":
		r.Status, r.Error = StatusInvalid, "the entry names no transport Weir understands"
	}
	return r
}

// catalogue is what one server showed, as raw as it came.
type catalogue struct {
	instructions string
	tools        []rawTool
	prompts      []detect.NamedText
	resources    []detect.NamedText
}

// rawTool is a tool definition off the wire, its JSON values kept byte for
// byte so that its hash is the one `weir run` pins.
type rawTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
}

// fetch reaches one server and lists what it offers. It returns nil, with
// r.Status and r.Error set, when the server could not be listed.
func fetch(ctx context.Context, s Server, opts ScanOptions, r *ServerReport) *catalogue {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	rec := &recorder{pending: map[jsonrpc.ID]string{}, results: map[string][]json.RawMessage{}}
	var (
		cat *catalogue
		err error
	)
	if s.Transport == TransportStdio {
		cat, err = fetchStdio(ctx, s, r, opts, rec)
	} else {
		cat, err = fetchRemote(ctx, s, opts, rec)
	}
	if err != nil {
		r.Status, r.Error = StatusFailed, err.Error()
		return nil
	}
	r.Status, r.Info = StatusScanned, rec.info
	return cat
}

// fetchStdio launches a stdio server in its own process group, lists it,
// and shuts it down; whatever happens, the process group is gone when it
// returns.
func fetchStdio(ctx context.Context, s Server, r *ServerReport, opts ScanOptions, rec *recorder) (*catalogue, error) {
	cmd := exec.Command(r.Command[0], r.Command[1:]...)
	env, notes := serverEnv(s, opts)
	r.Notes = append(r.Notes, notes...)
	cmd.Env = env
	cmd.Dir = serverDir(s, opts)
	setGroup(cmd)
	stderr := &tail{max: 4096}
	cmd.Stderr = stderr
	// Bounds Wait when a grandchild keeps stderr open after the server
	// itself exited.
	cmd.WaitDelay = 500 * time.Millisecond
	// Plain pipes rather than cmd.StdoutPipe: Wait must not close stdout
	// under the reader, or what a crashing server printed last is lost.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("could not be started: %v", startError(err))
	}
	stdout := &headReader{r: outR, max: 512}
	defer stdout.Close()
	defer inW.Close()

	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	// The process group ends with this function: at once on the deadline,
	// else after a short grace once stdin is closed.
	var killed atomic.Bool
	kill := func() {
		if !killed.Swap(true) {
			killGroup(cmd)
		}
	}
	stopWatch := context.AfterFunc(ctx, kill)
	defer stopWatch()

	cat, phase, err := list(ctx, &mcp.IOTransport{Reader: stdout, Writer: inW}, rec)

	// Shut down the way a client does: close stdin, give the server a
	// moment to exit, then end the whole process group.
	inW.Close()
	grace := 2 * time.Second
	if err != nil {
		grace = 300 * time.Millisecond
	}
	if dl, ok := ctx.Deadline(); ok {
		grace = max(min(grace, time.Until(dl)), 0)
	}
	select {
	case <-exited:
	case <-time.After(grace):
	}
	exitedAlone := isClosed(exited) && !killed.Load()
	kill()
	<-exited
	if err == nil {
		return cat, nil
	}
	return nil, explainStdio(ctx, err, phase, opts.Timeout, stdout.head(), stderr, waitErr, exitedAlone, r)
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// startError makes exec's start errors read well.
func startError(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		if errors.Is(ee.Err, exec.ErrNotFound) {
			return fmt.Sprintf("%q was not found on PATH", ee.Name)
		}
		return fmt.Sprintf("%q: %v", ee.Name, ee.Err)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err.Error()
}

// explainStdio turns a failed listing into one sentence saying what the
// server did wrong.
func explainStdio(ctx context.Context, err error, phase string, timeout time.Duration, head []byte, stderr *tail, waitErr error, exitedAlone bool, r *ServerReport) error {
	if s := stderr.String(); s != "" {
		r.Stderr = s
	}
	if line, bad := garbage(head); bad {
		msg := fmt.Sprintf("wrote something other than JSON-RPC to stdout during %s: %q; an MCP server may write only JSON-RPC messages to stdout (logs belong on stderr)", phase, line)
		if exitedAlone && waitErr != nil {
			msg += fmt.Sprintf(", and %s", exitText(waitErr))
		}
		return errors.New(msg)
	}
	if exitedAlone {
		status := "exited"
		if waitErr != nil {
			status = exitText(waitErr)
		} else {
			status = "exited with status 0"
		}
		return fmt.Errorf("%s before answering %s", status, phase)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("did not answer %s within %s; stopped", phase, timeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("the scan was interrupted during %s", phase)
	}
	return fmt.Errorf("%s failed: %v", phase, err)
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() >= 0 {
			return fmt.Sprintf("exited with status %d", ee.ExitCode())
		}
		return "was killed (" + ee.String() + ")"
	}
	return "exited: " + err.Error()
}

// garbage reports whether a server's first output is not JSON, and the
// first line that is not. A line cut off by the end of head is judged by
// its first character only.
func garbage(head []byte) (string, bool) {
	rest := string(head)
	for rest != "" {
		line, more, complete := strings.Cut(rest, "\n")
		rest = more
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if (t[0] != '{' && t[0] != '[') || (complete && !json.Valid([]byte(t))) {
			if len(t) > 80 {
				t = t[:80] + "…"
			}
			return strings.ToValidUTF8(t, "�"), true
		}
	}
	return "", false
}

// fetchRemote connects to an HTTP or SSE server.
func fetchRemote(ctx context.Context, s Server, opts ScanOptions, rec *recorder) (*catalogue, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	// Every request ends with the scan of this server, whatever context
	// the SDK gave it: a stream it keeps open must not outlive the scan.
	c.Transport = scopedTransport{base: base, ctx: ctx, headers: s.Headers}
	hc = &c
	var t mcp.Transport
	if s.Transport == TransportSSE {
		t = &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1}
	}
	cat, phase, err := list(ctx, t, rec)
	switch {
	case err == nil:
		return cat, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("did not answer %s within %s", phase, opts.Timeout)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the scan was interrupted during %s", phase)
	}
	return nil, fmt.Errorf("%s failed: %v", phase, err)
}

// scopedTransport adds an entry's headers to every request and cancels
// every request when ctx ends.
type scopedTransport struct {
	base    http.RoundTripper
	ctx     context.Context
	headers map[string]string
}

func (t scopedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rctx, cancel := context.WithCancel(req.Context())
	context.AfterFunc(t.ctx, cancel)
	req = req.Clone(rctx)
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// list initializes a session over t and lists tools, prompts and resources
// (each only when the server declares the capability), following cursors.
// phase says what was under way when it failed.
func list(ctx context.Context, t mcp.Transport, rec *recorder) (cat *catalogue, phase string, err error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-scan", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, // ask for nothing back: no roots, sampling or elicitation
	})
	phase = "initialize"
	cs, err := client.Connect(ctx, &recordingTransport{Transport: t, rec: rec}, &mcp.ClientSessionOptions{ProtocolVersion: scanProtocol})
	if err != nil {
		return nil, phase, err
	}
	defer cs.Close()
	init := cs.InitializeResult()
	cat = &catalogue{}
	caps := &mcp.ServerCapabilities{}
	if init != nil {
		cat.instructions = init.Instructions
		if init.Capabilities != nil {
			caps = init.Capabilities
		}
	}
	if caps.Tools != nil {
		phase = "tools/list"
		var cursor string
		for range maxPages {
			res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, phase, err
			}
			var page struct {
				Tools []rawTool `json:"tools"`
			}
			if err := json.Unmarshal(rec.last("tools/list"), &page); err != nil {
				return nil, phase, fmt.Errorf("reading the tool list: %v", err)
			}
			cat.tools = append(cat.tools, page.Tools...)
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
	}
	if caps.Prompts != nil {
		phase = "prompts/list"
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return nil, phase, err
			}
			cat.prompts = append(cat.prompts, detect.NamedText{Name: p.Name, Description: p.Description})
			if len(cat.prompts) > maxPages*100 {
				break
			}
		}
	}
	if caps.Resources != nil {
		phase = "resources/list"
		for res, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return nil, phase, err
			}
			cat.resources = append(cat.resources, detect.NamedText{Name: res.Name, Description: res.Description})
			if len(cat.resources) > maxPages*100 {
				break
			}
		}
		phase = "resources/templates/list"
		for res, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				var we *jsonrpc.Error
				if errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound {
					break // templates are optional
				}
				return nil, phase, err
			}
			cat.resources = append(cat.resources, detect.NamedText{Name: res.Name, Description: res.Description})
			if len(cat.resources) > maxPages*100 {
				break
			}
		}
	}
	if init != nil && init.ServerInfo != nil {
		rec.info = &ServerInfo{Name: init.ServerInfo.Name, Version: init.ServerInfo.Version, Protocol: init.ProtocolVersion}
	}
	return cat, "", nil
}

// recordingTransport keeps the raw result of every response, by method,
// so that tool definitions are judged and hashed exactly as the server sent
// them, not as the SDK's types re-encode them.
type recordingTransport struct {
	mcp.Transport
	rec *recorder
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, rec: t.rec}, nil
}

type recordingConn struct {
	mcp.Connection
	rec *recorder
}

func (c *recordingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.rec.mu.Lock()
		c.rec.pending[req.ID] = req.Method
		c.rec.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && err == nil {
		c.rec.mu.Lock()
		if method, ok := c.rec.pending[resp.ID]; ok {
			delete(c.rec.pending, resp.ID)
			c.rec.results[method] = append(c.rec.results[method], resp.Result)
		}
		c.rec.mu.Unlock()
	}
	return m, err
}

type recorder struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]string
	results map[string][]json.RawMessage
	info    *ServerInfo
}

// last returns the latest raw result of method.
func (r *recorder) last(method string) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.results[method]
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
}

// judge labels the tools of a listed server and runs the detectors over
// its catalogue.
func judge(r *ServerReport, cat *catalogue, others map[string][]string, opts ScanOptions) {
	pol := r.pol
	dc := detect.Catalogue{Server: r.WeirName, Instructions: cat.instructions, Prompts: cat.prompts, Resources: cat.resources}
	for _, t := range cat.tools {
		dc.Tools = append(dc.Tools, t.detect(r.WeirName))
	}
	findings := detect.ScanCatalogue(dc, others)
	for _, t := range cat.tools {
		def := t.def()
		l := engine.Label(pol, r.WeirName, def)
		sum := detect.DefinitionHash(t.detect(r.WeirName))
		tr := ToolReport{
			Name: t.Name, Labels: labelNames(l.Labels), Why: l.Why, Listed: l.Listed,
			Findings: convert(findings[t.Name]), Severity: detect.Max(findings[t.Name]).String(),
			Hash: hex.EncodeToString(sum[:]), Pin: PinUnknown,
		}
		if tr.Why == nil {
			tr.Why = []string{}
		}
		if opts.PinStatus != nil {
			tr.Pin = opts.PinStatus(r.WeirName, r.Command, cat.instructions, t.detect(r.WeirName))
		}
		r.Tools = append(r.Tools, tr)
	}
	slices.SortStableFunc(r.Tools, func(a, b ToolReport) int { return strings.Compare(a.Name, b.Name) })
	r.Findings = convert(findings[""])
	for _, p := range cat.prompts {
		r.Prompts = append(r.Prompts, p.Name)
	}
	for _, x := range cat.resources {
		r.Resources = append(r.Resources, x.Name)
	}
	slices.Sort(r.Prompts)
	slices.Sort(r.Resources)
}

func labelNames(l flow.Labels) []string {
	n := l.Names()
	if n == nil {
		return []string{}
	}
	return n
}

func convert(fs []detect.Finding) []Finding {
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		out = append(out, Finding{Detector: f.Detector, Severity: f.Severity.String(), Field: f.Field, Evidence: f.Evidence, Message: f.Message})
	}
	return out
}

func (t rawTool) detect(server string) detect.Tool {
	return detect.Tool{Server: server, Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations}
}

// def is the part of the definition labelling reads, read the way the
// relay reads it.
func (t rawTool) def() engine.ToolDef {
	d := engine.ToolDef{Name: t.Name}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &schema) == nil {
		for p := range schema.Properties {
			d.Params = append(d.Params, p)
		}
		slices.Sort(d.Params)
	}
	var ann struct {
		ReadOnlyHint    *bool `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
		OpenWorldHint   *bool `json:"openWorldHint"`
	}
	if json.Unmarshal(t.Annotations, &ann) == nil {
		d.Annotations = engine.Annotations{ReadOnly: ann.ReadOnlyHint, Destructive: ann.DestructiveHint, OpenWorld: ann.OpenWorldHint}
	}
	return d
}

// AssessTrifecta gives the lethal-trifecta verdict for a set of scanned
// servers: which tools supply private data, untrusted input and a way out,
// whether all three are present, and whether every server supplying a leg
// runs behind Weir. Disabled servers are left out: the client does not
// start them.
func AssessTrifecta(reports []ServerReport) Trifecta {
	t := Trifecta{Private: []string{}, Untrusted: []string{}, Sink: []string{}, Unguarded: []string{}, Unknown: []string{}}
	for _, r := range reports {
		if r.Disabled || r.Transport == TransportBuiltin {
			continue
		}
		if r.Status != StatusScanned {
			t.Unknown = append(t.Unknown, r.Name)
			continue
		}
		supplies := false
		for _, tool := range r.Tools {
			id := r.WeirName + "/" + tool.Name
			for _, l := range tool.Labels {
				supplies = true
				switch l {
				case "private":
					t.Private = append(t.Private, id)
				case "untrusted":
					t.Untrusted = append(t.Untrusted, id)
				case "sink":
					t.Sink = append(t.Sink, id)
				}
			}
		}
		if supplies && !r.Wrapped && !slices.Contains(t.Unguarded, r.Name) {
			t.Unguarded = append(t.Unguarded, r.Name)
		}
	}
	t.Present = len(t.Private) > 0 && len(t.Untrusted) > 0 && len(t.Sink) > 0
	unknown := ""
	if len(t.Unknown) > 0 {
		unknown = fmt.Sprintf(" (%s not scanned, so not counted)", count(len(t.Unknown), "server"))
	}
	switch {
	case t.Present && len(t.Unguarded) > 0:
		t.Severity = detect.High.String()
		t.Summary = fmt.Sprintf("Lethal trifecta present: %s; %s not behind Weir, so nothing stops a prompt-injected agent from leaking%s. Run weir wrap on this file.",
			legs(t), strings.Join(t.Unguarded, ", ")+isAre(len(t.Unguarded)), unknown)
	case t.Present:
		t.Severity = detect.Low.String()
		t.Summary = fmt.Sprintf("Lethal trifecta present: %s; every server supplying it runs behind Weir, whose flow control decides each sink call%s.",
			legs(t), unknown)
	default:
		t.Severity = detect.None.String()
		var missing []string
		if len(t.Private) == 0 {
			missing = append(missing, "private data")
		}
		if len(t.Untrusted) == 0 {
			missing = append(missing, "untrusted input")
		}
		if len(t.Sink) == 0 {
			missing = append(missing, "a way out (sink)")
		}
		t.Summary = fmt.Sprintf("No lethal trifecta: no tool supplies %s%s.", strings.Join(missing, " or "), unknown)
	}
	return t
}

// legs says which legs how many tools supply.
func legs(t Trifecta) string {
	n := func(k int, one, many string) string { return count(k, "tool") + " " + plural(k, one, many) }
	return fmt.Sprintf("%s private data, %s untrusted input and %s data out",
		n(len(t.Private), "reads", "read"), n(len(t.Untrusted), "brings in", "bring in"), n(len(t.Sink), "can send", "can send"))
}

// count says "1 tool", "3 tools".
func count(n int, what string) string {
	return strconv.Itoa(n) + " " + plural(n, what, what+"s")
}

func isAre(n int) string {
	if n == 1 {
		return " is"
	}
	return " are"
}

// serverEnv is the environment a stdio server starts with: opts.Environ
// (or this process's), then the entry's envFile, then its env.
func serverEnv(s Server, opts ScanOptions) (env []string, notes []string) {
	base := opts.Environ
	if base == nil {
		base = os.Environ()
	}
	over := map[string]string{}
	if s.EnvFile != "" {
		p := s.EnvFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(opts.Dir, p)
		}
		vars, err := readEnvFile(p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("envFile %s was not read (%v); the server started without it", s.EnvFile, errText(err)))
		}
		for k, v := range vars {
			over[k] = v
		}
	}
	for k, v := range s.Env {
		over[k] = v
	}
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+over[k])
	}
	return env, notes
}

// readEnvFile reads KEY=VALUE lines (a .env file): blank lines and #
// comments are skipped, "export " is allowed, and one pair of matching
// quotes around a value is removed.
func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// serverDir is the working directory a stdio server starts in: its cwd
// (a relative one from opts.Dir), else the project directory of a Claude
// Code project entry, else the current directory.
func serverDir(s Server, opts ScanOptions) string {
	switch {
	case s.Cwd != "" && filepath.IsAbs(s.Cwd):
		return s.Cwd
	case s.Cwd != "" && s.Project != "":
		return filepath.Join(s.Project, s.Cwd)
	case s.Cwd != "":
		return filepath.Join(opts.Dir, s.Cwd)
	case s.Project != "":
		return s.Project
	}
	return ""
}

// headReader passes a server's stdout through and keeps its first bytes,
// to quote them when they are not JSON-RPC.
type headReader struct {
	r   io.ReadCloser
	max int
	mu  sync.Mutex
	buf []byte
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 {
		h.mu.Lock()
		if room := h.max - len(h.buf); room > 0 {
			h.buf = append(h.buf, p[:min(n, room)]...)
		}
		h.mu.Unlock()
	}
	return n, err
}

func (h *headReader) Close() error { return h.r.Close() }

func (h *headReader) head() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.buf)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

// String returns the last few lines, trimmed.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "�")), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// lines maps each server's JSON pointer to the line its entry starts on
// (its key, for an entry in an object).
func (c *Config) lines() map[string]int {
	out := map[string]int{}
	var root *node
	var err error
	if c.syntax == syntaxYAML {
		root, err = parseYAML(c.raw)
	} else {
		root, err = parseJSONC(c.raw)
	}
	if err != nil || root == nil {
		return out
	}
	for _, s := range c.Servers {
		if off, ok := pointerOffset(root, s.Path); ok {
			out[s.Path], _ = position(c.raw, off)
		}
	}
	return out
}

// pointerOffset finds the byte offset of the value at a JSON pointer, or
// of its key when the value is an object member.
func pointerOffset(root *node, ptr string) (int, bool) {
	if ptr == "" || ptr[0] != '/' {
		return 0, false
	}
	n, off := root, root.start
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.kind {
		case kObject:
			m := n.member(tok)
			if m == nil {
				return 0, false
			}
			n, off = m.val, m.keyStart
		case kArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.elems) {
				return 0, false
			}
			n = n.elems[i]
			off = n.start
		default:
			return 0, false
		}
	}
	return off, true
}
