package storage

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func newDiskEnv(t *testing.T) *env {
	t.Helper()
	d, err := NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return newEnv(t, d)
}

// TestDownloadAccess: whoever may read the media row reads the file; everybody else gets the
// same 404 as for a path that does not exist.
func TestDownloadAccess(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		for _, tc := range []struct {
			name, path, user string
			status           int
		}{
			{"owner reads own project", "/storage/v1/object/authenticated/media/proj-a/photo.png", "ownerA", 200},
			{"viewer reads own project", "/storage/v1/object/authenticated/media/proj-a/photo.png", "viewerA", 200},
			{"supabase-js download path", "/storage/v1/object/media/proj-a/photo.png", "reviewerA", 200},
			{"other tenant's editor", "/storage/v1/object/authenticated/media/proj-a/photo.png", "editorB", 404},
			{"member of no project", "/storage/v1/object/authenticated/media/proj-a/photo.png", "outsider", 404},
			{"anon", "/storage/v1/object/authenticated/media/proj-a/photo.png", "", 404},
			{"anon on the other tenant", "/storage/v1/object/media/proj-b/secret.png", "", 404},
			{"cross-project read", "/storage/v1/object/media/proj-b/secret.png", "ownerA", 404},
			{"no such object", "/storage/v1/object/media/proj-a/nope.png", "ownerA", 404},
			{"other bucket", "/storage/v1/object/avatars/proj-a/photo.png", "ownerA", 404},
			{"invalid token", "/storage/v1/object/media/proj-a/photo.png", "forged", 401},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, body := ev.do(t, req{path: tc.path, user: tc.user})
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
				}
				if tc.status != 200 {
					e := storageError(t, body)
					if tc.status == 404 && e["error"] == "not_found" && e["message"] != "Object not found" {
						t.Errorf("404 says more than not found: %v", e)
					}
					return
				}
				if !bytes.Equal(body, ev.png) {
					t.Fatalf("body differs from the stored file")
				}
				for k, want := range map[string]string{
					"Content-Type": "image/png", "X-Content-Type-Options": "nosniff",
					"Cache-Control": "private, no-cache", "Accept-Ranges": "bytes",
				} {
					if got := resp.Header.Get(k); got != want {
						t.Errorf("%s = %q, want %q", k, got, want)
					}
				}
				if resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
					t.Errorf("validators missing: %v", resp.Header)
				}
			})
		}
	})
}

// TestNeverHTML: a row whose type is not on the allow-list (here text/html, written past the
// upload checks) is served as an opaque attachment, never as a page.
func TestNeverHTML(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		resp, _ := ev.do(t, req{path: "/storage/v1/object/media/proj-a/page.html", user: "ownerA"})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("Content-Type %q", ct)
		}
		if cd := resp.Header.Get("Content-Disposition"); cd != "attachment" {
			t.Errorf("Content-Disposition %q", cd)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Error("nosniff missing")
		}
	})
}

// TestTraversal: every way of leaving the project folder, or of smuggling a separator past
// unescaping, is refused before anything is looked up, on every route.
func TestTraversal(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	paths := []string{
		"proj-a/../proj-b/secret.png",
		"proj-a/%2e%2e/proj-b/secret.png",
		"proj-a/..%2fproj-b/secret.png",
		"proj-a%2F..%2F..%2Fetc%2Fpasswd",
		"proj-a%2fphoto.png",
		"/etc/passwd",
		"%2Fetc%2Fpasswd",
		"proj-a/photo.png%00.txt",
		"proj-a/..%5cproj-b%5csecret.png",
		"proj-a/./photo.png",
		"proj-a//photo.png",
		"..",
		"proj-a",
		"Proj-A/photo.png",
	}
	routes := []struct{ method, prefix, user string }{
		{"GET", "/storage/v1/object/authenticated/media/", "ownerA"},
		{"GET", "/storage/v1/object/media/", "ownerA"},
		{"POST", "/storage/v1/object/sign/media/", "ownerA"},
		{"GET", "/storage/v1/object/sign/media/", ""},
		{"POST", "/storage/v1/object/media/", "editorA"},
	}
	for _, p := range paths {
		for _, r := range routes {
			t.Run(r.method+" "+r.prefix+p, func(t *testing.T) {
				hdr := map[string]string{"Content-Type": "image/png"}
				body := ev.png
				if r.prefix == "/storage/v1/object/sign/media/" && r.method == "POST" {
					hdr["Content-Type"], body = "application/json", []byte(`{"expiresIn":60}`)
				}
				resp, b := ev.do(t, req{method: r.method, path: r.prefix + p, user: r.user, body: body, header: hdr})
				if resp.StatusCode != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %s", resp.StatusCode, b)
				}
				if e := storageError(t, b); e["error"] != "InvalidKey" {
					t.Fatalf("error %v", e)
				}
			})
		}
	}
	var n int
	if err := ev.db.Owner(t).QueryRow(t.Context(), `select count(*) from media`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("media rows %d (%v), want the 3 fixtures", n, err)
	}
}

// TestConditionalAndRange checks RFC 9110 §13 (conditional requests) and §14 (ranges).
func TestConditionalAndRange(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		const path = "/storage/v1/object/authenticated/media/proj-a/photo.png"
		first, _ := ev.do(t, req{path: path, user: "viewerA"})
		etag, lastMod := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
		lm, err := http.ParseTime(lastMod)
		if err != nil {
			t.Fatalf("Last-Modified %q: %v", lastMod, err)
		}
		later := lm.Add(time.Hour).UTC().Format(http.TimeFormat)
		earlier := lm.Add(-time.Hour).UTC().Format(http.TimeFormat)
		size := len(ev.png)
		for _, tc := range []struct {
			name         string
			method, user string
			header       map[string]string
			status       int
			body         []byte // nil: not checked
			contentRange string
		}{
			{"If-None-Match same etag", "GET", "viewerA", map[string]string{"If-None-Match": etag}, 304, []byte{}, ""},
			{"If-None-Match list with etag", "GET", "viewerA", map[string]string{"If-None-Match": `"x", ` + etag}, 304, []byte{}, ""},
			{"If-None-Match star", "GET", "viewerA", map[string]string{"If-None-Match": "*"}, 304, []byte{}, ""},
			// §13.1.2: If-None-Match uses the weak comparison.
			{"If-None-Match weak form", "GET", "viewerA", map[string]string{"If-None-Match": "W/" + etag}, 304, []byte{}, ""},
			// §13.1.5: If-Range needs a strong match, so a weak validator sends everything.
			{"If-Range weak etag sends all", "GET", "viewerA", map[string]string{"Range": "bytes=0-9", "If-Range": "W/" + etag}, 200, ev.png, ""},
			{"If-None-Match other etag", "GET", "viewerA", map[string]string{"If-None-Match": `"other"`}, 200, ev.png, ""},
			{"If-Modified-Since later", "GET", "viewerA", map[string]string{"If-Modified-Since": later}, 304, []byte{}, ""},
			{"If-Modified-Since earlier", "GET", "viewerA", map[string]string{"If-Modified-Since": earlier}, 200, ev.png, ""},
			// §13.2.2: If-None-Match wins over If-Modified-Since.
			{"If-None-Match beats If-Modified-Since", "GET", "viewerA", map[string]string{"If-None-Match": `"other"`, "If-Modified-Since": later}, 200, ev.png, ""},
			{"If-Match other etag", "GET", "viewerA", map[string]string{"If-Match": `"other"`}, 412, nil, ""},
			{"If-Match same etag", "GET", "viewerA", map[string]string{"If-Match": etag}, 200, ev.png, ""},
			{"If-Unmodified-Since earlier", "GET", "viewerA", map[string]string{"If-Unmodified-Since": earlier}, 412, nil, ""},
			{"first ten bytes", "GET", "viewerA", map[string]string{"Range": "bytes=0-9"}, 206, ev.png[:10], "bytes 0-9/" + strconv.Itoa(size)},
			{"suffix range", "GET", "viewerA", map[string]string{"Range": "bytes=-5"}, 206, ev.png[size-5:], "bytes " + strconv.Itoa(size-5) + "-" + strconv.Itoa(size-1) + "/" + strconv.Itoa(size)},
			{"open range", "GET", "viewerA", map[string]string{"Range": "bytes=20-"}, 206, ev.png[20:], "bytes 20-" + strconv.Itoa(size-1) + "/" + strconv.Itoa(size)},
			{"range past the end is clipped", "GET", "viewerA", map[string]string{"Range": "bytes=10-999999"}, 206, ev.png[10:], "bytes 10-" + strconv.Itoa(size-1) + "/" + strconv.Itoa(size)},
			{"unsatisfiable range", "GET", "viewerA", map[string]string{"Range": "bytes=999999-"}, 416, nil, "bytes */" + strconv.Itoa(size)},
			// RFC 9110 §14.1.1: a suffix of length 0 cannot be satisfied; with others it is skipped.
			{"empty suffix range", "GET", "viewerA", map[string]string{"Range": "bytes=-0"}, 416, nil, "bytes */" + strconv.Itoa(size)},
			{"empty suffix ranges", "GET", "viewerA", map[string]string{"Range": "bytes= -00 , -0"}, 416, nil, "bytes */" + strconv.Itoa(size)},
			{"empty suffix beside a range", "GET", "viewerA", map[string]string{"Range": "bytes=-0,0-9"}, 206, ev.png[:10], "bytes 0-9/" + strconv.Itoa(size)},
			{"range ending at 0", "GET", "viewerA", map[string]string{"Range": "bytes=0-0"}, 206, ev.png[:1], "bytes 0-0/" + strconv.Itoa(size)},
			{"If-Range same etag honours range", "GET", "viewerA", map[string]string{"Range": "bytes=0-9", "If-Range": etag}, 206, ev.png[:10], "bytes 0-9/" + strconv.Itoa(size)},
			{"If-Range stale etag sends all", "GET", "viewerA", map[string]string{"Range": "bytes=0-9", "If-Range": `"stale"`}, 200, ev.png, ""},
			{"If-Range stale date sends all", "GET", "viewerA", map[string]string{"Range": "bytes=0-9", "If-Range": earlier}, 200, ev.png, ""},
			{"HEAD", "HEAD", "viewerA", nil, 200, []byte{}, ""},
			// The access check comes first: a validator never reveals an invisible object.
			{"conditional by another tenant", "GET", "editorB", map[string]string{"If-None-Match": etag}, 404, nil, ""},
			{"range by anon", "GET", "", map[string]string{"Range": "bytes=0-9"}, 404, nil, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, body := ev.do(t, req{method: tc.method, path: path, user: tc.user, header: tc.header})
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
				}
				if tc.body != nil && !bytes.Equal(body, tc.body) {
					t.Fatalf("body %d bytes, want %d", len(body), len(tc.body))
				}
				if got := resp.Header.Get("Content-Range"); got != tc.contentRange {
					t.Errorf("Content-Range %q, want %q", got, tc.contentRange)
				}
				if tc.status == 304 && resp.Header.Get("ETag") != etag {
					t.Errorf("304 without the ETag (RFC 9110 §15.4.5)")
				}
				if tc.method == "HEAD" && resp.Header.Get("Content-Length") != strconv.Itoa(size) {
					t.Errorf("HEAD Content-Length %q", resp.Header.Get("Content-Length"))
				}
			})
		}
		t.Run("multiple ranges", func(t *testing.T) {
			resp, body := ev.do(t, req{path: path, user: "viewerA", header: map[string]string{"Range": "bytes=0-1,5-6"}})
			if resp.StatusCode != 206 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !bytes.HasPrefix([]byte(ct), []byte("multipart/byteranges; boundary=")) {
				t.Fatalf("Content-Type %q", ct)
			}
			if !bytes.Contains(body, []byte("Content-Type: image/png")) || !bytes.Contains(body, []byte("Content-Range: bytes 5-6/")) {
				t.Fatalf("parts: %q", body)
			}
		})
	})
}

// TestAPIKey: every route but the signed-URL download wants the publishable key, as Supabase's
// gateway does; an <img src> holding a signed URL cannot send one.
func TestAPIKey(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	for _, r := range []req{
		{method: "GET", path: "/storage/v1/object/authenticated/media/proj-a/photo.png", user: "ownerA"},
		{method: "HEAD", path: "/storage/v1/object/media/proj-a/photo.png", user: "ownerA"},
		{method: "POST", path: "/storage/v1/object/sign/media/proj-a/photo.png", user: "ownerA", body: []byte(`{"expiresIn":60}`)},
		{method: "POST", path: "/storage/v1/object/media/proj-a/k.png", user: "editorA", body: ev.png},
	} {
		r.noKey = true
		if resp, _ := ev.do(t, r); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without apikey: status %d", r.method, r.path, resp.StatusCode)
		}
	}
	if ev.rowCount(t, "proj-a/k.png") != 0 {
		t.Error("upload without apikey wrote a row")
	}
}

// TestDownloadAfterSignOut: a token the identity service has verified (and so remembers, see
// auth.Verifier) downloads until its session ends, and is refused with 401 from the very next
// request on both download routes: the database checks the session on every download, so the
// verified-token cache and the setup that skips parsing the claims change nothing about it.
// Another user's session is untouched.
func TestDownloadAfterSignOut(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	paths := []string{"/storage/v1/object/authenticated/media/proj-a/photo.png", "/storage/v1/object/media/proj-a/photo.png"}
	for range 2 { // the second round uses the remembered token
		for _, p := range paths {
			if resp, body := ev.do(t, req{path: p, user: "viewerA"}); resp.StatusCode != http.StatusOK || !bytes.Equal(body, ev.png) {
				t.Fatalf("%s before sign-out: %d", p, resp.StatusCode)
			}
		}
	}
	// What /auth/v1/logout does: the session's row goes.
	if _, err := ev.db.Owner(t).Exec(context.Background(), `delete from auth.sessions where user_id = $1`, ev.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, p := range paths {
			resp, body := ev.do(t, req{path: p, user: "viewerA"})
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s after sign-out: %d %s", p, resp.StatusCode, body)
			}
			if e := storageError(t, body); e["statusCode"] != "401" || e["error"] != "Unauthorized" || e["message"] != "Invalid or expired access token" {
				t.Fatalf("%s after sign-out: %s", p, body)
			}
		}
	}
	if resp, _ := ev.do(t, req{path: paths[0], user: "ownerA"}); resp.StatusCode != http.StatusOK {
		t.Fatalf("another user's session after viewerA signed out: %d", resp.StatusCode)
	}
}

// TestDownloadAfterMembershipEnds: the media row's policy is asked again on every download, so
// a member removed from the project gets 404 on their next download with the same token (whose
// verification is remembered), and a member added back downloads again at once.
func TestDownloadAfterMembershipEnds(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	path := "/storage/v1/object/authenticated/media/proj-a/photo.png"
	if resp, body := ev.do(t, req{path: path, user: "viewerA"}); resp.StatusCode != http.StatusOK || !bytes.Equal(body, ev.png) {
		t.Fatalf("member: %d", resp.StatusCode)
	}
	own := ev.db.Owner(t)
	if _, err := own.Exec(context.Background(), `delete from project_members where user_id = $1`, ev.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	resp, body := ev.do(t, req{path: path, user: "viewerA"})
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after removal: %d %s", resp.StatusCode, body)
	}
	if e := storageError(t, body); e["statusCode"] != "404" || e["message"] != "Object not found" {
		t.Fatalf("after removal: %s", body)
	}
	if _, err := own.Exec(context.Background(), `insert into project_members (project_id, user_id, role)
		select id, $1, 'reviewer' from projects where slug = 'proj-a'`, ev.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	if resp, body := ev.do(t, req{path: path, user: "viewerA"}); resp.StatusCode != http.StatusOK || !bytes.Equal(body, ev.png) {
		t.Fatalf("added back: %d", resp.StatusCode)
	}
}
