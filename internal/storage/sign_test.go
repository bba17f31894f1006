package storage

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"masthead/internal/tokencache"
)

// sign asks for a signed URL as user and returns the response status and the signedURL.
func (ev *env) sign(t *testing.T, key, user, body string) (int, string) {
	t.Helper()
	resp, b := ev.do(t, req{method: "POST", path: "/storage/v1/object/sign/media/" + key, user: user,
		body: []byte(body), header: map[string]string{"Content-Type": "application/json"}})
	if resp.StatusCode != 200 {
		storageError(t, b)
		return resp.StatusCode, ""
	}
	var out struct {
		SignedURL string `json:"signedURL"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.SignedURL == "" {
		t.Fatalf("sign answer %s", b)
	}
	return resp.StatusCode, out.SignedURL
}

func TestSignedURL(t *testing.T) {
	eachBackend(t, func(t *testing.T, ev *env) {
		status, url := ev.sign(t, "proj-a/photo.png", "viewerA", `{"expiresIn":60}`)
		if status != 200 || !strings.HasPrefix(url, "/object/sign/media/proj-a/photo.png?token=") {
			t.Fatalf("sign: %d %q", status, url)
		}
		token := url[strings.Index(url, "token=")+len("token="):]

		t.Run("opens without credentials", func(t *testing.T) {
			resp, body := ev.do(t, req{path: "/storage/v1" + url, noKey: true})
			if resp.StatusCode != 200 || !bytes.Equal(body, ev.png) {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("headers %v", resp.Header)
			}
		})
		t.Run("range through a signed URL", func(t *testing.T) {
			resp, body := ev.do(t, req{path: "/storage/v1" + url, noKey: true, header: map[string]string{"Range": "bytes=0-3"}})
			if resp.StatusCode != 206 || !bytes.Equal(body, ev.png[:4]) {
				t.Fatalf("status %d", resp.StatusCode)
			}
		})
		for _, tc := range []struct{ name, path string }{
			{"token on another tenant's path", "/storage/v1/object/sign/media/proj-b/secret.png?token=" + token},
			{"token on a sibling path", "/storage/v1/object/sign/media/proj-a/page.html?token=" + token},
			{"tampered signature", "/storage/v1" + url[:len(url)-2] + "xx"},
			{"no token", "/storage/v1/object/sign/media/proj-a/photo.png"},
			{"garbage token", "/storage/v1/object/sign/media/proj-a/photo.png?token=a.b.c"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, b := ev.do(t, req{path: tc.path})
				if resp.StatusCode != 400 || storageError(t, b)["error"] != "InvalidJWT" {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
			})
		}
		t.Run("a token signed with another key", func(t *testing.T) {
			other := newSigner(DeriveSigningKey("another secret"), time.Now, 0)
			forged := other.sign("media/proj-a/photo.png", "image/png", time.Hour)
			resp, _ := ev.do(t, req{path: "/storage/v1/object/sign/media/proj-a/photo.png?token=" + forged})
			if resp.StatusCode != 400 {
				t.Fatalf("status %d", resp.StatusCode)
			}
		})
		t.Run("expires", func(t *testing.T) {
			ev.clock.Add(int64(59 * time.Second))
			if resp, _ := ev.do(t, req{path: "/storage/v1" + url}); resp.StatusCode != 200 {
				t.Fatalf("at 59 s: status %d", resp.StatusCode)
			}
			ev.clock.Add(int64(time.Second))
			resp, b := ev.do(t, req{path: "/storage/v1" + url})
			if resp.StatusCode != 400 || storageError(t, b)["message"] != "jwt expired" {
				t.Fatalf("at 60 s: status %d %s", resp.StatusCode, b)
			}
		})
	})
}

// TestSignRefusals: only a caller who may read the row gets a URL for it, and the refusal for
// another tenant's object is the same 404 as for a missing one.
func TestSignRefusals(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	for _, tc := range []struct {
		name, key, user, body string
		status                int
	}{
		{"other tenant", "proj-b/secret.png", "ownerA", `{"expiresIn":60}`, 404},
		{"outsider", "proj-a/photo.png", "outsider", `{"expiresIn":60}`, 404},
		{"anon", "proj-a/photo.png", "", `{"expiresIn":60}`, 404},
		{"missing object", "proj-a/none.png", "ownerA", `{"expiresIn":60}`, 404},
		{"invalid token", "proj-a/photo.png", "forged", `{"expiresIn":60}`, 401},
		{"no expiresIn", "proj-a/photo.png", "ownerA", `{}`, 400},
		{"zero expiresIn", "proj-a/photo.png", "ownerA", `{"expiresIn":0}`, 400},
		{"expiresIn over a week", "proj-a/photo.png", "ownerA", `{"expiresIn":604801}`, 400},
		{"not JSON", "proj-a/photo.png", "ownerA", `expiresIn=60`, 400},
		{"expiresIn 2^63-1 (wrapped to the past before)", "proj-a/photo.png", "ownerA", `{"expiresIn":9223372036854775807}`, 400},
		{"expiresIn 2^62", "proj-a/photo.png", "ownerA", `{"expiresIn":4611686018427387904}`, 400},
		{"negative expiresIn", "proj-a/photo.png", "ownerA", `{"expiresIn":-5}`, 400},
		{"fractional expiresIn", "proj-a/photo.png", "ownerA", `{"expiresIn":1.5}`, 400},
		{"expiresIn as text", "proj-a/photo.png", "ownerA", `{"expiresIn":"60"}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, _ := ev.sign(t, tc.key, tc.user, tc.body); status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
		})
	}
	if status, _ := ev.sign(t, "proj-a/photo.png", "ownerA", `{"expiresIn":604800}`); status != http.StatusOK {
		t.Fatalf("a week: status %d", status)
	}
}

// TestSignerReusesMACs: a signer keeps its keyed HMACs for reuse, yet signs every token exactly
// as a fresh HMAC per token does (referenceSign) and accepts exactly what it should, for tokens
// of every size (an upload token's claims outgrow the buffer a download token's fit in), from
// many goroutines at once, and a token checked right after a bad one is not judged by what the
// bad one left behind.
func TestSignerReusesMACs(t *testing.T) {
	t.Parallel()
	key := DeriveSigningKey("test secret")
	now := time.Now()
	s := newSigner(key, func() time.Time { return now }, 0)
	as := json.RawMessage(`{"sub":"` + strings.Repeat("x", 2000) + `"}`)
	type tok struct{ token, url string }
	var tokens []tok
	for i := range 50 {
		url := "media/proj-a/" + strings.Repeat("k", i*10) + ".png"
		token, want := s.sign(url, "image/png", time.Hour), referenceSign(key, signedClaims{URL: url, CT: "image/png"}, now, time.Hour)
		if token != want {
			t.Fatalf("signed %s as %s, a fresh HMAC as %s", url, token, want)
		}
		tokens = append(tokens, tok{token, url})
	}
	big := referenceSign(key, signedClaims{URL: "media/proj-a/u.png", Op: opUpload, As: as}, now, time.Hour)
	if got := s.signClaims(signedClaims{URL: "media/proj-a/u.png", Op: opUpload, As: as}, time.Hour); got != big {
		t.Fatalf("an upload token of %d bytes signed as %s", len(big), got)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			errs <- func() error {
				for i := range 400 {
					tk := tokens[(g*31+i)%len(tokens)]
					if ct, aerr := s.verify(tk.token, tk.url); aerr != nil || ct != "image/png" {
						return fmt.Errorf("verify %s: %q %v", tk.url, ct, aerr)
					}
					if _, aerr := s.verify(tampered(tk.token), tk.url); aerr != errInvalidJWT {
						return fmt.Errorf("a tampered token: %v", aerr)
					}
					if _, aerr := s.verify(tk.token, tk.url+"x"); aerr != errInvalidJWT {
						return fmt.Errorf("another url: %v", aerr)
					}
					c, aerr := s.verifyUpload(big, "media/proj-a/u.png")
					if aerr != nil || string(c.As) != string(as) {
						return fmt.Errorf("upload token of %d bytes: %v", len(big), aerr)
					}
				}
				return nil
			}()
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// referenceSign signs c as a signer does at now, with an HMAC made for this one token.
func referenceSign(key []byte, c signedClaims, now time.Time, ttl time.Duration) string {
	c.IAT, c.EXP = now.Unix(), now.Add(ttl).Unix()
	payload, _ := json.Marshal(c)
	unsigned := signedHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(unsigned))
	return unsigned + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// tampered is token with the last character of its signature changed.
func tampered(token string) string {
	last := "A"
	if strings.HasSuffix(token, last) {
		last = "B"
	}
	return token[:len(token)-1] + last
}

// TestSignedTokenCache: a remembered token is still held to its url, its expiry and its kind
// (a download token is no upload token, nor the other way round); a token whose signature fails
// is never remembered; and a full cache makes room by dropping expired tokens first.
func TestSignedTokenCache(t *testing.T) {
	t.Parallel()
	now := time.Now()
	s := newSigner(DeriveSigningKey("test secret"), func() time.Time { return now }, 2)
	down := s.sign("media/proj-a/a.png", "image/png", time.Minute)
	for range 2 { // the second round answers from the cache
		if ct, aerr := s.verify(down, "media/proj-a/a.png"); aerr != nil || ct != "image/png" {
			t.Fatalf("verify: %q %v", ct, aerr)
		}
		if _, aerr := s.verify(down, "media/proj-a/b.png"); aerr != errInvalidJWT {
			t.Fatalf("a remembered token on another url: %v", aerr)
		}
		if _, aerr := s.verifyUpload(down, "media/proj-a/a.png"); aerr != errInvalidJWT {
			t.Fatalf("a remembered download token as an upload token: %v", aerr)
		}
	}
	if n := s.tokens.Len(); n != 1 {
		t.Fatalf("%d tokens remembered, want 1", n)
	}
	if _, aerr := s.verify(tampered(down), "media/proj-a/a.png"); aerr != errInvalidJWT {
		t.Fatalf("tampered: %v", aerr)
	}
	if n := s.tokens.Len(); n != 1 {
		t.Fatalf("a tampered token was remembered (%d)", n)
	}
	up := s.signClaims(signedClaims{URL: "media/proj-a/u.png", Op: opUpload, As: json.RawMessage(`{"sub":"x"}`)}, time.Hour)
	for range 2 {
		if _, aerr := s.verify(up, "media/proj-a/u.png"); aerr != errInvalidJWT {
			t.Fatalf("an upload token as a download token: %v", aerr)
		}
		if c, aerr := s.verifyUpload(up, "media/proj-a/u.png"); aerr != nil || string(c.As) != `{"sub":"x"}` {
			t.Fatalf("verifyUpload: %v", aerr)
		}
	}
	now = now.Add(time.Minute)
	if _, aerr := s.verify(down, "media/proj-a/a.png"); aerr != errExpiredJWT {
		t.Fatalf("a remembered token past its expiry: %v", aerr)
	}
	// Full (two tokens): the expired download token goes to make room for a third.
	third := s.sign("media/proj-a/c.png", "image/png", time.Minute)
	if _, aerr := s.verify(third, "media/proj-a/c.png"); aerr != nil {
		t.Fatal(aerr)
	}
	if _, ok := s.tokens.Get(tokencache.KeyOf(down)); ok || s.tokens.Len() != 2 {
		t.Fatalf("after adding to a full cache: expired token kept %v, %d tokens", ok, s.tokens.Len())
	}
}

// BenchmarkSignedCheck is the signature check and claims decoding of a signed download token
// (what a token cache miss costs); the signature comparison must not allocate.
func BenchmarkSignedCheck(b *testing.B) {
	s := newSigner(DeriveSigningKey("test secret"), time.Now, 0)
	token := s.sign("media/proj-a/photo.png", "image/png", time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, aerr := s.check(token); aerr != nil {
			b.Fatal(aerr)
		}
	}
}
