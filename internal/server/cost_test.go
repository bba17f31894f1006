package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"masthead/internal/pg"
	"masthead/internal/server/servertest"
)

// TestExpensiveRequestRefused is the attack of issue "Hold under attack": a viewer asks for a
// thousand publications, each with its project, all the project's publications with their
// promos, their project again and all its publications again. With the default limits that is
// refused with a clear 400 (MH001, naming MASTHEAD_MAX_EMBEDDED_ROWS) in far less than the
// statement timeout, eight at once included (those over the viewer's share of the pool wait
// and may get 503 PGRST003), while a viewer of another tenant keeps reading in under a second.
func TestExpensiveRequestRefused(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	own := e.DB.Owner(t)
	bg := context.Background()
	token := map[string]string{}
	for _, p := range []struct {
		slug string
		pubs int
	}{{"big", 300}, {"small", 5}} {
		var project string
		if err := own.QueryRow(bg, `insert into projects (slug, name) values ($1, $1) returning id`, p.slug).Scan(&project); err != nil {
			t.Fatal(err)
		}
		u := e.CreateUser(t, "viewer@"+p.slug+".test", "a long password")
		if _, err := own.Exec(bg, `insert into project_members (project_id, user_id, role) values ($1, $2, 'viewer')`, project, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := own.Exec(bg, `
			with p as (insert into publications (project_id, title, slug, summary, body, author_id)
				select $1, 'Item ' || g, 'item-' || g, 'A summary of item ' || g, repeat('Body text. ', 50), $3
				from generate_series(1, $2) g returning id)
			insert into promos (publication_id, channel, body) select id, c, 'Read it' from p, unnest('{x,bluesky}'::text[]) c`,
			project, p.pubs, u.ID); err != nil {
			t.Fatal(err)
		}
		token[p.slug] = accessToken(t, e.URL, e.Key, u.Email, "a long password")
	}
	read := func(who, query string) (int, map[string]any, time.Duration) {
		start := time.Now()
		res, body := get(t, http.MethodGet, e.URL+"/rest/v1/"+query,
			map[string]string{"apikey": e.Key, "Authorization": "Bearer " + token[who]}, nil)
		took := time.Since(start)
		var obj map[string]any
		_ = json.Unmarshal(body, &obj)
		return res.StatusCode, obj, took
	}
	const attack = "publications?select=*,project:projects(*,publications(*,promos(*),project:projects(*,publications(*))))&limit=1000"

	// Alone: what a refusal costs the service.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	status, obj, alone := read("big", attack)
	runtime.ReadMemStats(&after)
	if status != http.StatusBadRequest || obj["code"] != pg.CodeEmbeddedRows || !strings.Contains(obj["details"].(string), "MASTHEAD_MAX_EMBEDDED_ROWS") {
		t.Fatalf("the attack alone: %d %v", status, obj)
	}
	if alone > e.Config.RequestTimeout {
		t.Errorf("refused after %s", alone)
	}

	// Eight at once, and another tenant reading meanwhile.
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	var slowest time.Duration
	for range 8 {
		wg.Go(func() {
			status, obj, took := read("big", attack)
			mu.Lock()
			defer mu.Unlock()
			codes[strings.Join([]string{http.StatusText(status), obj["code"].(string)}, " ")]++
			slowest = max(slowest, took)
		})
	}
	var small []time.Duration
	for range 9 {
		status, obj, took := read("small", "publications?select=title,promos(channel)&limit=5")
		if status != http.StatusOK {
			t.Errorf("the other tenant's read during the attack: %d %v", status, obj)
		}
		small = append(small, took)
	}
	wg.Wait()
	slices.Sort(small)
	for answer := range codes {
		if answer != "Bad Request "+pg.CodeEmbeddedRows && answer != "Service Unavailable PGRST003" {
			t.Errorf("the attack was answered %q", answer)
		}
	}
	if codes["Bad Request "+pg.CodeEmbeddedRows] == 0 {
		t.Errorf("no attack request was refused for its cost: %v", codes)
	}
	// The median, so one scheduling hiccup of a shared machine does not decide it.
	if small[len(small)/2] > time.Second {
		t.Errorf("the other tenant's reads took %v during the attack", small)
	}
	t.Logf("the attack alone refused in %s, the service allocating %d KiB for it; eight at once: %v, the slowest answered in %s; the other tenant's reads meanwhile: median %s, slowest %s",
		alone.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>10, codes, slowest.Round(time.Millisecond),
		small[len(small)/2].Round(time.Millisecond), small[len(small)-1].Round(time.Millisecond))
}
