// Package server wires the service together for cmd/masthead and the end-to-end tests: the
// Echo instance with its middleware (request ids, access log, CORS, recovery, body limit), the
// health endpoints, and every surface mounted under its prefix. It is the one place that knows
// all surfaces; nothing imports it but cmd/masthead, e2e and tests.
//
// It may import config, pg and the surfaces (auth, rest, …); it must not import handlers'
// internals or any test package, and it holds no business logic of its own.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"masthead/handlers"
	"masthead/internal/auth"
	"masthead/internal/config"
	"masthead/internal/pg"
)

// Server is the HTTP service: create it with New, run it with Run or Serve, then Close it.
type Server struct {
	cfg  config.Config
	log  *slog.Logger
	pool *pgxpool.Pool
	auth *auth.Service
	echo *echo.Echo
}

// New connects to the database and builds the handler with every surface mounted. cfg must
// pass Validate.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*Server, error) {
	keys, err := auth.ParseKeySet([]byte(cfg.JWTKeys))
	if err != nil {
		return nil, err
	}
	pool, err := pg.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	authSvc, err := auth.New(pool, auth.Options{
		Issuer:         cfg.Issuer(),
		PublishableKey: cfg.PublishableKey,
		Keys:           keys,
		AccessTTL:      cfg.JWTExp,
		ReuseInterval:  cfg.RefreshReuseInterval,
		BcryptCost:     cfg.BcryptCost,
		IPLimit:        auth.Limit(cfg.TokenRateIP),
		AccountLimit:   auth.Limit(cfg.TokenRateAccount),
	}, log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, pool: pool, auth: authSvc, echo: echo.New()}
	s.routes()
	if err := s.mountDashboard(); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// mountDashboard serves the editorial dashboard on the same address. It calls this service
// over HTTP at the public URL like any other client; its session keys are derived from the JWT
// signing keys, so every instance sharing those keys shares sessions.
func (s *Server) mountDashboard() error {
	keys, err := handlers.SessionKeysFrom([]byte(s.cfg.JWTKeys))
	if err != nil {
		return err
	}
	app, err := handlers.New(handlers.Config{
		APIURL: s.cfg.BaseURL(), PublishableKey: s.cfg.PublishableKey, SessionKeys: keys,
		Secure: strings.HasPrefix(s.cfg.BaseURL(), "https://"), Logger: s.log,
	})
	if err != nil {
		return err
	}
	app.Register(s.echo)
	return nil
}

// routes lists every mount. Each surface brings its own routes and error format.
func (s *Server) routes() {
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = ipExtractor(s.cfg.TrustedProxies)
	e.HTTPErrorHandler = s.httpError
	e.Use(requestID, s.accessLog, s.recover, cors(), bodyLimit)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	// Identity (GoTrue-compatible). The service applies the publishable-key check per route,
	// because its JWK set must stay public.
	s.auth.Mount(e.Group("/auth/v1"))
}

// Handler is the whole service as an http.Handler, for httptest and embedding.
func (s *Server) Handler() http.Handler { return s.echo }

// Auth is the identity service, for tests and tools that need to verify tokens.
func (s *Server) Auth() *auth.Service { return s.auth }

// Run listens on the configured address and serves until ctx ends, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends; in-flight requests then get ShutdownTimeout to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("server: listening", "addr", ln.Addr().String(), "public_url", s.cfg.BaseURL())
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
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

// Close releases the database pool; call it after Run or Serve returned.
func (s *Server) Close() { s.pool.Close() }

// healthz says the process is up; it never touches the database, so a slow database does not
// get healthy instances restarted.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether this instance can serve: the database answers within two seconds.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		s.log.WarnContext(ctx, "server: not ready", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
