package storage

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
)

// backendKinds are the backends every HTTP scenario runs against. "s3" is the S3 backend
// (minio-go) talking HTTP to gofakes3, an S3-compatible server run in-process: no MinIO server
// package exists in Debian, and gofakes3 keeps `make test` free of anything outside Go.
var backendKinds = []string{"disk", "s3"}

func newBackend(t testing.TB, kind string) Backend {
	t.Helper()
	switch kind {
	case "disk":
		d, err := NewDisk(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	case "s3":
		return newS3Backend(t)
	}
	t.Fatalf("unknown backend %q", kind)
	return nil
}

// newS3Backend starts an S3-compatible server with an empty bucket and connects to it.
func newS3Backend(t testing.TB) *S3 {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	s, err := NewS3(S3Config{Endpoint: srv.URL, Region: "us-east-1", Bucket: "masthead-media",
		AccessKey: "test", SecretKey: "test-secret", PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.client.MakeBucket(context.Background(), "masthead-media", minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// eachBackend runs fn, in parallel, once per backend kind with a fresh environment.
func eachBackend(t *testing.T, fn func(t *testing.T, ev *env)) {
	for _, kind := range backendKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, newBackend(t, kind)))
		})
	}
}

// TestBackendDeleteMissing: deleting a key that holds nothing is no error on every backend
// (Backend.Delete's contract), also when a part of its path is a file, as after a copy onto
// "a.png/x" that the file a.png refused; the copy's clean-up then has nothing to log.
func TestBackendDeleteMissing(t *testing.T) {
	t.Parallel()
	for _, kind := range backendKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b, ctx := newBackend(t, kind), context.Background()
			if err := b.Put(ctx, "proj/a.png", strings.NewReader("png"), 3, "image/png"); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"proj/none.png", "none/none.png", "proj/a.png/x"} {
				if err := b.Delete(ctx, key); err != nil {
					t.Errorf("Delete(%q) = %v, want nil", key, err)
				}
			}
		})
	}
}
