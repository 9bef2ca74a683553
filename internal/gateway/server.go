package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/weir-sec/weir/internal/transport"
)

// DefaultListen is where Weir's HTTP modes listen unless told otherwise.
const DefaultListen = "127.0.0.1:8931"

// Config configures a Server.
type Config struct {
	// Listen is the address to bind (DefaultListen when empty).
	Listen string
	// Tokens, when it holds any, are required of every request; with none,
	// only a loopback address may be bound.
	Tokens *Tokens
	// AllowOrigins are the Origin values a browser-based client may send;
	// a request with any other Origin gets 403 (DNS rebinding).
	AllowOrigins []string
	// Rate and Burst bound each tenant's requests per second (0: 100 and
	// twice that).
	Rate  float64
	Burst int
	// MaxHeaderBytes bounds a request's headers (0: 32 KiB).
	MaxHeaderBytes int
	Logger         *slog.Logger
}

// ErrNeedsCredentials is returned when a non-loopback address is to be
// bound without any token configured.
var ErrNeedsCredentials = errors.New("refusing to listen beyond loopback without credentials")

// Server is the hardened HTTP service around an MCP endpoint.
type Server struct {
	cfg     Config
	log     *slog.Logger
	mcp     http.Handler
	health  *Health
	metrics *Metrics
	loop    bool // bound to a loopback address

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// New returns a server for the MCP endpoint handler mcp at /mcp. It checks
// the configuration: a non-loopback address without tokens is refused.
func New(cfg Config, mcp http.Handler, health *Health, metrics *Metrics) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT, e.g. %s", cfg.Listen, DefaultListen)
	}
	loop := isLoopbackHost(host)
	if !loop && cfg.Tokens.Len() == 0 {
		return nil, fmt.Errorf("%w: %s is reachable from other machines, so every request must carry a bearer token. Set WEIR_TOKENS=tenant=TOKEN, or give a tokens file (weir serve --tokens-file FILE; tokens_file: in a gateway config; make a token with `weir serve --new-token NAME`), or listen on 127.0.0.1", ErrNeedsCredentials, cfg.Listen)
	}
	for _, o := range cfg.AllowOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return nil, fmt.Errorf("--allow-origin %q: an origin is scheme://host[:port], e.g. http://localhost:3000", o)
		}
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 100
	}
	if cfg.Burst <= 0 {
		cfg.Burst = int(2 * cfg.Rate)
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = 32 << 10
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, log: log, mcp: mcp, health: health, metrics: metrics, loop: loop, limiters: map[string]*rate.Limiter{}}, nil
}

// isLoopbackHost reports whether a listen host can only be reached from
// this machine. An empty host (":8931") binds every interface.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler is the whole service: /mcp, /healthz and /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.guard(s.mcp))
	mux.Handle("/metrics", s.guard(s.metrics.Handler()))
	mux.HandleFunc("/healthz", s.healthz)
	return s.hostCheck(mux)
}

// Serve serves on ln until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler: s.Handler(),
		// Slow-loris safe: headers and bodies must arrive promptly. There
		// is no write timeout, since SSE streams and long tool calls are
		// legitimate; a stream ends when its client goes away.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-done
	return nil
}

// hostCheck refuses, on loopback, a Host header that does not name
// loopback: a page on another site that made its name resolve to
// 127.0.0.1 (DNS rebinding) cannot reach the endpoint.
func (s *Server) hostCheck(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.loop {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if !isLoopbackHost(strings.Trim(host, "[]")) {
				s.refuse(w, r, "", http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name; Weir on loopback answers only localhost, 127.0.0.1 and [::1]", r.Host))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// guard applies the Origin check, authentication and the rate limit.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o, r) {
			s.refuse(w, r, "", http.StatusForbidden, fmt.Sprintf("Origin %q is not allowed (weir serve --allow-origin adds one)", o))
			return
		}
		tenant := ""
		if s.cfg.Tokens.Len() > 0 {
			t, err := s.cfg.Tokens.Authenticate(r.Header.Get("Authorization"))
			if err != nil && !s.limiter(anonymous).Allow() {
				// Requests without a valid token share one budget, so
				// guessing tokens is as slow as a tenant's use.
				w.Header().Set("Retry-After", "1")
				s.refuse(w, r, "", http.StatusTooManyRequests, "too many requests without a valid token; slow down")
				return
			}
			if err != nil {
				challenge := `Bearer realm="weir"`
				if errors.Is(err, ErrBadToken) {
					challenge += `, error="invalid_token"`
				}
				w.Header().Set("WWW-Authenticate", challenge)
				s.refuse(w, r, "", http.StatusUnauthorized, "a valid bearer token is required (Authorization: Bearer TOKEN)")
				return
			}
			tenant = t
		}
		if !s.limiter(tenant).Allow() {
			w.Header().Set("Retry-After", "1")
			s.refuse(w, r, tenant, http.StatusTooManyRequests, "rate limit exceeded; slow down")
			return
		}
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(transport.WithPrincipal(r.Context(), tenant)))
		s.metrics.requests.WithLabelValues(tenant, strconv.Itoa(sw.code)).Inc()
	})
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, tenant string, code int, msg string) {
	s.log.Info("refused a request", "status", code, "path", r.URL.Path, "why", msg)
	s.metrics.requests.WithLabelValues(tenant, strconv.Itoa(code)).Inc()
	http.Error(w, msg, code)
}

// originAllowed: the page's own origin (the Origin names the Host the
// request was sent to, which on loopback hostCheck has already checked),
// or one the configuration allows.
func (s *Server) originAllowed(o string, r *http.Request) bool {
	if u, err := url.Parse(o); err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, a := range s.cfg.AllowOrigins {
		if strings.EqualFold(strings.TrimRight(a, "/"), o) {
			return true
		}
	}
	return false
}

// anonymous names the shared budget of requests that carry no valid
// token; no tenant can be called this (tenant names start with a letter
// or digit).
const anonymous = "\x00unauthenticated"

// limiter is the tenant's. Tenants are the configured tokens' (or the one
// anonymous tenant on loopback), so the map is bounded.
func (s *Server) limiter(tenant string) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limiters[tenant]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(s.cfg.Rate), s.cfg.Burst)
		s.limiters[tenant] = l
	}
	return l
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	up := s.health.Snapshot()
	status, code := "ok", http.StatusOK
	for _, ok := range up {
		if !ok {
			status, code = "degraded", http.StatusServiceUnavailable
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "upstreams": up})
}

// statusWriter remembers the status code for metrics, and still lets the
// front flush SSE events through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
