package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/auth"
	"masthead/internal/pg"
)

func TestCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	svc := e.Server.Auth()
	req := func(authz string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/rest/v1/publications", nil)
		r.Header.Set("apikey", e.Key)
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		return r
	}

	t.Run("anon", func(t *testing.T) {
		for _, authz := range []string{"", "Bearer " + e.Key, "bearer " + e.Key} {
			c, err := svc.Caller(req(authz))
			if err != nil || c.Role != pg.RoleAnon {
				t.Fatalf("Authorization %q: caller %+v, err %v; want anon", authz, c, err)
			}
		}
	})

	t.Run("user, with the claims exactly as signed", func(t *testing.T) {
		c, err := svc.Caller(req("Bearer " + s.access))
		if err != nil {
			t.Fatal(err)
		}
		if c.Role != pg.RoleAuthenticated {
			t.Fatalf("role = %s", c.Role)
		}
		_, claims := jwtParts(t, s.access)
		var got map[string]any
		if err := json.Unmarshal(c.Claims, &got); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(claims)
		have, _ := json.Marshal(got)
		if string(want) != string(have) {
			t.Fatalf("claims differ from the token:\n%s\n%s", have, want)
		}
		// The database sees the same identity: auth.uid(), auth.jwt() and auth.role().
		var uid, email, role string
		err = pg.WithCaller(context.Background(), e.DB.Pool, c, pg.ReadOnly, func(tx pgx.Tx) error {
			return tx.QueryRow(context.Background(),
				`select auth.uid()::text, auth.jwt() ->> 'email', auth.role()`).Scan(&uid, &email, &role)
		})
		if err != nil {
			t.Fatal(err)
		}
		if uid != e.user.ID || email != e.user.Email || role != "authenticated" {
			t.Fatalf("database sees uid %s email %s role %s", uid, email, role)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, authz := range []string{"Basic YTpi", "Bearer", "Bearer garbage", "Token " + s.access} {
			if _, err := svc.Caller(req(authz)); !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("Authorization %q: err = %v, want ErrInvalidToken", authz, err)
			}
		}
	})

	t.Run("revoked session", func(t *testing.T) {
		other := e.signIn(t, e.user.Email, e.user.Password)
		if res := e.do(t, request{path: "/auth/v1/logout?scope=local", bearer: other.access}); res.status != http.StatusNoContent {
			t.Fatalf("logout: %d %s", res.status, res.raw)
		}
		// The signature is still good, so Caller accepts it; the database refuses the ended
		// session as the caller's transaction starts, and every surface answers 401.
		c, err := svc.Caller(req("Bearer " + other.access))
		if err != nil {
			t.Fatal(err)
		}
		err = pg.WithCaller(context.Background(), e.DB.Pool, c, pg.ReadOnly, func(pgx.Tx) error { return nil })
		if !errors.Is(err, pg.ErrSessionEnded) {
			t.Fatalf("transaction as a signed-out session: %v, want pg.ErrSessionEnded", err)
		}
		res := e.do(t, request{method: http.MethodGet, path: "/rest/v1/channels?select=slug", bearer: other.access})
		if res.status != http.StatusUnauthorized || !strings.Contains(string(res.raw), "PGRST301") ||
			!strings.Contains(res.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("REST with a signed-out session: %d %s %v", res.status, res.raw, res.header)
		}
		if res := e.do(t, request{method: http.MethodGet, path: "/storage/v1/object/authenticated/media/x/y.png", bearer: other.access}); res.status != http.StatusUnauthorized {
			t.Fatalf("storage with a signed-out session: %d %s", res.status, res.raw)
		}
		if res := e.do(t, request{method: http.MethodGet, path: "/rest/v1/channels?select=slug&slug=eq.x", bearer: s.access,
			headers: map[string]string{"Accept": "application/vnd.pgrst.object+json"}}); res.status != http.StatusOK {
			t.Fatalf("the other session must still work: %d %s", res.status, res.raw)
		}
	})
}
