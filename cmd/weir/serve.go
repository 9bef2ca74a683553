package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/gateway"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/relay"
	"github.com/weir-sec/weir/internal/transport"
)

type serveFlags struct {
	upstream       string
	name           string
	listen         string
	headers        []string
	policy         string
	monitor        bool
	tokensFile     string
	origins        []string
	rate           float64
	maxMessage     int
	requestTimeout time.Duration
	newToken       string
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --upstream URL [--name NAME] [--listen 127.0.0.1:8931] [--header 'Name: value']...",
		Short: "Put a remote (Streamable HTTP) MCP server behind Weir",
		Long: `Serve fronts one remote MCP server at http://LISTEN/mcp: point your client
there instead of at the server. Every call is decided by the same engine,
state store and audit log as weir run, so private data read through a
weir run proxy cannot leave through a weir serve proxy of the same session,
nor the other way round.

Both protocol generations are served: 2025-11-25 clients get an HTTP session
(Mcp-Session-Id); 2026-07-28 stateless requests name their Weir session in a
Weir-Session header (the same key as WEIR_SESSION), or use WEIR_SESSION from
Weir's environment; Weir refuses to guess one.

Upstream credentials come only from --header (${VAR} expands from Weir's
environment); the client's Authorization header is never forwarded. On
loopback no credential is needed; on any other address Weir refuses to start
until tokens are configured: WEIR_TOKENS=tenant=TOKEN,... or --tokens-file
with "tenant sha256:HEX" lines (--new-token NAME makes one). Each tenant's
sessions, approvals and pins are its own.

/healthz reports Weir and the upstream; /metrics serves Prometheus metrics.`,
		Example: `  weir serve --upstream https://mcp.example.com/mcp --name example
  weir serve --upstream https://api.githubcopilot.com/mcp/ --name github \
    --header 'Authorization: Bearer ${GITHUB_TOKEN}'
  WEIR_TOKENS=team=$(cat token) weir serve --listen 0.0.0.0:8931 --upstream http://10.0.0.5:3001/mcp
  weir serve --new-token alice >> tokens.txt   # prints the token once, then the line to keep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.newToken != "" {
				return printNewToken(cmd, f.newToken)
			}
			return serve(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.upstream, "upstream", "", "the remote MCP endpoint (http:// or https://)")
	fl.StringVar(&f.name, "name", "", "server name used in tool names and policy matches (default: the upstream's host)")
	fl.StringVar(&f.listen, "listen", gateway.DefaultListen, "address to serve on; beyond loopback, tokens are required")
	fl.StringArrayVar(&f.headers, "header", nil, "header sent upstream with every request, 'Name: value' (repeatable; ${VAR} expands)")
	fl.StringVar(&f.policy, "policy", "", "policy file (default: $WEIR_HOME/policy.yaml, else the built-in default)")
	fl.BoolVar(&f.monitor, "monitor", false, "decide and log everything, block nothing")
	fl.StringVar(&f.tokensFile, "tokens-file", "", "bearer tokens, one \"tenant sha256:HEX\" line per tenant (also: WEIR_TOKENS=tenant=TOKEN,...)")
	fl.StringArrayVar(&f.origins, "allow-origin", nil, "an Origin a browser-based client may send (repeatable); any other Origin gets 403")
	fl.Float64Var(&f.rate, "rate", 100, "requests per second allowed to each tenant (bursts of twice that)")
	fl.IntVar(&f.maxMessage, "max-message-bytes", jsonrpc.DefaultMaxMessage, "largest JSON-RPC message accepted from either side")
	fl.DurationVar(&f.requestTimeout, "request-timeout", relay.DefaultRequestTimeout, "how long a request may wait for the upstream's answer (0 waits forever)")
	fl.StringVar(&f.newToken, "new-token", "", "print a new token for tenant NAME and the tokens-file line that accepts it, then exit")
	return cmd
}

func printNewToken(cmd *cobra.Command, tenant string) error {
	tok := gateway.NewToken()
	if err := new(gateway.Tokens).Add(tenant, tok); err != nil {
		return &exitError{code: 2, err: err}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "token for %s (shown once; give it to the client as Authorization: Bearer TOKEN):\n%s\n", tenant, tok)
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", tenant, gateway.HashToken(tok))
	return err
}

// upstreamURL checks --upstream.
func upstreamURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("--upstream is required: the remote server's MCP endpoint, e.g. https://mcp.example.com/mcp")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--upstream %q: want an http:// or https:// URL", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("--upstream: put credentials in --header, not in the URL")
	}
	return u, nil
}

// upstreamHeaders parses --header values (see gateway.ExpandHeaders).
func upstreamHeaders(vals []string, getenv func(string) (string, bool)) (http.Header, error) {
	h, err := gateway.ExpandHeaders(vals, getenv)
	if err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	return h, nil
}

// loadTokens reads WEIR_TOKENS and --tokens-file.
func loadTokens(file string) (*gateway.Tokens, error) {
	t, err := gateway.ParseTokensEnv(os.Getenv("WEIR_TOKENS"))
	if err != nil {
		return nil, err
	}
	if file != "" {
		if err := gateway.LoadTokensFile(file, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func serve(ctx context.Context, f serveFlags) error {
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
	tokens, err := loadTokens(f.tokensFile)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	log := newLogger(os.Stderr).With("weir", f.name)
	env, err := openEnv(ctx, f.policy, "")
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer env.close()
	defer env.maintain(ctx)()
	pol, ask := env.policies(f.monitor)

	var front *transport.Front
	metrics := gateway.NewMetrics(func() float64 { return float64(front.Sessions.Load()) })
	relays := gateway.NewRelays(gateway.Deps{
		Policy: pol, Ask: ask, Hasher: env.hasher, Store: env.store, Audit: env.audit, Recorder: env.store, Written: env.store, Approvals: env.book,
		Logger: log, RequestTimeout: requestTimeout(f.requestTimeout), MaxMessage: f.maxMessage, Metrics: metrics,
	})
	front = transport.NewFront(transport.FrontOptions{
		DefaultSession: os.Getenv("WEIR_SESSION"),
		MaxMessage:     f.maxMessage,
		Key:            env.key,
		Logger:         log,
		Serve:          relays.ServeRemote(gateway.Remote{Name: f.name, URL: u, Header: hdr}),
	})
	defer front.Close()

	srv, err := gateway.New(gateway.Config{
		Listen: f.listen, Tokens: tokens, AllowOrigins: f.origins, Rate: f.rate, Logger: log,
	}, front, relays.Health(), metrics)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("--listen %s: %w", f.listen, err)}
	}
	defer reloadOnHUP(f.policy, env, f.monitor, log, relays.SetPolicy)()
	log.Info("serving", "url", "http://"+ln.Addr().String()+"/mcp", "upstream", pin.CommandLine(nil, u.String()),
		"policy", pol.Source, "tenants", tokens.Len())
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Serve(sctx, ln)
}
