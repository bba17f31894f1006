package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// BenchmarkDownload100kB compares an authenticated download (token verified, session checked,
// media row read under RLS, file streamed) with http.ServeFile of the same file, the ceiling
// for serving it from Go, each with 16 concurrent clients over loopback HTTP/1.1.
//
//	go test ./internal/storage -run '^$' -bench Download100kB -benchtime 5s
func BenchmarkDownload100kB(b *testing.B) {
	d, err := NewDisk(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	ev := newEnv(b, d)
	data := make([]byte, 100_000)
	rand.Read(data)
	const key = "proj-a/bench.png"
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

	const clients = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	run := func(b *testing.B, url string, r req) {
		b.SetBytes(int64(len(data)))
		b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		start, cpu0 := time.Now(), processCPU()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				hr, _ := http.NewRequest(http.MethodGet, url, nil)
				ev.authorize(hr, r)
				resp, err := client.Do(hr)
				if err != nil {
					b.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n != int64(len(data)) {
					b.Errorf("status %d, %d bytes", resp.StatusCode, n)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
	}
	b.Run("ServeFile", func(b *testing.B) { run(b, plain.URL, req{noKey: true}) })
	b.Run("authenticated", func(b *testing.B) {
		run(b, ev.srv.URL+"/storage/v1/object/authenticated/media/"+key, req{user: "viewerA"})
	})
	// The same download with the identity already known: what this package's own work (the
	// RLS lookup and http.ServeContent) costs, apart from verifying the token and its session.
	hr, _ := http.NewRequest(http.MethodGet, "/", nil)
	ev.authorize(hr, req{user: "viewerA"})
	caller, err := ev.auth.Caller(hr)
	if err != nil {
		b.Fatal(err)
	}
	h, err := New(ev.db.Pool, knownCaller{caller}, ev.h.opts, ev.h.log)
	if err != nil {
		b.Fatal(err)
	}
	e := echo.New()
	h.Mount(e.Group("/storage/v1"))
	known := httptest.NewServer(e)
	b.Cleanup(known.Close)
	b.Run("caller known", func(b *testing.B) {
		run(b, known.URL+"/storage/v1/object/authenticated/media/"+key, req{})
	})
}

// processCPU is the CPU time this process (server and clients, not PostgreSQL) has used: on a
// shared machine it tells what a request costs the service where throughput cannot.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// knownCaller answers every request with one caller, to measure storage without identity.
type knownCaller struct{ c pg.Caller }

func (k knownCaller) Caller(*http.Request) (pg.Caller, error) { return k.c, nil }

// BenchmarkDownloadParts splits the authenticated download's database work into its two
// queries, each with 16 concurrent callers: the identity service's Caller (token verified,
// session looked up) and this package's RLS lookup of the media row (one pipelined round trip).
func BenchmarkDownloadParts(b *testing.B) {
	d, err := NewDisk(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	ev := newEnv(b, d)
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
			if _, aerr := ev.h.visibleMime(context.Background(), caller, "proj-a/photo.png"); aerr != nil {
				return aerr
			}
			return nil
		})
	})
}
