package storage

import (
	"strings"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		backend string
		wantErr string
	}{
		{"defaults to disk under the data folder", nil, "disk", ""},
		{"s3", map[string]string{"MASTHEAD_STORAGE_BACKEND": "s3", "MASTHEAD_S3_ENDPOINT": "http://127.0.0.1:9000", "MASTHEAD_S3_BUCKET": "media"}, "s3", ""},
		{"s3 without a bucket", map[string]string{"MASTHEAD_STORAGE_BACKEND": "S3", "MASTHEAD_S3_ENDPOINT": "http://x"}, "s3", "MASTHEAD_S3_BUCKET"},
		{"unknown backend", map[string]string{"MASTHEAD_STORAGE_BACKEND": "ftp"}, "ftp", "want disk or s3"},
		{"bad upload cap", map[string]string{"MASTHEAD_STORAGE_MAX_UPLOAD": "50MB"}, "disk", "MASTHEAD_STORAGE_MAX_UPLOAD"},
		{"short signing key", map[string]string{"MASTHEAD_STORAGE_SIGNING_KEY": "short"}, "disk", "at least 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConfigFromEnv(func(k string) string { return tc.env[k] }, "/data/media")
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if c.Backend != tc.backend {
				t.Errorf("backend %q, want %q", c.Backend, tc.backend)
			}
			if tc.env == nil && c.Dir != "/data/media" {
				t.Errorf("dir %q", c.Dir)
			}
		})
	}
	c, _ := ConfigFromEnv(func(string) string { return "" }, "d")
	if string(c.SigningKeyOr("jwks")) != string(DeriveSigningKey("jwks")) {
		t.Error("signing key is not derived from the shared secret when unset")
	}
}
