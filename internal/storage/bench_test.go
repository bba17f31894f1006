package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// BenchmarkFloorDownload compares an authenticated download of a 100 kB image (token
// verified, session checked and media row read under RLS in one round trip, which downloads
// arriving together share (pg.Lookups), file streamed)
// with http.ServeFile of the same file, the floor for serving it from Go, each with 16
// concurrent clients over loopback HTTP/1.1. Every iteration sends one batch to ours and then
// one to the floor, so load from other processes on a shared machine hits both alike; figures
// follow internal/benchreport's convention (ours_*, floor_*, ratio_*; `make bench-report`).
// cpu-µs/req is this process's CPU (server and clients); pg-cpu-µs/req is PostgreSQL's;
// ctxsw/req and floor-ctxsw/req are this process's context switches per request.
//
// A third batch per iteration goes to the round-trip bound (see roundTripServer), so the same
// run says how ours compares with what any download that asks the database alone can cost:
// rtt-cpu-µs/req and rtt-req/s are ours against it (ours_…, floor_… the bound's, ratio_…).
//
//	go test ./internal/storage -run '^$' -bench FloorDownload -benchtime 5s
func BenchmarkFloorDownload(b *testing.B) {
	ev, key, size, plain := downloadFixture(b)
	url := ev.srv.URL + "/storage/v1/object/authenticated/media/" + key
	alternate(b, ev, size, func() *http.Request {
		hr, _ := http.NewRequest(http.MethodGet, url, nil)
		ev.authorize(hr, req{user: "viewerA"})
		return hr
	}, plain, roundTripServer(b, ev, key))
}

// BenchmarkFloorSignedDownload is BenchmarkFloorDownload for a signed URL: no identity and no
// database, only the token's signature and expiry are checked before the file is streamed.
//
//	go test ./internal/storage -run '^$' -bench FloorSignedDownload -benchtime 5s
func BenchmarkFloorSignedDownload(b *testing.B) {
	ev, key, size, plain := downloadFixture(b)
	token := ev.h.signer.sign(Bucket+"/"+key, "image/png", time.Hour)
	url := ev.srv.URL + "/storage/v1/object/sign/media/" + key + "?token=" + token
	alternate(b, ev, size, func() *http.Request {
		hr, _ := http.NewRequest(http.MethodGet, url, nil)
		return hr
	}, plain, "")
}

// roundTripServer serves the file at key the way a download that makes a round trip of its
// own to the database can at best: http.ServeFile behind an Echo route that first runs a
// trivial statement (select 1) on a pooled connection, and returns its URL. Its requests carry
// the headers an authenticated download carries (not checked). Ours against it tells how much
// of the gap to ServeFile is the round trip itself (the database's wake-up, the handler
// parking and being woken, net/http's background read running meanwhile) rather than anything
// the handler or its statements do. Ours shares its round trip with the downloads that arrive
// with it (pg.Lookups), and so came in under the bound: 0.94-0.97x its CPU per request, where
// each download asking alone was 1.11-1.13x.
func roundTripServer(b *testing.B, ev *env, key string) string {
	file := filepath.Join(ev.backend.(*Disk).root.Name(), filepath.FromSlash(key))
	e := echo.New()
	e.GET("/rtt", func(c echo.Context) error {
		ctx := c.Request().Context()
		conn, err := ev.db.Pool.Acquire(ctx)
		if err != nil {
			return err
		}
		_, err = conn.Conn().PgConn().ExecParams(ctx, "select 1", nil, nil, nil, nil).Close()
		conn.Release()
		if err != nil {
			return err
		}
		http.ServeFile(c.Response().Writer, c.Request(), file) // the raw writer, for sendfile
		return nil
	})
	srv := httptest.NewServer(e)
	b.Cleanup(srv.Close)
	return srv.URL + "/rtt"
}

// downloadFixture stores a 100 kB image as proj-a/bench.png (media row and object) and serves
// the same file with http.ServeFile on a server of its own, whose URL it returns.
func downloadFixture(b *testing.B) (ev *env, key string, size int, plainURL string) {
	d, err := NewDisk(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	ev = newEnv(b, d).withOptions(b, wholePool)
	data := make([]byte, 100_000)
	rand.Read(data)
	key = "proj-a/bench.png"
	if _, err := ev.db.Owner(b).Exec(context.Background(), `insert into media (project_id, storage_path, mime_type, bytes)
		select id, $1, 'image/png', $2 from projects where slug = 'proj-a'`, key, len(data)); err != nil {
		b.Fatal(err)
	}
	if err := d.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), "image/png"); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(d.root.Name(), filepath.FromSlash(key))
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, file)
	}))
	b.Cleanup(plain.Close)
	return ev, key, len(data), plain.URL
}

// wholePool lets the one user whose clients drive a benchmark hold the whole pool: the
// benchmarks measure what a download costs, with the share's bookkeeping, not the limit on
// how many of one person's requests run at once (MASTHEAD_POOL_SHARE).
func wholePool(o *Options) {
	o.Shares = pg.NewShares(downloadClients, pg.DefaultShareWait)
}

// downloadClients is how many clients download at once in the Floor benchmarks.
const downloadClients = 16

// downloadBatch is how many requests each side gets per iteration: long enough for the
// clients to reach full speed, short enough that load changes hit both sides.
const downloadBatch = 20 * downloadClients

// side is one of the two servers a Floor benchmark compares, and what its batches cost.
type side struct {
	request       func() *http.Request
	client        *http.Client
	n             int
	wall, cpu, pg time.Duration
	switches      int64
}

// alternate runs b's loop: each iteration sends downloadBatch requests from downloadClients
// clients to ours, then as many to the floor (a plain GET of floorURL) and, when boundURL is
// not "", to the round-trip bound, each expected to answer 200 with size bytes; then it reports
// the throughputs and CPU costs and their ratios, ours against the floor and against the bound.
func alternate(b *testing.B, ev *env, size int, ours func() *http.Request, floorURL, boundURL string) {
	pgCPU := postgresCPU(b, ev)
	newClient := func() *http.Client {
		return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: downloadClients, MaxConnsPerHost: downloadClients}}
	}
	us := &side{request: ours, client: newClient()}
	floor := &side{request: func() *http.Request {
		hr, _ := http.NewRequest(http.MethodGet, floorURL, nil)
		return hr
	}, client: newClient()}
	sides := []*side{us, floor}
	var bound *side
	if boundURL != "" {
		bound = &side{request: func() *http.Request {
			hr, _ := http.NewRequest(http.MethodGet, boundURL, nil)
			ev.authorize(hr, req{user: "viewerA"}) // ours's headers, read by nobody
			return hr
		}, client: newClient()}
		sides = append(sides, bound)
	}
	// One warm-up batch each: connections opened, statements prepared.
	for _, s := range sides {
		if err := s.batch(size, pgCPU); err != nil {
			b.Fatal(err)
		}
		*s = side{request: s.request, client: s.client}
	}
	b.SetBytes(int64(len(sides) * downloadBatch * size))
	b.ResetTimer()
	for b.Loop() {
		for _, s := range sides {
			if err := s.batch(size, pgCPU); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	report := func(quantity string, ours, floor float64) {
		b.ReportMetric(ours, "ours_"+quantity)
		b.ReportMetric(floor, "floor_"+quantity)
		b.ReportMetric(ours/floor, "ratio_"+quantity)
	}
	report("req/s", us.rate(), floor.rate())
	report("cpu-µs/req", us.cpuPer(), floor.cpuPer())
	if bound != nil {
		report("rtt-req/s", us.rate(), bound.rate())
		report("rtt-cpu-µs/req", us.cpuPer(), bound.cpuPer())
	}
	b.ReportMetric(float64(us.pg.Nanoseconds())/1e3/float64(us.n), "pg-cpu-µs/req")
	b.ReportMetric(float64(us.switches)/float64(us.n), "ctxsw/req")
	b.ReportMetric(float64(floor.switches)/float64(floor.n), "floor-ctxsw/req")
}

// rate is the side's requests per second over its batches.
func (s *side) rate() float64 { return float64(s.n) / s.wall.Seconds() }

// cpuPer is this process's CPU per request of the side, in µs.
func (s *side) cpuPer() float64 { return float64(s.cpu.Nanoseconds()) / 1e3 / float64(s.n) }

// batch sends downloadBatch requests from downloadClients concurrent clients and adds their
// count, wall time, this process's CPU and PostgreSQL's CPU to s.
func (s *side) batch(size int, pgCPU func() time.Duration) error {
	errs := make(chan error, downloadClients)
	// PostgreSQL's CPU is read outside the window, since reading it costs this process CPU.
	pg0 := pgCPU()
	sw0 := processSwitches()
	start, cpu0 := time.Now(), processCPU()
	for range downloadClients {
		go func() {
			for range downloadBatch / downloadClients {
				resp, err := s.client.Do(s.request())
				if err != nil {
					errs <- err
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n != int64(size) {
					errs <- fmt.Errorf("status %d, %d bytes", resp.StatusCode, n)
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range downloadClients {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	s.cpu += processCPU() - cpu0
	s.wall += time.Since(start)
	s.switches += processSwitches() - sw0
	s.pg += pgCPU() - pg0
	s.n += downloadBatch
	return first
}

// postgresCPU returns a function reading the CPU time used by the test's PostgreSQL server:
// the postmaster and its live children (the pool keeps its backends for the whole run, so the
// difference of two readings is what the requests between them cost). /proc counts in ticks of
// 10 ms, fine over a benchmark's many batches. Without /proc it reads zero.
func postgresCPU(b *testing.B, ev *env) func() time.Duration {
	var dataDir string
	if err := ev.db.Owner(b).QueryRow(context.Background(), `show data_directory`).Scan(&dataDir); err != nil {
		b.Fatal(err)
	}
	pidFile, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		b.Fatal(err)
	}
	postmaster, _, _ := strings.Cut(string(pidFile), "\n")
	postmaster = strings.TrimSpace(postmaster)
	ticks := func(pid string) int64 {
		data, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return 0 // the process ended
		}
		// pid (comm) state ppid … utime(14) stime(15): comm may hold spaces, so cut at ')'.
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		return ut + st
	}
	return func() time.Duration {
		n := ticks(postmaster)
		children, _ := os.ReadFile("/proc/" + postmaster + "/task/" + postmaster + "/children")
		for _, pid := range strings.Fields(string(children)) {
			n += ticks(pid)
		}
		return time.Duration(n) * 10 * time.Millisecond
	}
}

// processCPU is the CPU time this process (server and clients, not PostgreSQL) has used: on a
// shared machine it tells what a request costs the service where throughput cannot.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processSwitches is how many times this process's threads have given up the CPU, waiting
// (voluntary) or preempted: every thread parked and woken again costs a round through the
// kernel's scheduler, which is where much of a request's CPU goes on a loaded machine.
func processSwitches() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Nvcsw + ru.Nivcsw
}

// BenchmarkDownloadParts splits the authenticated download's database work into its two
// queries, each with 16 concurrent callers: the identity service's Caller (token verified,
// session looked up) and this package's RLS lookup of the media row (one pipelined round trip).
func BenchmarkDownloadParts(b *testing.B) {
	d, err := NewDisk(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	ev := newEnv(b, d).withOptions(b, wholePool)
	hr, _ := http.NewRequest(http.MethodGet, "/", nil)
	ev.authorize(hr, req{user: "viewerA"})
	caller, err := ev.auth.Caller(hr)
	if err != nil {
		b.Fatal(err)
	}
	parallel := func(b *testing.B, fn func() error) {
		b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		start, cpu0 := time.Now(), processCPU()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := fn(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
	}
	b.Run("auth.Caller", func(b *testing.B) {
		parallel(b, func() error { _, err := ev.auth.Caller(hr); return err })
	})
	b.Run("Disk.Open", func(b *testing.B) {
		parallel(b, func() error {
			obj, err := d.Open(context.Background(), "proj-a/photo.png")
			if err == nil {
				obj.Body.Close()
			}
			return err
		})
	})
	b.Run("visibleMime", func(b *testing.B) {
		parallel(b, func() error {
			if _, aerr := ev.h.visibleMime(context.Background(), identity{Caller: caller, share: pg.ShareKey(caller, "127.0.0.1")}, "proj-a/photo.png"); aerr != nil {
				return aerr
			}
			return nil
		})
	})
}
