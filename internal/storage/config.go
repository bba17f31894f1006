package storage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Config chooses and configures the backend, from the environment. It lives here rather than
// in internal/config because only this package reads it; the wiring calls ConfigFromEnv and
// OpenBackend and passes the result to New.
type Config struct {
	// Backend is "disk" (default) or "s3".
	Backend string
	// Dir is the disk backend's folder; the wiring defaults it to <data folder>/media, where
	// `masthead seed` writes the demo images.
	Dir string
	S3  S3Config
	// MaxUploadBytes caps one upload; 0 means DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// SigningKey, when set, signs signed URLs instead of a key derived from the JWT keys.
	SigningKey string
}

// ConfigFromEnv reads MASTHEAD_STORAGE_* and MASTHEAD_S3_* through getenv (os.Getenv in
// production). Secrets are read here and never printed.
func ConfigFromEnv(getenv func(string) string, defaultDir string) (Config, error) {
	c := Config{
		Backend:    strings.ToLower(getenv("MASTHEAD_STORAGE_BACKEND")),
		Dir:        getenv("MASTHEAD_STORAGE_DIR"),
		SigningKey: getenv("MASTHEAD_STORAGE_SIGNING_KEY"),
		S3: S3Config{
			Endpoint:  getenv("MASTHEAD_S3_ENDPOINT"),
			Region:    getenv("MASTHEAD_S3_REGION"),
			Bucket:    getenv("MASTHEAD_S3_BUCKET"),
			AccessKey: getenv("MASTHEAD_S3_ACCESS_KEY"),
			SecretKey: getenv("MASTHEAD_S3_SECRET_KEY"),
			PathStyle: getenv("MASTHEAD_S3_PATH_STYLE") == "true",
		},
	}
	var errs []error
	if c.Backend == "" {
		c.Backend = "disk"
	}
	if c.Dir == "" {
		c.Dir = defaultDir
	}
	switch c.Backend {
	case "disk":
		if c.Dir == "" {
			errs = append(errs, errors.New("storage: MASTHEAD_STORAGE_DIR is required for the disk backend"))
		}
	case "s3":
		if c.S3.Endpoint == "" || c.S3.Bucket == "" {
			errs = append(errs, errors.New("storage: MASTHEAD_S3_ENDPOINT and MASTHEAD_S3_BUCKET are required for the s3 backend"))
		}
	default:
		errs = append(errs, fmt.Errorf("storage: MASTHEAD_STORAGE_BACKEND %q: want disk or s3", c.Backend))
	}
	if v := getenv("MASTHEAD_STORAGE_MAX_UPLOAD"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("storage: MASTHEAD_STORAGE_MAX_UPLOAD %q: want a positive number of bytes", v))
		}
		c.MaxUploadBytes = n
	}
	if c.SigningKey != "" && len(c.SigningKey) < 32 {
		errs = append(errs, errors.New("storage: MASTHEAD_STORAGE_SIGNING_KEY must be at least 32 characters"))
	}
	return c, errors.Join(errs...)
}

// OpenBackend opens the configured backend.
func (c Config) OpenBackend() (Backend, error) {
	if c.Backend == "s3" {
		return NewS3(c.S3)
	}
	return NewDisk(c.Dir)
}

// SigningKeyOr returns the configured signing key, or one derived from secret (the JWT key
// set), which every instance already shares.
func (c Config) SigningKeyOr(secret string) []byte {
	if c.SigningKey != "" {
		return []byte(c.SigningKey)
	}
	return DeriveSigningKey(secret)
}
