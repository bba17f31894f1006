package auth_test

import (
	"net/http"
	"testing"
)

func TestLogoutScopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scope string
		// which of the user's three sessions (0 signs out) survive, and whether another user does
		survive [3]bool
	}{
		{"global", [3]bool{false, false, false}},
		{"", [3]bool{false, false, false}}, // GoTrue's default is global
		{"local", [3]bool{false, true, true}},
		{"others", [3]bool{true, false, false}},
	}
	for _, tt := range tests {
		t.Run("scope="+tt.scope, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			bob := e.CreateUser(t, "bob@northwind.test", "bob password")
			var sessions [3]session
			for i := range sessions {
				sessions[i] = e.signIn(t, e.user.Email, e.user.Password)
			}
			bystander := e.signIn(t, bob.Email, bob.Password)

			path := "/auth/v1/logout"
			if tt.scope != "" {
				path += "?scope=" + tt.scope
			}
			res := e.do(t, request{path: path, bearer: sessions[0].access})
			if res.status != http.StatusNoContent || len(res.raw) != 0 {
				t.Fatalf("logout: %d %s", res.status, res.raw)
			}
			for i, s := range sessions {
				user := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: s.access})
				refreshed := e.refresh(t, s.refresh)
				if tt.survive[i] {
					if user.status != http.StatusOK || refreshed.status != http.StatusOK {
						t.Fatalf("session %d should survive: user %d, refresh %d %s", i, user.status, refreshed.status, refreshed.raw)
					}
					continue
				}
				wantError(t, user, 403, "session_not_found")
				wantError(t, refreshed, 400, "refresh_token_not_found")
			}
			if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: bystander.access}); res.status != http.StatusOK {
				t.Fatalf("another user's session was signed out: %d", res.status)
			}
		})
	}
}

func TestLogoutErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	wantError(t, e.do(t, request{path: "/auth/v1/logout?scope=everyone", bearer: s.access}), 400, "validation_failed")
	wantError(t, e.do(t, request{path: "/auth/v1/logout"}), 401, "no_authorization")
	wantError(t, e.do(t, request{path: "/auth/v1/logout", bearer: "garbage"}), 403, "bad_jwt")
	if res := e.do(t, request{path: "/auth/v1/logout?scope=local", bearer: s.access}); res.status != http.StatusNoContent {
		t.Fatalf("logout: %d", res.status)
	}
	wantError(t, e.do(t, request{path: "/auth/v1/logout?scope=local", bearer: s.access}), 403, "session_not_found")
}
