package pg_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// searchWords make the generated bodies: each bulk row's body is a sentence of four of them,
// and one row in a thousand mentions a lighthouse, one in a hundred a regatta.
var searchWords = []string{"harbour", "tide", "ferry", "council", "budget", "school", "river", "bridge",
	"market", "festival", "weather", "road", "rail", "port", "season", "library"}

// searchPhrases are what the benchmark's people look for: something rare, something in one
// row in a hundred, one publication by its title, and a word from a summary.
var searchPhrases = []string{"lighthouse", "regatta", "Bulk 4711", "Harbour Festival"}

// BenchmarkFloorSearch measures a search over every status (title, summary, body) with 100,000
// publications in each of two projects, under row-level security: 20 people at once, each
// pausing 0.5–1.5 s between searches, each search a page of 25 newest first with the total
// (search_publications). The floor is the same query as the table owner (no RLS, the
// project named directly); "old" is the search as it was, an ilike filter under RLS, which no
// index serves. Ours, the floor and the old way take turns, each timed while 20 people run it
// alone. A fixed sample whatever b.N is.
// After the sample, ours_cpu-ms and floor_cpu-ms are the database's CPU time per search
// (searched one at a time), which the machine's other load does not change.
//
//	go test ./internal/pg -run '^$' -bench FloorSearch
func BenchmarkFloorSearch(b *testing.B) {
	f := newFixture(b)
	f.bulk(b, 100_000)
	ctx := context.Background()
	own := f.db.Owner(b)
	for _, q := range []string{
		`set session_replication_role = replica`, // fixture data: no caller does this
		searchBodies(),
		`set session_replication_role = origin`,
		`vacuum analyze publications`,
	} {
		if _, err := own.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	// The floor is search_publications' own query, run as the owner with the caller's projects
	// written in and the pattern inlined: what a hand-written endpoint would send, without
	// RLS, the function call or the membership lookup. Since 026 the query's $4-$9 are the
	// queue's filters, passed as null ("any"); the caller's projects go in as $10.
	var src string
	mustScan(b, own.QueryRow(ctx, `select prosrc from pg_proc where proname = 'search_publications'`), &src)
	i, j := strings.Index(src, "'select p.*"), strings.Index(src, "limit $3'")
	if i < 0 || j < i {
		b.Fatalf("cannot find the query in search_publications:\n%s", src)
	}
	inner := strings.Replace(src[i+1:j+len("limit $3")], "(select app.project_ids())::uuid[]", "$10::uuid[]", 1)
	floor := `select count(*) over (), id, title, status from (` + inner + `) p limit 25`
	owner, err := pg.Open(ctx, f.db.OwnerURL+"&jit=off") // as the service's own login role runs (migration 013)
	if err != nil {
		b.Fatal(err)
	}
	defer owner.Close()
	const ours = `select count(*) over (), id, title, status from public.search_publications($1, $2, 1001) limit 25`
	const old = `select count(*) over (), id, title, status from public.publications p
	  where p.project_id = $2 and (title ilike '%' || $1 || '%' or summary ilike '%' || $1 || '%' or body ilike '%' || $1 || '%')
	  order by p.created_at desc, p.id desc limit 25`
	users := []string{"ownerA", "leadA", "editorA", "editor2A", "reviewerA", "reviewer2A", "viewerA"}
	// As the REST engine runs a read: caller setup and query in one round trip.
	asCaller := func(user, q, phrase string) (int, error) {
		conn, err := f.db.Pool.Acquire(ctx)
		if err != nil {
			return 0, err
		}
		defer conn.Release()
		rs, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), f.caller(user), true, false,
			pg.Stmt{SQL: q, Params: [][]byte{[]byte(phrase), []byte(f.projA)}, Prepare: true})
		if err != nil {
			return 0, err
		}
		return len(rs[0].Rows), nil
	}
	asOwner := func(phrase string) (int, error) {
		// The literal pattern, as a hand-written query would inline it: a custom plan each time.
		rows, err := owner.Query(ctx, floor, pgx.QueryExecModeSimpleProtocol, "%"+phrase+"%", f.projA, 1001,
			nil, nil, nil, nil, nil, nil, // the queue's filters ($4-$9, migration 026): any
			[]string{f.projA})
		if err != nil {
			return 0, err
		}
		n := 0
		for rows.Next() {
			n++
		}
		return n, rows.Err()
	}
	for _, p := range searchPhrases {
		a, err := asCaller("viewerA", ours, p)
		if err != nil {
			b.Fatal(err)
		}
		c, err := asOwner(p)
		if err != nil {
			b.Fatal(err)
		}
		if a != c || a == 0 {
			b.Fatalf("%q: ours finds %d, the floor %d", p, a, c)
		}
	}
	// The sample: rounds of three phases, ours, the floor and the old way, each 20 people at
	// once, each person arriving at a moment of their own and pausing 0.5-1.5 s between
	// searches. A phase runs one of the three alone, so ours is timed under 20 people's
	// searches, as the target says, and not behind the floor's and the old way's far heavier
	// ones (the floor alone costs the database seven to ten times ours in CPU, the old way
	// more: on a machine 2.2-2.7x slower than the one this was first written on, running all
	// three side by side kept both cores busy, and ours' p95 measured the queue behind the
	// other two). The phases alternate, so load from other processes on the machine hits all
	// three alike. The old way is slow: one search a person a turn, a fifth of ours' sample,
	// is enough.
	const people, turns, perPhase = 20, 4, 5
	var oursD, floorD, oldD []time.Duration
	byPhrase := map[string][]time.Duration{}
	phase := func(n int, search func(user, phrase string) error, took func(phrase string, d time.Duration)) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for u := range people {
			wg.Go(func() {
				time.Sleep(rand.N(time.Second)) // think time, not synchronisation: arrivals spread
				for i := range n {
					p := searchPhrases[(u+i)%len(searchPhrases)]
					t0 := time.Now()
					if err := search(users[u%len(users)], p); err != nil {
						b.Error(err)
						return
					}
					d := time.Since(t0)
					mu.Lock()
					took(p, d)
					mu.Unlock()
					if i < n-1 {
						time.Sleep(500*time.Millisecond + rand.N(time.Second)) // think time
					}
				}
			})
		}
		wg.Wait()
	}
	b.ResetTimer()
	for range turns {
		phase(perPhase, func(user, p string) error { _, err := asCaller(user, ours, p); return err },
			func(p string, d time.Duration) { oursD = append(oursD, d); byPhrase[p] = append(byPhrase[p], d) })
		phase(perPhase, func(_, p string) error { _, err := asOwner(p); return err },
			func(_ string, d time.Duration) { floorD = append(floorD, d) })
		phase(max(perPhase/4, 1), func(user, p string) error { _, err := asCaller(user, old, p); return err },
			func(_ string, d time.Duration) { oldD = append(oldD, d) })
	}
	b.StopTimer()
	o, fl := p95(oursD), p95(floorD)
	b.ReportMetric(o, "ours_p95-ms")
	b.ReportMetric(fl, "floor_p95-ms")
	b.ReportMetric(p95(oldD), "p95-ms-old-ilike-under-rls")
	for i, p := range searchPhrases {
		b.ReportMetric(p95(byPhrase[p]), fmt.Sprintf("p95-ms-phrase%d", i+1))
	}

	// What a search costs the database, whatever the neighbours on the machine do to the p95:
	// the CPU time of the backend serving the searches (utime and stime from /proc, 10 ms
	// ticks), every phrase searched 50 times in turn by ours and by the floor, each on a
	// connection of its own, after the sample. The mean over the phrases, per search.
	const rounds = 50
	oc, err := f.db.Pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer oc.Release()
	fc, err := owner.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer fc.Release()
	var oursCPU, floorCPU time.Duration
	for range rounds {
		for _, p := range searchPhrases {
			t0 := backendCPU(b, oc.Conn().PgConn().PID())
			if _, err := pg.ExecAsCaller(ctx, oc.Conn().PgConn(), f.caller("viewerA"), true, false,
				pg.Stmt{SQL: ours, Params: [][]byte{[]byte(p), []byte(f.projA)}, Prepare: true}); err != nil {
				b.Fatal(err)
			}
			oursCPU += backendCPU(b, oc.Conn().PgConn().PID()) - t0
			t0 = backendCPU(b, fc.Conn().PgConn().PID())
			if _, err := fc.Exec(ctx, floor, pgx.QueryExecModeSimpleProtocol, "%"+p+"%", f.projA, 1001,
				nil, nil, nil, nil, nil, nil, []string{f.projA}); err != nil {
				b.Fatal(err)
			}
			floorCPU += backendCPU(b, fc.Conn().PgConn().PID()) - t0
		}
	}
	n := float64(rounds * len(searchPhrases))
	b.ReportMetric(float64(oursCPU.Microseconds())/1000/n, "ours_cpu-ms")
	b.ReportMetric(float64(floorCPU.Microseconds())/1000/n, "floor_cpu-ms")
}

// backendCPU is the CPU time a PostgreSQL backend has used (utime and stime in its
// /proc/<pid>/stat, in ticks of 10 ms).
func backendCPU(b *testing.B, pid uint32) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("backend %d: %v", pid, err)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	var ticks int64
	for _, v := range f[11:13] {
		n, _ := strconv.ParseInt(v, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// p95 is the 95th percentile of ds in milliseconds.
func p95(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return float64(ds[min(len(ds)-1, len(ds)*95/100)].Microseconds()) / 1000
}

// searchBodies is the UPDATE that gives the bulk rows their summaries and bodies.
func searchBodies() string {
	const g = "split_part(slug, '-', 2)::int"
	w := "(array['" + joinQuoted(searchWords) + "'])"
	word := func(div int) string { return fmt.Sprintf("%s[1 + (%s / %d) %% 16]", w, g, div) }
	return `update publications set
	   summary = 'News from the ' || (array['Harbour Festival','council','river','market'])[1 + ` + g + ` % 4],
	   body = 'The ' || ` + word(1) + ` || ' and the ' || ` + word(16) + ` || ' meet the ' || ` + word(256) + ` || ' by the ' || ` + word(7) + `
	          || case when ` + g + ` % 1000 = 7 then ' near the lighthouse.' when ` + g + ` % 100 = 3 then ' before the regatta.' else '.' end
	 where slug like 'bulk-%'`
}

func joinQuoted(words []string) string {
	out := ""
	for i, w := range words {
		if i > 0 {
			out += "','"
		}
		out += w
	}
	return out
}
