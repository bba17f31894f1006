package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"github.com/minio/minio-go/v7"

	"masthead/internal/pg"
)

// call sends a JSON body (marshalled unless it is already []byte or a string) as user.
func (ev *env) call(t *testing.T, method, path, user string, body any) (*http.Response, []byte) {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case nil:
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	return ev.do(t, req{method: method, path: path, user: user, body: b, header: map[string]string{"Content-Type": "application/json"}})
}

// put uploads data at key as user (POST, or PUT for a new version) and fails unless it worked.
func (ev *env) put(t *testing.T, method, key, user string, data []byte, contentType string) {
	t.Helper()
	resp, b := ev.do(t, req{method: method, path: "/storage/v1/object/media/" + key, user: user, body: data,
		header: map[string]string{"Content-Type": contentType}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s as %s: %d %s", method, key, user, resp.StatusCode, b)
	}
}

// read returns the stored bytes at key, straight from the backend.
func (ev *env) read(t *testing.T, key string) []byte {
	t.Helper()
	obj, err := ev.backend.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer obj.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(obj.Body); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// keys lists every object the backend holds, hidden ones included, sorted.
func (ev *env) keys(t *testing.T) []string {
	t.Helper()
	b := ev.backend
	for {
		switch w := b.(type) {
		case *faultyBackend:
			b = w.Backend
			continue
		case *failingBackend:
			b = w.Backend
			continue
		}
		break
	}
	var out []string
	switch s := b.(type) {
	case *Disk:
		root := s.root.Name()
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	case *S3:
		for o := range s.client.ListObjects(context.Background(), s.bucket, minio.ListObjectsOptions{Recursive: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			out = append(out, o.Key)
		}
	default:
		t.Fatalf("cannot list %T", b)
	}
	sort.Strings(out)
	return out
}

// hiddenLeft reports objects no row names that the storage API made on the side (set aside
// versions, spool files of the disk backend).
func (ev *env) hiddenLeft(t *testing.T) []string {
	t.Helper()
	var left []string
	for _, k := range ev.keys(t) {
		base := k[strings.LastIndexByte(k, '/')+1:]
		if strings.HasPrefix(base, ".") {
			left = append(left, k)
		}
	}
	return left
}

// withOptions is ev served by a second handler, on the same database and backend, built with
// ev's options as set changes them.
func (ev *env) withOptions(t testing.TB, set func(*Options)) *env {
	t.Helper()
	opts := ev.h.opts
	set(&opts)
	h, err := New(ev.db.Pool, ev.auth, opts, ev.h.log)
	if err != nil {
		t.Fatal(err)
	}
	h.signer.now = ev.h.signer.now
	c := &env{db: ev.db, h: h, e: echo.New(), backend: ev.backend, auth: ev.auth, key: ev.key, users: ev.users,
		tokens: ev.tokens, png: ev.png, spool: ev.spool}
	h.Mount(c.e.Group("/storage/v1"))
	c.srv = httptest.NewServer(c.e)
	t.Cleanup(c.srv.Close)
	return c
}

// callerOf is user's identity as the service sees it, for writes made straight to the database.
func (ev *env) callerOf(t *testing.T, user string) pg.Caller {
	t.Helper()
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer "+ev.tokens[user])
	c, err := ev.auth.Caller(r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// asUser runs fn in one transaction as user, through the login role: row-level security applies.
func (ev *env) asUser(t *testing.T, user string, fn func(tx pgx.Tx) error) error {
	t.Helper()
	return pg.WithCaller(context.Background(), ev.db.Pool, ev.callerOf(t, user), pg.ReadWrite, fn)
}

// attach makes a publication in proj-a as editorA with the media item at key attached, and,
// unless status is "draft", submits it for review; it returns the publication's id.
func (ev *env) attach(t *testing.T, key, status string) string {
	t.Helper()
	ctx := context.Background()
	var id string
	err := ev.asUser(t, "editorA", func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `insert into publications (project_id, title, slug)
			select id, 'With ' || $1, 'with-' || md5($1) from projects where slug = 'proj-a' returning id`, key).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `insert into publication_media (publication_id, media_id)
			select $1, id from media where storage_path = $2`, id, key); err != nil {
			return err
		}
		if status == "reviewing" {
			_, err := tx.Exec(ctx, `select submit_for_review($1, 'please look')`, id)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("attach %s: %v", key, err)
	}
	return id
}

// version is a publication's version.
func (ev *env) version(t *testing.T, pub string) int {
	t.Helper()
	var v int
	if err := ev.db.Owner(t).QueryRow(context.Background(), `select version from publications where id = $1`, pub).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// testBucketMediaRoutes: every route supabase-js's storage client calls answers for bucket
// media (none says "Bucket not found", which several did when they fell through to the
// download and upload routes), and says "Bucket not found" for any other bucket; each wants
// the publishable key (the signed URLs, which are their own credential, are tested apart).
func testBucketMediaRoutes(t *testing.T, ev *env) {
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"POST", "/storage/v1/object/list/%s", map[string]any{"prefix": "proj-a"}, 200},
		{"GET", "/storage/v1/object/info/%s/proj-a/photo.png", nil, 200},
		{"GET", "/storage/v1/object/info/authenticated/%s/proj-a/photo.png", nil, 200},
		{"HEAD", "/storage/v1/object/%s/proj-a/photo.png", nil, 200},
		{"POST", "/storage/v1/object/sign/%s", map[string]any{"expiresIn": 60, "paths": []string{"proj-a/photo.png"}}, 200},
		{"POST", "/storage/v1/object/upload/sign/%s/proj-a/fresh.png", nil, 200},
		{"POST", "/storage/v1/object/copy", map[string]any{"bucketId": "%s", "sourceKey": "proj-a/photo.png", "destinationKey": "proj-a/copy.png"}, 200},
		{"POST", "/storage/v1/object/move", map[string]any{"bucketId": "%s", "sourceKey": "proj-a/copy.png", "destinationKey": "proj-a/moved.png"}, 200},
		{"DELETE", "/storage/v1/object/%s", map[string]any{"prefixes": []string{"proj-a/moved.png"}}, 200},
	} {
		for _, bucket := range []string{"media", "avatars"} {
			t.Run(tc.method+" "+tc.path+" "+bucket, func(t *testing.T) {
				path := strings.Replace(tc.path, "%s", bucket, 1)
				body := tc.body
				if m, ok := body.(map[string]any); ok && m["bucketId"] == "%s" {
					body = map[string]any{"bucketId": bucket, "sourceKey": m["sourceKey"], "destinationKey": m["destinationKey"]}
				}
				if bucket == "media" {
					raw, _ := json.Marshal(body)
					if resp, _ := ev.do(t, req{method: tc.method, path: path, user: "editorA", body: raw, noKey: true}); resp.StatusCode != 401 {
						t.Fatalf("without the apikey: status %d", resp.StatusCode)
					}
				}
				resp, b := ev.call(t, tc.method, path, "editorA", body)
				if bucket == "avatars" {
					if resp.StatusCode != 404 || (tc.method != "HEAD" && storageError(t, b)["message"] != "Bucket not found") {
						t.Fatalf("status %d: %s", resp.StatusCode, b)
					}
					return
				}
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
				}
			})
		}
	}
}

// testJSONBodies: a JSON body that cannot be read is a 400 (413 past the cap) in Storage's shape
// that says what is wrong, on every JSON route; nothing is written.
func testJSONBodies(t *testing.T, ev *env) {
	routes := []string{"/storage/v1/object/list/media", "/storage/v1/object/sign/media", "/storage/v1/object/sign/media/proj-a/photo.png",
		"/storage/v1/object/move", "/storage/v1/object/copy"}
	for _, tc := range []struct {
		name, body string
		status     int
		message    string // a part of it
	}{
		{"not JSON", `prefix=proj-a`, 400, "not valid JSON"},
		{"empty", ``, 400, "empty"},
		{"an array", `[]`, 400, "must be a JSON object"},
		{"two values", `{} {}`, 400, "not valid JSON"},
		{"truncated", `{"prefix": "proj-a"`, 400, "not valid JSON"},
	} {
		for _, route := range routes {
			t.Run(tc.name+" "+route, func(t *testing.T) {
				resp, b := ev.call(t, "POST", route, "ownerA", tc.body)
				if resp.StatusCode != tc.status || !strings.Contains(storageError(t, b)["message"], tc.message) {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
			})
		}
		t.Run(tc.name+" remove", func(t *testing.T) {
			resp, b := ev.call(t, "DELETE", "/storage/v1/object/media", "ownerA", tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	for _, tc := range []struct{ route, body, message string }{
		{"/storage/v1/object/list/media", `{"prefix": 7}`, "prefix has the wrong type (number)"},
		{"/storage/v1/object/sign/media", `{"expiresIn": 60, "paths": "proj-a/photo.png"}`, "paths has the wrong type (string)"},
		{"/storage/v1/object/sign/media", `{"expiresIn": 60, "paths": [1]}`, "paths has the wrong type (number)"},
		{"/storage/v1/object/move", `{"bucketId": "media", "sourceKey": ["a"]}`, "sourceKey has the wrong type (array)"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			resp, b := ev.call(t, "POST", tc.route, "ownerA", tc.body)
			if resp.StatusCode != 400 || storageError(t, b)["message"] != tc.message {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	resp, b := ev.call(t, "POST", "/storage/v1/object/list/media", "ownerA", `{"prefix": "`+strings.Repeat("a", DefaultMaxJSONBytes)+`"}`)
	if resp.StatusCode != 413 || storageError(t, b)["message"] != "the request body is over the limit of 2097152 bytes (MASTHEAD_STORAGE_MAX_JSON_BYTES)" {
		t.Fatalf("over the cap: status %d: %s", resp.StatusCode, b)
	}
	if n := ev.rowCount(t, "proj-a/photo.png"); n != 1 {
		t.Fatalf("fixture rows changed: %d", n)
	}
}

// testFileColumnsOnlyThroughStorage: the columns that describe a media item's file change only
// in a storage API transaction, so /rest/v1 (or any other write as a user) cannot make a row
// describe a file it does not have; alt text stays the editors' to write anywhere.
func testFileColumnsOnlyThroughStorage(t *testing.T, ev *env) {
	ctx := context.Background()
	for _, set := range []string{"storage_path = 'proj-a/elsewhere.png'", "bytes = 1", "mime_type = 'image/gif'", "kind = 'video'", "width = 1", "height = 1"} {
		t.Run(set, func(t *testing.T) {
			err := ev.asUser(t, "editorA", func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `update media set `+set+` where storage_path = 'proj-a/photo.png'`)
				return err
			})
			if f, ok := pg.ErrorFields(err); !ok || f.Code != "42501" || !strings.Contains(f.Message, "storage API") {
				t.Fatalf("err %v", err)
			}
		})
	}
	err := ev.asUser(t, "editorA", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `update media set alt_text = 'A photo' where storage_path = 'proj-a/photo.png'`)
		return err
	})
	if err != nil {
		t.Fatalf("alt text: %v", err)
	}
	if got := ev.row(t, "proj-a/photo.png"); got.mime != "image/png" || got.bytes != int64(len(ev.png)) {
		t.Fatalf("row changed: %+v", got)
	}
	var ae *apiError
	if errors.As(dbRefusal(errors.New("not from the database")), &ae) {
		t.Fatal("a non-database error became a refusal")
	}
}
