package storage

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/auth"
	"masthead/internal/pg"
	"masthead/internal/testwait"
)

// reply is what came back for a request sent from a goroutine other than the test's.
type reply struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
	err    error
}

// fetch is do for any goroutine: it reports a failure to send in the reply instead of ending the
// test, and gives up after 10 s (a request that should have been refused at once may instead
// hang on the locked table).
func (ev *env) fetch(r req) reply {
	hr, err := http.NewRequest(cmp.Or(r.method, http.MethodGet), ev.srv.URL+r.path, bytes.NewReader(r.body))
	if err != nil {
		return reply{err: err}
	}
	ev.authorize(hr, r)
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(hr)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b, took: time.Since(start), err: err}
}

// lockMedia takes an access exclusive lock on public.media in a transaction of the database
// owner, so that every statement reading media waits in PostgreSQL, holding its connection, until
// the returned release commits it.
func lockMedia(t *testing.T, ev *env) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := ev.db.Owner(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `lock table public.media in access exclusive mode`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := tx.Commit(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// waitLocked polls until n of the test database's client backends wait on a lock.
func waitLocked(t *testing.T, own *pgx.Conn, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, fmt.Sprintf("%d backends to wait on a lock", n), func() (bool, string) {
		var waiting int
		if err := own.QueryRow(context.Background(), `select count(*) from pg_stat_activity
			where datname = current_database() and backend_type = 'client backend' and wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting == n, fmt.Sprintf("%d backends wait on a lock", waiting)
	})
}

// TestPoolShare: while public.media is locked, a user's downloads that hold their whole share of
// the pool (MASTHEAD_POOL_SHARE) wait in the database; one more of theirs, from the same session
// or another one, waits MASTHEAD_POOL_SHARE_WAIT and is refused 503 in Supabase Storage's shape
// naming the limit, while another user's download is not refused: it takes a connection and
// waits on the lock too. Once the lock goes, every waiting download completes.
func TestPoolShare(t *testing.T) {
	t.Parallel()
	const share, wait = 2, 200 * time.Millisecond
	ev := newDiskEnv(t).withOptions(t, func(o *Options) {
		o.Shares = pg.NewShares(share, wait)
		// A lane for each download that gets past its share, so each takes a connection of
		// its own and can be seen waiting on the lock (lookups beyond the lanes would queue
		// in pg.Lookups, where the lock cannot be seen; TestLookupsQueue covers that).
		o.LookupLanes = share + 1
	})
	tok, err := ev.auth.PasswordGrant(context.Background(), "viewerA@example.test", password, auth.Client{IP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ev.tokens["viewerA again"] = tok.AccessToken
	own := ev.db.Owner(t)
	const photo = "/storage/v1/object/authenticated/media/proj-a/photo.png"
	release := lockMedia(t, ev)

	var wg sync.WaitGroup
	held := make([]reply, share+1) // viewerA's share, then editorA's one
	for i := range share {
		wg.Go(func() { held[i] = ev.fetch(req{path: photo, user: "viewerA"}) })
	}
	waitLocked(t, own, share)
	for _, user := range []string{"viewerA", "viewerA again"} {
		r := ev.fetch(req{path: photo, user: user})
		if r.err != nil {
			t.Fatalf("%s over the share: %v", user, r.err)
		}
		e := storageError(t, r.body)
		if r.status != http.StatusServiceUnavailable || e["statusCode"] != "503" || e["error"] != "SlowDown" ||
			!strings.Contains(e["message"], "MASTHEAD_POOL_SHARE") || r.header.Get("Retry-After") == "" {
			t.Errorf("%s over the share: %d %s", user, r.status, r.body)
		}
		if r.took < wait {
			t.Errorf("%s over the share was refused after %s, before MASTHEAD_POOL_SHARE_WAIT (%s)", user, r.took, wait)
		}
	}
	wg.Go(func() { held[share] = ev.fetch(req{path: photo, user: "editorA"}) })
	waitLocked(t, own, share+1) // editorA's download holds a connection: it was not refused

	release()
	wg.Wait()
	for i, r := range held {
		if r.err != nil || r.status != http.StatusOK || !bytes.Equal(r.body, ev.png) {
			t.Errorf("held download %d: %v %d %.200s", i, r.err, r.status, r.body)
		}
	}
	if r := ev.fetch(req{path: photo, user: "viewerA"}); r.status != http.StatusOK {
		t.Errorf("with the share free again: %d %s", r.status, r.body)
	}
}

// TestPoolShareOnlyWithConnection: a request holds its slot of the share only while it holds a
// database connection. With a share of one, a download stalled while its file streams (the
// client reads nothing) and an upload stalled while its body arrives each leave the slot free,
// so the same user's further downloads are served; both complete once their client goes on.
func TestPoolShareOnlyWithConnection(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t).withOptions(t, func(o *Options) { o.Shares = pg.NewShares(1, 200*time.Millisecond) })
	ctx := context.Background()
	// A file far larger than the socket buffers of both ends (the client's is kept small), so
	// its download stays mid-stream while the client reads nothing.
	big := make([]byte, 16<<20)
	rand.Read(big)
	if _, err := ev.db.Owner(t).Exec(ctx, `insert into media (project_id, storage_path, mime_type, bytes)
		select id, 'proj-a/big.png', 'image/png', $1 from projects where slug = 'proj-a'`, len(big)); err != nil {
		t.Fatal(err)
	}
	if err := ev.backend.Put(ctx, "proj-a/big.png", bytes.NewReader(big), int64(len(big)), "image/png"); err != nil {
		t.Fatal(err)
	}
	const photo = "/storage/v1/object/authenticated/media/proj-a/photo.png"
	served := func(what string) {
		t.Helper()
		for range 3 {
			if r := ev.fetch(req{path: photo, user: "editorA"}); r.status != http.StatusOK {
				t.Fatalf("a download while %s: %d %s", what, r.status, r.body)
			}
		}
	}

	hr, err := http.NewRequest(http.MethodGet, ev.srv.URL+"/storage/v1/object/authenticated/media/proj-a/big.png", nil)
	if err != nil {
		t.Fatal(err)
	}
	ev.authorize(hr, req{user: "editorA"})
	small := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			err = conn.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return conn, err
	}}
	defer small.CloseIdleConnections()
	stalled, err := small.RoundTrip(hr) // returns with the headers; the body waits
	if err != nil || stalled.StatusCode != http.StatusOK {
		t.Fatalf("the big download: %v %v", err, stalled)
	}
	defer stalled.Body.Close() // on a failure below: the server's Close waits for this request
	served("another streams")
	got, err := io.ReadAll(stalled.Body)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the big download, read at last: %v, %d bytes", err, len(got))
	}

	body, w := io.Pipe()
	defer w.Close() // on a failure below: the server's Close waits for this request
	var up reply
	var wg sync.WaitGroup
	wg.Go(func() {
		hr, err := http.NewRequest(http.MethodPost, ev.srv.URL+"/storage/v1/object/media/proj-a/slow.png", body)
		if err != nil {
			up.err = err
			return
		}
		ev.authorize(hr, req{user: "editorA"})
		hr.Header.Set("Content-Type", "image/png")
		resp, err := http.DefaultTransport.RoundTrip(hr)
		if err != nil {
			up.err = err
			return
		}
		defer resp.Body.Close()
		up.status = resp.StatusCode
		up.body, up.err = io.ReadAll(resp.Body)
	})
	if _, err := w.Write(ev.png[:16]); err != nil {
		t.Fatal(err)
	}
	// The upload has tried its row write and is spooling the body once its spool file exists.
	testwait.Until(t, 10*time.Second, "the upload to start spooling its body", func() (bool, string) {
		left, err := os.ReadDir(ev.spool)
		if err != nil {
			t.Fatal(err)
		}
		return len(left) > 0, ""
	})
	served("an upload's body arrives")
	if _, err := w.Write(ev.png[16:]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	wg.Wait()
	if up.err != nil || up.status != http.StatusOK {
		t.Fatalf("the slow upload: %v %d %s", up.err, up.status, up.body)
	}
}

// TestDownloadsTogether: with one lane for the access checks, 24 clients downloading at once
// share round trips (pg.Lookups), and every answer is still the caller's own: each member gets
// their project's image and a 404 for the other's, the outsider 404s, and a token whose
// session has ended 401s, whoever's check went to PostgreSQL beside theirs.
func TestDownloadsTogether(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t).withOptions(t, func(o *Options) { o.LookupLanes = 1 })
	ctx := context.Background()
	tok, err := ev.auth.PasswordGrant(ctx, "viewerA@example.test", password, auth.Client{IP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ev.tokens["signed out"] = tok.AccessToken
	if _, err := ev.db.Owner(t).Exec(ctx, `delete from auth.sessions where id = (select id from auth.sessions
		where user_id = $1 order by created_at desc limit 1)`, ev.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	const photo, secret = "/storage/v1/object/authenticated/media/proj-a/photo.png", "/storage/v1/object/authenticated/media/proj-b/secret.png"
	cases := []struct {
		user, path string
		status     int
	}{
		{"editorA", photo, http.StatusOK}, {"editorB", secret, http.StatusOK}, {"viewerA", photo, http.StatusOK},
		{"editorA", secret, http.StatusNotFound}, {"editorB", photo, http.StatusNotFound},
		{"outsider", photo, http.StatusNotFound}, {"signed out", photo, http.StatusUnauthorized},
	}
	const clients, each = 24, 14
	failures := make(chan string, clients*each)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				tc := cases[(c+i)%len(cases)]
				r := ev.fetch(req{path: tc.path, user: tc.user})
				if r.err != nil || r.status != tc.status || (tc.status == http.StatusOK && !bytes.Equal(r.body, ev.png)) {
					failures <- fmt.Sprintf("%s %s: %v %d %.100s", tc.user, tc.path, r.err, r.status, r.body)
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	reads, batches := ev.h.lookupsOn(ev.db.Pool).Stats()
	if reads != clients*each || batches >= reads {
		t.Errorf("%d downloads made %d checks in %d batches: want every check, some sharing a round trip", clients*each, reads, batches)
	}
}
