package rest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"masthead/internal/pg"
)

func BenchmarkZZSplit(b *testing.B) {
	f := newSeeded(b, 0)
	user := "editor@northwind.test"
	id := f.firstID(b, user, "published")
	q, _ := ParseQuery("select=*,promos(*),publication_media(position,media(*))&id=eq."+id, false)
	s := f.h.schema.Schema()
	root, _ := s.planRead(s.Tables["publications"], q)
	root.limit = 1000
	st := buildRead(root, "", 1000, true).stmt()
	st.Prepare = true
	ctx := context.Background()
	claims, _ := json.Marshal(map[string]any{"sub": f.users[user], "role": "authenticated"})
	plain := pg.UserCaller(claims)
	full := pg.UserCaller(claims)
	full.Settings = map[string]string{"request.method": "GET", "request.path": "/publications", "request.headers": `{"apikey":"sb_publishable_test","authorization":"Bearer user:9e337dc4-9f3f-44fe-9586-c0054e8c4446","accept-encoding":"gzip","user-agent":"Go-http-client/1.1"}`, "statement_timeout": "10000"}
	run := func(c pg.Caller, s pg.Stmt) time.Duration {
		start := time.Now()
		conn, _ := f.db.Pool.Acquire(ctx)
		_, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), c, true, false, s)
		conn.Release()
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	direct := pg.Stmt{SQL: directPublicationSQL, Params: [][]byte{[]byte(id)}, Prepare: true}
	var a, bb, c []time.Duration
	for range b.N {
		a = append(a, run(plain, direct))
		bb = append(bb, run(plain, st))
		c = append(c, run(full, st))
	}
	med := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Microseconds()) }
	b.ReportMetric(med(a), "direct-µs")
	b.ReportMetric(med(bb), "restsql-µs")
	b.ReportMetric(med(c), "restsql+settings-µs")
}

func BenchmarkZZHandlerVsDirect(b *testing.B) {
	f := newSeeded(b, 0)
	user := "editor@northwind.test"
	id := f.firstID(b, user, "published")
	ctx := context.Background()
	claims, _ := json.Marshal(map[string]any{"sub": f.users[user], "role": "authenticated"})
	direct := pg.Stmt{SQL: directPublicationSQL, Params: [][]byte{[]byte(id)}, Prepare: true}
	e := echoFor(f)
	target := "/rest/v1/publications?select=*,promos(*),publication_media(position,media(*))&id=eq." + id
	var a, h []time.Duration
	for range b.N {
		start := time.Now()
		conn, _ := f.db.Pool.Acquire(ctx)
		pg.ExecAsCaller(ctx, conn.Conn().PgConn(), pg.UserCaller(claims), true, false, direct)
		conn.Release()
		a = append(a, time.Since(start))
		start = time.Now()
		req := httptestReq(target, f.users[user])
		rec := newRec()
		e.ServeHTTP(rec, req)
		h = append(h, time.Since(start))
	}
	med := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Microseconds()) }
	b.ReportMetric(med(a), "direct-µs")
	b.ReportMetric(med(h), "handler-µs")
}
