package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"masthead/internal/testwait"
)

// titles lists the "title" of each row, in order.
func titles(t testing.TB, r reply) []string {
	t.Helper()
	var out []string
	for _, row := range r.rows(t) {
		out = append(out, row["title"].(string))
	}
	return out
}

func wantTitles(want ...string) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		if got := titles(t, r); !slices.Equal(got, want) {
			t.Errorf("titles = %q, want %q", got, want)
		}
	}
}

func wantError(code string) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		if got := r.errCode(t); got != code {
			t.Errorf("code = %s, want %s (%s)", got, code, r.body)
		}
	}
}

// TestReads drives every read feature through HTTP against one fixture;
// reads change nothing, so the scenarios share it and run in parallel.
func TestReads(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alpha := f.pubs["Alpha launch"]
	q := url.QueryEscape
	tests := []struct {
		name   string
		call   call
		status int
		check  func(t *testing.T, f *fixture, r reply)
	}{
		{"seed read: publication with promos and media", call{user: "editorA", path: "/publications?select=*,promos(*),publication_media(position,media(*))&id=eq." + alpha}, 200,
			func(t *testing.T, f *fixture, r reply) {
				rows := r.rows(t)
				if len(rows) != 1 {
					t.Fatalf("rows = %d", len(rows))
				}
				p := rows[0]
				if p["title"] != "Alpha launch" || p["version"] == nil || p["body"] == nil {
					t.Errorf("publication = %v", p)
				}
				if n := len(p["promos"].([]any)); n != 2 {
					t.Errorf("promos = %d", n)
				}
				pm := p["publication_media"].([]any)[0].(map[string]any)
				if pm["position"] != float64(1) || pm["media"].(map[string]any)["storage_path"] != "proj-a/a.png" {
					t.Errorf("publication_media = %v", pm)
				}
				if len(pm) != 2 {
					t.Errorf("publication_media keys = %v, want position and media only", pm)
				}
			}},
		{"seed read: review queue", call{user: "editorA", path: "/publications?status=eq.reviewing&order=created_at.desc&select=id,title,status,scheduled_for"}, 200,
			func(t *testing.T, f *fixture, r reply) {
				rows := r.rows(t)
				if len(rows) != 2 || len(rows[0]) != 4 || rows[0]["title"] != "Gamma, with comma" {
					t.Errorf("rows = %v", rows)
				}
			}},
		{"eq", call{user: "editorA", path: "/publications?select=title&title=eq.Beta%20notes"}, 200, wantTitles("Beta notes")},
		{"neq", call{user: "editorA", path: "/publications?select=title&status=neq.reviewing&order=title"}, 200, wantTitles("Beta notes", "Delta (draft)")},
		{"gt", call{user: "editorA", path: "/publications?select=title&version=gt.2"}, 200, wantTitles("Beta notes")},
		{"gte", call{user: "editorA", path: "/publications?select=title&version=gte.2&order=title"}, 200, wantTitles("Alpha launch", "Beta notes", "Gamma, with comma")},
		{"lt", call{user: "editorA", path: "/publications?select=title&version=lt.2"}, 200, wantTitles("Delta (draft)")},
		{"lte", call{user: "editorA", path: "/publications?select=title&version=lte.2&order=title.desc"}, 200, wantTitles("Gamma, with comma", "Delta (draft)", "Alpha launch")},
		{"like with stars", call{user: "editorA", path: "/publications?select=title&title=like.*ta*&order=title"}, 200, wantTitles("Beta notes", "Delta (draft)")},
		{"ilike", call{user: "editorA", path: "/publications?select=title&title=ilike.ALPHA*"}, 200, wantTitles("Alpha launch")},
		{"match", call{user: "editorA", path: "/publications?select=title&title=match.^G.*comma$"}, 200, wantTitles("Gamma, with comma")},
		{"imatch", call{user: "editorA", path: "/publications?select=title&title=imatch.^g"}, 200, wantTitles("Gamma, with comma")},
		{"in with quoted comma", call{user: "editorA", path: "/publications?select=title&order=title&title=in.(" + q(`"Gamma, with comma"`) + ",Alpha%20launch)"}, 200, wantTitles("Alpha launch", "Gamma, with comma")},
		{"in on uuid", call{user: "editorA", path: "/publications?select=title&id=in.(" + alpha + ")"}, 200, wantTitles("Alpha launch")},
		{"not in", call{user: "editorA", path: "/publications?select=title&order=title&status=not.in.(reviewing,approved)"}, 200, wantTitles("Delta (draft)")},
		{"is null", call{user: "editorA", path: "/publications?select=title&scheduled_for=is.null&order=title&limit=1"}, 200, wantTitles("Alpha launch")},
		{"is not_null", call{user: "editorA", path: "/promos?select=channel&link=is.not_null"}, 200, func(t *testing.T, f *fixture, r reply) {
			if len(r.rows(t)) != 0 {
				t.Errorf("rows = %s", r.body)
			}
		}},
		{"isdistinct", call{user: "editorA", path: "/publications?select=title&status=isdistinct.reviewing&order=title"}, 200, wantTitles("Beta notes", "Delta (draft)")},
		{"fts", call{user: "editorA", path: "/publications?select=title&title=fts(english).launch"}, 200, wantTitles("Alpha launch")},
		{"plfts", call{user: "editorA", path: "/publications?select=title&title=plfts.beta%20notes"}, 200, wantTitles("Beta notes")},
		{"phfts", call{user: "editorA", path: "/publications?select=title&title=phfts(english).alpha%20launch"}, 200, wantTitles("Alpha launch")},
		{"wfts", call{user: "editorA", path: "/publications?select=title&title=wfts." + q(`"beta notes" -alpha`)}, 200, wantTitles("Beta notes")},
		{"cs on array", call{user: "editorA", path: "/projects?select=slug&default_channels=cs.{x}"}, 200, func(t *testing.T, f *fixture, r reply) {
			if rows := r.rows(t); len(rows) != 1 || rows[0]["slug"] != "proj-a" {
				t.Errorf("rows = %s", r.body)
			}
		}},
		{"cd on array", call{user: "editorA", path: "/projects?select=slug&default_channels=cd.{x,bluesky,threads}"}, 200, func(t *testing.T, f *fixture, r reply) {
			if len(r.rows(t)) != 1 {
				t.Errorf("rows = %s", r.body)
			}
		}},
		{"ov on array", call{user: "editorA", path: "/projects?select=slug&default_channels=ov.{threads,bluesky}"}, 200, func(t *testing.T, f *fixture, r reply) {
			if len(r.rows(t)) != 1 {
				t.Errorf("rows = %s", r.body)
			}
		}},
		{"cs on jsonb", call{user: "editorA", path: "/channels?select=slug&limits=cs." + q(`{"count":"graphemes"}`)}, 200, func(t *testing.T, f *fixture, r reply) {
			if rows := r.rows(t); len(rows) != 1 || rows[0]["slug"] != "bluesky" {
				t.Errorf("rows = %s", r.body)
			}
		}},
		{"json path filter and select", call{user: "editorA", path: "/channels?select=slug,max:limits->max_chars,count:limits->>count&limits->>count=eq.bytes"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"slug":"threads","max":500,"count":"bytes"}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"json path order", call{user: "editorA", path: "/channels?select=slug&order=limits->max_chars.desc.nullslast&limit=1"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"slug":"facebook"}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"eq any", call{user: "editorA", path: "/publications?select=title&order=title&status=eq(any).{draft,approved}"}, 200, wantTitles("Beta notes", "Delta (draft)")},
		{"like all", call{user: "editorA", path: "/publications?select=title&title=like(all).{*a*,*l*}&order=title"}, 200, wantTitles("Alpha launch", "Delta (draft)")},
		{"or", call{user: "editorA", path: "/publications?select=title&order=title&or=(status.eq.draft,version.gt.2)"}, 200, wantTitles("Beta notes", "Delta (draft)")},
		{"and with nested or", call{user: "editorA", path: "/publications?select=title&order=title&and=(version.gte.2,or(title.like.A*,title." + q(`eq."Gamma, with comma"`) + "))"}, 200, wantTitles("Alpha launch", "Gamma, with comma")},
		{"not.or", call{user: "editorA", path: "/publications?select=title&order=title&not.or=(status.eq.reviewing,status.eq.draft)"}, 200, wantTitles("Beta notes")},
		{"alias and cast", call{user: "editorA", path: "/publications?select=t:title,v:version::text&id=eq." + alpha}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"t":"Alpha launch","v":"2"}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"embedded filter", call{user: "editorA", path: "/publications?select=title,promos(channel)&promos.channel=eq.bluesky&id=eq." + alpha}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"title":"Alpha launch","promos":[{"channel":"bluesky"}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"embedded or", call{user: "editorA", path: "/publications?select=title,promos(channel)&promos.or=(channel.eq.x,channel.eq.threads)&id=eq." + alpha}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"title":"Alpha launch","promos":[{"channel":"x"}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"embedded order and limit", call{user: "editorA", path: "/publications?select=title,promos(channel)&promos.order=channel.desc&promos.limit=1&id=eq." + alpha}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"title":"Alpha launch","promos":[{"channel":"x"}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"embedded offset", call{user: "editorA", path: "/publications?select=title,promos(channel)&promos.order=channel&promos.offset=1&id=eq." + alpha}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"title":"Alpha launch","promos":[{"channel":"x"}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"inner embed filters parents", call{user: "editorA", path: "/publications?select=title,promos!inner(channel)&promos.channel=eq.x&order=title"}, 200, wantTitles("Alpha launch", "Beta notes")},
		{"semi-join not.is.null", call{user: "editorA", path: "/publications?select=title,promos(id)&promos=not.is.null&order=title"}, 200, wantTitles("Alpha launch", "Beta notes")},
		{"anti-join is.null", call{user: "editorA", path: "/publications?select=title,promos(id)&promos=is.null&order=title"}, 200, wantTitles("Delta (draft)", "Gamma, with comma")},
		{"to-one embed is an object", call{user: "editorA", path: "/promos?select=channel,publications(title),channels(name)&channel=eq.bluesky"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"channel":"bluesky","publications":{"title":"Alpha launch"},"channels":{"name":"Bluesky"}}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"embed alias and fk hint", call{user: "editorA", path: "/promos?select=channel,pub:publications!promos_project_id_publication_id_fkey(title)&channel=eq.bluesky"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"channel":"bluesky","pub":{"title":"Alpha launch"}}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"embed hint by column", call{user: "editorA", path: "/publications?select=title,author:profiles!author_id(email)&id=eq." + alpha}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"title":"Alpha launch","author":{"email":"editorA@example.test"}}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"many-to-many through junction", call{user: "editorA", path: "/projects?select=slug,profiles(email)&profiles.order=email&profiles.limit=1"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"slug":"proj-a","profiles":[{"email":"editorA@example.test"}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"nested three levels", call{user: "editorA", path: "/projects?select=slug,publications(title,promos(channel,channels(name)))&publications.id=eq." + alpha + "&publications.promos.channel=eq.x"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"slug":"proj-a","publications":[{"title":"Alpha launch","promos":[{"channel":"x","channels":{"name":"X"}}]}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"order by to-one embed", call{user: "editorA", path: "/promos?select=channel,publications(title)&order=publications(title).desc,channel"}, 200, func(t *testing.T, f *fixture, r reply) {
			rows := r.rows(t)
			if len(rows) != 3 || rows[0]["publications"].(map[string]any)["title"] != "Beta notes" {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"order nullsfirst", call{user: "editorA", path: "/promos?select=channel,link&order=link.asc.nullsfirst,channel&limit=1"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"channel":"bluesky","link":null}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"limit and offset", call{user: "editorA", path: "/publications?select=title&order=title&limit=2&offset=1"}, 200, func(t *testing.T, f *fixture, r reply) {
			wantTitles("Beta notes", "Delta (draft)")(t, f, r)
			if cr := r.header.Get("Content-Range"); cr != "1-2/*" {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"exact count is 206 when partial", call{user: "editorA", path: "/publications?select=title&order=title&limit=2", header: map[string]string{"Prefer": "count=exact"}}, 206, func(t *testing.T, f *fixture, r reply) {
			if cr := r.header.Get("Content-Range"); cr != "0-1/4" {
				t.Errorf("Content-Range = %q", cr)
			}
			if pa := r.header.Get("Preference-Applied"); pa != "count=exact" {
				t.Errorf("Preference-Applied = %q", pa)
			}
		}},
		{"exact count whole set is 200", call{user: "editorA", path: "/publications?select=title", header: map[string]string{"Prefer": "count=exact"}}, 200, func(t *testing.T, f *fixture, r reply) {
			if cr := r.header.Get("Content-Range"); cr != "0-3/4" {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"count with filters", call{user: "editorA", path: "/publications?select=title&status=eq.reviewing", header: map[string]string{"Prefer": "count=exact"}}, 200, func(t *testing.T, f *fixture, r reply) {
			if cr := r.header.Get("Content-Range"); cr != "0-1/2" {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"planned count", call{user: "editorA", path: "/publications?select=title", header: map[string]string{"Prefer": "count=planned"}}, 0, func(t *testing.T, f *fixture, r reply) {
			if cr := r.header.Get("Content-Range"); !strings.HasPrefix(cr, "0-3/") || strings.HasSuffix(cr, "*") {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"planned count with a filter", call{user: "editorA", path: "/publications?select=title&status=eq.reviewing", header: map[string]string{"Prefer": "count=planned"}}, 0, func(t *testing.T, f *fixture, r reply) {
			if cr := r.header.Get("Content-Range"); !strings.HasPrefix(cr, "0-1/") || strings.HasSuffix(cr, "*") {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"estimated count under max rows is exact", call{user: "editorA", path: "/publications?select=title&limit=1", header: map[string]string{"Prefer": "count=estimated"}}, 206, func(t *testing.T, f *fixture, r reply) {
			if cr := r.header.Get("Content-Range"); cr != "0-0/4" {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"range header", call{user: "editorA", path: "/publications?select=title&order=title", header: map[string]string{"Range": "1-2", "Range-Unit": "items", "Prefer": "count=exact"}}, 206, func(t *testing.T, f *fixture, r reply) {
			wantTitles("Beta notes", "Delta (draft)")(t, f, r)
			if cr := r.header.Get("Content-Range"); cr != "1-2/4" {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"range past the end is 416", call{user: "editorA", path: "/publications?select=title&offset=10", header: map[string]string{"Prefer": "count=exact"}}, 416, func(t *testing.T, f *fixture, r reply) {
			wantError("PGRST103")(t, f, r)
			if cr := r.header.Get("Content-Range"); cr != "*/4" {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"inverted range header is 416", call{user: "editorA", path: "/publications", header: map[string]string{"Range": "5-1"}}, 416, wantError("PGRST103")},
		{"empty result", call{user: "editorA", path: "/publications?title=eq.nothing"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != "[]" || r.header.Get("Content-Range") != "*/*" {
				t.Errorf("body = %s, Content-Range = %q", r.body, r.header.Get("Content-Range"))
			}
		}},
		{"single object", call{user: "editorA", path: "/publications?select=title&id=eq." + alpha, header: map[string]string{"Accept": mediaObject}}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `{"title":"Alpha launch"}` || !strings.HasPrefix(r.header.Get("Content-Type"), mediaObject) {
				t.Errorf("body = %s, type %s", r.body, r.header.Get("Content-Type"))
			}
		}},
		{"single object with many rows", call{user: "editorA", path: "/publications", header: map[string]string{"Accept": mediaObject}}, 406, func(t *testing.T, f *fixture, r reply) {
			wantError("PGRST116")(t, f, r)
			if d := r.object(t)["details"]; d != "The result contains 4 rows" {
				t.Errorf("details = %v", d)
			}
		}},
		{"single object with no rows", call{user: "editorA", path: "/publications?id=eq.00000000-0000-0000-0000-000000000000", header: map[string]string{"Accept": mediaObject}}, 406, wantError("PGRST116")},
		{"head", call{method: http.MethodHead, user: "editorA", path: "/publications", header: map[string]string{"Prefer": "count=exact"}}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != "" || r.header.Get("Content-Range") != "0-3/4" {
				t.Errorf("body = %q, Content-Range = %q", r.body, r.header.Get("Content-Range"))
			}
		}},
		{"profile public accepted", call{user: "editorA", path: "/channels?select=slug&limit=1", header: map[string]string{"Accept-Profile": "public"}}, 200, nil},
		{"other profile refused", call{user: "editorA", path: "/channels", header: map[string]string{"Accept-Profile": "auth"}}, 406, wantError("PGRST106")},
		{"unsupported Accept", call{user: "editorA", path: "/channels", header: map[string]string{"Accept": "application/xml"}}, 406, wantError("PGRST107")},
		{"RLS: other tenant sees only its rows", call{user: "editorB", path: "/publications?select=title,promos(body)"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"title":"Bravo in B","promos":[{"body":"Bravo on X"}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"RLS holds through embeds from a shared table", call{user: "editorB", path: "/channels?select=slug,promos(body)&slug=eq.x"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"slug":"x","promos":[{"body":"Bravo on X"}]}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"RLS: to-one embed into another tenant is null", call{user: "editorB", path: "/promos?select=body,publications(title)"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != `[{"body":"Bravo on X","publications":{"title":"Bravo in B"}}]` {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"RLS: outsider sees nothing", call{user: "outsider", path: "/publications"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != "[]" {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"anon reads empty sets", call{user: "anon", path: "/channels"}, 200, func(t *testing.T, f *fixture, r reply) {
			if r.body != "[]" {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"no api key", call{path: "/channels"}, 401, func(t *testing.T, f *fixture, r reply) {
			wantError("PGRST301")(t, f, r)
			if w := r.header.Get("WWW-Authenticate"); w != `Bearer error="invalid_token"` {
				t.Errorf("WWW-Authenticate = %q", w)
			}
		}},
		{"unknown table", call{user: "editorA", path: "/nope"}, 404, wantError("PGRST205")},
		{"schema auth is not exposed", call{user: "editorA", path: "/users"}, 404, wantError("PGRST205")},
		{"unknown column", call{user: "editorA", path: "/publications?select=nope"}, 400, wantError("42703")},
		{"unknown filter column", call{user: "editorA", path: "/publications?nope=eq.1"}, 400, wantError("42703")},
		{"grammar error", call{user: "editorA", path: "/publications?select=id,"}, 400, wantError("PGRST100")},
		{"bad operator", call{user: "editorA", path: "/publications?id=equals.1"}, 400, wantError("PGRST100")},
		{"unknown cast", call{user: "editorA", path: "/publications?select=id::regclass"}, 400, wantError("42704")},
		{"filter on embed not selected", call{user: "editorA", path: "/publications?select=title&promos.channel=eq.x"}, 400, wantError("PGRST108")},
		{"no relationship", call{user: "editorA", path: "/publications?select=title,channels(*)"}, 400, wantError("PGRST200")},
		{"related order needs to-one", call{user: "editorA", path: "/publications?select=title,promos(channel)&order=promos(channel)"}, 400, wantError("PGRST118")},
		{"operator on embed", call{user: "editorA", path: "/publications?select=title,promos(id)&promos=eq.1"}, 400, wantError("PGRST120")},
		{"invalid value for type", call{user: "editorA", path: "/publications?id=eq.not-a-uuid"}, 400, wantError("22P02")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.do(t, tt.call)
			if tt.status != 0 && r.status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.check != nil {
				tt.check(t, f, r)
			}
		})
	}
}

// TestListenReloadsOnStart: a change made before the listener subscribed (its NOTIFY went
// unheard) is in the cache once the listener starts, because it reloads right after LISTEN.
func TestListenReloadsOnStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `create table public.notes (id int primary key, publication_id uuid references publications(id))`)
	mustExec(t, own, `grant select on public.notes to authenticated`)
	mustExec(t, own, `notify masthead, 'reload schema'`) // nobody is listening yet
	if r := f.do(t, call{user: "editorA", path: "/notes"}); r.status != http.StatusNotFound {
		t.Fatalf("before the listener: %d %s", r.status, r.body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.h.schema.Listen(ctx, f.h.log)
	testwait.Until(t, 10*time.Second, "the reload after LISTEN", func() (bool, string) {
		r := f.do(t, call{user: "editorA", path: "/notes"})
		return r.status == http.StatusOK, fmt.Sprintf("%d %s", r.status, r.body)
	})
}

// TestAmbiguousEmbedAndReload adds a second foreign key between two tables,
// reloads the schema cache through NOTIFY, and expects PGRST201 until a
// hint picks one.
func TestAmbiguousEmbedAndReload(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.h.schema.Listen(ctx, f.h.log)
	own := f.db.Owner(t)
	if r := f.do(t, call{user: "editorA", path: "/publications?select=title,links(*)"}); r.status != 400 {
		t.Fatalf("before reload: %d %s", r.status, r.body)
	}
	testwait.Until(t, 10*time.Second, "the listener to subscribe", func() (bool, string) {
		var n int
		mustScan(t, own.QueryRow(context.Background(),
			`select count(*) from pg_stat_activity where datname = current_database() and query = 'listen masthead'`), &n)
		return n == 1, fmt.Sprintf("%d backends listening", n)
	})
	mustExec(t, own, `create table public.links (id int primary key, a uuid references publications(id), b uuid references publications(id))`)
	mustExec(t, own, `grant select on public.links to authenticated`)
	mustExec(t, own, `notify masthead, 'reload schema'`)
	var r reply
	testwait.Until(t, 10*time.Second, "the notified reload", func() (bool, string) {
		r = f.do(t, call{user: "editorA", path: "/publications?select=title,links(*)"})
		return r.status != 400, fmt.Sprintf("%d %s", r.status, r.body)
	})
	if r.status != http.StatusMultipleChoices || r.errCode(t) != "PGRST201" {
		t.Fatalf("ambiguous embed: %d %s", r.status, r.body)
	}
	o := r.object(t)
	if details, ok := o["details"].([]any); !ok || len(details) != 2 || !strings.Contains(o["hint"].(string), "links!links_a_fkey") {
		t.Errorf("body = %s", r.body)
	}
	if r := f.do(t, call{user: "editorA", path: "/publications?select=title,links!b(*)&limit=1"}); r.status != 200 {
		t.Errorf("hinted embed: %d %s", r.status, r.body)
	}
	if r := f.do(t, call{user: "editorA", path: "/publications?select=title,links!links_a_fkey(*)&limit=1"}); r.status != 200 {
		t.Errorf("constraint hint: %d %s", r.status, r.body)
	}
}

func TestAuthErrors(t *testing.T) {
	t.Parallel()
	sentinel := errors.New("invalid token")
	tests := []struct {
		name   string
		cfg    Config
		err    error
		status int
		code   string
	}{
		{"bad token", Config{InvalidToken: sentinel}, fmt.Errorf("%w: signature", sentinel), 401, "PGRST301"},
		{"expired token", Config{InvalidToken: sentinel}, fmt.Errorf("%w: token is expired", sentinel), 401, "PGRST303"},
		{"outage", Config{InvalidToken: sentinel}, errors.New("connection refused"), 503, "PGRST000"},
		{"without a sentinel every error is a 401", Config{}, errors.New("whatever"), 401, "PGRST301"},
		{"typed error passes through", Config{InvalidToken: sentinel}, &Error{Status: 401, Code: "PGRST302", Message: "anonymous access is disabled"}, 401, "PGRST302"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &Handler{cfg: tt.cfg.withDefaults()}
			e := h.authError(tt.err)
			if e.Status != tt.status || e.Code != tt.code {
				t.Errorf("got %d %s, want %d %s", e.Status, e.Code, tt.status, tt.code)
			}
		})
	}
}
