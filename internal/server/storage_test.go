package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

// TestStorageLimitsFromConfig: the /storage/v1 limits come from the MASTHEAD_STORAGE_…
// settings, and each refusal names its variable, in Supabase Storage's error shape.
func TestStorageLimitsFromConfig(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *config.Config) {
		c.StorageMaxUploadBytes = 1024
		c.StorageMaxListLimit = 5
		c.StorageMaxBatch = 2
		c.StorageMaxJSONBytes = 1024
		c.StorageMaxSignedURLTTL = time.Minute
		c.StorageSignedUploadTTL = 10 * time.Minute
	})
	bg := context.Background()
	own := e.DB.Owner(t)
	var project string
	if err := own.QueryRow(bg, `insert into projects (slug, name) values ('limits', 'Limits') returning id`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	u := e.CreateUser(t, "editor@limits.test", "a long password")
	if _, err := own.Exec(bg, `insert into project_members (project_id, user_id, role) values ($1, $2, 'editor')`, project, u.ID); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"apikey": e.Key, "Authorization": "Bearer " + accessToken(t, e.URL, e.Key, u.Email, u.Password),
		"Content-Type": "application/json"}

	for _, tc := range []struct {
		name, method, path, body string
		contentType              string
		status                   int
		message                  string
	}{
		{"list page", http.MethodPost, "/object/list/media", `{"prefix":"limits","limit":6}`, "", 400,
			"limit must be a whole number from 1 to 5 (MASTHEAD_STORAGE_MAX_LIST_LIMIT)"},
		{"remove batch", http.MethodDelete, "/object/media", `{"prefixes":["limits/a.png","limits/b.png","limits/c.png"]}`, "", 400,
			"prefixes names 3 objects: at most 2 may be named in one request (MASTHEAD_STORAGE_MAX_BATCH)"},
		{"createSignedUrls batch", http.MethodPost, "/object/sign/media", `{"expiresIn":60,"paths":["limits/a.png","limits/b.png","limits/c.png"]}`, "", 400,
			"paths names 3 objects: at most 2 may be named in one request (MASTHEAD_STORAGE_MAX_BATCH)"},
		{"JSON body", http.MethodPost, "/object/list/media", `{"prefix":"` + strings.Repeat("a", 1100) + `"}`, "", 413,
			"the request body is over the limit of 1024 bytes (MASTHEAD_STORAGE_MAX_JSON_BYTES)"},
		{"signed URL lifetime", http.MethodPost, "/object/sign/media/limits/a.png", `{"expiresIn":61}`, "", 400,
			"expiresIn must be a whole number of seconds from 1 to 60 (MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL)"},
		{"upload size", http.MethodPost, "/object/media/limits/big.png", strings.Repeat("x", 2048), "image/png", 413,
			"The object exceeded the maximum allowed size of 1024 bytes (MASTHEAD_STORAGE_MAX_UPLOAD_BYTES)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			for k, v := range hdr {
				h[k] = v
			}
			if tc.contentType != "" {
				h["Content-Type"] = tc.contentType
			}
			res, body := get(t, tc.method, e.URL+"/storage/v1"+tc.path, h, strings.NewReader(tc.body))
			var got map[string]string
			if err := json.Unmarshal(body, &got); err != nil || res.StatusCode != tc.status || got["message"] != tc.message ||
				got["statusCode"] != strconv.Itoa(tc.status) || got["error"] == "" {
				t.Fatalf("%d %s", res.StatusCode, body)
			}
		})
	}

	// A signed upload URL lives MASTHEAD_STORAGE_SIGNED_UPLOAD_TTL.
	res, body := get(t, http.MethodPost, e.URL+"/storage/v1/object/upload/sign/media/limits/later.png", hdr, bytes.NewReader(nil))
	var signed struct{ Token string }
	if err := json.Unmarshal(body, &signed); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("createSignedUploadUrl: %d %s", res.StatusCode, body)
	}
	parts := strings.Split(signed.Token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", signed.Token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct{ IAT, EXP int64 }
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if claims.EXP-claims.IAT != int64((10 * time.Minute).Seconds()) {
		t.Errorf("signed upload URL valid for %d s, want 600: %s", claims.EXP-claims.IAT, payload)
	}
}

// TestCORSStorageUpload: a browser may send every header supabase-js's storage client puts on
// an upload (x-upsert, cache-control, x-metadata) cross-origin.
func TestCORSStorageUpload(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	res, _ := get(t, http.MethodOptions, e.URL+"/storage/v1/object/media/northwind/a.png", map[string]string{
		"Origin": "https://app.example", "Access-Control-Request-Method": "PUT",
		"Access-Control-Request-Headers": "apikey, authorization, cache-control, content-type, x-client-info, x-metadata, x-upsert",
	}, nil)
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
	allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"apikey", "authorization", "cache-control", "content-type", "x-client-info", "x-metadata", "x-upsert"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("%s not allowed: %q", h, allowed)
		}
	}
	// The methods allowed are the route's: those of update, remove and uploadToSignedUrl too.
	for path, method := range map[string]string{
		"/storage/v1/object/media/northwind/a.png":             http.MethodPut,
		"/storage/v1/object/media":                             http.MethodDelete,
		"/storage/v1/object/upload/sign/media/northwind/b.png": http.MethodPut,
		"/storage/v1/object/list/media":                        http.MethodPost,
	} {
		res, _ := get(t, http.MethodOptions, e.URL+path, map[string]string{
			"Origin": "https://app.example", "Access-Control-Request-Method": method,
			"Access-Control-Request-Headers": "apikey, authorization, content-type",
		}, nil)
		if res.StatusCode != http.StatusNoContent || !strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), method) {
			t.Errorf("preflight of %s %s: %d, methods %q", method, path, res.StatusCode, res.Header.Get("Access-Control-Allow-Methods"))
		}
	}
}

// TestStorageRenderNotOffered: image transformations are not offered: Supabase Storage's render
// routes answer a 404 in Storage's shape.
func TestStorageRenderNotOffered(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	for _, path := range []string{"/storage/v1/render/image/authenticated/media/northwind/a.png?width=10",
		"/storage/v1/render/image/public/media/northwind/a.png", "/storage/v1/render/image/sign/media/northwind/a.png?token=t"} {
		res, body := get(t, http.MethodGet, e.URL+path, map[string]string{"apikey": e.Key}, nil)
		var m map[string]any
		if res.StatusCode != http.StatusNotFound || json.Unmarshal(body, &m) != nil || m["statusCode"] != "404" || m["error"] == nil {
			t.Errorf("%s: %d %s, want Storage's 404", path, res.StatusCode, body)
		}
	}
}
