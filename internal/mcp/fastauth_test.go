package mcp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"masthead/internal/client"
	"masthead/internal/mcp"
)

// TestFastPathAuthAndRLS: the fast path answers only after the token is checked, and every
// row it returns came through REST under the caller's row-level security. A tampered token,
// an expired one (validly signed) and none at all are refused with 401 before it runs; a
// token whose session ended is refused by REST, which the fast path reports as the tool error
// asking to reconnect; a member of another project sees none of northwind's rows in any read
// tool, each answered by the fast path, and a northwind publication is "not found". Checked
// on a server of its own (to count fast answers) and on the service's own /mcp, whose REST
// requests are handed over in process.
func TestFastPathAuthAndRLS(t *testing.T) {
	s := newStack(t)
	m := s.mcpServer(t)
	var fast atomic.Int64
	mcp.OnFast(m, func() { fast.Add(1) })
	own := s.serve(t, m)

	post := func(base, token, tool, args string) (int, http.Header, string) {
		t.Helper()
		res, b := send(t, rpcRequest(base, token,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`))
		return res.StatusCode, res.Header, string(b)
	}

	good := s.token(t, "editor")
	for name, token := range map[string]string{
		"no token":       "",
		"tampered token": good[:len(good)-4] + "AAAA",
		"expired token":  resign(t, s, good, time.Now().Add(-2*time.Hour)),
	} {
		for _, base := range []string{own, s.url + "/mcp"} {
			before := fast.Load()
			status, h, body := post(base, token, "list_projects", `{}`)
			if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer ") ||
				strings.Contains(body, "northwind") || fast.Load() != before {
				t.Errorf("%s at %s: %d %q %s (fast answers %d)", name, base, status, h.Get("WWW-Authenticate"), body, fast.Load()-before)
			}
		}
	}

	// Re-signed to expire later instead, the same token is accepted: the expired one was refused
	// for its age, not its signature.
	if status, _, body := post(own, resign(t, s, good, time.Now().Add(time.Hour)), "list_projects", `{}`); status != http.StatusOK ||
		!strings.Contains(body, "northwind") {
		t.Errorf("re-signed token: %d %s", status, body)
	}

	ended := s.token(t, "viewer")
	if err := s.api.Logout(t.Context(), ended, client.LogoutGlobal); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{own, s.url + "/mcp"} {
		before := fast.Load()
		status, _, body := post(base, ended, "search_publications", `{}`)
		if status != http.StatusOK || !strings.Contains(body, `"isError":true`) ||
			!strings.Contains(body, "Reconnect Masthead to sign in again") || strings.Contains(body, "Harbour") {
			t.Errorf("signed out at %s: %d %s", base, status, body)
		}
		if base == own && fast.Load() != before+1 {
			t.Errorf("signed out: the fast path did not answer")
		}
	}

	other := s.token(t, "editorB")
	for _, base := range []string{own, s.url + "/mcp"} {
		for _, c := range []struct{ tool, args string }{
			{"list_projects", `{}`},
			{"search_publications", `{}`},
			{"search_publications", `{"project":"northwind"}`},
			{"search_publications", `{"project":"` + s.projA + `","text":"harbour"}`},
			{"search_publications", `{"text":"tide"}`},
			{"review_queue", `{}`},
			{"list_schedule", `{}`},
		} {
			before := fast.Load()
			status, _, body := post(base, other, c.tool, c.args)
			if status != http.StatusOK || strings.Contains(body, `"isError":true`) {
				t.Errorf("%s %s at %s: %d %s", c.tool, c.args, base, status, body)
			}
			for _, title := range []string{"northwind", "Northwind", "Harbour reopens", "Tide tables", "Ferry strike ends", "Lighthouse gala", s.projA} {
				if strings.Contains(body, title) {
					t.Errorf("%s %s at %s shows another tenant's %q: %s", c.tool, c.args, base, title, body)
				}
			}
			if base == own && fast.Load() != before+1 {
				t.Errorf("%s %s: the fast path did not answer", c.tool, c.args)
			}
		}
		status, _, body := post(base, other, "get_publication", `{"publication_id":"`+s.pubs["Tide tables"]+`"}`)
		if status != http.StatusOK || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "Not found") ||
			strings.Contains(body, "Tide") {
			t.Errorf("get_publication of northwind's at %s: %d %s", base, status, body)
		}
	}
	// The same calls as a member of northwind do see its rows: the checks above are not vacuous.
	if _, _, body := post(own, good, "search_publications", `{"project":"northwind"}`); !strings.Contains(body, "Tide tables") {
		t.Errorf("northwind's editor does not see its publications: %s", body)
	}
}

// resign re-signs token's claims with the service's own key, expiring at exp: a genuine token
// in every respect but its age.
func resign(t *testing.T, s *stack, token string, exp time.Time) string {
	t.Helper()
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	claims["iat"], claims["exp"] = exp.Add(-time.Hour).Unix(), exp.Unix()
	payload, err = json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	set, err := jwk.Parse([]byte(s.env.Config.JWTKeys))
	if err != nil {
		t.Fatal(err)
	}
	key, ok := set.Key(0)
	if !ok {
		t.Fatal("no signing key")
	}
	kid, _ := key.KeyID()
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, kid); err != nil {
		t.Fatal(err)
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		t.Fatal(err)
	}
	out, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out, []byte(token)) {
		t.Fatal("re-signing changed nothing")
	}
	return string(out)
}
