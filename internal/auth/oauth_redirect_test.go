package auth

import "testing"

func TestCheckRedirectURI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://claude.ai/api/mcp/auth_callback", true},
		{"https://app.test/cb?x=1", true},
		{"http://127.0.0.1:33418/callback", true},
		{"http://localhost/callback", true},
		{"http://[::1]:8080/cb", true},
		{"com.example.app:/oauth2redirect", true},
		{"com.anysphere.cursor:/oauth/callback", true},
		{"cursor://anysphere.cursor-retrieval/oauth/callback", false}, // not a reverse domain
		{"view-source:https://app.test/cb", false},
		{"ftp://app.test/cb", false},
		{"ws://127.0.0.1/cb", false},
		{"wss://app.test/cb", false},
		{"https://app.test/c\u202eb", false},     // bidi override
		{"http://app.test/cb", false},            // http off loopback
		{"http://127.0.0.1.evil.test/cb", false}, // looks like loopback, is not
		{"https://app.test/cb#frag", false},
		{"https:///cb", false},
		{"/relative/cb", false},
		{"javascript:alert(1)", false},
		{"data:text/html,hi", false},
		{"file:///etc/passwd", false},
		{"", false},
	} {
		err := checkRedirectURI(tc.uri)
		if (err == nil) != tc.ok {
			t.Errorf("checkRedirectURI(%q) = %v, want ok=%v", tc.uri, err, tc.ok)
		}
	}
}

func TestMatchRedirect(t *testing.T) {
	t.Parallel()
	reg := []string{"http://127.0.0.1:5000/callback", "https://app.test/cb", "http://localhost/cb"}
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://app.test/cb", true},
		{"http://127.0.0.1:61234/callback", true}, // RFC 8252 7.3: any port on loopback
		{"http://127.0.0.1/callback", true},
		{"http://localhost:9999/cb", true},
		{"http://127.0.0.1:61234/other", false},
		{"http://localhost:9999/callback", false}, // the host must be the registered one
		{"https://app.test:8443/cb", false},       // ports only vary on loopback
		{"https://app.test/cb?extra=1", false},
		{"https://app.test/cb/", false},
	} {
		if got := matchRedirect(reg, tc.uri); got != tc.ok {
			t.Errorf("matchRedirect(%q) = %v, want %v", tc.uri, got, tc.ok)
		}
	}
}

func TestVerifierMatches(t *testing.T) {
	t.Parallel()
	// RFC 7636 appendix B.
	verifier, challenge := "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !verifierMatches(verifier, challenge) {
		t.Fatal("RFC 7636 example verifier refused")
	}
	if verifierMatches(verifier+"x", challenge) || verifierMatches("short", challenge) {
		t.Fatal("a wrong verifier matched")
	}
}
