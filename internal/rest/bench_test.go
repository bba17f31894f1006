package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// directPublicationSQL is the hand-written query the REST path is measured
// against: the same publication with promos and media, aggregated to JSON
// by PostgreSQL in one statement.
const directPublicationSQL = `
select coalesce(json_agg(p), '[]')::text from (
  select pub.*,
    coalesce((select json_agg(pr) from (select * from public.promos x
              where x.project_id = pub.project_id and x.publication_id = pub.id) pr), '[]'::json) as promos,
    coalesce((select json_agg(pm) from (
       select l.position, (select row_to_json(m) from public.media m
                           where m.project_id = l.project_id and m.id = l.media_id) as media
       from public.publication_media l
       where l.project_id = pub.project_id and l.publication_id = pub.id) pm), '[]'::json) as publication_media
  from public.publications pub where pub.id = $1
) p`

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxIdleConns: 128}}
}

func (f *fixture) get(b *testing.B, c *http.Client, path, user string) {
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/rest/v1"+path, nil)
	req.Header.Set("apikey", testKey)
	req.Header.Set("Authorization", "Bearer user:"+f.users[user])
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkPublicationWithEmbeds compares the seed's publication read
// through the whole HTTP stack with the same JSON from one hand-written
// statement sent over pgx the same way (role switch and query in one
// round trip, as the caller, so RLS costs the same in both). The two
// alternate within one loop so that load on the machine hits both alike;
// it reports each median and their ratio, the figure the target is set on.
func BenchmarkPublicationWithEmbeds(b *testing.B) {
	f := newSeeded(b, 0)
	user := "editor@northwind.test"
	id := f.firstID(b, user, "published")
	path := "/publications?select=*,promos(*),publication_media(position,media(*))&id=eq." + id
	ctx := context.Background()
	claims, _ := json.Marshal(map[string]any{"sub": f.users[user], "role": "authenticated"})
	caller := pg.UserCaller(claims)
	direct := func() {
		conn, err := f.db.Pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Release()
		rs, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), caller, true, false,
			pg.Stmt{SQL: directPublicationSQL, Params: [][]byte{[]byte(id)}, Prepare: true})
		if err != nil || len(rs[0].Rows) != 1 {
			b.Fatal(err)
		}
	}
	c := benchClient()
	restD := make([]time.Duration, 0, b.N)
	directD := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		f.get(b, c, path, user)
		mid := time.Now()
		direct()
		restD = append(restD, mid.Sub(start))
		directD = append(directD, time.Since(mid))
	}
	b.StopTimer()
	slices.Sort(restD)
	slices.Sort(directD)
	r, d := restD[len(restD)/2], directD[len(directD)/2]
	b.ReportMetric(float64(r.Microseconds()), "rest-median-µs")
	b.ReportMetric(float64(d.Microseconds()), "direct-median-µs")
	b.ReportMetric(float64(r)/float64(d), "rest/direct")
}

// BenchmarkQueueRead measures the review-queue read with 32 concurrent
// clients over HTTP, reporting requests per second.
func BenchmarkQueueRead(b *testing.B) {
	f := newSeeded(b, 0)
	user := "editor@northwind.test"
	path := "/publications?status=eq.reviewing&order=created_at.desc&select=id,title,status,scheduled_for"
	c := benchClient()
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f.get(b, c, path, user)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkHandlerAllocs serves the publication read without a network
// client, so allocs/op are the service's own per request. It alternates
// with the direct statement, like BenchmarkPublicationWithEmbeds, to show
// the service's cost apart from the HTTP transport's.
func BenchmarkHandlerAllocs(b *testing.B) {
	f := newSeeded(b, 0)
	user := "editor@northwind.test"
	id := f.firstID(b, user, "published")
	ctx := context.Background()
	claims, _ := json.Marshal(map[string]any{"sub": f.users[user], "role": "authenticated"})
	direct := pg.Stmt{SQL: directPublicationSQL, Params: [][]byte{[]byte(id)}, Prepare: true}
	e := echo.New()
	f.h.Mount(e.Group("/rest/v1"))
	target := "/rest/v1/publications?select=*,promos(*),publication_media(position,media(*))&id=eq." + id
	handlerD := make([]time.Duration, 0, b.N)
	directD := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("apikey", testKey)
		req.Header.Set("Authorization", "Bearer user:"+f.users[user])
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		handlerD = append(handlerD, time.Since(start))
		b.StopTimer()
		start = time.Now()
		conn, err := f.db.Pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), pg.UserCaller(claims), true, false, direct); err != nil {
			b.Fatal(err)
		}
		conn.Release()
		directD = append(directD, time.Since(start))
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(handlerD)
	slices.Sort(directD)
	h, d := handlerD[len(handlerD)/2], directD[len(directD)/2]
	b.ReportMetric(float64(h.Microseconds()), "handler-median-µs")
	b.ReportMetric(float64(d.Microseconds()), "direct-median-µs")
	b.ReportMetric(float64(h)/float64(d), "handler/direct")
}
