package handlers

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"
)

// sessionCookie is the one cookie the dashboard sets. It is encrypted (AES-256) and
// authenticated (HMAC-SHA256), so its tokens are neither readable nor forgeable by the browser.
const sessionCookie = "masthead_session"

// sessionMaxAge bounds how long a browser keeps a session; the refresh token inside may end it
// sooner (logout elsewhere, revocation).
const sessionMaxAge = 14 * 24 * time.Hour

// refreshMargin is how long before expiry an access token is replaced, so no service call is
// made with a token about to lapse on the way.
const refreshMargin = time.Minute

// Keys of session values.
const (
	keyCSRF    = "csrf"
	keyAccess  = "at"
	keyRefresh = "rt"
	keyExpires = "exp"
	keyUserID  = "uid"
	keyEmail   = "email"
	keyName    = "name"
	keyProject = "project"
	keyWrote   = "wrote" // when the person last posted a form, in Unix seconds
)

func newStore(keys [][]byte, secure bool) *sessions.CookieStore {
	s := sessions.NewCookieStore(keys...)
	s.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   int(sessionMaxAge / time.Second),
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	s.MaxAge(int(sessionMaxAge / time.Second))
	return s
}

// SessionKeysFrom derives one pair of session keys (authentication, encryption) from a secret
// the deployment already keeps, such as the JWT signing keys: instances that share the secret
// share sessions, and nothing new has to be stored. HKDF-SHA256 with a dashboard-specific label
// keeps the derived keys unrelated to any other use of the secret.
func SessionKeysFrom(secret []byte) ([][]byte, error) {
	if len(secret) < 32 {
		return nil, fmt.Errorf("handlers: session secret must be at least 32 bytes")
	}
	auth, err := hkdf.Key(sha256.New, secret, nil, "masthead dashboard session authentication", 64)
	if err != nil {
		return nil, err
	}
	enc, err := hkdf.Key(sha256.New, secret, nil, "masthead dashboard session encryption", 32)
	if err != nil {
		return nil, err
	}
	return [][]byte{auth, enc}, nil
}

// GenerateSessionKeys makes a fresh random pair, for `masthead web` started without keys
// (sessions then end when the process does).
func GenerateSessionKeys() [][]byte {
	return [][]byte{securecookie.GenerateRandomKey(64), securecookie.GenerateRandomKey(32)}
}

// state is what the middleware learns about a request and shares with its handler.
type state struct {
	sess  *sessions.Session
	dirty bool
	// readPrimary: the person posted a form within ReadYourWrites, so their reads go to the
	// primary database.
	readPrimary bool
}

const stateKey = "masthead.state"

func stateOf(c echo.Context) *state {
	st, _ := c.Get(stateKey).(*state)
	return st
}

// loadSession opens the cookie (a missing, tampered or expired one gives a fresh session) and
// makes sure the session has a CSRF token.
func (a *App) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, err := a.store.Get(c.Request(), sessionCookie)
		if err != nil {
			// Undecodable: keys rotated away or tampering. Start over with an empty session.
			sess, _ = a.store.New(c.Request(), sessionCookie)
			sess.Values = map[any]any{}
		}
		st := &state{sess: sess}
		if str(sess, keyCSRF) == "" {
			sess.Values[keyCSRF] = randomToken()
			st.dirty = true
		}
		a.noteWrites(c, st)
		c.Set(stateKey, st)
		return next(c)
	}
}

// noteWrites remembers when the person last posted a form (every change in the dashboard is one)
// and decides whether this request's reads must come from the primary.
func (a *App) noteWrites(c echo.Context, st *state) {
	now := a.now()
	if c.Request().Method == http.MethodPost {
		st.set(keyWrote, now.Unix())
		st.readPrimary = true
		return
	}
	if w, ok := st.sess.Values[keyWrote].(int64); ok && now.Sub(time.Unix(w, 0)) < a.readYourWrites {
		st.readPrimary = true
	}
}

// saveSession writes the cookie when the session changed during the request.
func (a *App) saveSession(c echo.Context) error {
	st := stateOf(c)
	if st == nil || !st.dirty {
		return nil
	}
	if err := st.sess.Save(c.Request(), c.Response()); err != nil {
		return fmt.Errorf("handlers: save session: %w", err)
	}
	st.dirty = false
	return nil
}

func (st *state) set(key string, v any) {
	if st.sess.Values[key] != v {
		st.sess.Values[key] = v
		st.dirty = true
	}
}

// signOut empties the session but keeps a fresh CSRF token, so the sign-in form that follows
// works and the old token is worthless.
func (st *state) signOut() {
	st.sess.Values = map[any]any{keyCSRF: randomToken()}
	st.dirty = true
}

func str(s *sessions.Session, key string) string {
	v, _ := s.Values[key].(string)
	return v
}

// expires reads the access token's expiry.
func expires(s *sessions.Session) time.Time {
	v, _ := s.Values[keyExpires].(int64)
	return time.Unix(v, 0)
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
