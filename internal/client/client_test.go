package client

import (
	"net/url"
	"strings"
	"testing"
)

func TestDecodeError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body      string
		status          int
		code, msg, hint string
	}{
		{"postgrest", `{"code":"PT409","message":"the publication changed","details":null,"hint":"Reload it."}`, 409, "PT409", "the publication changed", "Reload it."},
		{"gotrue first format", `{"code":400,"error_code":"invalid_credentials","msg":"Invalid login credentials"}`, 400, "invalid_credentials", "Invalid login credentials", ""},
		{"gotrue 2024", `{"code":"invalid_credentials","message":"Invalid login credentials"}`, 400, "invalid_credentials", "Invalid login credentials", ""},
		{"oauth", `{"error":"invalid_grant","error_description":"expired"}`, 400, "invalid_grant", "expired", ""},
		{"not json", `<html>bad gateway</html>`, 502, "", "Bad Gateway", ""},
		// A constraint's refusal reads as what to change; PostgreSQL's words name the constraint.
		{"named check", `{"code":"23514","message":"new row for relation \"collections\" violates check constraint \"collections_slug_check\"","details":"Failing row contains (x)","hint":null}`,
			400, "23514", "a collection's slug is 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit", ""},
		{"named unique", `{"code":"23505","message":"duplicate key value violates unique constraint \"collections_project_id_slug_key\"","details":"Key (project_id, slug)=(p, city) already exists.","hint":null}`,
			409, "23505", "the project already has a collection with that slug: choose another slug", ""},
		{"length bound", `{"code":"23514","message":"new row for relation \"promos\" violates check constraint \"body_at_most_5000_chars\""}`,
			400, "23514", "a promo is at most 5,000 characters", ""},
		{"a length bound of a column named by itself", `{"code":"23514","message":"new row for relation \"media\" violates check constraint \"mime_type_at_most_200_chars\""}`,
			400, "23514", "mime type is at most 200 characters", ""},
		{"unknown constraint", `{"code":"23514","message":"new row for relation \"x\" violates check constraint \"x_check\""}`,
			400, "23514", `new row for relation "x" violates check constraint "x_check"`, ""},
		{"a unique key of no words", `{"code":"23505","message":"duplicate key value violates unique constraint \"media_storage_path_key\""}`,
			409, "23505", `duplicate key value violates unique constraint "media_storage_path_key"`, ""},
		{"a bound's shape under another code", `{"code":"23502","message":"new row for relation \"promos\" violates check constraint \"body_at_most_5000_chars\""}`,
			400, "23502", `new row for relation "promos" violates check constraint "body_at_most_5000_chars"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := decodeError(c.status, []byte(c.body))
			if e.Status != c.status || e.Code != c.code || e.Message != c.msg || e.Hint != c.hint {
				t.Errorf("decodeError = %+v", e)
			}
			if strings.HasPrefix(c.name, "named") && e.Details != "" {
				t.Errorf("the failing row is still in the details: %q", e.Details)
			}
		})
	}
}

func TestQueryEncoding(t *testing.T) {
	t.Parallel()
	q := From("publications").Select("*,author:profiles!author_id(display_name)").
		In("status", "approved", `a"b,c`).Or("title.ilike." + Quote(likePattern(`50%_off, (now)`)) + ",summary.ilike.x")
	got := encodeQuery(q.params)
	v, err := url.ParseQuery(got)
	if err != nil {
		t.Fatal(err)
	}
	if v.Get("select") != "*,author:profiles!author_id(display_name)" {
		t.Errorf("select = %q", v.Get("select"))
	}
	if v.Get("status") != `in.("approved","a\"b,c")` {
		t.Errorf("status = %q", v.Get("status"))
	}
	if v.Get("or") != `(title.ilike."*50\\%\\_off, (now)*",summary.ilike.x)` {
		t.Errorf("or = %q", v.Get("or"))
	}
	if likePattern("  ** ") != "" {
		t.Error("an empty search must not filter")
	}
}

func TestParseContentRange(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"0-24/1234": 1234, "*/0": 0, "0-9/*": -1, "": -1} {
		if got := parseContentRange(in); got != want {
			t.Errorf("parseContentRange(%q) = %d, want %d", in, got, want)
		}
	}
}
