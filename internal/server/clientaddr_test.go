package server_test

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

// browserAt is a browser whose connections come from the loopback address ip (127.0.0.N), so
// the service can tell it from others on this machine. It keeps cookies and does not follow
// redirects.
func browserAt(t *testing.T, ip string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Jar: jar, Timeout: 30 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn posts the dashboard's sign-in form from b, with extra headers, and returns the status.
func signIn(t *testing.T, b *http.Client, base, email, password string, header ...string) int {
	t.Helper()
	res, err := b.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfRE.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on /login (%d)", res.StatusCode)
	}
	form := url.Values{"_csrf": {string(m[1])}, "email": {email}, "password": {password}}
	req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err = b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// TestDashboardSignInPerClient: the dashboard's sign-ins reach the service as the browser's own
// address, so 40 failed attempts on an account from one client (even one claiming other
// addresses in X-Forwarded-For) throttle that client, while the account's owner signs in from
// another client at once.
func TestDashboardSignInPerClient(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *config.Config) {
		c.TokenRateIP = config.Rate{Count: 20, Per: 10 * time.Minute, Burst: 20}
		c.TokenRateAccount = config.Rate{Count: 5, Per: 10 * time.Minute, Burst: 5}
		c.TokenRateAccountTotal = config.Rate{Count: 100, Per: 10 * time.Minute, Burst: 100}
	})
	base := e.Loopback(t)
	owner := e.CreateUser(t, "owner@perclient.test", "the right password")

	attacker := browserAt(t, "127.0.0.5")
	statuses := map[int]int{}
	for i := range 40 {
		statuses[signIn(t, attacker, base, owner.Email, "wrong guess", "X-Forwarded-For", "10.9.9."+string(rune('0'+i%10)))]++
	}
	if statuses[http.StatusUnauthorized] != 5 || statuses[http.StatusTooManyRequests] != 35 {
		t.Errorf("40 guesses from one client: %v, want 5 refused as wrong and 35 throttled", statuses)
	}
	// The attacker's own right guess is throttled too: its client is slowed down.
	if got := signIn(t, attacker, base, owner.Email, owner.Password); got != http.StatusTooManyRequests {
		t.Errorf("a guess from the throttled client: %d, want 429", got)
	}
	// The owner, elsewhere, gets in.
	if got := signIn(t, browserAt(t, "127.0.0.6"), base, owner.Email, owner.Password); got != http.StatusSeeOther {
		t.Errorf("the owner's sign-in from another client: %d, want 303", got)
	}
	// And the service logged the browsers' addresses, not its own.
	for _, ip := range []string{"127.0.0.5", "127.0.0.6"} {
		if len(e.Logs.Lines(`"route":"/auth/v1/token"`, `"client_ip":"`+ip+`"`)) == 0 {
			t.Errorf("no /auth/v1/token request logged from %s", ip)
		}
	}
	if n := len(e.Logs.Lines(`"route":"/auth/v1/token"`, `"client_ip":"10.9.9.`)); n != 0 {
		t.Errorf("%d token requests logged with a forged address", n)
	}
}
