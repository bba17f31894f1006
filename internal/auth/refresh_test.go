package auth_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"masthead/internal/config"
)

func TestRefreshRotates(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s0 := e.signIn(t, e.user.Email, e.user.Password)

	r1 := e.refresh(t, s0.refresh)
	if r1.status != http.StatusOK {
		t.Fatalf("refresh: %d %s", r1.status, r1.raw)
	}
	t1 := r1.body["refresh_token"].(string)
	if t1 == s0.refresh {
		t.Fatal("the refresh token did not rotate")
	}
	_, c0 := jwtParts(t, s0.access)
	_, c1 := jwtParts(t, r1.body["access_token"].(string))
	if c0["session_id"] != c1["session_id"] || c1["sub"] != e.user.ID {
		t.Fatalf("refresh changed the session: %v vs %v", c0["session_id"], c1["session_id"])
	}
	if u := r1.body["user"].(map[string]any); u["id"] != e.user.ID {
		t.Fatalf("user = %v", u)
	}

	// Inside the reuse interval the previous token, and its parent, give the current one back.
	r2 := e.refresh(t, t1)
	t2 := r2.body["refresh_token"].(string)
	for _, old := range []string{s0.refresh, t1} {
		again := e.refresh(t, old)
		if again.status != http.StatusOK || again.body["refresh_token"] != t2 {
			t.Fatalf("reuse inside the interval: %d %s, want current token", again.status, again.raw)
		}
	}
	// The current token still rotates normally afterwards.
	if r3 := e.refresh(t, t2); r3.status != http.StatusOK || r3.body["refresh_token"] == t2 {
		t.Fatalf("current token: %d %s", r3.status, r3.raw)
	}
}

func TestParallelRefreshesOfOneTokenAllSucceed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	const n = 12
	var wg sync.WaitGroup
	results := make([]response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.refresh(t, s.refresh)
		}()
	}
	wg.Wait()
	current := ""
	for i, r := range results {
		if r.status != http.StatusOK {
			t.Fatalf("refresh %d: %d %s", i, r.status, r.raw)
		}
		rt := r.body["refresh_token"].(string)
		if current == "" {
			current = rt
		}
		if rt != current {
			t.Fatalf("parallel refreshes got different tokens: %s vs %s", rt, current)
		}
	}
	if r := e.refresh(t, current); r.status != http.StatusOK {
		t.Fatalf("the token everyone got does not work: %d %s", r.status, r.raw)
	}
}

func TestReuseAfterIntervalRevokesSession(t *testing.T) {
	t.Parallel()
	const interval = time.Minute
	e := newEnv(t, func(c *config.Config) { c.RefreshReuseInterval = interval })
	s := e.signIn(t, e.user.Email, e.user.Password)
	other := e.signIn(t, e.user.Email, e.user.Password) // another device: must survive
	r1 := e.refresh(t, s.refresh)
	if r1.status != http.StatusOK {
		t.Fatalf("refresh: %d %s", r1.status, r1.raw)
	}
	// Within the reuse interval the old token still yields the current one.
	if again := e.refresh(t, s.refresh); again.status != http.StatusOK || again.body["refresh_token"] != r1.body["refresh_token"] {
		t.Fatalf("within the interval: %d %s, want the current token", again.status, again.raw)
	}
	// Once the interval has passed, presenting it again is theft. The interval is judged on the
	// database's clock (clock_timestamp() against the revoked_at that now() stamped), so the
	// test moves the revocation back past the interval rather than waiting it out.
	tag, err := e.DB.Owner(t).Exec(t.Context(), `
		update auth.refresh_tokens set revoked_at = revoked_at - make_interval(secs => $2)
		where token_hash = sha256(convert_to($1, 'UTF8'))`, s.refresh, (interval + time.Second).Seconds())
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("age the rotated token: %v (%d rows)", err, tag.RowsAffected())
	}
	again := e.refresh(t, s.refresh)
	wantError(t, again, 400, "refresh_token_already_used")
	if lines := e.Logs.Lines("refresh token reused"); len(lines) != 1 {
		t.Errorf("want one warning about the reuse, got %d", len(lines))
	}
	// The whole session is gone: its current refresh token and every access token it issued.
	wantError(t, e.refresh(t, r1.body["refresh_token"].(string)), 400, "refresh_token_not_found")
	for _, access := range []string{s.access, r1.body["access_token"].(string)} {
		wantError(t, e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: access}), 403, "session_not_found")
	}
	if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: other.access}); res.status != http.StatusOK {
		t.Fatalf("another session of the same user was revoked too: %d %s", res.status, res.raw)
	}
}

func TestRefreshTokensAreStoredHashed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	r := e.refresh(t, s.refresh)
	for _, token := range []string{s.refresh, r.body["refresh_token"].(string)} {
		var hashed, clear int
		err := e.DB.Owner(t).QueryRow(t.Context(), `
			select count(*) filter (where token_hash = sha256(convert_to($1, 'UTF8'))),
			       count(*) filter (where r::text like '%' || $1 || '%')
			from auth.refresh_tokens r`, token).Scan(&hashed, &clear)
		if err != nil {
			t.Fatal(err)
		}
		if hashed != 1 || clear != 0 {
			t.Fatalf("token stored hashed %d times, in the clear %d times", hashed, clear)
		}
	}
}
