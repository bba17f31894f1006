package storage

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"masthead/internal/pg"
)

// BenchmarkDownloadDatabaseParts splits what PostgreSQL spends on an authenticated download's
// round trip (the caller setup with its session check, then the media row under RLS) by taking
// one part away at a time, measured on the backend itself: nanoseconds on CPU from its
// /proc/<pid>/schedstat, so neither this process nor the other processes of a shared machine
// count, only how much they slow the backend down. One connection runs every variant in turn,
// chunkSize round trips each, so load changes hit all alike. Figures are µs per round trip:
//
//   - download: the statements pg sends for a download (read from pg_prepared_statements after
//     a real one, so they cannot drift from pg's setup);
//   - no-check: the same setup calling a do-nothing SECURITY DEFINER PL/pgSQL function in place
//     of app.check_session, so the difference is the session lookup itself, not the call;
//   - no-policy: the same lookup on a copy of media without row-level security;
//   - neither: both taken away;
//   - select-1: one prepared `select 1`, the round trip on its own.
//
// The variants exist only in the benchmark's own database. Linux only (schedstat).
//
// What these parts can give BenchmarkFloorDownload at most: a build whose setup called a
// do-nothing function in place of app.check_session and whose media_read was `using (true)`
// (not committed; both checks gone) against main, alternated, 30 samples each on the shared
// 2-core machine: PostgreSQL 51.4 → 28.8 µs a download, ctxsw/req 1.36 → 1.01, Go CPU 112 → 105
// µs, ratio_req/s 0.546 → 0.589, ratio_cpu-µs/req 1.62 → 1.56. The round-trip bound
// (roundTripServer: select 1 instead of both statements) gave 0.648 and 1.41 in the same runs (12 samples).
//
//	go test ./internal/storage -run '^$' -bench DownloadDatabaseParts -benchtime 20000x -count 3
//
// ns/op covers all five variants (an op is one round trip of each).
func BenchmarkDownloadDatabaseParts(b *testing.B) {
	ctx := context.Background()
	ev, key, _, _ := downloadFixture(b)
	own := ev.db.Owner(b)
	for _, sql := range []string{
		`create function app.bench_check_nop(claims text, sub text, session_id text) returns text
		   language plpgsql stable security definer set search_path = ''
		   as $$ begin return claims; end $$`,
		`grant execute on function app.bench_check_nop(text, text, text) to authenticator`,
		`create table public.bench_media_open (like public.media including all)`,
		`insert into public.bench_media_open select * from public.media`,
		`grant select on public.bench_media_open to authenticated`,
	} {
		if _, err := own.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	hr, _ := http.NewRequest(http.MethodGet, "/", nil)
	ev.authorize(hr, req{user: "viewerA"})
	caller, err := ev.auth.Caller(hr)
	if err != nil {
		b.Fatal(err)
	}
	pc, err := ev.db.Pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Release()
	conn := pc.Conn().PgConn()
	found := false
	if _, err := pg.StreamAsCaller(ctx, conn, caller, []pg.Stmt{{SQL: mediaMimeSQL, Params: [][]byte{[]byte(key)}, Prepare: true}},
		func([][]byte) error { found = true; return nil }); err != nil || !found {
		b.Fatalf("download lookup: found %v, %v", found, err)
	}
	// The setup pg prepared for this caller, and the parameters it takes (role, claims, sub,
	// session_id: a verified caller's, on a read-only pipeline with no further settings).
	res := conn.ExecParams(ctx, `select statement from pg_prepared_statements where statement like 'select set_config(''role''%'`, nil, nil, nil, nil).Read()
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	var setup string
	for _, row := range res.Rows {
		if s := string(row[0]); strings.Contains(s, "app.check_session(") && strings.Contains(s, "transaction_read_only") && strings.Count(s, "$") == 4 {
			setup = s
		}
	}
	if setup == "" {
		b.Fatalf("no download setup among the prepared statements %q", res.Rows)
	}
	setupParams := [][]byte{[]byte(caller.Role), caller.Claims, []byte(caller.Subject), []byte(caller.SessionID)}
	noCheck := strings.Replace(setup, "app.check_session(", "app.bench_check_nop(", 1)
	noPolicy := strings.Replace(mediaMimeSQL, "public.media ", "public.bench_media_open ", 1)
	keyParams := [][]byte{[]byte(key)}

	type variant struct {
		name  string
		stmts []string
		sds   []*pgconn.StatementDescription
		ns    []float64 // per chunk, ns per round trip
	}
	vs := []*variant{
		{name: "download", stmts: []string{setup, mediaMimeSQL}},
		{name: "no-check", stmts: []string{noCheck, mediaMimeSQL}},
		{name: "no-policy", stmts: []string{setup, noPolicy}},
		{name: "neither", stmts: []string{noCheck, noPolicy}},
		{name: "select-1", stmts: []string{"select 1"}},
	}
	// Prepare each statement as the request role, as pg does (its Parse follows the setup).
	for i, v := range vs {
		if _, err := conn.Exec(ctx, "begin; select set_config('role', 'authenticated', true)").ReadAll(); err != nil {
			b.Fatal(err)
		}
		for j, sql := range v.stmts {
			sd, err := conn.Prepare(ctx, fmt.Sprintf("bench_parts_%d_%d", i, j), sql, nil)
			if err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			v.sds = append(v.sds, sd)
		}
		if _, err := conn.Exec(ctx, "commit").ReadAll(); err != nil {
			b.Fatal(err)
		}
	}
	pid := conn.PID()
	if _, err := backendCPU(pid); err != nil {
		b.Fatalf("no schedstat for the backend (it needs a kernel with schedstats): %v", err)
	}
	run := func(v *variant, n int) {
		for range n {
			var batch pgconn.Batch
			for j, sd := range v.sds {
				params := keyParams
				if j == 0 {
					params = setupParams
				}
				if len(sd.ParamOIDs) == 0 {
					params = nil
				}
				batch.ExecStatement(sd, params, nil, nil)
			}
			results, err := conn.ExecBatch(ctx, &batch).ReadAll()
			if err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			if last := results[len(results)-1]; len(last.Rows) != 1 {
				b.Fatalf("%s: %d rows", v.name, len(last.Rows))
			}
		}
	}
	for _, v := range vs {
		run(v, 200) // generic plans chosen, caches warm
	}
	const chunkSize = 500
	b.ResetTimer()
	for done := 0; done < b.N; done += chunkSize {
		n := min(chunkSize, b.N-done)
		for _, v := range vs {
			before, _ := backendCPU(pid)
			run(v, n)
			after, _ := backendCPU(pid)
			v.ns = append(v.ns, float64(after-before)/float64(n))
		}
	}
	b.StopTimer()
	for _, v := range vs {
		b.ReportMetric(median(v.ns)/1000, v.name+"-pg-µs")
	}
}

// backendCPU is the time the process pid has spent on a CPU, in nanoseconds (the first field
// of /proc/<pid>/schedstat; exact, where /proc/<pid>/stat counts 10 ms ticks).
func backendCPU(pid uint32) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/schedstat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("empty schedstat")
	}
	return strconv.ParseInt(f[0], 10, 64)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
