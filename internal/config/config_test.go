package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Rate
		wantErr bool
	}{
		{in: "150/5m,30", want: Rate{Count: 150, Per: 5 * time.Minute, Burst: 30}},
		{in: "10/1s", want: Rate{Count: 10, Per: time.Second, Burst: 10}},
		{in: " 3 / 1h , 1 ", want: Rate{Count: 3, Per: time.Hour, Burst: 1}},
		{in: "150", wantErr: true},
		{in: "0/1m", wantErr: true},
		{in: "5/forever", wantErr: true},
		{in: "5/1m,0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRate(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEnvThenFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"MASTHEAD_ADDR":                   "0.0.0.0:9000",
		"MASTHEAD_JWT_EXP":                "600",
		"MASTHEAD_REFRESH_REUSE_INTERVAL": "2s",
		"MASTHEAD_TOKEN_RATE_IP":          "5/1m,2",
		"MASTHEAD_JWT_KEYS":               `{"keys":["secret"]}`,
		"MASTHEAD_TRUSTED_PROXIES":        "10.0.0.0/8, 192.168.0.0/16",
		"MASTHEAD_S3_PATH_STYLE":          "true",
	}
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--addr", "127.0.0.1:7000", "--bcrypt-cost", "4"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7000" {
		t.Errorf("flag must override env: addr = %q", c.Addr)
	}
	if c.JWTExp != 10*time.Minute || c.RefreshReuseInterval != 2*time.Second || c.BcryptCost != 4 {
		t.Errorf("durations/ints not applied: %+v", c)
	}
	if c.TokenRateIP != (Rate{Count: 5, Per: time.Minute, Burst: 2}) {
		t.Errorf("rate = %+v", c.TokenRateIP)
	}
	if !c.S3.PathStyle {
		t.Errorf("MASTHEAD_S3_PATH_STYLE not applied")
	}
	if len(c.TrustedProxies) != 2 {
		t.Errorf("trusted proxies = %v", c.TrustedProxies)
	}
	if c.TokenRateAccount != Default().TokenRateAccount {
		t.Errorf("unset settings keep their default: %+v", c.TokenRateAccount)
	}
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if strings.Contains(help.String(), "secret\"]") {
		t.Errorf("-h shows a secret:\n%s", help.String())
	}
}

func TestFromEnvReportsBadValues(t *testing.T) {
	t.Parallel()
	env := map[string]string{"MASTHEAD_JWT_EXP": "soon", "MASTHEAD_BCRYPT_COST": "ten"}
	_, err := FromEnv(func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "MASTHEAD_JWT_EXP") || !strings.Contains(err.Error(), "MASTHEAD_BCRYPT_COST") {
		t.Fatalf("want both bad settings named, got %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	good := Default()
	good.DatabaseURL = "postgres://authenticator@/masthead"
	good.PublishableKey = "sb_publishable_0123456789abcdef"
	good.JWTKeys = `{"keys":[]}`
	good.StorageDir = "/var/lib/masthead/media"
	if err := good.Validate(); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no database", func(c *Config) { c.DatabaseURL = "" }, "DATABASE_URL"},
		{"bad key", func(c *Config) { c.PublishableKey = "anon" }, "MASTHEAD_PUBLISHABLE_KEY"},
		{"no jwt keys", func(c *Config) { c.JWTKeys = "" }, "MASTHEAD_JWT_KEYS"},
		{"bad addr", func(c *Config) { c.Addr = "8080" }, "addr"},
		{"bad public url", func(c *Config) { c.PublicURL = "example.com" }, "MASTHEAD_PUBLIC_URL"},
		{"short exp", func(c *Config) { c.JWTExp = time.Second }, "MASTHEAD_JWT_EXP"},
		{"bcrypt", func(c *Config) { c.BcryptCost = 2 }, "MASTHEAD_BCRYPT_COST"},
		{"no storage", func(c *Config) { c.StorageDir = "" }, "MASTHEAD_STORAGE_DIR"},
		{"s3 without bucket", func(c *Config) { c.S3.Endpoint = "http://127.0.0.1:9000" }, "MASTHEAD_S3_BUCKET"},
		{"scheduler spinning", func(c *Config) { c.SchedulerInterval = time.Millisecond }, "MASTHEAD_SCHEDULER_INTERVAL"},
		{"metrics addr", func(c *Config) { c.MetricsAddr = "9100" }, "MASTHEAD_METRICS_ADDR"},
		{"metrics on the public address", func(c *Config) { c.MetricsAddr = c.Addr }, "never served on the public address"},
		{"log format", func(c *Config) { c.LogFormat = "xml" }, "MASTHEAD_LOG_FORMAT"},
		{"log level", func(c *Config) { c.LogLevel = slog.LevelWarn + 1 }, "MASTHEAD_LOG_LEVEL"},
		{"no instances", func(c *Config) { c.Instances = 0 }, "MASTHEAD_INSTANCES"},
		{"negative drain", func(c *Config) { c.ShutdownDrain = -time.Second }, "MASTHEAD_SHUTDOWN_DRAIN"},
		{"no upload size", func(c *Config) { c.StorageMaxUploadBytes = 0 }, "MASTHEAD_STORAGE_MAX_UPLOAD_BYTES"},
		{"no list page", func(c *Config) { c.StorageMaxListLimit = 0 }, "MASTHEAD_STORAGE_MAX_LIST_LIMIT"},
		{"no batch", func(c *Config) { c.StorageMaxBatch = -1 }, "MASTHEAD_STORAGE_MAX_BATCH"},
		{"no lookup lane", func(c *Config) { c.StorageLookupLanes = 0 }, "MASTHEAD_STORAGE_LOOKUP_LANES"},
		{"negative token cache", func(c *Config) { c.TokenCacheSize = -1 }, "MASTHEAD_AUTH_TOKEN_CACHE_SIZE"},
		{"negative signed-token cache", func(c *Config) { c.StorageSignedTokenCacheSize = -1 }, "MASTHEAD_STORAGE_SIGNED_TOKEN_CACHE_SIZE"},
		{"tiny JSON bodies", func(c *Config) { c.StorageMaxJSONBytes = 100 }, "MASTHEAD_STORAGE_MAX_JSON_BYTES"},
		{"signed URLs that never work", func(c *Config) { c.StorageMaxSignedURLTTL = time.Millisecond }, "MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL"},
		{"signed uploads that never work", func(c *Config) { c.StorageSignedUploadTTL = 0 }, "MASTHEAD_STORAGE_SIGNED_UPLOAD_TTL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want error naming %s, got %v", tt.want, err)
			}
		})
	}
}

func TestIssuer(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, public, want string }{
		{"127.0.0.1:8080", "", "http://127.0.0.1:8080/auth/v1"},
		{":8080", "", "http://localhost:8080/auth/v1"},
		{"0.0.0.0:80", "https://masthead.example/", "https://masthead.example/auth/v1"},
	}
	for _, tt := range tests {
		c := Config{Addr: tt.addr, PublicURL: tt.public}
		if got := c.Issuer(); got != tt.want {
			t.Errorf("Issuer(%q, %q) = %q, want %q", tt.addr, tt.public, got, tt.want)
		}
	}
}

// TestDefaultBodyLimitsCutTrickles: with the defaults, a body trickled a byte every 5 s is cut
// within 30 s (the idle gap, then the minimum rate), while a phone uploading at 10 kB/s is not.
func TestDefaultBodyLimitsCutTrickles(t *testing.T) {
	t.Parallel()
	c := Default()
	if c.BodyIdleTimeout > 15*time.Second || c.BodyMinRate <= 0 || c.BodyMinRate > 10_000 {
		t.Errorf("idle %s, min rate %d B/s", c.BodyIdleTimeout, c.BodyMinRate)
	}
	// a byte per 5 s averages 0.2 B/s: under the minimum once the grace (one idle gap) is over
	if cut := c.BodyIdleTimeout + 5*time.Second; cut > 30*time.Second {
		t.Errorf("a trickle is cut only after %s", cut)
	}
}

// TestEverySettingDocumented: the README's configuration table names every variable the
// service reads, so no limit is configurable only for those who read the source.
func TestEverySettingDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// Families share a row: MASTHEAD_S3_ENDPOINT, `_REGION`, …; MASTHEAD_OIDC_GOOGLE_*.
	documentedAs := func(env string) string {
		switch {
		case strings.HasPrefix(env, "MASTHEAD_S3_") && env != "MASTHEAD_S3_ENDPOINT":
			return strings.TrimPrefix(env, "MASTHEAD_S3")
		case strings.HasPrefix(env, "MASTHEAD_OIDC_"):
			return strings.Join(strings.SplitN(env, "_", 4)[:3], "_") + "_*"
		}
		return env
	}
	for _, s := range settings {
		name := documentedAs(s.env)
		if !bytes.Contains(readme, []byte("`"+name+"`")) {
			t.Errorf("README.md does not document %s", s.env)
		}
	}
}

// TestLogSettings: MASTHEAD_LOG_FORMAT picks JSON or text lines, MASTHEAD_LOG_LEVEL drops what
// is less severe, a flag overrides either, and LoggerFromEnv (what main uses before any
// command reads its flags) applies the same two variables.
func TestLogSettings(t *testing.T) {
	t.Parallel()
	writeLines := func(log *slog.Logger) {
		log.Debug("config test: debug line")
		log.Info("config test: info line", "k", "v")
		log.Warn("config test: warn line", "k", "v")
	}
	tests := []struct {
		name      string
		env       map[string]string
		flags     []string
		json      bool
		kept      []string
		dropped   []string
		wantLevel slog.Level
	}{
		{name: "defaults: text at info", json: false, wantLevel: slog.LevelInfo,
			kept: []string{"info line", "warn line"}, dropped: []string{"debug line"}},
		{name: "json at warn", env: map[string]string{"MASTHEAD_LOG_FORMAT": "json", "MASTHEAD_LOG_LEVEL": "warn"},
			json: true, wantLevel: slog.LevelWarn, kept: []string{"warn line"}, dropped: []string{"debug line", "info line"}},
		{name: "upper case, debug", env: map[string]string{"MASTHEAD_LOG_FORMAT": "JSON", "MASTHEAD_LOG_LEVEL": "DEBUG"},
			json: true, wantLevel: slog.LevelDebug, kept: []string{"debug line", "info line", "warn line"}},
		{name: "flags override the environment", env: map[string]string{"MASTHEAD_LOG_FORMAT": "json", "MASTHEAD_LOG_LEVEL": "error"},
			flags: []string{"--log-format", "text", "--log-level", "info"}, json: false, wantLevel: slog.LevelInfo,
			kept: []string{"info line", "warn line"}, dropped: []string{"debug line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := FromEnv(func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			c.RegisterFlags(fs)
			if err := fs.Parse(tt.flags); err != nil {
				t.Fatal(err)
			}
			if c.LogLevel != tt.wantLevel {
				t.Errorf("level %v, want %v", c.LogLevel, tt.wantLevel)
			}
			var out bytes.Buffer
			writeLines(c.Logger(&out))
			if len(tt.flags) == 0 {
				// main's logger, built from the same environment, writes the same lines.
				fromEnv, err := LoggerFromEnv(func(k string) string { return tt.env[k] }, &out)
				if err != nil {
					t.Fatal(err)
				}
				writeLines(fromEnv)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			for _, l := range lines {
				var rec map[string]any
				isJSON := json.Unmarshal([]byte(l), &rec) == nil
				if isJSON != tt.json {
					t.Errorf("JSON line %v, want %v: %s", isJSON, tt.json, l)
				}
				if !tt.json && !strings.Contains(l, "k=v") {
					t.Errorf("not a text line: %s", l)
				}
			}
			for _, want := range tt.kept {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%q was dropped:\n%s", want, out.String())
				}
			}
			for _, unwanted := range tt.dropped {
				if strings.Contains(out.String(), unwanted) {
					t.Errorf("%q was logged:\n%s", unwanted, out.String())
				}
			}
		})
	}
}

// TestBadLogSettings: a log format or level outside the choices is refused naming the
// variable and the choices, by FromEnv, by the flag and by LoggerFromEnv alike.
func TestBadLogSettings(t *testing.T) {
	t.Parallel()
	env := map[string]string{"MASTHEAD_LOG_FORMAT": "xml", "MASTHEAD_LOG_LEVEL": "verbose"}
	getenv := func(k string) string { return env[k] }
	for name, err := range map[string]error{
		"FromEnv":       func() error { _, err := FromEnv(getenv); return err }(),
		"LoggerFromEnv": func() error { _, err := LoggerFromEnv(getenv, &bytes.Buffer{}); return err }(),
	} {
		for _, want := range []string{`MASTHEAD_LOG_FORMAT: "xml" is not a log format: want text or json`,
			`MASTHEAD_LOG_LEVEL: "verbose" is not a log level: want debug, info, warn or error`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: want %q, got %v", name, want, err)
			}
		}
	}
	c := Default()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--log-level", "loud"}); err == nil || !strings.Contains(err.Error(), "debug, info, warn or error") {
		t.Errorf("--log-level loud: %v", err)
	}
}

// TestRateShare: each of n instances enforces the configured rate divided by n, rounded up, so
// together they allow the configured rate (at most n-1 more), never n times it.
func TestRateShare(t *testing.T) {
	t.Parallel()
	r := Rate{Count: 150, Per: 5 * time.Minute, Burst: 30}
	tests := []struct {
		n    int
		want Rate
	}{
		{0, r},
		{1, r},
		{2, Rate{Count: 75, Per: 5 * time.Minute, Burst: 15}},
		{3, Rate{Count: 50, Per: 5 * time.Minute, Burst: 10}},
		{4, Rate{Count: 38, Per: 5 * time.Minute, Burst: 8}},
		{200, Rate{Count: 1, Per: 5 * time.Minute, Burst: 1}},
	}
	for _, tt := range tests {
		if got := r.Share(tt.n); got != tt.want {
			t.Errorf("%s shared by %d: %s, want %s", r, tt.n, got, tt.want)
		}
	}
	env := map[string]string{"MASTHEAD_INSTANCES": "3", "MASTHEAD_SHUTDOWN_DRAIN": "12"}
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil || c.Instances != 3 || c.ShutdownDrain != 12*time.Second {
		t.Errorf("from env: instances %d, drain %s, %v", c.Instances, c.ShutdownDrain, err)
	}
	if d := Default(); d.Instances != 1 || d.ShutdownDrain != 0 {
		t.Errorf("defaults: instances %d, drain %s; want 1 and 0", d.Instances, d.ShutdownDrain)
	}
}

// TestStorageLimitsFromEnv: the /storage/v1 limits are read from their variables, durations as
// seconds or Go durations, and are Supabase Storage's defaults when unset.
func TestStorageLimitsFromEnv(t *testing.T) {
	t.Parallel()
	d := Default()
	if d.StorageMaxUploadBytes != 50<<20 || d.StorageMaxBatch != 1000 || d.StorageSignedUploadTTL != 2*time.Hour {
		t.Errorf("defaults: %d bytes, %d paths, %s", d.StorageMaxUploadBytes, d.StorageMaxBatch, d.StorageSignedUploadTTL)
	}
	env := map[string]string{
		"MASTHEAD_STORAGE_MAX_UPLOAD_BYTES":   "1048576",
		"MASTHEAD_STORAGE_MAX_LIST_LIMIT":     "50",
		"MASTHEAD_STORAGE_MAX_BATCH":          "20",
		"MASTHEAD_STORAGE_MAX_JSON_BYTES":     "65536",
		"MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL": "3600",
		"MASTHEAD_STORAGE_SIGNED_UPLOAD_TTL":  "15m",
		"MASTHEAD_STORAGE_LOOKUP_LANES":       "6",
	}
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.StorageMaxUploadBytes != 1<<20 || c.StorageMaxListLimit != 50 || c.StorageMaxBatch != 20 || c.StorageMaxJSONBytes != 65536 ||
		c.StorageMaxSignedURLTTL != time.Hour || c.StorageSignedUploadTTL != 15*time.Minute || c.StorageLookupLanes != 6 {
		t.Errorf("not applied: %d %d %d %d %s %s %d", c.StorageMaxUploadBytes, c.StorageMaxListLimit, c.StorageMaxBatch,
			c.StorageMaxJSONBytes, c.StorageMaxSignedURLTTL, c.StorageSignedUploadTTL, c.StorageLookupLanes)
	}
	if _, err := FromEnv(func(k string) string { return map[string]string{"MASTHEAD_STORAGE_MAX_BATCH": "many"}[k] }); err == nil ||
		!strings.Contains(err.Error(), "MASTHEAD_STORAGE_MAX_BATCH") {
		t.Errorf("a bad value must name its variable: %v", err)
	}
}

// TestTokenCacheSize: the verified access-token and signed-URL token caches hold 10,000 tokens
// each unless MASTHEAD_AUTH_TOKEN_CACHE_SIZE / MASTHEAD_STORAGE_SIGNED_TOKEN_CACHE_SIZE say
// otherwise, and 0 (no cache) is a valid choice.
func TestTokenCacheSize(t *testing.T) {
	for _, tc := range []struct {
		env  string
		size func(Config) int
	}{
		{"MASTHEAD_AUTH_TOKEN_CACHE_SIZE", func(c Config) int { return c.TokenCacheSize }},
		{"MASTHEAD_STORAGE_SIGNED_TOKEN_CACHE_SIZE", func(c Config) int { return c.StorageSignedTokenCacheSize }},
	} {
		if got := tc.size(Default()); got != 10000 {
			t.Errorf("%s default %d", tc.env, got)
		}
		for v, want := range map[string]int{"500": 500, "0": 0} {
			c, err := FromEnv(func(k string) string { return map[string]string{tc.env: v}[k] })
			if err != nil || tc.size(c) != want {
				t.Errorf("%s=%s: %d, %v", tc.env, v, tc.size(c), err)
			}
		}
	}
}

// TestDefaultsAsDocumented: each default the README's settings table states is Default()'s.
func TestDefaultsAsDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// row is the README's table row of the setting env (its first cell names it).
	row := func(env string) string {
		for _, line := range strings.Split(string(readme), "\n") {
			if first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " | "); ok && strings.HasPrefix(line, "| ") &&
				strings.Contains(first, "`"+env+"`") {
				return line
			}
		}
		return ""
	}
	d := Default()
	for _, tc := range []struct {
		env, says string
		holds     bool
	}{
		{"DATABASE_DIRECT_URL", "`MASTHEAD_SCHEMA_POLL_INTERVAL` (default 10 s)", d.SchemaPollInterval == 10*time.Second},
		{"DATABASE_READ_URL", "`MASTHEAD_READ_MAX_LAG` (default 1 s)", d.ReadMaxLag == time.Second},
		{"MASTHEAD_ADDR", "(default `127.0.0.1:8080`)", d.Addr == "127.0.0.1:8080"},
		{"MASTHEAD_JWT_EXP", "(default 3600 s)", d.JWTExp == time.Hour},
		{"MASTHEAD_REFRESH_REUSE_INTERVAL", "(default 10 s)", d.RefreshReuseInterval == 10*time.Second},
		{"MASTHEAD_BCRYPT_COST", "default 10)", d.BcryptCost == 10},
		{"MASTHEAD_AUTH_REAUTH_WINDOW", "(default 10 min;", d.ReauthWindow == 10*time.Minute},
		{"MASTHEAD_PASSWORD_MIN_LENGTH", "default 8,", d.PasswordMinLength == 8},
		{"MASTHEAD_AUTH_TOKEN_CACHE_SIZE", "(default 10000;", d.TokenCacheSize == 10000},
		{"MASTHEAD_OAUTH_REGISTER_RATE_IP", "(default `20/1h,20`)", d.RegisterRateIP == Rate{Count: 20, Per: time.Hour, Burst: 20}},
		{"MASTHEAD_BODY_IDLE_TIMEOUT", "(default 10 s)", d.BodyIdleTimeout == 10*time.Second},
		{"MASTHEAD_BODY_MIN_RATE", "(default 512)", d.BodyMinRate == 512},
		{"MASTHEAD_REQUEST_TIMEOUT", "(default 2 min)", d.RequestTimeout == 2*time.Minute},
		{"MASTHEAD_UPLOAD_TIMEOUT", "(default 15 min)", d.UploadTimeout == 15*time.Minute},
		{"MASTHEAD_MAX_CONNECTIONS", "(default 4096)", d.MaxConnections == 4096},
		{"MASTHEAD_MAX_EMBEDDED_ROWS", "(default 20000;", d.MaxEmbeddedRows == 20000},
		{"MASTHEAD_MAX_RESPONSE_BYTES", "(default 10 MiB;", d.MaxResponseBytes == 10<<20},
		{"MASTHEAD_POOL_SHARE_WAIT", "(default 2 s)", d.PoolShareWait == 2*time.Second},
		{"MASTHEAD_SCHEDULER_INTERVAL", "(default 5 s,", d.SchedulerInterval == 5*time.Second},
		{"MASTHEAD_SHUTDOWN_DRAIN", "(default 0: at once", d.ShutdownDrain == 0},
		{"MASTHEAD_INSTANCES", "(default 1)", d.Instances == 1},
		{"MASTHEAD_METRICS_ADDR", "(default empty: no metrics", d.MetricsAddr == ""},
		{"MASTHEAD_LOG_FORMAT", "`text` (default", d.LogFormat == LogText},
		{"MASTHEAD_LOG_LEVEL", "`info` (default)", d.LogLevel == slog.LevelInfo},
		{"MASTHEAD_STORAGE_MAX_UPLOAD_BYTES", "(default 50 MiB;", d.StorageMaxUploadBytes == 50<<20},
		{"MASTHEAD_STORAGE_MAX_LIST_LIMIT", "(default 1000;", d.StorageMaxListLimit == 1000},
		{"MASTHEAD_STORAGE_MAX_BATCH", "(default 1000;", d.StorageMaxBatch == 1000},
		{"MASTHEAD_STORAGE_MAX_JSON_BYTES", "(default 2 MiB;", d.StorageMaxJSONBytes == 2<<20},
		{"MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL", "(default 604800 s, a week;", d.StorageMaxSignedURLTTL == 7*24*time.Hour},
		{"MASTHEAD_STORAGE_SIGNED_UPLOAD_TTL", "(default 2 h)", d.StorageSignedUploadTTL == 2*time.Hour},
		{"MASTHEAD_STORAGE_LOOKUP_LANES", "(default 2)", d.StorageLookupLanes == 2},
	} {
		r := row(tc.env)
		if !strings.Contains(r, tc.says) {
			t.Errorf("README's row of %s does not say %q: %q", tc.env, tc.says, r)
		}
		if !tc.holds {
			t.Errorf("Default() does not hold %s %s", tc.env, tc.says)
		}
	}
}
