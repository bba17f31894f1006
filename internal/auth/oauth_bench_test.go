package auth_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// BenchmarkOAuthCodeFlow is one connector sign-in without the browser: GET /oauth/authorize
// (302 to the consent page), the consent API's approve as the signed-in person, and the
// authorization_code grant. It reports the median of each step, so the figures say what a
// person waits for after clicking Allow (approve + token) apart from the first redirect.
func BenchmarkOAuthCodeFlow(b *testing.B) {
	e := newEnv(b, nil)
	s := e.signIn(b, e.user.Email, e.user.Password)
	c := e.publicClient(b)
	verifier, challenge := pkce("bench")
	var authorize, approve, token []time.Duration
	defer reportCPU(b)()
	for b.Loop() {
		t0 := time.Now()
		loc := e.authorize(b, authorizeQuery(c, challenge))
		t1 := time.Now()
		res := e.do(b, request{method: http.MethodPost, path: "/auth/v1/oauth/authorizations/" + loc.Query().Get("authorization_id") + "/consent",
			json: map[string]string{"action": "approve"}, bearer: s.access, noKey: true})
		t2 := time.Now()
		back, _ := url.Parse(res.body["redirect_url"].(string))
		if tok := e.exchange(b, c, back.Query().Get("code"), verifier); tok.status != http.StatusOK {
			b.Fatalf("token: %d %s", tok.status, tok.raw)
		}
		t3 := time.Now()
		authorize, approve, token = append(authorize, t1.Sub(t0)), append(approve, t2.Sub(t1)), append(token, t3.Sub(t2))
	}
	for name, d := range map[string][]time.Duration{"authorize": authorize, "approve": approve, "token": token} {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2])/float64(time.Millisecond), name+"-ms")
	}
}
