package storage

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// signUpload asks for a signed upload URL as user and returns the status and the answer.
func (ev *env) signUpload(t *testing.T, key, user string, upsert bool) (int, map[string]string) {
	t.Helper()
	r := req{method: "POST", path: "/storage/v1/object/upload/sign/media/" + key, user: user}
	if upsert {
		r.header = map[string]string{"x-upsert": "true"}
	}
	resp, b := ev.do(t, r)
	var out map[string]string
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
	} else {
		storageError(t, b)
	}
	return resp.StatusCode, out
}

// uploadSigned sends data to a signed upload URL path (relative to /storage/v1) with neither
// the apikey nor a token: the URL is the credential.
func (ev *env) uploadSigned(t *testing.T, path string, data []byte, contentType string) (*http.Response, []byte) {
	t.Helper()
	return ev.do(t, req{method: "PUT", path: "/storage/v1" + path, noKey: true, body: data, header: map[string]string{"Content-Type": contentType}})
}

// TestSignedUpload: createSignedUploadUrl gives a URL only to someone who may write at the path;
// the upload it allows is written as them, checked as any upload, once (or as a new version with
// upsert), at that path only, until it expires, and only while they still may.
func TestSignedUpload(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	t.Run("refused", func(t *testing.T) { testSignUploadRefused(t, ev) })
	status, out := ev.mustSignUpload(t, "proj-a/s/one.png", "editorA")
	if status != 200 || !strings.HasPrefix(out["url"], "/object/upload/sign/media/proj-a/s/one.png?token=") || !strings.HasSuffix(out["url"], "token="+out["token"]) {
		t.Fatalf("sign: %d %v", status, out)
	}
	if ev.rowCount(t, "proj-a/s/one.png") != 0 {
		t.Fatal("signing wrote a row")
	}
	u := out["url"]

	t.Run("the token carries no more than identity", func(t *testing.T) {
		claims, aerr := ev.h.signer.verifyUpload(out["token"], "media/proj-a/s/one.png")
		if aerr != nil {
			t.Fatal(aerr)
		}
		var as map[string]any
		if err := json.Unmarshal(claims.As, &as); err != nil || as["sub"] != ev.users["editorA"] || as["email"] != nil || as["session_id"] == nil {
			t.Fatalf("as %s (%v)", claims.As, err)
		}
	})
	t.Run("uploads once, as the signer", func(t *testing.T) {
		resp, b := ev.uploadSigned(t, u, ev.png, "image/png")
		id := ev.mediaID(t, "proj-a/s/one.png")
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"Id":"`+id+`","Key":"media/proj-a/s/one.png"}` || !ev.exists(t, "proj-a/s/one.png") {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		resp, b = ev.uploadSigned(t, u, ev.png, "image/png")
		if resp.StatusCode != 409 || storageError(t, b)["error"] != "Duplicate" {
			t.Fatalf("again: %d %s", resp.StatusCode, b)
		}
	})
	t.Run("the upload is checked as any upload", func(t *testing.T) {
		_, out := ev.mustSignUpload(t, "proj-a/s/two.png", "editorA")
		resp, b := ev.uploadSigned(t, out["url"], ev.png, "image/jpeg")
		if resp.StatusCode != 415 || ev.rowCount(t, "proj-a/s/two.png") != 0 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	})
	t.Run("upsert replaces", func(t *testing.T) {
		status, out := ev.signUpload(t, "proj-a/photo.png", "editorA", true)
		if status != 200 {
			t.Fatalf("sign: %d", status)
		}
		id := ev.mediaID(t, "proj-a/photo.png")
		resp, b := ev.uploadSigned(t, out["url"], gifBytes(t, 5, 5), "image/gif")
		if resp.StatusCode != 200 || ev.mediaID(t, "proj-a/photo.png") != id || ev.row(t, "proj-a/photo.png").mime != "image/gif" {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	})

	_, other := ev.mustSignUpload(t, "proj-a/s/three.png", "editorA")
	token := other["token"]
	download := ev.h.signer.sign("media/proj-a/s/three.png", "image/png", time.Hour)
	for _, tc := range []struct{ name, path string }{
		{"token on another path", "/object/upload/sign/media/proj-a/s/four.png?token=" + token},
		{"token on another tenant's path", "/object/upload/sign/media/proj-b/s/three.png?token=" + token},
		{"a download token", "/object/upload/sign/media/proj-a/s/three.png?token=" + download},
		{"tampered", "/object/upload/sign/media/proj-a/s/three.png?token=" + token[:len(token)-2] + "xx"},
		{"no token", "/object/upload/sign/media/proj-a/s/three.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ev.uploadSigned(t, tc.path, ev.png, "image/png")
			if resp.StatusCode != 400 || storageError(t, b)["error"] != "InvalidJWT" {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	t.Run("an upload token does not download", func(t *testing.T) {
		resp, b := ev.do(t, req{path: "/storage/v1/object/sign/media/proj-a/photo.png?token=" + url.QueryEscape(ev.h.signer.signClaims(
			signedClaims{URL: "media/proj-a/photo.png", Op: opUpload, As: []byte(`{"sub":"x"}`)}, time.Hour))})
		if resp.StatusCode != 400 || storageError(t, b)["error"] != "InvalidJWT" {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	})
	t.Run("expires after SignedUploadTTL", func(t *testing.T) {
		_, out := ev.mustSignUpload(t, "proj-a/s/late.png", "editorA")
		ev.clock.Add(int64(DefaultSignedUploadTTL))
		defer ev.clock.Add(-int64(DefaultSignedUploadTTL))
		resp, b := ev.uploadSigned(t, out["url"], ev.png, "image/png")
		if resp.StatusCode != 400 || storageError(t, b)["message"] != "jwt expired" {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	})
	t.Run("the database decides again at upload time", func(t *testing.T) {
		_, out := ev.mustSignUpload(t, "proj-a/s/demoted.png", "editorA")
		own := ev.db.Owner(t)
		if _, err := own.Exec(context.Background(), `update project_members set role = 'viewer' where user_id = $1`, ev.users["editorA"]); err != nil {
			t.Fatal(err)
		}
		resp, b := ev.uploadSigned(t, out["url"], ev.png, "image/png")
		if resp.StatusCode != 403 || ev.rowCount(t, "proj-a/s/demoted.png") != 0 {
			t.Fatalf("after demotion: %d %s", resp.StatusCode, b)
		}
		if _, err := own.Exec(context.Background(), `update project_members set role = 'editor' where user_id = $1`, ev.users["editorA"]); err != nil {
			t.Fatal(err)
		}
		if _, err := own.Exec(context.Background(), `delete from auth.sessions where user_id = $1`, ev.users["editorA"]); err != nil {
			t.Fatal(err)
		}
		resp, b = ev.uploadSigned(t, out["url"], ev.png, "image/png")
		if resp.StatusCode != 401 || ev.rowCount(t, "proj-a/s/demoted.png") != 0 {
			t.Fatalf("after sign-out: %d %s", resp.StatusCode, b)
		}
	})
}

// mustSignUpload signs an upload and fails unless it worked.
func (ev *env) mustSignUpload(t *testing.T, key, user string) (int, map[string]string) {
	t.Helper()
	status, out := ev.signUpload(t, key, user, false)
	if status != 200 {
		t.Fatalf("sign upload of %s as %s: %d", key, user, status)
	}
	return status, out
}

// testSignUploadRefused: only someone who may write at the path gets a signed upload URL.
func testSignUploadRefused(t *testing.T, ev *env) {
	for _, tc := range []struct {
		name, key, user string
		upsert          bool
		status          int
	}{
		{"viewer", "proj-a/v.png", "viewerA", false, 403},
		{"reviewer", "proj-a/r.png", "reviewerA", false, 403},
		{"other tenant", "proj-a/b.png", "editorB", false, 403},
		{"anon", "proj-a/anon.png", "", false, 403},
		{"path taken", "proj-a/photo.png", "editorA", false, 409},
		{"upsert over another tenant's object", "proj-b/secret.png", "editorA", true, 403},
		{"upsert by a viewer", "proj-a/photo.png", "viewerA", true, 403},
		{"invalid key", "proj-a/../x.png", "editorA", false, 400},
		{"invalid token", "proj-a/t.png", "forged", false, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, _ := ev.signUpload(t, tc.key, tc.user, tc.upsert); status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
		})
	}
	if resp, _ := ev.do(t, req{method: "POST", path: "/storage/v1/object/upload/sign/media/proj-a/k.png", user: "editorA", noKey: true}); resp.StatusCode != 401 {
		t.Fatalf("without apikey: %d", resp.StatusCode)
	}
}

// testSignMany: createSignedUrls answers one entry per path, in order: a signed URL where the
// caller may read the row, else Storage's error, the same for missing, invisible and invalid.
func testSignMany(t *testing.T, ev *env) {
	const noAccess = `"error":"Either the object does not exist or you do not have access to it"`
	resp, b := ev.call(t, "POST", "/storage/v1/object/sign/media", "viewerA", map[string]any{"expiresIn": 60,
		"paths": []string{"proj-b/secret.png", "proj-a/photo.png", "proj-a/none.png", "proj-a/../x", "proj-a/photo.png"}})
	var got []signedURLResult
	if err := json.Unmarshal(b, &got); resp.StatusCode != 200 || err != nil || len(got) != 5 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	for i, want := range []bool{false, true, false, false, true} {
		if (got[i].SignedURL != nil) != want || (got[i].Error == nil) != want {
			t.Errorf("entry %d: %s", i, b)
		}
	}
	if !strings.Contains(string(b), `{`+noAccess+`,"path":"proj-b/secret.png","signedURL":null}`) {
		t.Errorf("shape %s", b)
	}
	if resp, _ := ev.do(t, req{path: "/storage/v1" + *got[1].SignedURL, noKey: true}); resp.StatusCode != 200 {
		t.Fatalf("the signed URL: %d", resp.StatusCode)
	}
	if _, b := ev.call(t, "POST", "/storage/v1/object/sign/media", "", map[string]any{"expiresIn": 60, "paths": []string{"proj-a/photo.png"}}); !strings.Contains(string(b), noAccess) {
		t.Fatalf("anon: %s", b)
	}
	for _, tc := range []struct {
		name    string
		body    map[string]any
		message string
	}{
		{"no paths", map[string]any{"expiresIn": 60}, "paths is required: an array of object paths"},
		{"empty paths", map[string]any{"expiresIn": 60, "paths": []string{}}, "paths must name at least one object"},
		{"over the cap", map[string]any{"expiresIn": 60, "paths": make([]string, DefaultMaxBatch+1)}, "paths names 1001 objects: at most 1000 may be named in one request (MASTHEAD_STORAGE_MAX_BATCH)"},
		{"no expiresIn", map[string]any{"paths": []string{"proj-a/photo.png"}}, "expiresIn must be a whole number of seconds from 1 to 604800 (MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL)"},
		{"expiresIn over a week", map[string]any{"expiresIn": 604801, "paths": []string{"proj-a/photo.png"}}, "expiresIn must be a whole number of seconds from 1 to 604800 (MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ev.call(t, "POST", "/storage/v1/object/sign/media", "viewerA", tc.body)
			if resp.StatusCode != 400 || storageError(t, b)["message"] != tc.message {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
}

// testDownloadAttachment: ?download (as supabase-js appends it to signed URLs) serves the
// object as an attachment, named by its value or by the key's last segment.
func testDownloadAttachment(t *testing.T, ev *env) {
	_, signed := ev.sign(t, "proj-a/photo.png", "viewerA", `{"expiresIn":60}`)
	for _, tc := range []struct {
		name, path, user string
		status           int
		disposition      string
	}{
		{"inline by default", "/storage/v1/object/media/proj-a/photo.png", "viewerA", 200, ""},
		{"download=", "/storage/v1/object/media/proj-a/photo.png?download=", "viewerA", 200, "attachment; filename=photo.png"},
		{"download, no value", "/storage/v1/object/authenticated/media/proj-a/photo.png?download", "viewerA", 200, "attachment; filename=photo.png"},
		{"a name", "/storage/v1/object/media/proj-a/photo.png?download=cover.png", "viewerA", 200, "attachment; filename=cover.png"},
		{"a name with spaces and quotes", "/storage/v1/object/media/proj-a/photo.png?download=" + url.QueryEscape(`my "best" photo.png`), "viewerA", 200, `attachment; filename="my \"best\" photo.png"`},
		{"a name beyond ASCII", "/storage/v1/object/media/proj-a/photo.png?download=" + url.QueryEscape("café.png"), "viewerA", 200, "attachment; filename*=utf-8''caf%C3%A9.png"},
		{"a signed URL", "/storage/v1" + signed + "&download=", "", 200, "attachment; filename=photo.png"},
		{"an unsafe type stays an attachment", "/storage/v1/object/media/proj-a/page.html?download=page.html", "viewerA", 200, "attachment; filename=page.html"},
		{"a control character", "/storage/v1/object/media/proj-a/photo.png?download=a%0Db.png", "viewerA", 400, ""},
		{"a name too long", "/storage/v1/object/media/proj-a/photo.png?download=" + strings.Repeat("a", 256), "viewerA", 400, ""},
		{"no access comes first", "/storage/v1/object/media/proj-a/photo.png?download=a%0Db.png", "editorB", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ev.do(t, req{path: tc.path, user: tc.user, noKey: tc.user == ""})
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Disposition") != tc.disposition {
				t.Fatalf("status %d, Content-Disposition %q: %s", resp.StatusCode, resp.Header.Get("Content-Disposition"), b)
			}
			if tc.status == 400 && storageError(t, b)["message"] != errDownloadName.msg {
				t.Fatalf("body %s", b)
			}
		})
	}
}
