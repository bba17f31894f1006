package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// listFixture adds rows (no files: a listing reads rows only) under proj-a/l with known times:
// created one minute apart in the order given, updated in the reverse order.
func listFixture(t *testing.T, ev *env) time.Time {
	t.Helper()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	keys := []string{"proj-a/l/b.png", "proj-a/l/a_b.png", "proj-a/l/axb.png", "proj-a/l/C.gif",
		"proj-a/l/sub/x.png", "proj-a/l/sub/y.png", "proj-a/l/sub2/deep/z.png"}
	for i, k := range keys {
		created, updated := t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(len(keys)-i)*time.Hour)
		if _, err := ev.db.Owner(t).Exec(context.Background(), `insert into media (project_id, storage_path, mime_type, bytes, created_at, updated_at)
			select id, $1, 'image/png', $2, $3, $4 from projects where slug = 'proj-a'`, k, 100+i, created, updated); err != nil {
			t.Fatal(err)
		}
	}
	return t0
}

// TestReads runs the reading operations' scenarios (list, info, createSignedUrls, download
// as an attachment) and the refusals every JSON route shares, on one database with listFixture.
func TestReads(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	listFixture(t, ev)
	for _, s := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"list", testList}, {"list shape", testListShape}, {"list refused", testListRefused}, {"info", testInfo},
		{"createSignedUrls", testSignMany}, {"download as an attachment", testDownloadAttachment},
		{"JSON bodies", testJSONBodies}, {"routes of bucket media", testBucketMediaRoutes}, {"configurable limits", testLimits},
	} {
		t.Run(s.name, func(t *testing.T) { s.fn(t, ev) })
	}
}

// testList: a listing is one folder as the caller sees it, paged and ordered as asked.
func testList(t *testing.T, ev *env) {
	sort := func(column, order string) map[string]string {
		return map[string]string{"column": column, "order": order}
	}
	for _, tc := range []struct {
		name, user string
		body       map[string]any
		want       []string
	}{
		{"folders first, then names byte by byte", "viewerA", map[string]any{"prefix": "proj-a/l"}, []string{"sub", "sub2", "C.gif", "a_b.png", "axb.png", "b.png"}},
		{"slashes around the prefix", "viewerA", map[string]any{"prefix": "/proj-a/l/"}, []string{"sub", "sub2", "C.gif", "a_b.png", "axb.png", "b.png"}},
		{"name desc", "viewerA", map[string]any{"prefix": "proj-a/l", "sortBy": sort("name", "desc")}, []string{"sub2", "sub", "b.png", "axb.png", "a_b.png", "C.gif"}},
		{"order in capitals", "viewerA", map[string]any{"prefix": "proj-a/l", "sortBy": sort("name", "DESC")}, []string{"sub2", "sub", "b.png", "axb.png", "a_b.png", "C.gif"}},
		{"created_at asc", "viewerA", map[string]any{"prefix": "proj-a/l", "sortBy": sort("created_at", "asc")}, []string{"sub", "sub2", "b.png", "a_b.png", "axb.png", "C.gif"}},
		{"created_at desc", "viewerA", map[string]any{"prefix": "proj-a/l", "sortBy": sort("created_at", "desc")}, []string{"sub2", "sub", "C.gif", "axb.png", "a_b.png", "b.png"}},
		{"updated_at asc", "viewerA", map[string]any{"prefix": "proj-a/l", "sortBy": sort("updated_at", "asc")}, []string{"sub", "sub2", "C.gif", "axb.png", "a_b.png", "b.png"}},
		{"last_accessed_at is the last write", "viewerA", map[string]any{"prefix": "proj-a/l", "sortBy": sort("last_accessed_at", "desc")}, []string{"sub2", "sub", "b.png", "a_b.png", "axb.png", "C.gif"}},
		{"column alone, order defaults to asc", "viewerA", map[string]any{"prefix": "proj-a/l", "sortBy": map[string]string{"column": "created_at"}}, []string{"sub", "sub2", "b.png", "a_b.png", "axb.png", "C.gif"}},
		{"limit", "viewerA", map[string]any{"prefix": "proj-a/l", "limit": 3}, []string{"sub", "sub2", "C.gif"}},
		{"limit and offset across folders and objects", "viewerA", map[string]any{"prefix": "proj-a/l", "limit": 2, "offset": 1}, []string{"sub2", "C.gif"}},
		{"offset past the end", "viewerA", map[string]any{"prefix": "proj-a/l", "offset": 50}, []string{}},
		{"search is the start of a name, ignoring case", "viewerA", map[string]any{"prefix": "proj-a/l", "search": "c"}, []string{"C.gif"}},
		{"search matches folders", "viewerA", map[string]any{"prefix": "proj-a/l", "search": "sub"}, []string{"sub", "sub2"}},
		{"search _ is not a wildcard", "viewerA", map[string]any{"prefix": "proj-a/l", "search": "a_"}, []string{"a_b.png"}},
		{"search % is not a wildcard", "viewerA", map[string]any{"prefix": "proj-a/l", "search": "%"}, []string{}},
		{"a deeper folder", "viewerA", map[string]any{"prefix": "proj-a/l/sub"}, []string{"x.png", "y.png"}},
		{"a folder of folders", "viewerA", map[string]any{"prefix": "proj-a/l/sub2"}, []string{"deep"}},
		{"a prefix is a folder, not the start of a name", "viewerA", map[string]any{"prefix": "proj-a/l/su"}, []string{}},
		{"the top: the caller's project folders", "viewerA", map[string]any{"prefix": ""}, []string{"proj-a"}},
		{"the top for the other tenant", "editorB", map[string]any{"prefix": ""}, []string{"proj-b"}},
		{"another tenant's folder is empty", "editorB", map[string]any{"prefix": "proj-a/l"}, []string{}},
		{"member of no project", "outsider", map[string]any{"prefix": "proj-a"}, []string{}},
		{"anon", "", map[string]any{"prefix": ""}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ev.call(t, "POST", "/storage/v1/object/list/media", tc.user, tc.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			var got []struct{ Name string }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, e := range got {
				names = append(names, e.Name)
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.want) {
				t.Fatalf("names %q, want %q", names, tc.want)
			}
		})
	}
}

// testListShape: entries are Supabase Storage's, exactly: a folder is a name with nulls, an
// object its row's id, times and metadata.
func testListShape(t *testing.T, ev *env) {
	var id string
	if err := ev.db.Owner(t).QueryRow(context.Background(), `select id from media where storage_path = 'proj-a/l/sub/x.png'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	resp, b := ev.call(t, "POST", "/storage/v1/object/list/media", "reviewerA", map[string]any{"prefix": "proj-a/l/sub", "limit": 1})
	want := `[{"name":"x.png","id":"` + id + `","updated_at":"2025-03-01T15:00:00Z","created_at":"2025-03-01T12:04:00Z",` +
		`"last_accessed_at":"2025-03-01T15:00:00Z","metadata":{"size":104,"mimetype":"image/png","cacheControl":"private, no-cache",` +
		`"lastModified":"2025-03-01T15:00:00Z","contentLength":104,"httpStatusCode":200}}]`
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != want {
		t.Fatalf("status %d:\n%s\nwant\n%s", resp.StatusCode, b, want)
	}
	_, b = ev.call(t, "POST", "/storage/v1/object/list/media", "reviewerA", map[string]any{"prefix": "proj-a/l", "limit": 1})
	if want := `[{"name":"sub","id":null,"updated_at":null,"created_at":null,"last_accessed_at":null,"metadata":null}]`; strings.TrimSpace(string(b)) != want {
		t.Fatalf("folder %s", b)
	}
}

// testListRefused: a list request Supabase Storage would refuse, or that passes our limits, is
// a 400 saying what to change; a bad token 401.
func testListRefused(t *testing.T, ev *env) {
	for _, tc := range []struct {
		name, user string
		body       any
		status     int
		message    string
	}{
		{"no prefix", "viewerA", map[string]any{"limit": 10}, 400, `prefix is required: the folder to list, "" for the top`},
		{"limit 0", "viewerA", map[string]any{"prefix": "", "limit": 0}, 400, "limit must be a whole number from 1 to 1000 (MASTHEAD_STORAGE_MAX_LIST_LIMIT)"},
		{"limit over the cap", "viewerA", map[string]any{"prefix": "", "limit": 1001}, 400, "limit must be a whole number from 1 to 1000 (MASTHEAD_STORAGE_MAX_LIST_LIMIT)"},
		{"fractional limit", "viewerA", `{"prefix": "", "limit": 1.5}`, 400, "limit has the wrong type (number 1.5)"},
		{"negative offset", "viewerA", map[string]any{"prefix": "", "offset": -1}, 400, "offset must be a whole number, 0 or more"},
		{"unknown column", "viewerA", map[string]any{"prefix": "", "sortBy": map[string]string{"column": "size"}}, 400,
			"sortBy.column must be one of name, updated_at, created_at, last_accessed_at, and sortBy.order asc or desc"},
		{"unknown order", "viewerA", map[string]any{"prefix": "", "sortBy": map[string]string{"column": "name", "order": "up"}}, 400,
			"sortBy.column must be one of name, updated_at, created_at, last_accessed_at, and sortBy.order asc or desc"},
		{"column as SQL", "viewerA", map[string]any{"prefix": "", "sortBy": map[string]string{"column": "name; drop table media"}}, 400,
			"sortBy.column must be one of name, updated_at, created_at, last_accessed_at, and sortBy.order asc or desc"},
		{"dot-dot in the prefix", "viewerA", map[string]any{"prefix": "proj-a/../proj-b"}, 400, `prefix is not a valid folder path: folders start with a project's slug, as in "northwind/covers"`},
		{"empty segment in the prefix", "viewerA", map[string]any{"prefix": "proj-a//x"}, 400, `prefix is not a valid folder path: folders start with a project's slug, as in "northwind/covers"`},
		{"search too long", "viewerA", map[string]any{"prefix": "", "search": strings.Repeat("a", 256)}, 400,
			"search must be at most 255 bytes of text, without control characters"},
		{"control character in search", "viewerA", map[string]any{"prefix": "", "search": "a\x00"}, 400,
			"search must be at most 255 bytes of text, without control characters"},
		{"invalid token", "forged", map[string]any{"prefix": ""}, 401, "Invalid or expired access token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ev.call(t, "POST", "/storage/v1/object/list/media", tc.user, tc.body)
			if resp.StatusCode != tc.status || storageError(t, b)["message"] != tc.message {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
}

// testLimits: the limits are Options, and the refusals name them.
func testLimits(t *testing.T, ev *env) {
	ev = ev.withOptions(t, func(o *Options) {
		o.MaxListLimit, o.MaxBatch, o.MaxJSONBytes, o.MaxSignedURLTTL, o.MaxUploadBytes = 5, 2, 100, time.Minute, 64
	})
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		message      string
	}{
		{"POST", "/storage/v1/object/list/media", map[string]any{"prefix": "", "limit": 6}, 400, "limit must be a whole number from 1 to 5 (MASTHEAD_STORAGE_MAX_LIST_LIMIT)"},
		{"POST", "/storage/v1/object/sign/media", map[string]any{"expiresIn": 60, "paths": []string{"proj-a/a.png", "proj-a/b.png", "proj-a/c.png"}}, 400,
			"paths names 3 objects: at most 2 may be named in one request (MASTHEAD_STORAGE_MAX_BATCH)"},
		{"DELETE", "/storage/v1/object/media", map[string]any{"prefixes": []string{"proj-a/a.png", "proj-a/b.png", "proj-a/c.png"}}, 400,
			"prefixes names 3 objects: at most 2 may be named in one request (MASTHEAD_STORAGE_MAX_BATCH)"},
		{"POST", "/storage/v1/object/list/media", map[string]any{"prefix": strings.Repeat("a", 100)}, 413, "the request body is over the limit of 100 bytes (MASTHEAD_STORAGE_MAX_JSON_BYTES)"},
		{"POST", "/storage/v1/object/sign/media/proj-a/photo.png", map[string]any{"expiresIn": 61}, 400,
			"expiresIn must be a whole number of seconds from 1 to 60 (MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL)"},
		{"POST", "/storage/v1/object/sign/media", map[string]any{"expiresIn": 61, "paths": []string{"proj-a/photo.png"}}, 400,
			"expiresIn must be a whole number of seconds from 1 to 60 (MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL)"},
	} {
		resp, b := ev.call(t, tc.method, tc.path, "editorA", tc.body)
		if resp.StatusCode != tc.status || storageError(t, b)["message"] != tc.message {
			t.Errorf("%s %s: status %d: %s", tc.method, tc.path, resp.StatusCode, b)
		}
	}
	resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/media/proj-a/big.png", user: "editorA", body: ev.png,
		header: map[string]string{"Content-Type": "image/png"}})
	if want := "The object exceeded the maximum allowed size of 64 bytes (MASTHEAD_STORAGE_MAX_UPLOAD_BYTES)"; resp.StatusCode != 413 || storageError(t, b)["message"] != want {
		t.Errorf("upload over the cap: status %d: %s", resp.StatusCode, b)
	}
}

// testInfo: info reads the row as the caller: someone else's object is the same 404 as a
// missing one.
func testInfo(t *testing.T, ev *env) {
	resp, b := ev.call(t, "GET", "/storage/v1/object/info/media/proj-a/photo.png", "viewerA", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(slices.Sorted(maps.Keys(got))) != "[bucket_id cache_control content_type created_at etag id last_modified metadata name size updated_at version]" {
		t.Errorf("keys %s", b)
	}
	if got["name"] != "proj-a/photo.png" || got["bucket_id"] != "media" || got["content_type"] != "image/png" ||
		got["size"] != float64(len(ev.png)) || got["version"] == "" || got["etag"] != `"`+got["version"].(string)+`"` {
		t.Errorf("info %s", b)
	}
	if m := got["metadata"].(map[string]any); m["kind"] != "image" || m["alt_text"] != "" {
		t.Errorf("metadata %v", m)
	}
	for _, tc := range []struct {
		name, path, user string
		status           int
	}{
		{"authenticated path", "/storage/v1/object/info/authenticated/media/proj-a/photo.png", "ownerA", 200},
		{"other tenant", "/storage/v1/object/info/media/proj-a/photo.png", "editorB", 404},
		{"anon", "/storage/v1/object/info/media/proj-a/photo.png", "", 404},
		{"missing", "/storage/v1/object/info/media/proj-a/none.png", "ownerA", 404},
		{"invalid key", "/storage/v1/object/info/media/proj-a/../proj-b/secret.png", "ownerA", 400},
		{"invalid token", "/storage/v1/object/info/media/proj-a/photo.png", "forged", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ev.call(t, "GET", tc.path, tc.user, nil)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if tc.status == 404 && strings.TrimSpace(string(b)) != `{"error":"not_found","message":"Object not found","statusCode":"404"}` {
				t.Fatalf("body %s", b)
			}
		})
	}
}
