package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
	"masthead/internal/testwait"
)

// TestPoolShareSpansSurfaces: one caller's share of the pool (MASTHEAD_POOL_SHARE) counts their
// /rest/v1 and /storage/v1 requests together. With public.media locked and the share (one)
// held by the caller's request to one surface, their request to the other waits
// MASTHEAD_POOL_SHARE_WAIT and is refused 503 in that surface's shape, naming the limit; the
// held request completes once the lock goes.
func TestPoolShareSpansSurfaces(t *testing.T) {
	t.Parallel()
	const wait = 200 * time.Millisecond
	e := servertest.New(t, func(c *config.Config) { c.PoolShare, c.PoolShareWait = 1, wait })
	bg := context.Background()
	own := e.DB.Owner(t)
	var project string
	if err := own.QueryRow(bg, `insert into projects (slug, name) values ('share', 'Share') returning id`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	u := e.CreateUser(t, "editor@share.test", "a long password")
	if _, err := own.Exec(bg, `insert into project_members (project_id, user_id, role) values ($1, $2, 'editor')`, project, u.ID); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"apikey": e.Key, "Authorization": "Bearer " + accessToken(t, e.URL, e.Key, u.Email, u.Password)}
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	up := map[string]string{"Content-Type": "image/png"}
	for k, v := range hdr {
		up[k] = v
	}
	if res, body := get(t, http.MethodPost, e.URL+"/storage/v1/object/media/share/a.png", up, bytes.NewReader(img.Bytes())); res.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", res.StatusCode, body)
	}

	rest := e.URL + "/rest/v1/media?select=storage_path"
	download := e.URL + "/storage/v1/object/authenticated/media/share/a.png"
	for _, tc := range []struct {
		name       string
		hold, over string
		refused    func(body map[string]any) bool // the refusal's shape, naming the limit
	}{
		{"REST holds the share, storage is refused", rest, download, func(b map[string]any) bool {
			msg, _ := b["message"].(string)
			return b["statusCode"] == "503" && b["error"] == "SlowDown" && strings.Contains(msg, "MASTHEAD_POOL_SHARE")
		}},
		{"storage holds the share, REST is refused", download, rest, func(b map[string]any) bool {
			details, _ := b["details"].(string)
			return b["code"] == "PGRST003" && strings.Contains(details, "MASTHEAD_POOL_SHARE")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lock, err := e.DB.Owner(t).Begin(bg)
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Rollback(bg) // on a failure below; a no-op after the commit
			if _, err := lock.Exec(bg, `lock table public.media in access exclusive mode`); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var held *http.Response
			var heldErr error
			wg.Go(func() { held, _, heldErr = send(tc.hold, hdr) })
			testwait.Until(t, 10*time.Second, "the held request to wait on the lock", func() (bool, string) {
				var waiting int
				if err := own.QueryRow(bg, `select count(*) from pg_stat_activity
					where datname = current_database() and backend_type = 'client backend' and wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				return waiting == 1, fmt.Sprintf("%d backends wait on a lock", waiting)
			})

			start := time.Now()
			res, body, err := send(tc.over, hdr)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("over the share: %v", err)
			}
			var b map[string]any
			_ = json.Unmarshal(body, &b)
			if res.StatusCode != http.StatusServiceUnavailable || !tc.refused(b) || res.Header.Get("Retry-After") == "" {
				t.Errorf("over the share: %d %s", res.StatusCode, body)
			}
			if took < wait {
				t.Errorf("refused after %s, before MASTHEAD_POOL_SHARE_WAIT (%s)", took, wait)
			}

			if err := lock.Commit(bg); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if heldErr != nil || held.StatusCode != http.StatusOK {
				t.Errorf("the held request: %v %v", heldErr, held)
			}
		})
	}
}

// send GETs url from any goroutine, giving up after 10 s (a request that should be refused
// at once may instead wait on the locked table), and returns the response and its body.
func send(url string, header map[string]string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res, body, err
}
