package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/gateway"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/relay"
	"github.com/weir-sec/weir/internal/scratch"
	"github.com/weir-sec/weir/internal/store"
	"github.com/weir-sec/weir/internal/transport"
)

type runFlags struct {
	name           string
	upstream       string
	headers        []string
	headerEnv      []string
	policy         string
	monitor        bool
	maxMessage     int
	requestTimeout time.Duration
	grace          time.Duration
	scratch        bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [--name NAME] [--policy FILE] [--monitor] -- CMD [ARGS...]",
		Short: "Run one stdio MCP server behind Weir",
		Long: `Run starts the MCP server CMD as a child process and relays its stdio
messages, deciding every tool call. Point your MCP client at this command
instead of the server's.

Every message Weir allows passes byte for byte. A blocked call never reaches
the server: the client gets a tool result with isError set that names the
rule and the sources. Proxies of one client share session state through
$WEIR_HOME/state.db, so private data read through one server cannot leave
through another.

The policy is --policy FILE, else $WEIR_HOME/policy.yaml if present, else the
built-in default (exfiltration blocked, lethal trifecta warned). The session
is WEIR_SESSION if set, else the MCP client's process. SIGHUP reloads the
policy. Nothing but JSON-RPC is written to stdout; diagnostics go to stderr
(WEIR_LOG=debug|info|warn|error sets the level).

With --upstream URL instead of a command, the server is a remote one reached
over Streamable HTTP: the client still speaks stdio to Weir, which is how a
desktop client puts a remote server behind Weir (weir wrap writes this).
--header sets what is sent upstream (${VAR} expands from the environment).`,
		Example: `  weir run --name notes -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  weir run --name web --policy ./policy.yaml -- uvx mcp-server-fetch
  weir run --monitor -- ./my-server --stdio
  weir run --name github --scratch -- npx -y @modelcontextprotocol/server-github
  weir run --name linear --upstream https://mcp.linear.app/mcp --header 'Authorization: Bearer ${LINEAR_TOKEN}'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 && f.upstream == "" {
				return transport.ErrNoCommand
			}
			if len(args) > 0 && f.upstream != "" {
				return errors.New("give either --upstream URL or -- CMD ARGS..., not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.upstream != "" {
				return runRemote(cmd.Context(), f)
			}
			if f.name == "" {
				f.name = serverName(args)
			}
			return runServer(cmd.Context(), f, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&f.name, "name", "", "server name used in tool names and policy matches (default: derived from CMD)")
	cmd.Flags().StringVar(&f.upstream, "upstream", "", "a remote MCP endpoint (Streamable HTTP) to relay to instead of a command")
	cmd.Flags().StringArrayVar(&f.headers, "header", nil, "with --upstream: a header sent with every request, 'Name: value' (repeatable; ${VAR} expands)")
	cmd.Flags().StringArrayVar(&f.headerEnv, "header-env", nil, "with --upstream: a header whose value is the environment variable VAR, 'Name=VAR' (repeatable; for clients that expand ${...} in args themselves)")
	cmd.Flags().StringVar(&f.policy, "policy", "", "policy file (default: $WEIR_HOME/policy.yaml, else the built-in default)")
	cmd.Flags().BoolVar(&f.monitor, "monitor", false, "decide and log everything, block nothing")
	cmd.Flags().BoolVar(&f.scratch, "scratch", false, "store every tool's large JSON-array results as tables and add the weir_query tool (the policy's scratch: block names tools one by one)")
	cmd.Flags().IntVar(&f.maxMessage, "max-message-bytes", jsonrpc.DefaultMaxMessage, "largest JSON-RPC message accepted from either side")
	cmd.Flags().DurationVar(&f.requestTimeout, "request-timeout", relay.DefaultRequestTimeout, "how long a request may wait for the server's answer before Weir answers it with an error (0 waits forever)")
	cmd.Flags().DurationVar(&f.grace, "shutdown-grace", 3*time.Second, "how long the server gets to exit after its input closes, and again after SIGTERM")
	return cmd
}

func runServer(ctx context.Context, f runFlags, argv []string) error {
	log := newLogger(os.Stderr).With("weir", f.name)
	env, err := openEnv(ctx, f.policy, "")
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer env.close()
	defer env.maintain(ctx)()
	pol, _ := env.policies(f.monitor)
	log.Debug("starting", "policy", pol.Source, "mode", pol.Mode.String(), "session", env.session, "session_from", env.sessionFrom)
	env.limitMemory = true
	limitMemory(pol.SessionMaxBytes)

	child, err := transport.Start(argv, nil, os.Stderr)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	stopChild := func() { child.Shutdown(context.Background(), f.grace) }
	go func() {
		<-ctx.Done()
		stopChild()
	}()

	r, err := env.relay(f, log, pin.CommandLine(argv, ""), engine.PackageOf(argv))
	if err != nil {
		stopChild()
		return &exitError{code: 2, err: err}
	}
	defer reloadOnHUP(f.policy, env, f.monitor, log, r.SetPolicy)()

	// When the client closes its input, the relay closes the server's: that
	// starts the shutdown sequence (close stdin, wait, SIGTERM, SIGKILL).
	serverIn := writeCloser{child.Stdin, func() error { go stopChild(); return nil }}
	err = r.Run(ctx,
		transport.NewStdio(pollableStdin(), os.Stdout, f.maxMessage),
		transport.NewStdio(child.Stdout, serverIn, f.maxMessage))
	go stopChild()
	code := child.Wait()
	if err != nil && ctx.Err() == nil {
		log.Warn("relay ended", "err", err)
	}
	if code != 0 {
		log.Info("MCP server exited", "code", code)
		return &exitError{code: exitCode(code)}
	}
	return nil
}

// runRemote relays the proxy's stdio to a remote server over Streamable
// HTTP, deciding as runServer does.
func runRemote(ctx context.Context, f runFlags) error {
	u, err := upstreamURL(f.upstream)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if f.name == "" {
		f.name = u.Hostname()
	}
	hdr, err := upstreamHeaders(f.headers, os.LookupEnv)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := headersFromEnv(hdr, f.headerEnv, os.LookupEnv); err != nil {
		return &exitError{code: 2, err: err}
	}
	log := newLogger(os.Stderr).With("weir", f.name)
	env, err := openEnv(ctx, f.policy, "")
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer env.close()
	defer env.maintain(ctx)()
	up := transport.NewHTTPUpstream(u.String(), transport.HTTPOptions{Header: hdr, MaxMessage: f.maxMessage, Logger: log})
	defer up.Close()
	r, err := env.relay(f, log, pin.CommandLine(nil, u.String()), u.Hostname())
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer reloadOnHUP(f.policy, env, f.monitor, log, r.SetPolicy)()
	err = r.Run(ctx, transport.NewStdio(pollableStdin(), os.Stdout, f.maxMessage), up)
	if err != nil && ctx.Err() == nil {
		log.Warn("relay ended", "err", err)
	}
	return nil
}

// headersFromEnv adds the --header-env headers: Name=VAR takes the value
// of VAR as it is, with no expansion, so a client that expands ${...} in
// a server's args itself can still keep a credential out of them.
func headersFromEnv(h http.Header, vals []string, getenv func(string) (string, bool)) error {
	for _, v := range vals {
		name, variable, ok := strings.Cut(v, "=")
		name, variable = strings.TrimSpace(name), strings.TrimSpace(variable)
		if !ok || name == "" || variable == "" {
			return fmt.Errorf("--header-env %q: want 'Name=VAR'", v)
		}
		// The name is checked as --header checks it.
		checked, err := gateway.ExpandHeaders([]string{name + ": x"}, getenv)
		if err != nil {
			return fmt.Errorf("--%w", err)
		}
		val, ok := getenv(variable)
		if !ok {
			return fmt.Errorf("--header-env %s: %s is not set in Weir's environment", name, variable)
		}
		if strings.ContainsAny(val, "\r\n") {
			return fmt.Errorf("--header-env %s: the value of %s must be one line", name, variable)
		}
		for k := range checked {
			h.Add(k, strings.Trim(val, " \t"))
		}
	}
	return nil
}

// relay is a weir run proxy's relay, in the proxy's session.
func (e *env) relay(f runFlags, log *slog.Logger, command, pkg string) (*relay.Relay, error) {
	pol, ask := e.policies(f.monitor)
	// The bounds are read now: a reload changes which tools are stored,
	// not the bounds, and a proxy started with no scratch tools (and no
	// --scratch) has no scratch database until it is restarted.
	if f.scratch || len(pol.Scratch.Tools) > 0 {
		var err error
		if e.scratch, err = scratch.Open(gateway.ScratchOptions(pol.Scratch)); err != nil {
			return nil, fmt.Errorf("the scratch database could not be opened: %w", err)
		}
	}
	return relay.New(relay.Options{
		Server:         f.name,
		Session:        e.session,
		Identity:       pin.Identity(f.name),
		Command:        command,
		Package:        pkg,
		Policy:         pol,
		AskPolicy:      ask,
		Hasher:         e.hasher,
		Store:          e.store,
		Audit:          e.audit,
		Recorder:       e.store,
		Written:        e.store,
		Approvals:      e.book,
		Logger:         log,
		RequestTimeout: requestTimeout(f.requestTimeout),
		Scratch:        e.scratch,
		ScratchAll:     f.scratch,
	}), nil
}

// policies is the policy and the one for clients that can ask a person,
// in monitor mode when asked.
func (e *env) policies(monitor bool) (pol, ask *policy.Policy) {
	if monitor {
		return monitored(e.policy), monitored(e.ask)
	}
	return e.policy, e.ask
}

// reloadOnHUP re-reads the policy on SIGHUP and hands it to set; a policy
// that does not load is logged and the current one kept. The returned
// function stops it.
func reloadOnHUP(policyPath string, e *env, monitor bool, log *slog.Logger, set func(p, ask *policy.Policy)) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			p, ask, err := policyfile.ResolveAsk(policyPath, e.home)
			if err != nil {
				log.Error("policy reload failed; keeping the current policy", "err", err)
				continue
			}
			if monitor {
				p, ask = monitored(p), monitored(ask)
			}
			set(p, ask)
			e.store.SetSessionMaxBytes(p.SessionMaxBytes)
			if e.limitMemory {
				limitMemory(p.SessionMaxBytes)
			}
			log.Info("policy reloaded", "policy", p.Source)
		}
	}()
	return func() { signal.Stop(hup); close(hup) }
}

// requestTimeout maps --request-timeout to relay.Options: 0 on the
// command line waits forever, which the relay spells as negative.
func requestTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// exitCode maps a child's exit code to ours; a server killed by a signal
// (-1) becomes 1.
func exitCode(c int) int {
	if c < 0 {
		return 1
	}
	return c
}

type writeCloser struct {
	io.Writer
	close func() error
}

func (w writeCloser) Close() error { return w.close() }

// env is what every command that decides needs: home, key, policy, session,
// state store and audit log.
type env struct {
	// limitMemory: this process holds one session (weir run), so its
	// memory limit follows session.max_bytes (see limitMemory).
	limitMemory bool
	home        string
	policy      *policy.Policy
	ask         *policy.Policy // for clients that can ask a person; nil if none
	hasher      *fingerprint.Hasher
	key         []byte // the install key, which replicas share
	session     string
	sessionFrom string
	store       store.State // SQLite by default; PostgreSQL for replicas
	audit       auditSink
	book        *approval.Book
	scratch     *scratch.DB // the proxy's scratch database, when it has one
}

// openEnv opens what a proxy needs. storeURL names a PostgreSQL state
// store (a gateway's store: {url}); empty, WEIR_STORE_URL does, or else
// the SQLite file of $WEIR_HOME is used.
func openEnv(ctx context.Context, policyPath, storeURL string) (*env, error) {
	home, err := store.Home()
	if err != nil {
		return nil, err
	}
	e := &env{home: home}
	if e.policy, e.ask, err = policyfile.ResolveAsk(policyPath, home); err != nil {
		return nil, err
	}
	key, err := store.LoadKey(home)
	if err != nil {
		return nil, err
	}
	e.key = key
	if e.hasher, err = fingerprint.NewHasher(key); err != nil {
		return nil, err
	}
	sealer, err := approval.NewSealer(key)
	if err != nil {
		return nil, err
	}
	if e.session, e.sessionFrom, err = store.SessionKey(); err != nil {
		return nil, err
	}
	if e.store, err = store.Open(ctx, home, storeURL); err != nil {
		return nil, err
	}
	// The store keeps each session within the bound its mirrors keep in
	// memory (a reload's new bound applies to later appends).
	e.store.SetSessionMaxBytes(e.policy.SessionMaxBytes)
	if e.audit, err = openAuditLog(home, e.policy, e.store); err != nil {
		e.store.Close()
		return nil, err
	}
	e.book = &approval.Book{Store: e.store, Sealer: sealer}
	e.prune(ctx)
	return e, nil
}

// prune drops what is past its retention: session state
// state.retention_days after a session's last activity (to a tombstone of
// its labels), recordings and written entries record.retention_days after
// their session's last record.
func (e *env) prune(ctx context.Context) {
	if days := e.policy.StateRetentionDays; days > 0 {
		if n, err := e.store.Prune(ctx, time.Now().AddDate(0, 0, -days)); err != nil {
			slog.Warn("pruning old session state failed", "err", err)
		} else if n > 0 {
			slog.Debug("pruned old sessions to their labels", "sessions", n, "retention_days", days)
		}
	}
	if days := e.policy.Record.RetentionDays; days > 0 {
		if _, err := e.store.PruneRecords(ctx, time.Now().AddDate(0, 0, -days)); err != nil {
			slog.Warn("pruning old recordings failed", "err", err)
		}
		if err := e.store.PruneWritten(ctx, time.Now().AddDate(0, 0, -days)); err != nil {
			slog.Warn("pruning old written entries failed", "err", err)
		}
	}
}

// pruneEvery is how often a command that runs all day prunes again (it
// prunes when it starts too).
var pruneEvery = time.Hour

// maintain prunes every pruneEvery until ctx ends or the returned stop is
// called, which waits for a prune in progress: a proxy or gateway that runs
// for weeks keeps its state within retention without a restart.
func (e *env) maintain(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(pruneEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				e.prune(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (e *env) close() {
	if e.scratch != nil {
		e.scratch.Close()
	}
	e.store.Close()
	e.audit.Close()
}

// monitored is p in monitor mode (nil stays nil).
func monitored(p *policy.Policy) *policy.Policy {
	if p == nil {
		return nil
	}
	return p.WithMode(policy.Monitor)
}

// serverName derives a server name from its command: the package or script
// a launcher runs (npx -y @scope/server-x@1 → server-x), else the command.
func serverName(argv []string) string {
	launchers := map[string]bool{"npx": true, "uvx": true, "node": true, "python": true, "python3": true, "uv": true, "bunx": true, "deno": true, "pipx": true, "docker": true}
	name := filepath.Base(argv[0])
	if launchers[name] {
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") || a == "run" {
				continue
			}
			name = a
			break
		}
	}
	name = filepath.Base(name)
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, filepath.Ext(name))
	if name == "" {
		return "server"
	}
	return name
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("WEIR_LOG")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// memoryHeadroom is what a weir run proxy is given beyond its session's
// bound: the process at rest takes about 10 MB of Go memory, a 1 MB
// result in flight a few more.
const memoryHeadroom = 32 << 20

// limitMemory sets the Go runtime's soft memory limit of a weir run proxy
// to its session's bound plus memoryHeadroom, unless GOMEMLIMIT is set.
// A session's fingerprints are packed arrays without pointers, which a
// collection marks without reading, so collecting more often near the
// limit is cheap; without it the heap grows to twice what is live (GOGC
// 100) and a proxy at its 64 MiB bound was measured at 140-170 MB
// resident. The limit is soft: past it the runtime gives the collector
// at most half the CPU and the proxy keeps working.
func limitMemory(sessionMaxBytes int64) {
	if os.Getenv("GOMEMLIMIT") != "" || sessionMaxBytes <= 0 {
		return
	}
	debug.SetMemoryLimit(sessionMaxBytes + memoryHeadroom)
}
