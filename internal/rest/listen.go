package rest

import (
	"context"
	"log/slog"
	"time"
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
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := c.listenOnce(ctx, log)
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

func (c *SchemaCache) listenOnce(ctx context.Context, log *slog.Logger) error {
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack()
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
