package auth_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"masthead/internal/config"
	"masthead/internal/pg/pgtest"
	"masthead/internal/server/servertest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// env is one running service with a signed-up user.
type env struct {
	*servertest.Env
	user servertest.User
}

func newEnv(t testing.TB, change func(*config.Config)) *env {
	t.Helper()
	e := servertest.New(t, change)
	return &env{Env: e, user: e.CreateUser(t, "ada@northwind.test", "correct horse battery")}
}

// request is one HTTP call; apikey is sent unless noKey.
type request struct {
	method  string
	path    string
	json    any        // marshalled as the body unless nil
	form    url.Values // sent form-encoded unless nil
	raw     string     // sent as a JSON body verbatim unless empty
	bearer  string
	noKey   bool
	key     string // overrides the apikey sent
	headers map[string]string
}

// response is what came back; body is the decoded JSON object (nil when empty).
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (e *env) do(t testing.TB, r request) response {
	t.Helper()
	var body io.Reader
	ctype := ""
	switch {
	case r.form != nil:
		body, ctype = strings.NewReader(r.form.Encode()), "application/x-www-form-urlencoded"
	case r.raw != "":
		body, ctype = strings.NewReader(r.raw), "application/json"
	case r.json != nil:
		b, err := json.Marshal(r.json)
		if err != nil {
			t.Fatal(err)
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, e.URL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if !r.noKey {
		key := e.Key
		if r.key != "" {
			key = r.key
		}
		req.Header.Set("apikey", key)
	}
	if r.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.bearer)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := response{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %s", method, r.path, raw)
		}
	}
	return out
}

// session is the useful part of a token response.
type session struct {
	access, refresh string
}

func (e *env) signIn(t testing.TB, email, password string) session {
	t.Helper()
	res := e.do(t, request{path: "/auth/v1/token?grant_type=password", json: map[string]string{"email": email, "password": password}})
	if res.status != http.StatusOK {
		t.Fatalf("sign in %s: %d %s", email, res.status, res.raw)
	}
	return session{access: res.body["access_token"].(string), refresh: res.body["refresh_token"].(string)}
}

func (e *env) refresh(t testing.TB, token string) response {
	t.Helper()
	return e.do(t, request{path: "/auth/v1/token?grant_type=refresh_token", json: map[string]string{"refresh_token": token}})
}

// wantError checks a GoTrue error in the initial format.
func wantError(t testing.TB, res response, status int, code string) {
	t.Helper()
	if res.status != status {
		t.Fatalf("status = %d, want %d (body %s)", res.status, status, res.raw)
	}
	if got := res.body["error_code"]; got != code {
		t.Fatalf("error_code = %v, want %s (body %s)", got, code, res.raw)
	}
	if got := res.body["code"]; got != float64(status) {
		t.Fatalf("code = %v, want %d", got, status)
	}
	if msg, _ := res.body["msg"].(string); msg == "" {
		t.Fatalf("no msg in %s", res.raw)
	}
	if got := res.header.Get("x-sb-error-code"); got != code {
		t.Fatalf("x-sb-error-code = %q, want %s", got, code)
	}
}

// jwtParts decodes a compact JWT's header and claims without verifying it.
func jwtParts(t testing.TB, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWT: %q", token)
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	return header, claims
}
