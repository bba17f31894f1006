package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
		if _, err := svc.Caller(req("Bearer " + other.access)); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("err = %v, want ErrInvalidToken for a signed-out session", err)
		}
		if _, err := svc.Caller(req("Bearer " + s.access)); err != nil {
			t.Fatalf("the other session must still work: %v", err)
		}
	})
}
