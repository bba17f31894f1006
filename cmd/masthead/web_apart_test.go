package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

var (
	webLine = regexp.MustCompile(`Masthead dashboard on (http://\S+) `)
	csrfRE  = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
)

// startWeb runs `masthead web` with args until t ends and returns the address it serves on.
func startWeb(t *testing.T, args ...string) string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- runWeb(ctx, args, out, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("web stopped with %v", err)
		}
	})
	waitForLine(t, "web", out, done, webLine, 30*time.Second)
	return webLine.FindStringSubmatch(out.String())[1]
}

// TestWebApart: `masthead web` serving the dashboard on its own, against the service over the
// network. A sign-in through it reaches the service as the person's own address (the service
// trusts the web instance's X-Forwarded-For, MASTHEAD_TRUSTED_PROXIES), and a person cannot
// choose that address by sending an X-Forwarded-For of their own to the dashboard.
// --secure-cookies marks its cookies Secure; without the service's address and key it refuses
// to start, naming both.
func TestWebApart(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *config.Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	api := e.Loopback(t)
	u := e.CreateUser(t, "apart@web.test", "an apart password")
	web := startWeb(t, "--addr", "127.0.0.14:0", "--api-url", api, "--publishable-key", e.Key)

	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.15")}, Timeout: 5 * time.Second}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(web + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfRE.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no sign-in form (%d)", res.StatusCode)
	}
	form := url.Values{"_csrf": {string(m[1])}, "email": {u.Email}, "password": {u.Password}}
	req, _ := http.NewRequest(http.MethodPost, web+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", "203.0.113.9") // a claim no proxy made
	if res, err = browser.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "/") {
		t.Fatalf("sign-in through web: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	lines := e.Logs.WaitLines(t, 30*time.Second, 1, `"msg":"request"`, `"route":"/auth/v1/token"`)
	var line struct {
		ClientIP string `json:"client_ip"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil || line.ClientIP != "127.0.0.15" {
		t.Errorf("the service saw the sign-in from %q (%v), want the person's 127.0.0.15: %s", line.ClientIP, err, lines[0])
	}

	secure := startWeb(t, "--addr", "127.0.0.14:0", "--api-url", api, "--publishable-key", e.Key, "--secure-cookies")
	res, err = http.Get(secure + "/login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cookies := res.Cookies(); len(cookies) == 0 || !cookies[0].Secure {
		t.Errorf("--secure-cookies: cookies %v, want them Secure", res.Header.Values("Set-Cookie"))
	}

	err = runWeb(context.Background(), []string{"--addr", "127.0.0.14:0"}, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "MASTHEAD_API_URL") || !strings.Contains(err.Error(), "MASTHEAD_PUBLISHABLE_KEY") {
		t.Errorf("web without the service's address and key: %v", err)
	}
}
