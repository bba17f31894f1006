// Package metrics is the one home of Masthead's Prometheus series: the registry, every metric
// definition with its labels, and the /metrics handler that internal/server serves on its own
// listen address (MASTHEAD_METRICS_ADDR), never on the public one.
//
// Other packages record through the methods of *Metrics (a request, a rate-limit refusal, a
// grant, a tool call, a scheduler run); every method is safe on a nil *Metrics, so a package
// used without metrics (a unit test, a tool) needs no stand-in. Each label takes values from a
// fixed set or from code (route templates, tool names), never from a request's raw path or
// input: values outside a fixed set are recorded as "other", so the number of series stays
// bounded whatever clients send.
//
// It imports client_golang and pgxpool, and no masthead package: everything may import it.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Surfaces label requests by the part of the service they reached.
const (
	SurfaceAuth      = "auth"      // /auth/v1 (GoTrue-compatible)
	SurfaceOAuth     = "oauth"     // /auth/v1/oauth/* and the authorization server's discovery documents
	SurfaceREST      = "rest"      // /rest/v1
	SurfaceStorage   = "storage"   // /storage/v1
	SurfaceMCP       = "mcp"       // /mcp and its protected-resource metadata
	SurfaceHealth    = "health"    // /healthz, /readyz
	SurfaceDashboard = "dashboard" // everything else: the dashboard's pages and assets
)

// Rate limits, as the limit label of masthead_rate_limit_refusals_total.
const (
	LimitTokenIP           = "token_ip"            // POST /auth/v1/token per client address
	LimitTokenAccount      = "token_account"       // password sign-ins per client address and email
	LimitTokenAccountTotal = "token_account_total" // password sign-ins per email across clients
	LimitOAuthAuthorize    = "oauth_authorize"     // GET /auth/v1/oauth/authorize per client address
	LimitOAuthRegister     = "oauth_register"      // dynamic client registrations per client address
)

// Grant types, as the grant_type label of masthead_auth_grants_total; anything else a client
// sends is GrantUnsupported.
const (
	GrantPassword          = "password"
	GrantRefreshToken      = "refresh_token"
	GrantPKCE              = "pkce"
	GrantAuthorizationCode = "authorization_code"
	GrantUnsupported       = "unsupported"
)

// Outcomes of a grant, a tool call or a scheduler run.
const (
	OutcomeOK          = "ok"           // granted, answered, ran
	OutcomeRefused     = "refused"      // the caller's fault: wrong password, invalid grant, a refusal the person can act on
	OutcomeRateLimited = "rate_limited" // refused with 429 by a rate limit
	OutcomeError       = "error"        // ours: the database or the service failed
)

// other stands for a label value outside its fixed set.
const other = "other"

var (
	limits     = []string{LimitTokenIP, LimitTokenAccount, LimitTokenAccountTotal, LimitOAuthAuthorize, LimitOAuthRegister}
	grantTypes = []string{GrantPassword, GrantRefreshToken, GrantPKCE, GrantAuthorizationCode, GrantUnsupported}
	outcomes   = []string{OutcomeOK, OutcomeRefused, OutcomeRateLimited, OutcomeError}
	methods    = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions}
	surfaces = []string{SurfaceAuth, SurfaceOAuth, SurfaceREST, SurfaceStorage, SurfaceMCP, SurfaceHealth, SurfaceDashboard}
)

// Metrics is one process's registry and series. Create it with New; the zero of *Metrics (nil)
// records nothing.
type Metrics struct {
	reg         *prometheus.Registry
	handler     http.Handler
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	refusals    *prometheus.CounterVec
	grants      *prometheus.CounterVec
	toolCalls   *prometheus.CounterVec
	toolLatency *prometheus.HistogramVec
	runs        *prometheus.CounterVec
	published   prometheus.Counter
	runLatency  prometheus.Histogram
}

// New registers every series, with the Go runtime and process collectors, on a registry of
// its own (not the global default one), so several services in one test process stay apart.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "masthead_http_requests_total",
			Help: "HTTP requests answered, by surface, method, route template and status code.",
		}, []string{"surface", "method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "masthead_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by surface, method and route template.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"surface", "method", "route"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "masthead_rate_limit_refusals_total",
			Help: "Requests refused with 429 by a rate limit, by limit.",
		}, []string{"limit"}),
		grants: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "masthead_auth_grants_total",
			Help: "Token requests at /auth/v1/token and /auth/v1/oauth/token, by grant type and outcome.",
		}, []string{"grant_type", "outcome"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "masthead_mcp_tool_calls_total",
			Help: "MCP tool calls by signed-in clients, by tool and outcome.",
		}, []string{"tool", "outcome"}),
		toolLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "masthead_mcp_tool_call_duration_seconds",
			Help:    "Time an MCP tool call took, by tool.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 15},
		}, []string{"tool"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "masthead_scheduler_runs_total",
			Help: "Runs of the scheduler loop, by outcome (ok or error).",
		}, []string{"outcome"}),
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "masthead_scheduler_published_total",
			Help: "Publications the scheduler published because they fell due.",
		}),
		runLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "masthead_scheduler_run_duration_seconds",
			Help:    "Time one scheduler run took, its batches and bookkeeping included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
	reg.MustRegister(m.requests, m.latency, m.refusals, m.grants, m.toolCalls, m.toolLatency,
		m.runs, m.published, m.runLatency,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The fixed label sets start at zero, so rate() and absent() work before the first event.
	for _, l := range limits {
		m.refusals.WithLabelValues(l)
	}
	for _, g := range grantTypes {
		for _, o := range outcomes {
			m.grants.WithLabelValues(g, o)
		}
	}
	m.runs.WithLabelValues(OutcomeOK)
	m.runs.WithLabelValues(OutcomeError)
	m.handler = promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		Registry:          reg,
		EnableOpenMetrics: true,
	}))
	return m
}

// Handler serves the registry in Prometheus' text format (OpenMetrics when asked).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// WatchPool adds the statistics of pool to every scrape, labelled pool=name (say "primary").
func (m *Metrics) WatchPool(name string, pool *pgxpool.Pool) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(newPoolCollector(name, pool.Stat))
}

// Request records one answered HTTP request. route is the router's template
// ("/rest/v1/:table"), never the request's path.
func (m *Metrics) Request(surface, method, route string, status int, took time.Duration) {
	if m == nil {
		return
	}
	surface, method = oneOf(surface, surfaces), oneOf(method, methods)
	m.requests.WithLabelValues(surface, method, route, statusLabel(status)).Inc()
	m.latency.WithLabelValues(surface, method, route).Observe(took.Seconds())
}

// RateLimited records one request a rate limit refused (one of the Limit constants).
func (m *Metrics) RateLimited(limit string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(oneOf(limit, limits)).Inc()
}

// Grant records the outcome of one token request; an unknown grant type counts as
// GrantUnsupported.
func (m *Metrics) Grant(grantType, outcome string) {
	if m == nil {
		return
	}
	if grantType = oneOf(grantType, grantTypes); grantType == other {
		grantType = GrantUnsupported
	}
	m.grants.WithLabelValues(grantType, oneOf(outcome, outcomes)).Inc()
}

// ToolCall records one MCP tool call. tool is a registered tool's name, which the MCP package
// fixes in code.
func (m *Metrics) ToolCall(tool, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(tool, oneOf(outcome, outcomes)).Inc()
	m.toolLatency.WithLabelValues(tool).Observe(took.Seconds())
}

// SchedulerRun records one run of the scheduler loop: how many items it published (some may
// have been before a failure) and how long it took.
func (m *Metrics) SchedulerRun(published int, took time.Duration, err error) {
	if m == nil {
		return
	}
	outcome := OutcomeOK
	if err != nil {
		outcome = OutcomeError
	}
	m.runs.WithLabelValues(outcome).Inc()
	m.published.Add(float64(published))
	m.runLatency.Observe(took.Seconds())
}

// oneOf is v when it is in set, else "other".
func oneOf(v string, set []string) string {
	for _, s := range set {
		if v == s {
			return v
		}
	}
	return other
}

// statusLabel is the status code as text; codes outside HTTP's range are "other".
func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return other
	}
	return strconv.Itoa(status)
}
