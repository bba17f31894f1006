package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"masthead/handlers"
	"masthead/internal/config"
	"masthead/internal/server"
)

func init() {
	commands["web"] = command{summary: webSummary, run: runWeb}
}

const webSummary = "run the dashboard alone against MASTHEAD_API_URL"

// webConfig is the dashboard's own settings; each flag defaults to its environment variable.
type webConfig struct {
	addr, apiURL, key, sessionKeys string
	secure                         bool
}

// runWeb serves the dashboard on its own, talking to any service (a Masthead `api`, or a
// Supabase project with the same schema) over HTTP.
func runWeb(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	var wc webConfig
	fs := newFlags("web", webSummary)
	fs.StringVar(&wc.addr, "addr", envOr("MASTHEAD_WEB_ADDR", "127.0.0.1:8081"), "listen address host:port (env MASTHEAD_WEB_ADDR)")
	fs.StringVar(&wc.apiURL, "api-url", os.Getenv("MASTHEAD_API_URL"), "base URL of the service (env MASTHEAD_API_URL)")
	fs.StringVar(&wc.key, "publishable-key", os.Getenv("MASTHEAD_PUBLISHABLE_KEY"), "the service's sb_publishable_… key (env MASTHEAD_PUBLISHABLE_KEY)")
	fs.BoolVar(&wc.secure, "secure-cookies", os.Getenv("MASTHEAD_SECURE_COOKIES") == "true", "mark cookies Secure; set when served over TLS (env MASTHEAD_SECURE_COOKIES=true)")
	// Keys are read from the environment only, so they never show in a process list.
	wc.sessionKeys = os.Getenv("MASTHEAD_SESSION_KEYS")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if wc.apiURL == "" || wc.key == "" {
		return errors.New("MASTHEAD_API_URL and MASTHEAD_PUBLISHABLE_KEY (or --api-url, --publishable-key) are required")
	}
	keys, err := parseSessionKeys(wc.sessionKeys)
	if err != nil {
		return err
	}
	if keys == nil {
		log.Warn("masthead web: MASTHEAD_SESSION_KEYS is not set; using random keys, so sessions end when this process stops")
		keys = handlers.GenerateSessionKeys()
	}
	// The person's address, handed to the service with every call made for them (their
	// sign-in's rate limits key on it): the TCP peer, or what a proxy of MASTHEAD_TRUSTED_PROXIES
	// says, never what any client claims.
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	app, err := handlers.New(handlers.Config{
		APIURL: wc.apiURL, PublishableKey: wc.key, SessionKeys: keys, Secure: wc.secure, Logger: log,
	})
	if err != nil {
		return err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = server.IPExtractor(cfg.TrustedProxies)
	e.Use(middleware.RequestID(), accessLog(log), middleware.Recover(), middleware.BodyLimit("1M"))
	app.Register(e)
	if err := app.RegisterMedia(e, wc.apiURL, wc.key, nil); err != nil {
		return err
	}

	ln, err := listen(wc.addr, "MASTHEAD_WEB_ADDR")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "Masthead dashboard on http://%s (service %s)\n", ln.Addr(), wc.apiURL)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return hs.Shutdown(shut)
}

// parseSessionKeys reads "auth,enc[,auth,enc…]" in base64 (standard or URL alphabet); empty
// means none were given.
func parseSessionKeys(s string) ([][]byte, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var keys [][]byte
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		k, err := base64.StdEncoding.DecodeString(part)
		if err != nil {
			k, err = base64.RawURLEncoding.DecodeString(part)
		}
		if err != nil {
			return nil, errors.New("MASTHEAD_SESSION_KEYS: each key must be base64")
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// accessLog writes one line per request with the route pattern, never the query string,
// cookies or form values.
func accessLog(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			if err := next(c); err != nil {
				c.Error(err)
			}
			log.LogAttrs(c.Request().Context(), slog.LevelInfo, "request",
				slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
				slog.String("method", c.Request().Method),
				slog.String("route", c.Path()),
				slog.Int("status", c.Response().Status),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
			return nil
		}
	}
}
