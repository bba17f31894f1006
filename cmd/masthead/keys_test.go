package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"masthead/handlers"
	"masthead/internal/auth"
	"masthead/internal/config"
	"masthead/internal/pg/pgtest"
	"masthead/internal/seed"
	"masthead/internal/storage"
)

// keysIO runs `masthead keys args…` with stdin and returns stdout.
func keysIO(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := runKeys(args, strings.NewReader(stdin), &out); err != nil {
		t.Fatalf("masthead keys %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// jwtSet is the MASTHEAD_JWT_KEYS value of a generated env file.
func jwtSet(t *testing.T, envFile string) string {
	t.Helper()
	set, ok := parseEnvFile(t, envFile)[jwtKeysVar]
	if !ok {
		t.Fatalf("no %s line in:\n%s", jwtKeysVar, envFile)
	}
	return set
}

func kids(t *testing.T, set string) []string {
	t.Helper()
	var s struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(set), &s); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range s.Keys {
		out = append(out, k.Kid)
	}
	return out
}

func signingKID(t *testing.T, set string) string {
	t.Helper()
	ks, err := auth.ParseKeySet([]byte(set))
	if err != nil {
		t.Fatal(err)
	}
	return ks.SigningKID()
}

// TestKeysGenerate: generate writes an env file the service's config accepts as it is: a
// publishable key and a set of one ES256 private key with a kid, which signs; every run makes
// new keys; --out writes a file only its owner can read and never overwrites one.
func TestKeysGenerate(t *testing.T) {
	t.Parallel()
	first, second := keysIO(t, "", "generate"), keysIO(t, "", "generate")
	env := parseEnvFile(t, first)
	env["DATABASE_URL"], env["MASTHEAD_STORAGE_DIR"] = "postgres://authenticator@db/masthead", t.TempDir()
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the service refuses a generated env file: %v", err)
	}
	ks, err := auth.ParseKeySet([]byte(cfg.JWTKeys))
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal([]byte(cfg.JWTKeys), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("want one key, got %s (%v)", cfg.JWTKeys, err)
	}
	k := set.Keys[0]
	if k["alg"] != "ES256" || k["crv"] != "P-256" || k["kid"] != ks.SigningKID() || k["d"] == nil {
		t.Errorf("generated key %v: want an ES256 P-256 private key whose kid signs", k["kid"])
	}
	// systemd's EnvironmentFile= and docker's --env-file read a line the same way only when its
	// value is unquoted and holds no blank or backslash.
	for _, line := range strings.Split(strings.TrimSpace(first), "\n") {
		if !strings.HasPrefix(line, "#") && !regexp.MustCompile(`^[A-Z_]+=[^\s\\'"][^\s\\]*$`).MatchString(line) {
			t.Errorf("env line %.60q… is not read alike by systemd and docker", line)
		}
	}
	if other := parseEnvFile(t, second); other["MASTHEAD_PUBLISHABLE_KEY"] == env["MASTHEAD_PUBLISHABLE_KEY"] || other[jwtKeysVar] == env[jwtKeysVar] {
		t.Error("two runs of generate made the same keys")
	}

	path := filepath.Join(t.TempDir(), "masthead.env")
	msg := keysIO(t, "", "generate", "--out", path)
	if !strings.Contains(msg, ks2kid(t, path)) || strings.Contains(msg, "sb_publishable_") || strings.Contains(msg, `"d"`) {
		t.Errorf("generate --out said %q: want the kid and no secret", msg)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("generate --out: mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	before, _ := os.ReadFile(path)
	err = runKeys([]string{"generate", "--out", path}, nil, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), "keys add --file") {
		t.Fatalf("generate over an existing file: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("generate changed an existing file")
	}
}

func ks2kid(t *testing.T, envPath string) string {
	t.Helper()
	b, err := os.ReadFile(envPath)
	if err != nil {
		t.Fatal(err)
	}
	return signingKID(t, jwtSet(t, string(b)))
}

// TestKeysRotateEnvFile: add, promote and retire on the env file in place change only the
// MASTHEAD_JWT_KEYS line (comments and the publishable key stay as they were), keep the file's
// mode, and do what they say: add appends a key that does not sign, promote makes it sign,
// retire drops the old one. The same steps on bare JSON through stdin and stdout agree.
func TestKeysRotateEnvFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "masthead.env")
	keysIO(t, "", "generate", "--out", path)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	read := func() (string, []string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var other []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, jwtKeysVar+"=") {
				other = append(other, l)
			}
		}
		return jwtSet(t, string(b)), other
	}
	set0, rest0 := read()
	old := signingKID(t, set0)

	msg := keysIO(t, "", "add", "--file", path)
	set1, rest := read()
	ks := kids(t, set1)
	if len(ks) != 2 || ks[0] != old || signingKID(t, set1) != old {
		t.Fatalf("after add: kids %v, signer %s; want [%s new], %s still signing", ks, signingKID(t, set1), old, old)
	}
	added := ks[1]
	if !strings.Contains(msg, "added "+added) || !strings.Contains(msg, "keys promote "+added) {
		t.Errorf("add said %q", msg)
	}
	if strings.Join(rest, "\n") != strings.Join(rest0, "\n") {
		t.Errorf("add changed other lines:\n%s\nwas\n%s", strings.Join(rest, "\n"), strings.Join(rest0, "\n"))
	}

	keysIO(t, "", "promote", added, "--file", path)
	set2, _ := read()
	if signingKID(t, set2) != added || len(kids(t, set2)) != 2 {
		t.Fatalf("after promote: signer %s of %v, want %s", signingKID(t, set2), kids(t, set2), added)
	}
	if msg := keysIO(t, "", "promote", "--file", path, added); !strings.Contains(msg, "already signs") {
		t.Errorf("promoting the signer again said %q", msg)
	}

	keysIO(t, "", "retire", old, "--file", path)
	set3, rest := read()
	if got := kids(t, set3); len(got) != 1 || got[0] != added {
		t.Fatalf("after retire: %v, want [%s]", got, added)
	}
	if strings.Join(rest, "\n") != strings.Join(rest0, "\n") {
		t.Error("rotation changed the file's other lines")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode after rotation %v, want 0640 as before", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("rotation left files behind: %v", entries)
	}
	if os.Geteuid() == 0 { // root can hand the file to another owner, as /etc/masthead has
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		keysIO(t, "", "add", "--file", path)
		if st, _ := os.Stat(path); st.Sys().(*syscall.Stat_t).Uid != 65534 || st.Sys().(*syscall.Stat_t).Gid != 65534 {
			t.Errorf("rotation changed the file's owner to %d:%d", st.Sys().(*syscall.Stat_t).Uid, st.Sys().(*syscall.Stat_t).Gid)
		}
	}

	// The same on bare JSON, stdin to stdout: the output is the set alone, one line.
	j1 := keysIO(t, set0, "add")
	if !strings.HasSuffix(j1, "}\n") || strings.Count(j1, "\n") != 1 || len(kids(t, j1)) != 2 || signingKID(t, j1) != old {
		t.Fatalf("add on stdin: %q", j1)
	}
	list := keysIO(t, j1, "list")
	for _, want := range []string{old + "  signs new tokens, verifies", kids(t, j1)[1] + "  verifies"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, `"d"`) || strings.Contains(list, `"x"`) {
		t.Errorf("list printed key material:\n%s", list)
	}
}

// TestKeysRefusals: every refusal says what is wrong and what to do, in the operator's words
// (no Go package prefixes), and leaves the file as it was.
func TestKeysRefusals(t *testing.T) {
	t.Parallel()
	set := jwtSet(t, keysIO(t, "", "generate"))
	signer := signingKID(t, set)
	two := keysIO(t, set, "add")
	// A set whose second key is public only (a retired key kept to verify).
	var s struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal([]byte(two), &s); err != nil {
		t.Fatal(err)
	}
	delete(s.Keys[1], "d")
	publicOnly, _ := json.Marshal(s)
	pubKID := s.Keys[1]["kid"].(string)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rk, _ := jwk.Import(rsaKey)
	_ = rk.Set(jwk.KeyIDKey, "r1")
	rsaJSON, _ := json.Marshal(map[string]any{"keys": []any{rk}})

	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"no command", "", nil, "usage: masthead keys <command>"},
		{"unknown command", "", []string{"rotate"}, `unknown keys command "rotate"`},
		{"promote without a kid", two, []string{"promote"}, "name the key: masthead keys promote <kid>"},
		{"two kids", two, []string{"retire", "a", "b"}, "one kid at a time"},
		{"unknown kid", two, []string{"promote", "nope"}, `no key "nope" in the set; its kids are ` + signer},
		{"retire the signer", two, []string{"retire", signer}, "signs new tokens, so it cannot be retired: add and promote another key first"},
		{"promote a public key", string(publicOnly), []string{"promote", pubKID}, "holds only a public key"},
		{"empty input", "  \n", []string{"add"}, "stdin is empty"},
		{"not a set", "hello\n", []string{"list"}, "neither a JWK set"},
		{"env without the line", "MASTHEAD_PUBLISHABLE_KEY=x\n", []string{"add"}, "with a MASTHEAD_JWT_KEYS= line"},
		{"double quotes", "MASTHEAD_JWT_KEYS=\"" + set + "\"\n", []string{"add"}, "unquoted or in single quotes"},
		{"twice", "MASTHEAD_JWT_KEYS=" + set + "\nMASTHEAD_JWT_KEYS=" + set + "\n", []string{"list"}, "sets MASTHEAD_JWT_KEYS twice (lines 1 and 2)"},
		{"RSA", string(rsaJSON), []string{"add"}, `stdin: JWK "r1" is not an EC P-256 key`},
		{"empty keys", `{"keys":[]}`, []string{"add"}, `non-empty "keys" array`},
		{"missing file", "", []string{"list", "--file", "/nonexistent/masthead.env"}, "open /nonexistent/masthead.env: no such file or directory"},
		{"stray argument", two, []string{"add", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runKeys(tt.args, strings.NewReader(tt.stdin), &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "auth:") || strings.Contains(err.Error(), "jwk.") {
				t.Errorf("internal prefix in %q", err)
			}
		})
	}

	// Through main, as an operator sees it: one line on stderr, exit 1, the file untouched.
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(two), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd("keys", "retire", signer, "--file", path)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "masthead keys: key "+signer+" signs new tokens") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != two {
		t.Error("a refused retire changed the file")
	}
}

// TestKeyRotationKeepsTokens is the documented rotation, step by step, with the identity
// service issuing real tokens and auth's verifier checking them as each instance would: a
// token signed before the rotation verifies after add and after promote, on instances that
// run either set, and stops verifying only when its key is retired; a token signed by the
// promoted key verifies on instances still running the added set (why add is rolled out
// before promote) but not on ones that never got it. Refresh tokens live in the database, so
// a session outlives the key that signed its first access token.
func TestKeyRotationKeepsTokens(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	const email, password, issuer = "rotation@masthead.test", "long-enough", "https://masthead.example.test/auth/v1"
	if _, err := seed.CreateUser(ctx, db.OwnerURL, email, password, 0, 0, "", ""); err != nil {
		t.Fatal(err)
	}
	instance := func(set string) *auth.Service {
		t.Helper()
		ks, err := auth.ParseKeySet([]byte(set))
		if err != nil {
			t.Fatal(err)
		}
		svc, err := auth.New(db.Pool, auth.Options{Issuer: issuer, PublishableKey: "sb_publishable_rotationrotationrotation",
			Keys: ks, AccessTTL: time.Hour, ReuseInterval: 10 * time.Second, BcryptCost: 4}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	signIn := func(set string) *auth.TokenResponse {
		t.Helper()
		tok, err := instance(set).PasswordGrant(ctx, email, password, auth.Client{IP: "192.0.2.1"})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	verifies := func(set, token string) error {
		t.Helper()
		ks, err := auth.ParseKeySet([]byte(set))
		if err != nil {
			t.Fatal(err)
		}
		_, err = auth.NewVerifier(ks, issuer).Verify(token)
		return err
	}
	kidOf := func(token string) string {
		t.Helper()
		hdr, _, _ := strings.Cut(token, ".")
		b, err := base64.RawURLEncoding.DecodeString(hdr)
		var h struct {
			Kid string `json:"kid"`
		}
		if err != nil || json.Unmarshal(b, &h) != nil {
			t.Fatalf("token header %q", hdr)
		}
		return h.Kid
	}

	s0 := jwtSet(t, keysIO(t, "", "generate"))
	k1 := signingKID(t, s0)
	before := signIn(s0)
	if kidOf(before.AccessToken) != k1 {
		t.Fatalf("token signed by %s, want %s", kidOf(before.AccessToken), k1)
	}

	s1 := keysIO(t, s0, "add")
	k2 := kids(t, s1)[1]
	if signingKID(t, s1) != k1 {
		t.Fatal("an added key signs before it is promoted")
	}
	if kidOf(signIn(s1).AccessToken) != k1 {
		t.Fatal("an instance running the added set signs with the new key")
	}
	if err := verifies(s1, before.AccessToken); err != nil {
		t.Fatalf("after add, the earlier token: %v", err)
	}

	s2 := keysIO(t, s1, "promote", k2)
	if err := verifies(s2, before.AccessToken); err != nil {
		t.Fatalf("after promote, the earlier token: %v", err)
	}
	after := signIn(s2)
	if kidOf(after.AccessToken) != k2 {
		t.Fatalf("after promote, tokens are signed by %s, want %s", kidOf(after.AccessToken), k2)
	}
	if err := verifies(s1, after.AccessToken); err != nil {
		t.Fatalf("an instance not yet running the promoted set refuses the new key's token: %v", err)
	}
	if err := verifies(s0, after.AccessToken); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("an instance that never got the added key: %v, want an invalid token (so add must be rolled out first)", err)
	}

	s3 := keysIO(t, s2, "retire", k1)
	if err := verifies(s3, before.AccessToken); !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), "unknown kid") {
		t.Fatalf("after retire, the retired key's token: %v, want unknown kid", err)
	}
	if err := verifies(s3, after.AccessToken); err != nil {
		t.Fatalf("after retire, the promoted key's token: %v", err)
	}
	refreshed, err := instance(s3).RefreshGrant(ctx, before.RefreshToken, auth.Client{IP: "192.0.2.1"})
	if err != nil {
		t.Fatalf("the session begun before the rotation cannot refresh after it: %v", err)
	}
	if err := verifies(s3, refreshed.AccessToken); err != nil || kidOf(refreshed.AccessToken) != k2 {
		t.Fatalf("refreshed token: kid %s, %v", kidOf(refreshed.AccessToken), err)
	}
}

// TestRotationChangesDerivedKeys pins what the README says a rotation step does not keep:
// `serve` derives the dashboard's cookie keys and the storage signed-URL key from the whole
// MASTHEAD_JWT_KEYS value, so every step (add, promote, retire) changes both. When they come
// from a secret of their own, change the README's production section and this test.
func TestRotationChangesDerivedKeys(t *testing.T) {
	t.Parallel()
	s0 := jwtSet(t, keysIO(t, "", "generate"))
	s1 := keysIO(t, s0, "add")
	s2 := keysIO(t, s1, "promote", kids(t, s1)[1])
	s3 := keysIO(t, s2, "retire", kids(t, s1)[0])
	sets := []string{s0, strings.TrimSpace(s1), strings.TrimSpace(s2), strings.TrimSpace(s3)}
	for i := 1; i < len(sets); i++ {
		before, err := handlers.SessionKeysFrom([]byte(sets[i-1]))
		if err != nil {
			t.Fatal(err)
		}
		after, err := handlers.SessionKeysFrom([]byte(sets[i]))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(before[0], after[0]) || bytes.Equal(storage.DeriveSigningKey(sets[i-1]), storage.DeriveSigningKey(sets[i])) {
			t.Fatalf("step %d kept the derived keys: update the README's rotation caveat", i)
		}
	}
}

// TestParseInterleavedDashKids: a kid is base64url, so one in 64 begins with '-'; wherever it
// stands among the flags it is the positional argument, never an unknown flag (TestKeysRotateEnvFile
// met such a kid after --file by chance and failed).
func TestParseInterleavedDashKids(t *testing.T) {
	const kid = "-rjmXKaiuACS3IRw4GNdkqRAV0jmt2ro6i_5oHt6hIg"
	for _, tc := range []struct {
		args     []string
		file     string
		pos      []string
		dryRun   bool
		badFlags bool
	}{
		{args: []string{kid, "--file", "f"}, file: "f", pos: []string{kid}},
		{args: []string{"--file", "f", kid}, file: "f", pos: []string{kid}},
		{args: []string{"--file=f", kid}, file: "f", pos: []string{kid}},
		{args: []string{"-file", "f", kid, "--dry-run"}, file: "f", pos: []string{kid}, dryRun: true},
		{args: []string{"--file", "-f", kid}, file: "-f", pos: []string{kid}},
		{args: []string{"--", "--file", kid}, pos: []string{"--file", kid}},
		{args: []string{"--file", "f", "plain"}, file: "f", pos: []string{"plain"}},
		{args: []string{"--file"}, badFlags: true},
	} {
		fs := flag.NewFlagSet("promote", flag.ContinueOnError)
		file := fs.String("file", "", "")
		dryRun := fs.Bool("dry-run", false, "")
		pos, err := parseInterleaved(fs, tc.args, io.Discard)
		if tc.badFlags {
			if !errors.Is(err, errBadFlags) {
				t.Errorf("%q: err %v, want bad flags", tc.args, err)
			}
			continue
		}
		if err != nil || *file != tc.file || *dryRun != tc.dryRun || strings.Join(pos, " ") != strings.Join(tc.pos, " ") {
			t.Errorf("%q: file %q, dry-run %v, positionals %q, err %v; want %q, %v, %q", tc.args, *file, *dryRun, pos, err, tc.file, tc.dryRun, tc.pos)
		}
	}
}
