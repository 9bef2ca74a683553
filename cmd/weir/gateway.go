package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/gateway"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/relay"
	"github.com/weir-sec/weir/internal/transport"
)

type gatewayFlags struct {
	config         string
	stdio          bool
	listen         string
	monitor        bool
	maxMessage     int
	requestTimeout time.Duration
}

func newGatewayCmd() *cobra.Command {
	var f gatewayFlags
	cmd := &cobra.Command{
		Use:   "gateway --config gateway.yaml [--stdio]",
		Short: "Serve many MCP servers (stdio and HTTP) behind one endpoint",
		Long: `Gateway puts every server of a configuration file behind one MCP endpoint:
Streamable HTTP at http://LISTEN/mcp, or the proxy's own stdio with --stdio
(for a desktop client that wants one entry for all of them).

  listen: 127.0.0.1:8931          # ignored with --stdio
  policy: ./policy.yaml           # optional; the default preset otherwise
  tokens_file: ./tokens.txt       # optional; WEIR_TOKENS works too
  store: {url: "postgres://weir:${PGPASSWORD}@db:5432/weir"}  # optional: replicas share it
  servers:
    notes: {command: [npx, -y, "@modelcontextprotocol/server-filesystem", /home/me/notes]}
    web:   {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer ${WEB_TOKEN}"}}

Tools and prompts are exposed as SERVER__NAME and resources as SERVER+URI;
server names hold no '_' or '+', so both split back at the first separator.
Each client session gets its own copy of every stdio server, and all of a
session's servers decide in one taint session: private data read through
one server cannot leave through another. A server that exits is restarted
with backoff (the others keep working), and the client is told to list
again. HTTP serving is secured as for weir serve (loopback by default,
tokens required elsewhere, Origin and Host checked, rate limits).

State (taint, rate limits, pins, approvals, recordings) is kept in
$WEIR_HOME/state.db; with store: {url: postgres://...} in the file, or
WEIR_STORE_URL, it is kept in PostgreSQL instead, and several gateways
sharing that database serve the same sessions: a private read through one
blocks a leak through another.`,
		Example: `  weir gateway --config ~/.weir/gateway.yaml
  weir gateway --config gateway.yaml --stdio      # in a desktop client's config
  WEIR_TOKENS=team=$(cat token) weir gateway --config gateway.yaml --listen 0.0.0.0:8931`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGateway(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "the gateway configuration file (required)")
	fl.BoolVar(&f.stdio, "stdio", false, "serve one client on this process's stdin and stdout instead of HTTP")
	fl.StringVar(&f.listen, "listen", "", "address to serve on (default: the file's listen, else "+gateway.DefaultListen+")")
	fl.BoolVar(&f.monitor, "monitor", false, "decide and log everything, block nothing")
	fl.IntVar(&f.maxMessage, "max-message-bytes", jsonrpc.DefaultMaxMessage, "largest JSON-RPC message accepted from either side")
	fl.DurationVar(&f.requestTimeout, "request-timeout", relay.DefaultRequestTimeout, "how long a request may wait for a server's answer (0 waits forever)")
	return cmd
}

func runGateway(ctx context.Context, f gatewayFlags) error {
	if f.config == "" {
		return &exitError{code: 2, err: fmt.Errorf("--config is required: a gateway.yaml listing the servers (see weir gateway --help)")}
	}
	cfg, err := gateway.LoadFile(f.config, os.LookupEnv)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if f.listen == "" {
		f.listen = cfg.Listen
	}
	tokens, err := loadTokens(cfg.TokensFile)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	log := newLogger(os.Stderr).With("weir", "gateway")
	env, err := openEnv(ctx, cfg.Policy, cfg.StoreURL)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer env.close()
	defer env.maintain(ctx)()
	pol, ask := env.policies(f.monitor)
	var front *transport.Front
	metrics := gateway.NewMetrics(func() float64 {
		if front == nil {
			return 1
		}
		return float64(front.Sessions.Load())
	})
	relays := gateway.NewRelays(gateway.Deps{
		Policy: pol, Ask: ask, Hasher: env.hasher, Store: env.store, Audit: env.audit, Recorder: env.store, Written: env.store, Approvals: env.book,
		Logger: log, RequestTimeout: requestTimeout(f.requestTimeout), MaxMessage: f.maxMessage, Metrics: metrics,
	})
	gw := gateway.NewGateway(cfg.Servers, relays, version, os.Stderr)

	defer reloadOnHUP(cfg.Policy, env, f.monitor, log, relays.SetPolicy)()

	if f.stdio {
		log.Debug("serving on stdio", "servers", len(cfg.Servers), "session", env.session)
		gw.Serve(ctx, transport.FrontSession{Taint: env.session}, transport.NewStdio(pollableStdin(), os.Stdout, f.maxMessage))
		return nil
	}
	front = transport.NewFront(transport.FrontOptions{
		DefaultSession: os.Getenv("WEIR_SESSION"),
		MaxMessage:     f.maxMessage,
		Key:            env.key,
		Logger:         log,
		Serve:          gw.Serve,
	})
	defer front.Close()
	srv, err := gateway.New(gateway.Config{
		Listen: f.listen, Tokens: tokens, AllowOrigins: cfg.AllowOrigins, Rate: cfg.Rate, Logger: log,
	}, front, relays.Health(), metrics)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if f.listen == "" {
		f.listen = gateway.DefaultListen
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("listen %s: %w", f.listen, err)}
	}
	log.Info("serving", "url", "http://"+ln.Addr().String()+"/mcp", "servers", len(cfg.Servers), "policy", pol.Source, "tenants", tokens.Len())
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Serve(sctx, ln)
}
