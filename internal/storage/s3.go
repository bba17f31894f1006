package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config names a bucket on any S3-compatible store (AWS S3, MinIO, R2, Ceph, …).
type S3Config struct {
	// Endpoint is the store's base URL, e.g. https://s3.eu-west-1.amazonaws.com or
	// http://127.0.0.1:9000; the scheme chooses TLS.
	Endpoint  string
	Region    string
	Bucket    string
	AccessKey string
	SecretKey string
	// PathStyle addresses the bucket as <endpoint>/<bucket> instead of <bucket>.<endpoint>,
	// as MinIO and most self-hosted stores need.
	PathStyle bool
}

// S3 keeps objects in one bucket of an S3-compatible store, each at its storage path.
type S3 struct {
	client *minio.Client
	bucket string
}

// NewS3 connects to the store. It does not touch the network, so a store that is down shows up
// on the first request rather than stopping the service from starting.
func NewS3(cfg S3Config) (*S3, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("storage: s3 endpoint %q must be an http(s) URL", cfg.Endpoint)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("storage: s3 bucket is required")
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       cfg.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("storage: s3 client: %w", err)
	}
	return &S3{client: client, bucket: cfg.Bucket}, nil
}

// Open implements Backend with a HEAD request only: the bytes are fetched on the first Read,
// from the offset a Range asked for, so a 304 or a HEAD costs no transfer.
func (s *S3) Open(ctx context.Context, key string) (*Object, error) {
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return nil, s.err("stat", key, err)
	}
	etag := strings.Trim(info.ETag, `"`)
	body := &s3Body{ctx: ctx, s: s, key: key, etag: etag, size: info.Size}
	return &Object{Body: body, Size: info.Size, ModTime: info.LastModified, ETag: `"` + etag + `"`}, nil
}

// Put implements Backend. A single PUT is atomic on every S3-compatible store.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	_, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return s.err("put", key, err)
	}
	return nil
}

// Delete implements Backend.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s.err("delete", key, err)
	}
	return nil
}

func (s *S3) err(op, key string, err error) error {
	if minio.ToErrorResponse(err).StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %s", ErrObjectNotFound, key)
	}
	return fmt.Errorf("storage: s3 %s %s: %w", op, key, err)
}

// s3Body reads an object lazily from off; seeking drops the open response, and the next Read
// asks for "bytes=off-" of the same version (If-Match on the ETag seen at Open), so a replaced
// object fails instead of mixing two versions in one response.
type s3Body struct {
	ctx  context.Context
	s    *S3
	key  string
	etag string
	size int64
	off  int64
	rc   io.ReadCloser
}

func (b *s3Body) Read(p []byte) (int, error) {
	if b.off >= b.size {
		return 0, io.EOF
	}
	if b.rc == nil {
		opts := minio.GetObjectOptions{}
		if err := opts.SetMatchETag(b.etag); err != nil {
			return 0, err
		}
		if b.off > 0 {
			if err := opts.SetRange(b.off, 0); err != nil {
				return 0, err
			}
		}
		obj, err := b.s.client.GetObject(b.ctx, b.s.bucket, b.key, opts)
		if err != nil {
			return 0, b.s.err("get", b.key, err)
		}
		b.rc = obj
	}
	n, err := b.rc.Read(p)
	b.off += int64(n)
	return n, err
}

func (b *s3Body) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = b.off + offset
	case io.SeekEnd:
		abs = b.size + offset
	default:
		return 0, errors.New("storage: bad whence")
	}
	if abs < 0 {
		return 0, errors.New("storage: negative position")
	}
	if abs != b.off && b.rc != nil {
		_ = b.rc.Close()
		b.rc = nil
	}
	b.off = abs
	return abs, nil
}

func (b *s3Body) Close() error {
	if b.rc == nil {
		return nil
	}
	return b.rc.Close()
}

// Copy implements Copier with a server-side copy: the bytes never leave the store.
func (s *S3) Copy(ctx context.Context, src, dst string) error {
	_, err := s.client.CopyObject(ctx, minio.CopyDestOptions{Bucket: s.bucket, Object: dst},
		minio.CopySrcOptions{Bucket: s.bucket, Object: src})
	if err != nil {
		return s.err("copy", src, err)
	}
	return nil
}
