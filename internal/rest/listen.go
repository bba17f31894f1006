package rest

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// reloadChannel and reloadPayload are PostgREST's convention, renamed for
// us: NOTIFY masthead, 'reload schema' after a migration reloads every
// instance's schema cache.
const (
	reloadChannel = "masthead"
	reloadPayload = "reload schema"
)

// Listen follows NOTIFY masthead until ctx ends, reloading the cache on
// 'reload schema'. It holds one connection taken out of the pool and
// reconnects with a capped backoff when the connection drops. Every time it
// starts listening it reloads once, since a change made before LISTEN (at
// start-up, or while the connection was down) sent a notification nobody heard.
func (c *SchemaCache) Listen(ctx context.Context, log *slog.Logger) {
	c.follow(ctx, log, func(ctx context.Context) (*pgx.Conn, error) {
		pc, err := c.pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		return pc.Hijack(), nil
	})
}

// ListenDirect is Listen over a connection of its own to url. Behind a transaction-mode
// pooler the pool's connections cannot hold a LISTEN (the server connection changes under
// them), so the listener connects to PostgreSQL directly.
func (c *SchemaCache) ListenDirect(ctx context.Context, url string, log *slog.Logger) {
	c.follow(ctx, log, func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, url) })
}

// Poll reloads the cache every interval until ctx ends: the fallback behind a transaction-mode
// pooler with no direct connection to LISTEN on. A schema change then reaches the cache
// within one interval.
func (c *SchemaCache) Poll(ctx context.Context, interval time.Duration, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		if err := c.Reload(ctx); err != nil && ctx.Err() == nil {
			log.Warn("schema cache reload failed", "err", err)
		}
	}
}

func (c *SchemaCache) follow(ctx context.Context, log *slog.Logger, connect func(context.Context) (*pgx.Conn, error)) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := c.listenOnce(ctx, log, connect)
		if ctx.Err() != nil {
			return
		}
		log.Warn("schema cache listener lost its connection", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

func (c *SchemaCache) listenOnce(ctx context.Context, log *slog.Logger, connect func(context.Context) (*pgx.Conn, error)) error {
	conn, err := connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "listen "+reloadChannel); err != nil {
		return err
	}
	if err := c.Reload(ctx); err != nil {
		log.Warn("schema cache reload failed", "err", err)
	}
	log.Debug("schema cache listener subscribed", "channel", reloadChannel)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Payload != reloadPayload {
			continue
		}
		if err := c.Reload(ctx); err != nil {
			log.Warn("schema cache reload failed", "err", err)
			continue
		}
		log.Info("schema cache reloaded")
	}
}
