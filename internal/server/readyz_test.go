package server_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"masthead/internal/pg/pgtest"
	"masthead/internal/server/servertest"
)

// TestReadyzSlowDatabase: /readyz answers 503 {"status":"unavailable"} when the database does
// not answer within two seconds, after those two seconds and not much later (a load balancer's
// check must not hang), and 200 again once the database answers (README, Operations). The
// service reaches its database through a proxy that, stalled, accepts and forwards nothing:
// the database is there but silent, as one that is overloaded or behind a broken network.
func TestReadyzSlowDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	proxy := newStallProxy(t, db.URL)
	e := servertest.Serve(t, proxy.url, nil)

	if res, body := get(t, http.MethodGet, e.URL+"/readyz", nil, nil); res.StatusCode != http.StatusOK || string(body) != `{"status":"ok"}`+"\n" {
		t.Fatalf("readyz with the database answering: %d %s", res.StatusCode, body)
	}
	proxy.stall()
	start := time.Now()
	// A load balancer's check gives up at some point too: past five seconds is a hang.
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get(e.URL + "/readyz")
	took := time.Since(start)
	if err != nil {
		t.Fatalf("readyz with a silent database: %v after %s", err, took.Round(time.Millisecond))
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("readyz with a silent database answered %d after %s", res.StatusCode, took.Round(time.Millisecond))
	if res.StatusCode != http.StatusServiceUnavailable || string(body) != `{"status":"unavailable"}`+"\n" {
		t.Errorf("readyz with a silent database: %d %s, want 503 unavailable", res.StatusCode, body)
	}
	if took < 2*time.Second {
		t.Errorf("readyz gave up on the database after %s, want two seconds", took.Round(time.Millisecond))
	}
	if res, _ := get(t, http.MethodGet, e.URL+"/healthz", nil, nil); res.StatusCode != http.StatusOK {
		t.Errorf("healthz with a silent database: %d", res.StatusCode)
	}
	proxy.resume()
	start = time.Now()
	res, body = get(t, http.MethodGet, e.URL+"/readyz", nil, nil)
	if res.StatusCode != http.StatusOK || string(body) != `{"status":"ok"}`+"\n" {
		t.Errorf("readyz once the database answers again: %d %s", res.StatusCode, body)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("readyz once the database answers again took %s", took.Round(time.Millisecond))
	}
}

// stallProxy passes connections through to a PostgreSQL server's Unix socket; stalled, it
// still accepts and reads but forwards nothing, in either direction, until resumed.
type stallProxy struct {
	url     string // databaseURL, through the proxy
	backend string // the server's socket

	mu   sync.Mutex
	flow chan struct{} // closed while bytes flow
}

// newStallProxy starts a proxy, flowing, in front of the server databaseURL names (by its Unix
// socket, as pgtest's are); it stops when t ends.
func newStallProxy(t *testing.T, databaseURL string) *stallProxy {
	t.Helper()
	cfg, err := pgconn.ParseConfig(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf(".s.PGSQL.%d", cfg.Port)
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("host", dir)
	u.RawQuery = q.Encode()
	p := &stallProxy{url: u.String(), backend: filepath.Join(cfg.Host, name), flow: make(chan struct{})}
	close(p.flow)
	var conns sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		ln.Close()
		conns.Wait()
	})
	conns.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { p.pass(client, done) })
		}
	})
	return p
}

// stall holds every byte read from now on, on every connection, until resume.
func (p *stallProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flow = make(chan struct{})
}

// resume forwards what was held and what comes.
func (p *stallProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.flow)
}

func (p *stallProxy) flowing() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flow
}

// pass connects client to the server and copies both ways, through the gate, until either
// side closes or the proxy stops.
func (p *stallProxy) pass(client net.Conn, stop <-chan struct{}) {
	defer client.Close()
	server, err := net.Dial("unix", p.backend)
	if err != nil {
		return
	}
	defer server.Close()
	ended := make(chan struct{})
	var once sync.Once
	end := func() { once.Do(func() { close(ended) }) }
	copyGated := func(dst io.Writer, src io.Reader) {
		defer end()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case <-p.flowing():
				case <-ended:
					return
				case <-stop:
					return
				}
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go copyGated(server, client)
	go copyGated(client, server)
	select {
	case <-ended:
	case <-stop:
	}
}
