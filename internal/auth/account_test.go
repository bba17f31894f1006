package auth_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"masthead/internal/config"
)

// TestUpdateUser: PUT /auth/v1/user as GoTrue answers it, for the metadata (the display name
// reaches the profile) and for every rule of a password change.
func TestUpdateUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	other := e.signIn(t, e.user.Email, e.user.Password)

	res := e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access,
		json: map[string]any{"data": map[string]any{"name": "Ada Lovelace", "pronouns": "she/her"}}})
	if res.status != http.StatusOK {
		t.Fatalf("update data: %d %s", res.status, res.raw)
	}
	meta, _ := res.body["user_metadata"].(map[string]any)
	if meta["name"] != "Ada Lovelace" || meta["pronouns"] != "she/her" || res.body["email"] != e.user.Email {
		t.Errorf("user answered: %s", res.raw)
	}
	var name string
	if err := e.DB.Owner(t).QueryRow(context.Background(), `select display_name from profiles where id = $1`, e.user.ID).Scan(&name); err != nil || name != "Ada Lovelace" {
		t.Errorf("profile display_name = %q (%v)", name, err)
	}
	// A null deletes a key, as in GoTrue.
	res = e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access, raw: `{"data":{"pronouns":null}}`})
	if meta, _ := res.body["user_metadata"].(map[string]any); res.status != 200 || meta["pronouns"] != nil || meta["name"] != "Ada Lovelace" {
		t.Errorf("delete a key: %d %s", res.status, res.raw)
	}

	for _, tc := range []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"weak password", `{"password":"short"}`, 422, "weak_password"},
		{"same password", `{"password":"correct horse battery"}`, 422, "same_password"},
		{"wrong current password", `{"password":"a brand new secret","current_password":"nope nope"}`, 400, "invalid_credentials"},
		{"email change", `{"email":"someone.else@northwind.test"}`, 422, "email_change_not_supported"},
		{"nonce", `{"password":"a brand new secret","nonce":"123456"}`, 422, "reauthentication_not_valid"},
		{"name too long", `{"data":{"name":"` + repeat("n", 101) + `"}}`, 400, "validation_failed"},
		{"data not an object", `{"data":[1]}`, 400, "bad_json"},
		{"no token", `{"data":{}}`, 401, "no_authorization"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bearer := s.access
			if tc.code == "no_authorization" {
				bearer = ""
			}
			wantError(t, e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: bearer, raw: tc.body}), tc.status, tc.code)
		})
	}
	res = e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access, raw: `{"password":"short"}`})
	if weak, _ := res.body["weak_password"].(map[string]any); weak == nil || len(weak["reasons"].([]any)) != 1 {
		t.Errorf("weak_password reasons missing: %s", res.raw)
	}

	// Signed in a moment ago: no current password needed. The other session ends.
	res = e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access, raw: `{"password":"a brand new secret"}`})
	if res.status != http.StatusOK {
		t.Fatalf("change password: %d %s", res.status, res.raw)
	}
	wantError(t, e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: other.access}), 403, "session_not_found")
	if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: s.access}); res.status != 200 {
		t.Errorf("the changing session ended too: %d %s", res.status, res.raw)
	}
	wantError(t, e.do(t, request{path: "/auth/v1/token?grant_type=password",
		json: map[string]string{"email": e.user.Email, "password": e.user.Password}}), 400, "invalid_credentials")
	e.signIn(t, e.user.Email, "a brand new secret")
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// TestPasswordChangeNeedsReauthentication: after the window, a password change needs the
// current password, and with it succeeds.
func TestPasswordChangeNeedsReauthentication(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config.Config) { c.ReauthWindow = 0 })
	s := e.signIn(t, e.user.Email, e.user.Password)
	wantError(t, e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access,
		raw: `{"password":"a brand new secret"}`}), 400, "reauthentication_needed")
	res := e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access,
		json: map[string]string{"password": "a brand new secret", "current_password": e.user.Password}})
	if res.status != http.StatusOK {
		t.Fatalf("with the current password: %d %s", res.status, res.raw)
	}
	e.signIn(t, e.user.Email, "a brand new secret")
}

// TestSignupDisabled: /settings says sign-ups are off and /signup refuses as GoTrue does.
func TestSignupDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/settings"})
	if res.status != 200 || res.body["disable_signup"] != true {
		t.Errorf("settings: %d %s", res.status, res.raw)
	}
	wantError(t, e.do(t, request{path: "/auth/v1/signup", json: map[string]string{"email": "new@x.test", "password": "long enough pw"}}),
		422, "signup_disabled")
}

// TestSessionsList: GET /auth/v1/user/sessions lists the person's sessions and marks this one.
func TestSessionsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	e.signIn(t, e.user.Email, e.user.Password)
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/auth/v1/user/sessions", nil)
	req.Header.Set("apikey", e.Key)
	req.Header.Set("Authorization", "Bearer "+s.access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		ID      string `json:"id"`
		Current bool   `json:"current"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list) != 2 {
		t.Fatalf("sessions: %v %+v", err, list)
	}
	if list[0].Current == list[1].Current {
		t.Errorf("exactly one session is the current one: %+v", list)
	}
}

// TestAcceptInvitation: an invitation link signs a newcomer up and in, with its role, once;
// an existing account must give its own password; expired links are refused.
func TestAcceptInvitation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	own := e.DB.Owner(t)
	ctx := context.Background()
	var project string
	if err := own.QueryRow(ctx, `insert into projects (slug, name) values ('desk', 'The Desk') returning id`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	invite := func(token, email, role string, expires time.Duration) {
		h := sha256.Sum256([]byte(token))
		if _, err := own.Exec(ctx, `insert into invitations (project_id, email, role, token_hash, expires_at)
			values ($1, $2, $3, $4, now() + $5::interval)`, project, email, role, h[:], expires.String()); err != nil {
			t.Fatal(err)
		}
	}
	invite("token-new", "grace@desk.test", "editor", time.Hour)
	invite("token-old", "ada@northwind.test", "reviewer", time.Hour)
	invite("token-late", "late@desk.test", "viewer", -time.Second)

	res := e.do(t, request{path: "/auth/v1/invite/lookup", json: map[string]string{"token": "token-new"}})
	if res.status != 200 || res.body["project_name"] != "The Desk" || res.body["role"] != "editor" ||
		res.body["email"] != "grace@desk.test" || res.body["account_exists"] != false {
		t.Fatalf("lookup: %d %s", res.status, res.raw)
	}
	wantError(t, e.do(t, request{path: "/auth/v1/invite/lookup", json: map[string]string{"token": "nope"}}), 404, "invite_not_found")
	wantError(t, e.do(t, request{path: "/auth/v1/invite/lookup", json: map[string]string{"token": "token-late"}}), 403, "otp_expired")
	wantError(t, e.do(t, request{path: "/auth/v1/invite/accept", json: map[string]string{"token": "token-new", "password": "short"}}), 422, "weak_password")

	res = e.do(t, request{path: "/auth/v1/invite/accept", json: map[string]any{"token": "token-new", "password": "grace's secret",
		"data": map[string]string{"name": "Grace Hopper"}}})
	if res.status != 200 || res.body["access_token"] == nil {
		t.Fatalf("accept: %d %s", res.status, res.raw)
	}
	// The answer names what was joined, so a client need not look the used invitation up.
	if inv, _ := res.body["invitation"].(map[string]any); inv["project_slug"] != "desk" || inv["project_name"] != "The Desk" ||
		inv["role"] != "editor" || inv["email"] != "grace@desk.test" || inv["account_exists"] != true {
		t.Errorf("accept answered the invitation %v", res.body["invitation"])
	}
	var role, name string
	if err := own.QueryRow(ctx, `select m.role, p.display_name from project_members m join profiles p on p.id = m.user_id
		where m.project_id = $1 and p.email = 'grace@desk.test'`, project).Scan(&role, &name); err != nil || role != "editor" || name != "Grace Hopper" {
		t.Errorf("membership %q %q %v", role, name, err)
	}
	e.signIn(t, "grace@desk.test", "grace's secret")
	wantError(t, e.do(t, request{path: "/auth/v1/invite/accept", json: map[string]string{"token": "token-new", "password": "grace's secret"}}), 404, "invite_not_found")

	// An existing account keeps its password: the link does not reset it.
	wantError(t, e.do(t, request{path: "/auth/v1/invite/accept", json: map[string]string{"token": "token-old", "password": "takeover attempt"}}), 400, "invalid_credentials")
	if res := e.do(t, request{path: "/auth/v1/invite/accept", json: map[string]string{"token": "token-old", "password": e.user.Password}}); res.status != 200 {
		t.Fatalf("accept with an existing account: %d %s", res.status, res.raw)
	}
	e.signIn(t, e.user.Email, e.user.Password)
	wantError(t, e.do(t, request{path: "/auth/v1/invite/accept", json: map[string]string{"token": "token-late", "password": "long enough pw"}}), 403, "otp_expired")
	if res := e.do(t, request{path: "/auth/v1/invite/accept", noKey: true, json: map[string]string{"token": "token-late"}}); res.status != 401 {
		t.Errorf("without the publishable key: %d", res.status)
	}
}

// TestAppSessionCannotChangePassword: a token of a session an OAuth client started (a
// connected app) may update the profile data but never the password.
func TestAppSessionCannotChangePassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	_, claims := jwtParts(t, s.access)
	if _, err := e.DB.Owner(t).Exec(context.Background(), `
		with c as (insert into auth.oauth_clients (token_endpoint_auth_method, client_name, redirect_uris, grant_types)
		           values ('none', 'Inspector', '{http://127.0.0.1:5555/cb}', '{authorization_code}') returning id)
		update auth.sessions set oauth_client_id = (select id from c), scope = 'openid' where id = $1`, claims["session_id"]); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access,
		json: map[string]string{"password": "an app's choice", "current_password": e.user.Password}}), 403, "oauth_client_session_not_allowed")
	e.signIn(t, e.user.Email, e.user.Password)
}

// TestPasswordHashCost: a password a person sets is hashed at MASTHEAD_BCRYPT_COST, not at
// bcrypt's default or the tests' own.
func TestPasswordHashCost(t *testing.T) {
	t.Parallel()
	const cost = 5 // neither bcrypt's default (10) nor servertest's (4)
	e := newEnv(t, func(c *config.Config) { c.BcryptCost = cost })
	s := e.signIn(t, e.user.Email, e.user.Password)
	if res := e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: s.access, raw: `{"password":"a brand new secret"}`}); res.status != http.StatusOK {
		t.Fatalf("change password: %d %s", res.status, res.raw)
	}
	var hash string
	if err := e.DB.Owner(t).QueryRow(context.Background(), `select encrypted_password from auth.users where email = $1`, e.user.Email).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if got, err := bcrypt.Cost([]byte(hash)); err != nil || got != cost {
		t.Fatalf("stored hash cost %d (%v), want %d", got, err, cost)
	}
	e.signIn(t, e.user.Email, "a brand new secret")
}
