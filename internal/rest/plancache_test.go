package rest

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// TestPlanCacheKeepsRequestsApart: a read of a shape seen before reuses its statements, yet
// every answer is the one its own request asks for: another tenant's member gets their own
// rows for the same URL, and a different Range, Prefer or Accept on the same URL changes the
// answer as it would without the cache. Each case runs twice, so the second is served from it.
func TestPlanCacheKeepsRequestsApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const path = "/publications?select=title&order=title.asc"
	cases := []struct {
		name         string
		user         string
		header       map[string]string
		status       int
		body, cRange string
	}{
		{"editor of A", "editorA", nil, http.StatusOK,
			`[{"title":"Alpha launch"}, ` + "\n " + `{"title":"Beta notes"}, ` + "\n " + `{"title":"Delta (draft)"}, ` + "\n " + `{"title":"Gamma, with comma"}]`, "0-3/*"},
		{"editor of B, same URL", "editorB", nil, http.StatusOK, `[{"title":"Bravo in B"}]`, "0-0/*"},
		{"outsider, same URL", "outsider", nil, http.StatusOK, `[]`, "*/*"},
		{"a range", "editorA", map[string]string{"Range": "1-2"}, http.StatusOK,
			`[{"title":"Beta notes"}, ` + "\n " + `{"title":"Delta (draft)"}]`, "1-2/*"},
		{"a range, counted", "editorA", map[string]string{"Range": "1-2", "Prefer": "count=exact"}, http.StatusPartialContent, "", "1-2/4"},
		{"counted", "editorA", map[string]string{"Prefer": "count=exact"}, http.StatusOK, "", "0-3/4"},
		{"one object", "editorB", map[string]string{"Accept": "application/vnd.pgrst.object+json"}, http.StatusOK, `{"title":"Bravo in B"}`, "0-0/*"},
	}
	for round := range 2 {
		for _, c := range cases {
			r := f.do(t, call{path: path, user: c.user, header: c.header})
			if r.status != c.status || (c.body != "" && r.body != c.body) || r.header.Get("Content-Range") != c.cRange {
				t.Errorf("round %d, %s: %d %s (Content-Range %q), want %d %s (%q)", round, c.name,
					r.status, r.body, r.header.Get("Content-Range"), c.status, c.body, c.cRange)
			}
		}
	}
}

// TestPlanCacheFollowsTheSchema: a cached plan is used only with the schema it was planned
// against; after a reload, the same request is planned again and sees the new column.
func TestPlanCacheFollowsTheSchema(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `create table public.plan_probe (id int primary key, a text)`)
	mustExec(t, own, `grant select on public.plan_probe to authenticated`)
	mustExec(t, own, `insert into public.plan_probe values (1, 'a')`)
	reload := func() {
		if err := f.h.schema.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	reload()
	const path = "/plan_probe?select=*"
	for _, want := range []string{`[{"id":1,"a":"a"}]`, `[{"id":1,"a":"a"}]`} {
		if r := f.do(t, call{path: path, user: "editorA"}); r.status != http.StatusOK || r.body != want {
			t.Fatalf("before: %d %s, want %s", r.status, r.body, want)
		}
	}
	if n := f.cachedPlans(); n != 1 {
		t.Fatalf("%d plans cached, want the read's one", n)
	}
	mustExec(t, own, `alter table public.plan_probe add column b text default 'b'`)
	reload()
	if r := f.do(t, call{path: path, user: "editorA"}); r.status != http.StatusOK || r.body != `[{"id":1,"a":"a","b":"b"}]` {
		t.Errorf("after the reload: %d %s", r.status, r.body)
	}
}

// TestPlanCacheRepeatedHeader: a request that gives a header of its shape twice (two Prefer
// lines) is answered from both lines and not cached, so the same URL with one of the lines is
// not answered from its plan.
func TestPlanCacheRepeatedHeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	get := func(prefer ...string) reply {
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/rest/v1/publications?select=title", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("apikey", testKey)
		req.Header.Set("Authorization", "Bearer user:"+f.users["editorA"])
		for _, p := range prefer {
			req.Header.Add("Prefer", p)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return reply{status: resp.StatusCode, header: resp.Header}
	}
	for range 2 {
		if r := get("return=representation", "count=exact"); r.status != http.StatusOK || r.header.Get("Content-Range") != "0-3/4" {
			t.Errorf("two Prefer lines: %d %q, want 200 0-3/4", r.status, r.header.Get("Content-Range"))
		}
	}
	if n := f.cachedPlans(); n != 0 {
		t.Errorf("%d plans cached for a repeated header, want none", n)
	}
	if r := get("return=representation"); r.status != http.StatusOK || r.header.Get("Content-Range") != "0-3/*" {
		t.Errorf("the first line alone: %d %q, want 200 0-3/*", r.status, r.header.Get("Content-Range"))
	}
}

// cachedPlans is how many read plans f's handler holds.
func (f *fixture) cachedPlans() int {
	f.h.plans.mu.Lock()
	defer f.h.plans.mu.Unlock()
	return len(f.h.plans.plans)
}
