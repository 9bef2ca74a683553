package gateway

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weir-sec/weir/internal/audit"
)

// Metrics are what /metrics exposes. Each gateway has its own registry,
// so tests and several servers in one process do not collide.
type Metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	decide    prometheus.Histogram
	upstream  *prometheus.HistogramVec
	requests  *prometheus.CounterVec
	up        *prometheus.GaugeVec
}

// NewMetrics registers Weir's metrics; sessions reports the open sessions.
func NewMetrics(sessions func() float64) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_decisions_total",
		Help: "Decisions by event, verdict and rule (rule is empty for a plain allow).",
	}, []string{"event", "verdict", "rule"})
	m.decide = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "weir_decision_seconds",
		Help:    "Time to gather inputs for and decide one tools/call.",
		Buckets: prometheus.ExponentialBuckets(25e-6, 2, 16),
	})
	m.upstream = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "weir_upstream_seconds",
		Help:    "Time from sending a request upstream to its answer, by server and method.",
		Buckets: prometheus.ExponentialBuckets(250e-6, 2, 18),
	}, []string{"server", "method"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_http_requests_total",
		Help: "HTTP requests by tenant and status code.",
	}, []string{"tenant", "code"})
	m.up = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "weir_upstream_up",
		Help: "1 when the upstream answered its last request, 0 when it failed.",
	}, []string{"server"})
	sess := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "weir_sessions",
		Help: "Client sessions open now.",
	}, sessions)
	m.reg.MustRegister(m.decisions, m.decide, m.upstream, m.requests, m.up, sess,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveDecision records how long a decision took.
func (m *Metrics) ObserveDecision(took time.Duration) { m.decide.Observe(took.Seconds()) }

// ObserveUpstream records one upstream exchange and the upstream's health.
func (m *Metrics) ObserveUpstream(server, method string, took time.Duration, ok bool) {
	m.upstream.WithLabelValues(server, method).Observe(took.Seconds())
	v := 0.0
	if ok {
		v = 1
	}
	m.up.WithLabelValues(server).Set(v)
}

// Auditor counts each record's decision, then hands the records on.
func (m *Metrics) Auditor(next auditor) auditor { return countingAuditor{m, next} }

type auditor interface {
	AppendAll(rs []*audit.Record) error
}

type countingAuditor struct {
	m    *Metrics
	next auditor
}

func (a countingAuditor) AppendAll(rs []*audit.Record) error {
	for _, r := range rs {
		a.m.decisions.WithLabelValues(r.Event, r.Verdict, r.Rule).Inc()
	}
	return a.next.AppendAll(rs)
}
