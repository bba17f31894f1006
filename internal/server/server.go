// Package server wires the service together for cmd/masthead and the end-to-end tests: the
// Echo instance with its middleware (request ids, access log and request metrics, CORS,
// recovery, body limit), the health endpoints, every surface mounted under its prefix, and
// /metrics on a listen address of its own. It is the one place that knows all surfaces; nothing
// imports it but cmd/masthead, e2e and tests.
//
// It may import config, pg, metrics and the surfaces (auth, rest, storage, mcp, and handlers for
// the dashboard); it must not import views or any test package, and it holds no business logic
// of its own: each surface owns its routes, its error format and its access rules.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"golang.org/x/net/netutil"

	"masthead/handlers"
	"masthead/internal/auth"
	"masthead/internal/client"
	"masthead/internal/config"
	"masthead/internal/mcp"
	"masthead/internal/metrics"
	"masthead/internal/pg"
	"masthead/internal/rest"
	"masthead/internal/scheduler"
	"masthead/internal/storage"
)

// Server is the HTTP service: create it with New, run it with Run or Serve, then Close it.
type Server struct {
	cfg       config.Config
	log       *slog.Logger
	pool      *pgxpool.Pool
	pools     *pg.Pools // pool and the read replicas
	auth      *auth.Service
	schema    *rest.SchemaCache
	echo      *echo.Echo
	metrics   *metrics.Metrics
	metricsLn net.Listener // from WithMetricsListener; nil: Serve listens on cfg.MetricsAddr, if set
	draining  atomic.Bool  // stopping: /readyz answers 503 while requests are still served
}

// Option changes what New mounts.
type Option func(*options)

type options struct {
	dashboard    bool
	demoLogins   []handlers.DemoLogin
	demoPassword string
	metricsLn    net.Listener
}

// WithoutDashboard serves the service surfaces only, for `masthead api`.
func WithoutDashboard() Option { return func(o *options) { o.dashboard = false } }

// WithDemoLogins lists the demo accounts and their password on the dashboard's sign-in page:
// for `masthead dev` only, which seeded them.
func WithDemoLogins(logins []handlers.DemoLogin, password string) Option {
	return func(o *options) { o.demoLogins, o.demoPassword = logins, password }
}

// WithMetricsListener serves /metrics on ln while Serve runs, instead of listening on
// cfg.MetricsAddr: cmd/masthead opens it before any database work, so a taken port is reported
// at once. Serve closes it.
func WithMetricsListener(ln net.Listener) Option { return func(o *options) { o.metricsLn = ln } }

// New connects to the database and builds the handler with every surface mounted. cfg must
// pass Validate.
func New(ctx context.Context, cfg config.Config, log *slog.Logger, opts ...Option) (*Server, error) {
	o := options{dashboard: true}
	for _, opt := range opts {
		opt(&o)
	}
	keys, err := auth.ParseKeySet([]byte(cfg.JWTKeys))
	if err != nil {
		return nil, err
	}
	dbOpts := pg.Options{Pooler: cfg.DatabasePooler == "transaction"}
	pool, err := pg.OpenWith(ctx, cfg.DatabaseURL, dbOpts)
	if err != nil {
		return nil, err
	}
	var replicas []*pgxpool.Pool
	for i, u := range cfg.ReadURLs() {
		r, err := pg.OpenWith(ctx, u, dbOpts)
		if err != nil {
			pool.Close()
			pg.NewPools(nil, replicas, 0).Close()
			return nil, fmt.Errorf("server: read replica %d: %w", i+1, err)
		}
		replicas = append(replicas, r)
	}
	s := &Server{cfg: cfg, log: log, pool: pool, pools: pg.NewPools(pool, replicas, cfg.ReadMaxLag),
		echo: echo.New(), metrics: metrics.New(), metricsLn: o.metricsLn}
	if err := s.metrics.WatchPool("primary", pool); err != nil {
		s.Close()
		return nil, err
	}
	// Replicas serve reads only once measured: before Serve starts watching them, measure once.
	s.pools.Check(ctx, log)
	if err := s.mount(ctx, keys, o); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// readPreference honours a client's "Masthead-Read: primary": its reads see its own writes
// at once, whatever the replicas' lag (the dashboard sends it for a while after each change).
func readPreference(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.EqualFold(c.Request().Header.Get(client.ReadHeader), client.ReadPrimary) {
			r := c.Request()
			c.SetRequest(r.WithContext(pg.ReadPrimary(r.Context())))
		}
		return next(c)
	}
}

// mount lists every surface and where it lives. Each surface brings its own routes and error
// format; the server only decides the prefix and the shared middleware.
func (s *Server) mount(ctx context.Context, keys *auth.KeySet, o options) error {
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = IPExtractor(s.cfg.TrustedProxies)
	e.HTTPErrorHandler = s.httpError
	e.Use(requestID, s.accessLog, s.recover, cors(), s.guardBody, bodyLimit, readPreference)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	// Identity (GoTrue-compatible). It applies the publishable-key check per route, because
	// its JWK set must stay public.
	var err error
	s.auth, err = auth.New(s.pool, auth.Options{
		Issuer:            s.cfg.Issuer(),
		PublishableKey:    s.cfg.PublishableKey,
		Keys:              keys,
		AccessTTL:         s.cfg.JWTExp,
		ReuseInterval:     s.cfg.RefreshReuseInterval,
		BcryptCost:        s.cfg.BcryptCost,
		ReauthWindow:      s.cfg.ReauthWindow,
		PasswordMinLength: s.cfg.PasswordMinLength,
		TokenCacheSize:    cmp.Or(s.cfg.TokenCacheSize, -1), // the setting's 0 is none, auth's the default
		IPLimit:           s.limit(s.cfg.TokenRateIP),
		AccountLimit:      s.limit(s.cfg.TokenRateAccount),
		AccountTotal:      s.limit(s.cfg.TokenRateAccountTotal),
		AuthorizeLimit:    s.limit(s.cfg.AuthorizeRateIP),
		RegisterLimit:     s.limit(s.cfg.RegisterRateIP),
		OIDC:              oidcProviders(s.cfg.OIDC[:]),
		Metrics:           s.metrics,
	}, s.log)
	if err != nil {
		return err
	}
	s.auth.Mount(e.Group("/auth/v1"))
	s.auth.MountDiscovery(e)

	// REST (PostgREST-compatible), every route behind the publishable key. The schema cache
	// follows NOTIFY masthead while Serve runs.
	if s.schema, err = rest.NewSchemaCache(ctx, s.pool); err != nil {
		return err
	}
	rh := rest.NewHandler(s.pool, s.schema, s.auth, rest.Config{
		InvalidToken:     auth.ErrInvalidToken,
		MaxEmbeddedRows:  int64(s.cfg.MaxEmbeddedRows),
		MaxResponseBytes: s.cfg.MaxResponseBytes,
		PoolShare:        s.cfg.PoolShare,
		PoolShareWait:    s.cfg.PoolShareWait,
		ReadPool:         s.pools.Read,
		Aggregates:       s.cfg.DBAggregatesEnabled,
	}, s.log)
	rh.Mount(e.Group("/rest/v1", s.auth.RequireAPIKey))

	// Storage (bucket media). It applies the publishable key itself: signed-URL downloads are
	// opened by <img src> and carry no headers. Signed URLs are keyed off the JWT keys, which
	// every instance shares. Its connections draw on REST's shares of the pool, so the limit
	// (MASTHEAD_POOL_SHARE) is one per caller across both surfaces.
	backend, err := s.storageBackend()
	if err != nil {
		return err
	}
	st, err := storage.New(s.pool, s.auth, storage.Options{
		Backend: backend, SigningKey: storage.DeriveSigningKey(s.cfg.JWTKeys),
		InvalidToken: auth.ErrInvalidToken, APIKey: s.auth.RequireAPIKey, ReadPool: s.pools.Read,
		MaxUploadBytes: int64(s.cfg.StorageMaxUploadBytes), MaxListLimit: int64(s.cfg.StorageMaxListLimit),
		MaxBatch: s.cfg.StorageMaxBatch, MaxJSONBytes: int64(s.cfg.StorageMaxJSONBytes),
		MaxSignedURLTTL: s.cfg.StorageMaxSignedURLTTL, SignedUploadTTL: s.cfg.StorageSignedUploadTTL,
		SignedTokenCacheSize: cmp.Or(s.cfg.StorageSignedTokenCacheSize, -1), // the setting's 0 is none, storage's the default
		Shares:               rh.Shares(),
		LookupLanes:          s.cfg.StorageLookupLanes,
	}, s.log)
	if err != nil {
		return err
	}
	st.Mount(e.Group("/storage/v1"))

	// MCP for AI clients, without the publishable key (they never have it); its tools make
	// /rest/v1 requests with the caller's own token, handed to this service in process like the
	// dashboard's (the same routes, middleware and checks, without a loopback socket: that hop
	// was a third of what list_projects over MCP added to its REST request). /mcp verifies
	// tokens offline: REST checks the session on every tool call, so a lookup here too would
	// only add a transaction.
	rest := client.InProcess(s.echo, s.cfg.RequestTimeout)
	m, err := mcp.New(mcp.Config{
		APIURL: s.cfg.BaseURL(), PublishableKey: s.cfg.PublishableKey, PublicURL: s.cfg.BaseURL(),
		HTTPClient: rest,
		Auth: mcp.TokenVerifier(func(token string) ([]byte, error) {
			c, err := s.auth.Verifier().Verify(token)
			if err != nil {
				return nil, err
			}
			return c.Raw, nil
		}),
		InvalidToken: auth.ErrInvalidToken, Logger: s.log, Metrics: s.metrics,
	})
	if err != nil {
		return err
	}
	m.Mount(e)

	// The dashboard, unless this is `masthead api`.
	if o.dashboard {
		return s.mountDashboard(o)
	}
	return nil
}

// limit is a configured rate limit as this instance enforces it: its share when
// MASTHEAD_INSTANCES instances split the load, since each counts only the requests it answers
// (config.Rate.Share). No state is shared, so a limit costs no database write per request.
func (s *Server) limit(r config.Rate) auth.Limit {
	return auth.Limit(r.Share(s.cfg.Instances))
}

// oidcProviders hands the configured upstream providers to the identity service.
func oidcProviders(ps []config.OIDCProvider) []auth.OIDCProvider {
	out := make([]auth.OIDCProvider, len(ps))
	for i, p := range ps {
		out[i] = auth.OIDCProvider(p)
	}
	return out
}

// storageBackend is the S3-compatible store when configured, else the local folder.
func (s *Server) storageBackend() (storage.Backend, error) {
	if c := s.cfg.S3; c.Endpoint != "" {
		return storage.NewS3(storage.S3Config{Endpoint: c.Endpoint, Region: c.Region, Bucket: c.Bucket,
			AccessKey: c.AccessKey, SecretKey: c.SecretKey, PathStyle: c.PathStyle})
	}
	return storage.NewDisk(s.cfg.StorageDir)
}

// mountDashboard serves the editorial dashboard on the same address. It calls this service in
// process (client.InProcess) with the signed-in person's token, exactly the requests any other
// client sends; its session keys are derived from the JWT signing keys, so every instance
// sharing those keys shares sessions.
func (s *Server) mountDashboard(o options) error {
	keys, err := handlers.SessionKeysFrom([]byte(s.cfg.JWTKeys))
	if err != nil {
		return err
	}
	// The dashboard calls the service mounted beside it in process: no socket, and the person's
	// own address as the peer, so the service's limits apply per person, not to the dashboard.
	app, err := handlers.New(handlers.Config{
		HTTPClient: client.InProcess(s.echo, 0), // bounded by the browser request it serves
		APIURL:     s.cfg.BaseURL(), PublishableKey: s.cfg.PublishableKey, SessionKeys: keys,
		Secure: strings.HasPrefix(s.cfg.BaseURL(), "https://"), Logger: s.log,
		DemoLogins: o.demoLogins, DemoPassword: o.demoPassword,
		// A replica serves reads while at most ReadMaxLag behind, and is measured about every
		// half of that: twice the lag covers a write's way to every replica that still serves.
		ReadYourWrites: 2 * s.cfg.ReadMaxLag,
	})
	if err != nil {
		return err
	}
	app.Register(s.echo)
	// Images and alt text call /storage/v1 and /rest/v1 as the signed-in user (handlers/media.go).
	return app.RegisterMedia(s.echo, s.cfg.BaseURL(), s.cfg.PublishableKey, nil)
}

// Handler is the whole service as an http.Handler, for httptest and embedding.
func (s *Server) Handler() http.Handler { return s.echo }

// Auth is the identity service, for tests and tools that need to verify tokens.
func (s *Server) Auth() *auth.Service { return s.auth }

// Metrics serves this instance's series in Prometheus' format. Serve exposes it on the metrics
// address only; the public handler has no /metrics.
func (s *Server) Metrics() http.Handler { return s.metrics.Handler() }

// Run listens on the configured address and serves until ctx ends, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// limitListener caps the connections held open at once: past the cap, new ones wait in the
// kernel's backlog instead of taking file descriptors the process needs.
func limitListener(ln net.Listener, n int) net.Listener { return netutil.LimitListener(ln, n) }

// Serve serves on ln until ctx ends. It then drains for ShutdownDrain, if set (/readyz answers
// 503 while everything else is served as before, so a load balancer takes the instance out),
// closes the listener and gives in-flight requests ShutdownTimeout to finish.
// /metrics is served meanwhile on the metrics listener or address, when there is one.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	mln := s.metricsLn
	if mln == nil && s.cfg.MetricsAddr != "" {
		var err error
		if mln, err = net.Listen("tcp", s.cfg.MetricsAddr); err != nil {
			return fmt.Errorf("server: listen for metrics: %w", err)
		}
	}
	hs := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	listenCtx, stopListen := context.WithCancel(ctx)
	defer stopListen()
	// The schema cache follows NOTIFY masthead: on a pooled connection of its own, or behind a
	// transaction-mode pooler on a direct one, or else by polling.
	switch {
	case s.cfg.DatabasePooler == "":
		go s.schema.Listen(listenCtx, s.log)
	case s.cfg.DatabaseDirectURL != "":
		go s.schema.ListenDirect(listenCtx, s.cfg.DatabaseDirectURL, s.log)
	default:
		go s.schema.Poll(listenCtx, s.cfg.SchemaPollInterval, s.log)
	}
	go s.pools.Watch(listenCtx, replicaCheckInterval(s.cfg.ReadMaxLag), s.log)
	// The scheduler publishes what is due while this instance serves; Serve returns only after
	// it stopped, so Close never pulls the pool from under a run.
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		scheduler.New(s.pool, scheduler.Config{Interval: s.cfg.SchedulerInterval, Metrics: s.metrics}, s.log).Run(listenCtx)
	}()
	defer func() { stopListen(); <-schedDone }()
	// Registered before serving, so a SIGHUP never meets the default action (exit).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go s.reloadOnHangup(listenCtx, hup)
	if mln != nil {
		ms := s.serveMetrics(mln)
		defer ms.Close() // scrapes are short; nothing to drain
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(limitListener(ln, s.cfg.MaxConnections)) }()
	s.log.Info("server: listening", "addr", ln.Addr().String(), "public_url", s.cfg.BaseURL())
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	if d := s.cfg.ShutdownDrain; d > 0 {
		// Out of rotation before the listener closes: /readyz answers 503 while requests are
		// still served, long enough for the load balancer's health check to notice.
		s.draining.Store(true)
		s.log.Info("server: draining", "for", d.String())
		drained := time.NewTimer(d)
		select {
		case <-drained.C:
		case err := <-errc:
			drained.Stop()
			return fmt.Errorf("server: %w", err)
		}
	}
	s.log.Info("server: shutting down", "grace", s.cfg.ShutdownTimeout.String())
	shutCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// serveMetrics serves GET /metrics, and nothing else, on ln until the returned server is closed.
// A failure to accept is logged: metrics going dark must not take the service down.
func (s *Server) serveMetrics(ln net.Listener) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	ms := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := ms.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("server: metrics listener failed", "addr", ln.Addr().String(), "err", err)
		}
	}()
	s.log.Info("server: metrics listening", "addr", ln.Addr().String(), "path", "/metrics")
	return ms
}

// reloadOnHangup reloads the REST schema cache on SIGHUP, as PostgREST does, for operators who
// changed the schema and cannot send NOTIFY masthead, 'reload schema'.
func (s *Server) reloadOnHangup(ctx context.Context, hup <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := s.schema.Reload(ctx); err != nil {
				s.log.Error("server: reload schema cache", "err", err)
				continue
			}
			s.log.Info("server: schema cache reloaded", "signal", "SIGHUP")
		}
	}
}

// Close releases the database pools; call it after Run or Serve returned.
func (s *Server) Close() {
	s.pools.Close()
	s.pool.Close()
}

// replicaCheckInterval measures replicas often enough that one falling behind is passed over
// within about half the allowed lag, and at most every second.
func replicaCheckInterval(maxLag time.Duration) time.Duration {
	return max(min(maxLag/2, time.Second), 50*time.Millisecond)
}

// healthz says the process is up; it never touches the database, so a slow database does not
// get healthy instances restarted.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether this instance can serve: it is not stopping (MASTHEAD_SHUTDOWN_DRAIN)
// and the database answers within two seconds.
func (s *Server) readyz(c echo.Context) error {
	if s.draining.Load() {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "draining"})
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		s.log.WarnContext(ctx, "server: not ready", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// ReplicaLags is each read replica's last measured lag (-1: unreachable), for tests and tools.
func (s *Server) ReplicaLags() []time.Duration { return s.pools.Lags() }
