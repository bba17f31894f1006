package rest

import (
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		rpcRead bool
		check   func(t *testing.T, q *Query)
	}{
		{"default select is star", "", false, func(t *testing.T, q *Query) {
			if !reflect.DeepEqual(q.Select, []SelectItem{star()}) {
				t.Errorf("select = %+v", q.Select)
			}
		}},
		{"queue read", "status=eq.reviewing&order=created_at.desc&select=id,title,status,scheduled_for", false, func(t *testing.T, q *Query) {
			if len(q.Select) != 4 || len(q.Filters) != 1 || len(q.Order) != 1 || q.Order[0].Terms[0].Dir != DirDesc {
				t.Errorf("query = %+v", q)
			}
		}},
		{"percent-encoding and plus", "title=eq.a+b%2Cc&select=id", false, func(t *testing.T, q *Query) {
			if q.Filters[0].Expr.Value != "a b,c" {
				t.Errorf("value = %q", q.Filters[0].Expr.Value)
			}
		}},
		{"embedded filters order limit offset", "select=*,promos(*)&promos.channel=eq.x&promos.order=created_at.desc&promos.limit=2&promos.offset=1&limit=10&offset=20", false, func(t *testing.T, q *Query) {
			if !reflect.DeepEqual(q.Filters[0].Path, []string{"promos"}) {
				t.Errorf("filter path = %v", q.Filters[0].Path)
			}
			if !reflect.DeepEqual(q.Order[0].Path, []string{"promos"}) {
				t.Errorf("order path = %v", q.Order[0].Path)
			}
			want := []Range{{Path: []string{"promos"}, Limit: 2, HasLimit: true, Offset: 1}, {Path: []string{}, Limit: 10, HasLimit: true, Offset: 20}}
			if !reflect.DeepEqual(q.Ranges, want) {
				t.Errorf("ranges = %+v", q.Ranges)
			}
		}},
		{"logic on embed", "promos.or=(channel.eq.x,channel.eq.y)&not.and=(a.eq.1,b.eq.2)", false, func(t *testing.T, q *Query) {
			if len(q.Logic) != 2 || q.Logic[0].Path[0] != "promos" || !q.Logic[1].Tree.Not {
				t.Errorf("logic = %+v", q.Logic)
			}
		}},
		{"columns and on_conflict", "columns=title,%20slug&on_conflict=project_id,slug", false, func(t *testing.T, q *Query) {
			if !reflect.DeepEqual(q.Columns, []string{"title", "slug"}) || !reflect.DeepEqual(q.OnConflict, []string{"project_id", "slug"}) {
				t.Errorf("columns=%v on_conflict=%v", q.Columns, q.OnConflict)
			}
		}},
		{"first select wins", "select=id&select=title", false, func(t *testing.T, q *Query) {
			if q.Select[0].Field.Name != "id" {
				t.Errorf("select = %+v", q.Select)
			}
		}},
		{"apikey and bare keys ignored", "apikey=sb_publishable_x&flag&id=eq.1", false, func(t *testing.T, q *Query) {
			if len(q.Filters) != 1 {
				t.Errorf("filters = %+v", q.Filters)
			}
		}},
		{"rpc read args", "publication_id=abc&note=hello.world&id=eq.1", true, func(t *testing.T, q *Query) {
			want := []Param{{"publication_id", "abc"}, {"note", "hello.world"}}
			if !reflect.DeepEqual(q.Params, want) || len(q.Filters) != 1 {
				t.Errorf("params = %+v filters = %+v", q.Params, q.Filters)
			}
		}},
		{"multiple filters on one column", "version=gte.1&version=lte.3", false, func(t *testing.T, q *Query) {
			if len(q.Filters) != 2 {
				t.Errorf("filters = %+v", q.Filters)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, err := ParseQuery(tt.raw, tt.rpcRead)
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", tt.raw, err)
			}
			tt.check(t, q)
		})
	}
}

func TestParseQueryErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, raw, message string }{
		{"not a filter", "foo=bar", "failed to parse filter (bar)"},
		{"bad select", "select=id,", "failed to parse select parameter"},
		{"bad order", "order=id.sideways", "failed to parse order"},
		{"bad logic", "or=(a)", "failed to parse logic tree"},
		{"bad limit", "limit=ten", "failed to parse limit parameter"},
		{"offset not a number", "offset=1.5", "failed to parse offset parameter"},
		{"bad columns", "columns=a,", "failed to parse columns parameter"},
		{"bad percent", "id=eq.%zz", "failed to decode query string"},
		{"invalid utf8", "id=eq.%ff", "failed to decode query string"},
		{"nul byte", "id=eq.%00", "failed to decode query string"},
		{"too long", "id=eq." + strings.Repeat("a", maxQueryLen), "query string too long"},
		{"too many params", strings.Repeat("id=eq.1&", maxQueryArgs+1), "too many query parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseQuery(tt.raw, false)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseQuery(%q) = %v, want *Error", tt.raw, err)
			}
			if e.Status != http.StatusBadRequest || e.Code != "PGRST100" || !strings.Contains(e.Message, tt.message) {
				t.Errorf("got %d %s %q, want 400 PGRST100 with %q", e.Status, e.Code, e.Message, tt.message)
			}
		})
	}
}

// TestParseNegativeRange: a negative limit or offset is refused with the SQLSTATE PostgreSQL
// gives it, as PostgREST passes it on.
func TestParseNegativeRange(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"limit=-1":          `{"code":"2201W","details":null,"hint":null,"message":"LIMIT must not be negative"}`,
		"offset=-4":         `{"code":"2201X","details":null,"hint":null,"message":"OFFSET must not be negative"}`,
		"promos.limit=-1":   `{"code":"2201W","details":null,"hint":null,"message":"LIMIT must not be negative"}`,
		"promos.offset=-10": `{"code":"2201X","details":null,"hint":null,"message":"OFFSET must not be negative"}`,
	} {
		_, err := ParseQuery(raw, false)
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
			t.Fatalf("ParseQuery(%q) = %v, want a 400", raw, err)
		}
		if b, _ := e.MarshalJSON(); string(b) != want {
			t.Errorf("ParseQuery(%q) = %s, want %s", raw, b, want)
		}
	}
}

func TestParsePrefer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values []string
		want   Prefer
	}{
		{"none", nil, Prefer{}},
		{"one header", []string{"return=representation, count=exact"}, Prefer{Return: "representation", Count: "exact"}},
		{"several headers", []string{"resolution=merge-duplicates", "missing=default,return=minimal"}, Prefer{Resolution: "merge-duplicates", Missing: "default", Return: "minimal"}},
		{"unknown and invalid ignored", []string{"tx=rollback, count=bogus, return=headers-only"}, Prefer{Return: "headers-only"}},
		{"first wins", []string{"count=planned, count=exact"}, Prefer{Count: "planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for _, v := range tt.values {
				h.Add("Prefer", v)
			}
			if got := ParsePrefer(h); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v want %+v", got, tt.want)
			}
		})
	}
}

func TestParseRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		header string
		want   RangeHeader
		ok     bool
		status int
	}{
		{"absent", "GET", "", RangeHeader{}, false, 0},
		{"closed", "GET", "0-9", RangeHeader{Offset: 0, Limit: 10, HasLimit: true}, true, 0},
		{"items unit", "GET", "items=5-9", RangeHeader{Offset: 5, Limit: 5, HasLimit: true}, true, 0},
		{"open", "GET", "10-", RangeHeader{Offset: 10}, true, 0},
		{"up to the largest row number", "GET", "0-9223372036854775807", RangeHeader{Offset: 0, Limit: math.MaxInt64, HasLimit: true}, true, 0},
		{"garbage ignored", "GET", "abc", RangeHeader{}, false, 0},
		{"inverted", "GET", "9-0", RangeHeader{}, false, http.StatusRequestedRangeNotSatisfiable},
		{"ignored on HEAD", "HEAD", "0-9", RangeHeader{}, false, 0},
		{"ignored on POST, even inverted", "POST", "9-0", RangeHeader{}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tt.method, "/rest/v1/x", nil)
			if tt.header != "" {
				req.Header.Set("Range", tt.header)
			}
			got, ok, err := ParseRange(req)
			if tt.status != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Status != tt.status || e.Code != "PGRST103" {
					t.Fatalf("err = %v, want %d PGRST103", err, tt.status)
				}
				return
			}
			if err != nil || ok != tt.ok || got != tt.want {
				t.Errorf("got %+v %v %v, want %+v %v", got, ok, err, tt.want, tt.ok)
			}
		})
	}
}
