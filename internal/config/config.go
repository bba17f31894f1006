// Package config reads the settings of the service processes (`masthead serve`, `api`, `dev`):
// each setting comes from an environment variable and may be overridden by a flag of the same
// meaning, so a container is configured by env and a person at a shell by flags.
//
// It owns parsing and validation only (and turning the log settings into a *slog.Logger), never
// defaults that depend on other packages, and it must not import any other masthead package:
// everything imports config, config imports nothing.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Config is everything the service needs to start. Secrets (PublishableKey, JWTKeys,
// DatabaseURL) never appear in logs; use Redacted to describe a config.
type Config struct {
	// Addr is the listen address, host:port.
	Addr string
	// DatabaseURL names the login role (authenticator), never a superuser.
	DatabaseURL string
	// DatabasePooler is "transaction" when DatabaseURL names a transaction-mode pooler
	// (PgBouncer, Supavisor, RDS Proxy), "" for a direct connection or a session-mode pooler.
	DatabasePooler string
	// DatabaseDirectURL, with a pooler, is a direct connection for LISTEN (schema reloads);
	// without it the schema cache is reloaded every SchemaPollInterval instead.
	DatabaseDirectURL string
	// SchemaPollInterval is how often the schema cache reloads behind a pooler without
	// DatabaseDirectURL.
	SchemaPollInterval time.Duration
	// DatabaseReadURL lists read replicas (comma-separated URLs of the login role there): REST
	// GET/HEAD and storage's row lookups read from them while they are within ReadMaxLag.
	DatabaseReadURL string
	// ReadMaxLag is how far behind the primary a replica may be and still serve reads.
	ReadMaxLag time.Duration
	// PublicURL is the base URL clients reach the service at; empty means http://Addr.
	// The token issuer is PublicURL + "/auth/v1".
	PublicURL string
	// PublishableKey (sb_publishable_…) must be sent as header apikey; it grants nothing itself.
	PublishableKey string
	// JWTKeys is a JWK set (JSON) of ES256 private keys; the first signs, all verify.
	JWTKeys string
	// JWTExp is the lifetime of access tokens.
	JWTExp time.Duration
	// RefreshReuseInterval is how long a rotated refresh token may still be presented (and get
	// the current one back) before presenting it counts as theft and revokes the session.
	RefreshReuseInterval time.Duration
	// BcryptCost is the cost of new password hashes and of the dummy hash compared for unknown
	// emails; it should equal the cost of the stored hashes so both answers take the same time.
	BcryptCost int
	// ReauthWindow is how long after signing in a person may change their password without
	// giving the current one (PUT /auth/v1/user); after it, current_password is required.
	ReauthWindow time.Duration
	// PasswordMinLength is the shortest password a person may set (updateUser, invitations).
	PasswordMinLength int
	// TokenCacheSize is how many verified access tokens an instance remembers, so that a token
	// presented again skips its signature check (auth.Options.TokenCacheSize); 0 turns it off.
	TokenCacheSize int
	// TokenRateIP and TokenRateAccount limit POST /auth/v1/token per client IP and per email.
	TokenRateIP      Rate
	TokenRateAccount Rate
	// TokenRateAccountTotal is the looser ceiling on password sign-ins per email across all
	// clients; TokenRateAccount applies per client IP and email.
	TokenRateAccountTotal Rate
	// AuthorizeRateIP limits GET /auth/v1/oauth/authorize per client IP; RegisterRateIP the
	// dynamic client registrations (POST /auth/v1/oauth/clients/register) per client IP.
	AuthorizeRateIP, RegisterRateIP Rate
	// TrustedProxies are the networks whose X-Forwarded-For is believed for the client IP;
	// empty means the TCP peer is the client.
	TrustedProxies []netip.Prefix
	// ShutdownTimeout bounds how long in-flight requests may finish after a stop signal.
	ShutdownTimeout time.Duration
	// ShutdownDrain is how long a stopping instance goes on serving with /readyz answering 503
	// before it closes its listener, so a load balancer's health check takes it out of rotation
	// first and no request meets a closed port; 0 (the default) closes at once.
	ShutdownDrain time.Duration
	// Instances is how many instances serve behind one load balancer. Rate limits are counted
	// per instance, so each enforces its share of every configured limit (Rate.Share).
	Instances int
	// BodyIdleTimeout is the longest gap between two parts of a request body; BodyMinRate
	// (bytes a second) the least a body must average once that long has passed. Together they
	// cut bodies that trickle in to hold a connection.
	BodyIdleTimeout time.Duration
	BodyMinRate     int
	// RequestTimeout bounds reading and answering one request; UploadTimeout the same for
	// object uploads and downloads under /storage/v1/object.
	RequestTimeout, UploadTimeout time.Duration
	// MaxConnections caps the connections one instance holds open at once.
	MaxConnections int
	// MaxEmbeddedRows caps the rows the embedded to-many resources of one /rest/v1 response add
	// in all; MaxResponseBytes caps one response's body. Both are refused with 400 in
	// PostgREST's shape (MH001, MH002).
	MaxEmbeddedRows  int
	MaxResponseBytes int
	// PoolShare is how many database connections one caller (a user, or an anonymous address)
	// holds at once, for /rest/v1 and /storage/v1 requests together; 0 means a quarter of the
	// pool, at least 2. One more waits PoolShareWait for a slot, then is refused with 503
	// (PGRST003 on /rest/v1, SlowDown on /storage/v1). A download holds its slot only while it
	// looks up the media row, not while the file streams.
	PoolShare     int
	PoolShareWait time.Duration
	// DBAggregatesEnabled allows aggregate functions (count(), sum(), …) and to-many spread
	// embeds in /rest/v1 selects, as PostgREST's db-aggregates-enabled; off by default, since
	// an aggregate over a large table is expensive.
	DBAggregatesEnabled bool
	// SchedulerInterval is the pause between runs of the scheduler loop that publishes due
	// items (jittered by ±20 %).
	SchedulerInterval time.Duration
	// StorageDir is the folder bucket `media` lives in when no S3 endpoint is set.
	StorageDir string
	// S3 is an S3-compatible store for bucket `media`; it wins over StorageDir when set.
	S3 S3
	// The limits of /storage/v1 (storage.Options), each named in its refusal: the size of one
	// upload, the limit of one list page, the paths one remove or createSignedUrls may name,
	// the size of a JSON request body, the longest expiresIn of a signed download URL, and how
	// long a signed upload URL stays valid.
	StorageMaxUploadBytes  int
	StorageMaxListLimit    int
	StorageMaxBatch        int
	StorageMaxJSONBytes    int
	StorageMaxSignedURLTTL time.Duration
	StorageSignedUploadTTL time.Duration
	// StorageLookupLanes is how many round trips of the media-row lookup in front of
	// downloads may be in flight on one pool; lookups beyond share the next (pg.Lookups).
	StorageLookupLanes int
	// StorageSignedTokenCacheSize is how many verified signed-URL tokens an instance remembers,
	// so that a URL opened again skips its HMAC and claims decoding
	// (storage.Options.SignedTokenCacheSize); 0 turns it off.
	StorageSignedTokenCacheSize int
	// OIDC are the upstream OpenID Connect providers offered on /login (Google, GitLab). One
	// without a client id and secret is listed there as unavailable.
	OIDC [2]OIDCProvider
	// MetricsAddr is the host:port /metrics is served on, in Prometheus' format; empty (the
	// default) serves no metrics. It must not be the public address: metrics name routes and
	// counts that are for operators only.
	MetricsAddr string
	// LogFormat is how log lines are written: LogText (key=value, the default) or LogJSON.
	LogFormat string
	// LogLevel is the least severe level logged: debug, info (the default), warn or error.
	LogLevel slog.Level
}

// Log formats.
const (
	LogText = "text"
	LogJSON = "json"
)

// OIDCProvider is an upstream OpenID Connect provider: its issuer and this service's client
// registration there, whose redirect URI is <public URL>/auth/v1/callback.
type OIDCProvider struct {
	Name, Label  string
	Issuer       string
	ClientID     string
	ClientSecret string
}

// S3 locates an S3-compatible object store.
type S3 struct {
	Endpoint, Region, Bucket string
	AccessKey, SecretKey     string
	PathStyle                bool // <endpoint>/<bucket>, as MinIO and most self-hosted stores need
}

// Rate is Count requests per Per, with bursts up to Burst: "150/5m,30".
type Rate struct {
	Count int
	Per   time.Duration
	Burst int
}

func (r Rate) String() string { return fmt.Sprintf("%d/%s,%d", r.Count, r.Per, r.Burst) }

// Share is r as one of n instances enforces it: count and burst divided by n, rounded up, over
// the same period. Behind a round-robin balancer each instance sees about 1/n of a client's
// requests, so together they allow about r (at most n-1 more), with no state shared between
// them. n below 2 leaves r as it is.
func (r Rate) Share(n int) Rate {
	if n < 2 {
		return r
	}
	return Rate{Count: ceilDiv(r.Count, n), Per: r.Per, Burst: ceilDiv(r.Burst, n)}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ParseRate reads "count/period[,burst]", e.g. "150/5m,30"; burst defaults to count.
func ParseRate(s string) (Rate, error) {
	spec, burst, hasBurst := strings.Cut(strings.TrimSpace(s), ",")
	count, per, ok := strings.Cut(spec, "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want count/period[,burst], e.g. 150/5m,30", s)
	}
	var r Rate
	var err error
	if r.Count, err = strconv.Atoi(strings.TrimSpace(count)); err != nil || r.Count <= 0 {
		return Rate{}, fmt.Errorf("rate %q: count must be a positive integer", s)
	}
	if r.Per, err = time.ParseDuration(strings.TrimSpace(per)); err != nil || r.Per <= 0 {
		return Rate{}, fmt.Errorf("rate %q: period must be a positive duration such as 5m", s)
	}
	r.Burst = r.Count
	if hasBurst {
		if r.Burst, err = strconv.Atoi(strings.TrimSpace(burst)); err != nil || r.Burst <= 0 {
			return Rate{}, fmt.Errorf("rate %q: burst must be a positive integer", s)
		}
	}
	return r, nil
}

// Default is the configuration before environment and flags: GoTrue's defaults where GoTrue has
// one (1 h tokens, 10 s reuse interval, bcrypt cost 10, 150 token requests per 5 min).
func Default() Config {
	return Config{
		Addr:                  "127.0.0.1:8080",
		JWTExp:                time.Hour,
		RefreshReuseInterval:  10 * time.Second,
		BcryptCost:            10,
		ReauthWindow:          10 * time.Minute,
		PasswordMinLength:     8,
		TokenCacheSize:        10000,
		TokenRateIP:           Rate{Count: 150, Per: 5 * time.Minute, Burst: 30},
		TokenRateAccount:      Rate{Count: 30, Per: 5 * time.Minute, Burst: 10},
		TokenRateAccountTotal: Rate{Count: 300, Per: 5 * time.Minute, Burst: 100},
		AuthorizeRateIP:       Rate{Count: 60, Per: time.Minute, Burst: 30},
		RegisterRateIP:        Rate{Count: 20, Per: time.Hour, Burst: 20},
		ShutdownTimeout:       15 * time.Second,
		Instances:             1,
		SchedulerInterval:     5 * time.Second,
		BodyIdleTimeout:       10 * time.Second,
		BodyMinRate:           512,
		RequestTimeout:        2 * time.Minute,
		UploadTimeout:         15 * time.Minute,
		MaxConnections:        4096,
		MaxEmbeddedRows:       20000,
		MaxResponseBytes:      10 << 20,
		PoolShareWait:         2 * time.Second,
		LogFormat:             LogText,
		LogLevel:              slog.LevelInfo,
		ReadMaxLag:            time.Second,
		SchemaPollInterval:    10 * time.Second,
		// Supabase Storage's defaults where it has them (50 MB per file, 1000 paths per
		// delete, two hours per signed upload URL).
		StorageMaxUploadBytes:       50 << 20,
		StorageMaxListLimit:         1000,
		StorageMaxBatch:             1000,
		StorageMaxJSONBytes:         2 << 20,
		StorageMaxSignedURLTTL:      7 * 24 * time.Hour,
		StorageSignedUploadTTL:      2 * time.Hour,
		StorageLookupLanes:          2, // storage.DefaultLookupLanes
		StorageSignedTokenCacheSize: 10000,
		OIDC: [2]OIDCProvider{
			{Name: "google", Label: "Google", Issuer: "https://accounts.google.com"},
			{Name: "gitlab", Label: "GitLab", Issuer: "https://gitlab.com"},
		},
	}
}

// setting binds one environment variable and one flag to a field.
type setting struct {
	env, flag, usage string
	value            func(c *Config) flag.Value
}

var settings = []setting{
	{"MASTHEAD_ADDR", "addr", "listen address host:port", func(c *Config) flag.Value { return (*stringValue)(&c.Addr) }},
	{"DATABASE_URL", "database-url", "PostgreSQL URL of the login role authenticator (secret)", func(c *Config) flag.Value { return (*secretValue)(&c.DatabaseURL) }},
	{"MASTHEAD_DB_POOLER", "db-pooler", "transaction when DATABASE_URL is a transaction-mode pooler such as PgBouncer; empty for a direct connection", func(c *Config) flag.Value { return (*stringValue)(&c.DatabasePooler) }},
	{"DATABASE_DIRECT_URL", "database-direct-url", "with a pooler, a direct PostgreSQL URL for LISTEN (schema reloads); else the schema is polled (secret)", func(c *Config) flag.Value { return (*secretValue)(&c.DatabaseDirectURL) }},
	{"MASTHEAD_SCHEMA_POLL_INTERVAL", "schema-poll-interval", "behind a pooler without DATABASE_DIRECT_URL, how often the schema cache reloads: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.SchemaPollInterval) }},
	{"DATABASE_READ_URL", "database-read-url", "comma-separated PostgreSQL URLs of read replicas for REST and storage reads (secret)", func(c *Config) flag.Value { return (*secretValue)(&c.DatabaseReadURL) }},
	{"MASTHEAD_READ_MAX_LAG", "read-max-lag", "how far behind the primary a replica may be and still serve reads: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.ReadMaxLag) }},
	{"MASTHEAD_PUBLIC_URL", "public-url", "base URL clients use (default http://<addr>); the issuer is <base>/auth/v1", func(c *Config) flag.Value { return (*stringValue)(&c.PublicURL) }},
	{"MASTHEAD_PUBLISHABLE_KEY", "publishable-key", "the sb_publishable_… key clients send as apikey", func(c *Config) flag.Value { return (*stringValue)(&c.PublishableKey) }},
	{"MASTHEAD_JWT_KEYS", "jwt-keys", "JWK set of ES256 private keys, first signs (secret; prefer the environment)", func(c *Config) flag.Value { return (*secretValue)(&c.JWTKeys) }},
	{"MASTHEAD_JWT_EXP", "jwt-exp", "access token lifetime: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.JWTExp) }},
	{"MASTHEAD_REFRESH_REUSE_INTERVAL", "refresh-reuse-interval", "how long a rotated refresh token still returns the current one: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.RefreshReuseInterval) }},
	{"MASTHEAD_AUTH_REAUTH_WINDOW", "auth-reauth-window", "how long after signing in a password may be changed without the current one: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.ReauthWindow) }},
	{"MASTHEAD_PASSWORD_MIN_LENGTH", "password-min-length", "shortest password a person may set", func(c *Config) flag.Value { return (*intValue)(&c.PasswordMinLength) }},
	{"MASTHEAD_AUTH_TOKEN_CACHE_SIZE", "auth-token-cache-size", "how many verified access tokens to remember so a repeated one skips its signature check (0: none)", func(c *Config) flag.Value { return (*intValue)(&c.TokenCacheSize) }},
	{"MASTHEAD_BCRYPT_COST", "bcrypt-cost", "bcrypt cost of password hashes (4-31)", func(c *Config) flag.Value { return (*intValue)(&c.BcryptCost) }},
	{"MASTHEAD_TOKEN_RATE_IP", "token-rate-ip", "POST /auth/v1/token limit per client IP: count/period,burst", func(c *Config) flag.Value { return (*rateValue)(&c.TokenRateIP) }},
	{"MASTHEAD_TOKEN_RATE_ACCOUNT", "token-rate-account", "password sign-in limit per client IP and email: count/period,burst", func(c *Config) flag.Value { return (*rateValue)(&c.TokenRateAccount) }},
	{"MASTHEAD_OAUTH_AUTHORIZE_RATE_IP", "oauth-authorize-rate-ip", "GET /auth/v1/oauth/authorize limit per client IP: count/period,burst", func(c *Config) flag.Value { return (*rateValue)(&c.AuthorizeRateIP) }},
	{"MASTHEAD_OAUTH_REGISTER_RATE_IP", "oauth-register-rate-ip", "POST /auth/v1/oauth/clients/register limit per client IP: count/period,burst", func(c *Config) flag.Value { return (*rateValue)(&c.RegisterRateIP) }},
	{"MASTHEAD_TOKEN_RATE_ACCOUNT_TOTAL", "token-rate-account-total", "password sign-in ceiling per email across all clients: count/period,burst", func(c *Config) flag.Value { return (*rateValue)(&c.TokenRateAccountTotal) }},
	{"MASTHEAD_TRUSTED_PROXIES", "trusted-proxies", "comma-separated CIDRs whose X-Forwarded-For is trusted", func(c *Config) flag.Value { return (*prefixesValue)(&c.TrustedProxies) }},
	{"MASTHEAD_BODY_IDLE_TIMEOUT", "body-idle-timeout", "longest pause within a request body before the request is cut: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.BodyIdleTimeout) }},
	{"MASTHEAD_BODY_MIN_RATE", "body-min-rate", "bytes a second a request body must average once the idle timeout has passed (0: no minimum)", func(c *Config) flag.Value { return (*intValue)(&c.BodyMinRate) }},
	{"MASTHEAD_REQUEST_TIMEOUT", "request-timeout", "longest time to read and answer one request: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.RequestTimeout) }},
	{"MASTHEAD_UPLOAD_TIMEOUT", "upload-timeout", "longest time for one object upload or download: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.UploadTimeout) }},
	{"MASTHEAD_MAX_CONNECTIONS", "max-connections", "most connections one instance holds open at once", func(c *Config) flag.Value { return (*intValue)(&c.MaxConnections) }},
	{"MASTHEAD_MAX_EMBEDDED_ROWS", "max-embedded-rows", "most rows the embedded resources of one /rest/v1 response may add in all", func(c *Config) flag.Value { return (*intValue)(&c.MaxEmbeddedRows) }},
	{"MASTHEAD_MAX_RESPONSE_BYTES", "max-response-bytes", "largest /rest/v1 response body in bytes", func(c *Config) flag.Value { return (*intValue)(&c.MaxResponseBytes) }},
	{"MASTHEAD_POOL_SHARE", "pool-share", "most /rest/v1 and /storage/v1 requests one caller runs against the database at once, both counted together (0: a quarter of the pool, at least 2)", func(c *Config) flag.Value { return (*intValue)(&c.PoolShare) }},
	{"MASTHEAD_POOL_SHARE_WAIT", "pool-share-wait", "how long a caller's request over their share waits before 503: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.PoolShareWait) }},
	{"MASTHEAD_DB_AGGREGATES_ENABLED", "db-aggregates-enabled", "allow aggregate functions and to-many spread embeds in /rest/v1 selects (true/false)", func(c *Config) flag.Value { return (*boolValue)(&c.DBAggregatesEnabled) }},
	{"MASTHEAD_SCHEDULER_INTERVAL", "scheduler-interval", "pause between runs of the scheduler that publishes due items: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.SchedulerInterval) }},
	{"MASTHEAD_SHUTDOWN_TIMEOUT", "shutdown-timeout", "grace period for in-flight requests on stop: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.ShutdownTimeout) }},
	{"MASTHEAD_SHUTDOWN_DRAIN", "shutdown-drain", "on stop, how long to go on serving with /readyz answering 503 before closing the listener (longer than the load balancer takes to mark the instance down): seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.ShutdownDrain) }},
	{"MASTHEAD_INSTANCES", "instances", "how many instances serve behind the load balancer; each enforces its share (1/n, rounded up) of every rate limit", func(c *Config) flag.Value { return (*intValue)(&c.Instances) }},
	{"MASTHEAD_STORAGE_DIR", "storage-dir", "folder holding bucket media when no S3 endpoint is set", func(c *Config) flag.Value { return (*stringValue)(&c.StorageDir) }},
	{"MASTHEAD_STORAGE_MAX_UPLOAD_BYTES", "storage-max-upload-bytes", "largest object one /storage/v1 upload may store, in bytes", func(c *Config) flag.Value { return (*intValue)(&c.StorageMaxUploadBytes) }},
	{"MASTHEAD_STORAGE_MAX_LIST_LIMIT", "storage-max-list-limit", "largest limit of one /storage/v1 list request", func(c *Config) flag.Value { return (*intValue)(&c.StorageMaxListLimit) }},
	{"MASTHEAD_STORAGE_MAX_BATCH", "storage-max-batch", "most object paths one /storage/v1 remove or createSignedUrls request may name", func(c *Config) flag.Value { return (*intValue)(&c.StorageMaxBatch) }},
	{"MASTHEAD_STORAGE_LOOKUP_LANES", "storage-lookup-lanes", "how many round trips of the access check in front of downloads may be in flight on one database pool; checks beyond share the next round trip", func(c *Config) flag.Value { return (*intValue)(&c.StorageLookupLanes) }},
	{"MASTHEAD_STORAGE_MAX_JSON_BYTES", "storage-max-json-bytes", "largest JSON request body of /storage/v1 (list, remove, move, copy, signing), in bytes", func(c *Config) flag.Value { return (*intValue)(&c.StorageMaxJSONBytes) }},
	{"MASTHEAD_STORAGE_SIGNED_TOKEN_CACHE_SIZE", "storage-signed-token-cache-size", "how many verified signed-URL tokens to remember so a URL opened again skips its signature check (0: none)", func(c *Config) flag.Value { return (*intValue)(&c.StorageSignedTokenCacheSize) }},
	{"MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL", "storage-max-signed-url-ttl", "longest expiresIn of a signed download URL: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.StorageMaxSignedURLTTL) }},
	{"MASTHEAD_STORAGE_SIGNED_UPLOAD_TTL", "storage-signed-upload-ttl", "how long a signed upload URL stays valid: seconds or a duration", func(c *Config) flag.Value { return (*secondsValue)(&c.StorageSignedUploadTTL) }},
	{"MASTHEAD_S3_ENDPOINT", "s3-endpoint", "S3-compatible endpoint URL for bucket media", func(c *Config) flag.Value { return (*stringValue)(&c.S3.Endpoint) }},
	{"MASTHEAD_S3_REGION", "s3-region", "S3 region", func(c *Config) flag.Value { return (*stringValue)(&c.S3.Region) }},
	{"MASTHEAD_S3_BUCKET", "s3-bucket", "S3 bucket holding the media objects", func(c *Config) flag.Value { return (*stringValue)(&c.S3.Bucket) }},
	{"MASTHEAD_S3_ACCESS_KEY", "s3-access-key", "S3 access key id (secret)", func(c *Config) flag.Value { return (*secretValue)(&c.S3.AccessKey) }},
	{"MASTHEAD_S3_SECRET_KEY", "s3-secret-key", "S3 secret key (secret; prefer the environment)", func(c *Config) flag.Value { return (*secretValue)(&c.S3.SecretKey) }},
	{"MASTHEAD_S3_PATH_STYLE", "s3-path-style", "address the bucket as <endpoint>/<bucket> (true/false)", func(c *Config) flag.Value { return (*boolValue)(&c.S3.PathStyle) }},
	{"MASTHEAD_OIDC_GOOGLE_ISSUER", "oidc-google-issuer", "OpenID Connect issuer of the Google sign-in", func(c *Config) flag.Value { return (*stringValue)(&c.OIDC[0].Issuer) }},
	{"MASTHEAD_OIDC_GOOGLE_CLIENT_ID", "oidc-google-client-id", "client id of the Google sign-in", func(c *Config) flag.Value { return (*stringValue)(&c.OIDC[0].ClientID) }},
	{"MASTHEAD_OIDC_GOOGLE_CLIENT_SECRET", "oidc-google-client-secret", "client secret of the Google sign-in (secret)", func(c *Config) flag.Value { return (*secretValue)(&c.OIDC[0].ClientSecret) }},
	{"MASTHEAD_OIDC_GITLAB_ISSUER", "oidc-gitlab-issuer", "OpenID Connect issuer of the GitLab sign-in", func(c *Config) flag.Value { return (*stringValue)(&c.OIDC[1].Issuer) }},
	{"MASTHEAD_OIDC_GITLAB_CLIENT_ID", "oidc-gitlab-client-id", "client id of the GitLab sign-in", func(c *Config) flag.Value { return (*stringValue)(&c.OIDC[1].ClientID) }},
	{"MASTHEAD_OIDC_GITLAB_CLIENT_SECRET", "oidc-gitlab-client-secret", "client secret of the GitLab sign-in (secret)", func(c *Config) flag.Value { return (*secretValue)(&c.OIDC[1].ClientSecret) }},
	{"MASTHEAD_METRICS_ADDR", "metrics-addr", "host:port serving /metrics for Prometheus, apart from the public address (empty: no metrics)", func(c *Config) flag.Value { return (*stringValue)(&c.MetricsAddr) }},
	{"MASTHEAD_LOG_FORMAT", "log-format", "log line format: text or json", func(c *Config) flag.Value { return (*formatValue)(&c.LogFormat) }},
	{"MASTHEAD_LOG_LEVEL", "log-level", "least severe level logged: debug, info, warn or error", func(c *Config) flag.Value { return (*levelValue)(&c.LogLevel) }},
}

// FromEnv starts from Default and applies every environment variable that is set and not
// empty. getenv is os.Getenv in production and a map lookup in tests.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Default()
	var errs []error
	for _, s := range settings {
		if v := getenv(s.env); v != "" {
			if err := s.value(&c).Set(v); err != nil {
				errs = append(errs, fmt.Errorf("config: %s: %w", s.env, err))
			}
		}
	}
	return c, errors.Join(errs...)
}

// LoggerFromEnv is the process's logger as MASTHEAD_LOG_FORMAT and MASTHEAD_LOG_LEVEL say,
// writing to w, for main to build before any command reads its flags. A bad value is an error
// naming the variable; the logger returned with it uses the defaults.
func LoggerFromEnv(getenv func(string) string, w io.Writer) (*slog.Logger, error) {
	c := Default()
	var errs []error
	for _, s := range settings {
		if s.env != "MASTHEAD_LOG_FORMAT" && s.env != "MASTHEAD_LOG_LEVEL" {
			continue
		}
		if v := getenv(s.env); v != "" {
			if err := s.value(&c).Set(v); err != nil {
				errs = append(errs, fmt.Errorf("config: %s: %w", s.env, err))
			}
		}
	}
	return c.Logger(w), errors.Join(errs...)
}

// Logger writes c's log format at c's level and above to w.
func (c Config) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// RegisterFlags adds one flag per setting to fs, defaulting to c's current values (which
// FromEnv filled from the environment), so a flag overrides its environment variable.
// Secrets are not shown as defaults in -h (their flag values print as empty).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	for _, s := range settings {
		v := s.value(c)
		usage := fmt.Sprintf("%s (env %s)", s.usage, s.env)
		fs.Var(v, s.flag, usage)
	}
}

// Validate reports every setting that would stop the service from working.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("config: addr %q: %w", c.Addr, err))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("config: DATABASE_URL is required"))
	}
	if !strings.HasPrefix(c.PublishableKey, "sb_publishable_") || len(c.PublishableKey) < len("sb_publishable_")+16 {
		errs = append(errs, errors.New("config: MASTHEAD_PUBLISHABLE_KEY must be sb_publishable_ followed by at least 16 characters"))
	}
	if c.JWTKeys == "" {
		errs = append(errs, errors.New("config: MASTHEAD_JWT_KEYS (a JWK set of ES256 keys) is required"))
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		errs = append(errs, fmt.Errorf("config: MASTHEAD_PUBLIC_URL %q must start with http:// or https://", c.PublicURL))
	}
	if c.JWTExp < 30*time.Second {
		errs = append(errs, errors.New("config: MASTHEAD_JWT_EXP must be at least 30 seconds"))
	}
	if c.BodyIdleTimeout <= 0 || c.RequestTimeout <= 0 || c.UploadTimeout <= 0 {
		errs = append(errs, errors.New("config: MASTHEAD_BODY_IDLE_TIMEOUT, MASTHEAD_REQUEST_TIMEOUT and MASTHEAD_UPLOAD_TIMEOUT must be positive"))
	}
	if c.BodyMinRate < 0 || c.MaxConnections < 1 {
		errs = append(errs, errors.New("config: MASTHEAD_BODY_MIN_RATE must not be negative and MASTHEAD_MAX_CONNECTIONS must be at least 1"))
	}
	if c.MaxEmbeddedRows < 1 || c.MaxResponseBytes < 1024 || c.PoolShare < 0 || c.PoolShareWait <= 0 {
		errs = append(errs, errors.New("config: MASTHEAD_MAX_EMBEDDED_ROWS must be at least 1, MASTHEAD_MAX_RESPONSE_BYTES at least 1024, MASTHEAD_POOL_SHARE not negative and MASTHEAD_POOL_SHARE_WAIT positive"))
	}
	if c.SchedulerInterval < 100*time.Millisecond {
		errs = append(errs, errors.New("config: MASTHEAD_SCHEDULER_INTERVAL must be at least 100ms"))
	}
	if c.ShutdownDrain < 0 || c.Instances < 1 {
		errs = append(errs, errors.New("config: MASTHEAD_SHUTDOWN_DRAIN must not be negative and MASTHEAD_INSTANCES must be at least 1"))
	}
	if c.ReauthWindow < 0 || c.PasswordMinLength < 6 || c.PasswordMinLength > 72 {
		errs = append(errs, errors.New("config: MASTHEAD_AUTH_REAUTH_WINDOW must not be negative and MASTHEAD_PASSWORD_MIN_LENGTH must be between 6 and 72 (bcrypt reads 72 bytes)"))
	}
	if c.TokenCacheSize < 0 || c.StorageSignedTokenCacheSize < 0 {
		errs = append(errs, errors.New("config: MASTHEAD_AUTH_TOKEN_CACHE_SIZE and MASTHEAD_STORAGE_SIGNED_TOKEN_CACHE_SIZE must not be negative"))
	}
	if c.RefreshReuseInterval < 0 {
		errs = append(errs, errors.New("config: MASTHEAD_REFRESH_REUSE_INTERVAL must not be negative"))
	}
	if c.S3.Endpoint == "" && c.StorageDir == "" {
		errs = append(errs, errors.New("config: set MASTHEAD_STORAGE_DIR or MASTHEAD_S3_ENDPOINT for bucket media"))
	}
	if c.StorageMaxUploadBytes < 1 || c.StorageMaxListLimit < 1 || c.StorageMaxBatch < 1 || c.StorageMaxJSONBytes < 1024 {
		errs = append(errs, errors.New("config: MASTHEAD_STORAGE_MAX_UPLOAD_BYTES, MASTHEAD_STORAGE_MAX_LIST_LIMIT and MASTHEAD_STORAGE_MAX_BATCH must be at least 1, MASTHEAD_STORAGE_MAX_JSON_BYTES at least 1024"))
	}
	if c.StorageLookupLanes < 1 {
		errs = append(errs, errors.New("config: MASTHEAD_STORAGE_LOOKUP_LANES must be at least 1"))
	}
	if c.StorageMaxSignedURLTTL < time.Second || c.StorageSignedUploadTTL < time.Second {
		errs = append(errs, errors.New("config: MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL and MASTHEAD_STORAGE_SIGNED_UPLOAD_TTL must be at least 1 second"))
	}
	if c.S3.Endpoint != "" && c.S3.Bucket == "" {
		errs = append(errs, errors.New("config: MASTHEAD_S3_BUCKET is required with MASTHEAD_S3_ENDPOINT"))
	}
	for _, p := range c.OIDC {
		if p.Issuer != "" && !strings.HasPrefix(p.Issuer, "https://") && !strings.HasPrefix(p.Issuer, "http://") {
			errs = append(errs, fmt.Errorf("config: the %s OpenID Connect issuer %q must be an http(s) URL", p.Label, p.Issuer))
		}
	}
	if c.DatabasePooler != "" && c.DatabasePooler != "transaction" {
		errs = append(errs, fmt.Errorf("config: MASTHEAD_DB_POOLER %q must be transaction or empty", c.DatabasePooler))
	}
	if c.DatabaseReadURL != "" && c.ReadMaxLag <= 0 {
		errs = append(errs, errors.New("config: MASTHEAD_READ_MAX_LAG must be positive"))
	}
	if c.SchemaPollInterval < 100*time.Millisecond {
		errs = append(errs, errors.New("config: MASTHEAD_SCHEMA_POLL_INTERVAL must be at least 100ms"))
	}
	if c.BcryptCost < 4 || c.BcryptCost > 31 {
		errs = append(errs, errors.New("config: MASTHEAD_BCRYPT_COST must be between 4 and 31"))
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("config: MASTHEAD_METRICS_ADDR %q must be host:port: %w", c.MetricsAddr, err))
		} else if c.MetricsAddr == c.Addr && !strings.HasSuffix(c.Addr, ":0") {
			errs = append(errs, errors.New("config: MASTHEAD_METRICS_ADDR must differ from MASTHEAD_ADDR: metrics are never served on the public address"))
		}
	}
	if c.LogFormat != LogText && c.LogFormat != LogJSON {
		errs = append(errs, fmt.Errorf("config: MASTHEAD_LOG_FORMAT %q must be text or json", c.LogFormat))
	}
	if _, ok := levelNames[c.LogLevel]; !ok {
		errs = append(errs, fmt.Errorf("config: MASTHEAD_LOG_LEVEL %q must be debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}

// ReadURLs are the read replicas' URLs, DatabaseReadURL split at its commas.
func (c Config) ReadURLs() []string {
	var out []string
	for _, u := range strings.Split(c.DatabaseReadURL, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// BaseURL is the public base URL without a trailing slash.
func (c Config) BaseURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return "http://" + c.Addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Issuer is the iss claim of access tokens, as Supabase: <base>/auth/v1.
func (c Config) Issuer() string { return c.BaseURL() + "/auth/v1" }

// Redacted lists the settings for a startup log line, with secrets replaced by whether they are set.
func (c Config) Redacted() []any {
	set := func(s string) string {
		if s == "" {
			return "unset"
		}
		return "set"
	}
	return []any{
		"addr", c.Addr, "public_url", c.BaseURL(), "database_url", set(c.DatabaseURL),
		"publishable_key", set(c.PublishableKey), "jwt_keys", set(c.JWTKeys),
		"jwt_exp", c.JWTExp.String(), "refresh_reuse_interval", c.RefreshReuseInterval.String(),
		"token_rate_ip", c.TokenRateIP.String(), "token_rate_account", c.TokenRateAccount.String(),
		"token_rate_account_total", c.TokenRateAccountTotal.String(),
		"instances", c.Instances, "shutdown_drain", c.ShutdownDrain.String(),
		"storage_dir", c.StorageDir, "s3_endpoint", c.S3.Endpoint, "s3_bucket", c.S3.Bucket,
		"oidc_google_client_secret", set(c.OIDC[0].ClientSecret), "oidc_gitlab_client_secret", set(c.OIDC[1].ClientSecret),
		"metrics_addr", c.MetricsAddr, "log_format", c.LogFormat, "log_level", levelNames[c.LogLevel],
	}
}

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string {
	if v == nil {
		return ""
	}
	return string(*v)
}

// secretValue never prints its content, so -h and flag dumps cannot leak it.
type secretValue string

func (v *secretValue) Set(s string) error { *v = secretValue(s); return nil }
func (v *secretValue) String() string     { return "" }

type boolValue bool

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not true or false", s)
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(v != nil && bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string {
	if v == nil {
		return "0"
	}
	return strconv.Itoa(int(*v))
}

// secondsValue accepts plain seconds (as GoTrue's GOTRUE_JWT_EXP=3600) or a Go duration.
type secondsValue time.Duration

func (v *secondsValue) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		*v = secondsValue(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither seconds nor a duration", s)
	}
	*v = secondsValue(d)
	return nil
}
func (v *secondsValue) String() string {
	if v == nil {
		return "0s"
	}
	return time.Duration(*v).String()
}

type rateValue Rate

func (v *rateValue) Set(s string) error {
	r, err := ParseRate(s)
	if err != nil {
		return err
	}
	*v = rateValue(r)
	return nil
}
func (v *rateValue) String() string {
	if v == nil {
		return ""
	}
	return Rate(*v).String()
}

// formatValue accepts the log formats, in any case.
type formatValue string

func (v *formatValue) Set(s string) error {
	switch f := strings.ToLower(strings.TrimSpace(s)); f {
	case LogText, LogJSON:
		*v = formatValue(f)
		return nil
	}
	return fmt.Errorf("%q is not a log format: want text or json", s)
}
func (v *formatValue) String() string {
	if v == nil {
		return ""
	}
	return string(*v)
}

// levelNames are the log levels a setting may name.
var levelNames = map[slog.Level]string{
	slog.LevelDebug: "debug", slog.LevelInfo: "info", slog.LevelWarn: "warn", slog.LevelError: "error",
}

// levelValue accepts debug, info, warn (or warning) and error, in any case.
type levelValue slog.Level

func (v *levelValue) Set(s string) error {
	name := strings.ToLower(strings.TrimSpace(s))
	if name == "warning" {
		name = "warn"
	}
	for l, n := range levelNames {
		if n == name {
			*v = levelValue(l)
			return nil
		}
	}
	return fmt.Errorf("%q is not a log level: want debug, info, warn or error", s)
}
func (v *levelValue) String() string {
	if v == nil {
		return "info"
	}
	return levelNames[slog.Level(*v)]
}

type prefixesValue []netip.Prefix

func (v *prefixesValue) Set(s string) error {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return fmt.Errorf("%q is not a CIDR: %w", part, err)
		}
		out = append(out, p)
	}
	*v = out
	return nil
}
func (v *prefixesValue) String() string {
	if v == nil {
		return ""
	}
	parts := make([]string, len(*v))
	for i, p := range *v {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}
