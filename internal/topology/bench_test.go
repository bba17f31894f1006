package topology_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
	"masthead/internal/pgrun"
	"masthead/internal/server/servertest"
)

// BenchmarkQueueThroughPgBouncer measures the review-queue read (/rest/v1, 32 clients at once)
// on one database served directly and through PgBouncer in transaction mode, alternating the
// two within one run so the machine's load falls on both alike. It reports each one's
// requests a second and the pooled/direct ratio.
//
//	go test ./internal/topology -run '^$' -bench QueueThroughPgBouncer -benchtime 4000x
func BenchmarkQueueThroughPgBouncer(b *testing.B) {
	db := pgtest.New(b)
	media := demo(b, db)
	bouncer := pgtest.PgBouncer(b, pgrun.BouncerOptions{PoolSize: 20})
	direct, api := service(b, db.URL, media, nil)
	pooled, _ := service(b, bouncer.URL(pg.LoginRole, db.Name), media, func(c *config.Config) {
		c.DatabasePooler = "transaction"
		// One token for both: the same keys and issuer.
		c.JWTKeys, c.PublishableKey, c.PublicURL = direct.Config.JWTKeys, direct.Config.PublishableKey, direct.Config.PublicURL
	})
	token := signIn(b, api, "reviewer@northwind.test").AccessToken
	const path = "/rest/v1/publications?select=id,title,status,scheduled_for,author_id&status=eq.reviewing&order=created_at.desc&limit=20"
	rate := func(env *servertest.Env, n int) float64 {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range 32 {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					if status, body := call(b, env, token, http.MethodGet, path, "", nil); status != http.StatusOK {
						b.Errorf("%d %s", status, body)
						return
					}
				}
			})
		}
		wg.Wait()
		return float64(n) / time.Since(start).Seconds()
	}
	rate(direct, 200)
	rate(pooled, 200)
	b.ResetTimer()
	var d, p float64
	const rounds = 4
	for range rounds {
		d += rate(direct, b.N/rounds/2)
		p += rate(pooled, b.N/rounds/2)
	}
	b.ReportMetric(d/rounds, "direct_req/s")
	b.ReportMetric(p/rounds, "pgbouncer_req/s")
	b.ReportMetric(p/d, "pgbouncer/direct")
}
