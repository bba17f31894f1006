package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"masthead/internal/metrics"
	"masthead/internal/pg"
)

// Options configure the identity service.
type Options struct {
	// Issuer is the iss of every token: <public base URL>/auth/v1.
	Issuer string
	// PublishableKey is the sb_publishable_… key; it identifies the project, never a user.
	PublishableKey string
	Keys           *KeySet
	// AccessTTL is the lifetime of access tokens.
	AccessTTL time.Duration
	// ReuseInterval is how long a rotated refresh token still yields the current one.
	ReuseInterval time.Duration
	// BcryptCost is the cost of the dummy hash compared for unknown emails; it must match the
	// stored hashes, or timing tells which emails exist.
	BcryptCost int
	// IPLimit bounds /token calls per client IP. AccountLimit bounds password sign-ins per email
	// from one client IP, so a stranger guessing slows down only themselves; AccountTotal is the
	// looser ceiling per email across all clients, a token bucket that backs off (429 with
	// Retry-After) rather than locking the account.
	IPLimit, AccountLimit, AccountTotal Limit
	// AuthorizeLimit bounds GET /oauth/authorize per client IP (it is open to anyone and stores
	// an authorization per valid request).
	AuthorizeLimit Limit
	// RegisterLimit bounds dynamic client registrations per client IP: registration is open to
	// anyone, so this keeps a script from filling auth.oauth_clients (default 20 an hour).
	RegisterLimit Limit
	// ReauthWindow is how long after signing in a password may be changed without the current
	// one; PasswordMinLength the shortest password that may be set (0 means 8).
	ReauthWindow      time.Duration
	PasswordMinLength int
	// TokenCacheSize is how many verified access tokens the Verifier remembers
	// (MASTHEAD_AUTH_TOKEN_CACHE_SIZE); 0 means DefaultTokenCacheSize, a negative size none.
	TokenCacheSize int
	// OIDC are the upstream OpenID Connect providers people may sign in with (oidc.go).
	OIDC []OIDCProvider
	// Metrics counts grants and rate-limit refusals; nil counts nothing.
	Metrics *metrics.Metrics
}

// Service is the identity service. It is safe for concurrent use.
type Service struct {
	pool     *pgxpool.Pool
	log      *slog.Logger
	opts     Options
	verifier *Verifier
	// dummyHash is compared when the email is unknown, so that answer costs one bcrypt too.
	dummyHash []byte
	ipLimit   *limiter
	acctLimit *limiter // per client IP and email
	acctTotal *limiter // per email
	now       func() time.Time
}

// New builds the service on pool, which must log in as the authenticator role.
func New(pool *pgxpool.Pool, opts Options, log *slog.Logger) (*Service, error) {
	if opts.Keys == nil || opts.Issuer == "" || opts.PublishableKey == "" {
		return nil, errors.New("auth: keys, issuer and publishable key are required")
	}
	if opts.AccessTTL <= 0 {
		return nil, errors.New("auth: access token lifetime must be positive")
	}
	dummy, err := bcrypt.GenerateFromPassword([]byte(randomToken(16)), opts.BcryptCost)
	if err != nil {
		return nil, fmt.Errorf("auth: dummy hash: %w", err)
	}
	return &Service{
		pool: pool, log: log, opts: opts,
		verifier:  NewVerifier(opts.Keys, opts.Issuer).WithCache(opts.TokenCacheSize),
		dummyHash: dummy,
		ipLimit:   newLimiter(opts.IPLimit).counted(opts.Metrics, metrics.LimitTokenIP),
		acctLimit: newLimiter(opts.AccountLimit).counted(opts.Metrics, metrics.LimitTokenAccount),
		acctTotal: newLimiter(opts.AccountTotal).counted(opts.Metrics, metrics.LimitTokenAccountTotal),
		now:       time.Now,
	}, nil
}

// Verifier checks bearer tokens without the database.
func (s *Service) Verifier() *Verifier { return s.verifier }

// asAuth runs fn in one transaction as the identity service's role.
func (s *Service) asAuth(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	return pg.WithCaller(ctx, s.pool, pg.Caller{Role: pg.RoleAuth}, opts, fn)
}

// Caller says who r is calling as, for REST, storage and MCP: pg.Anon for no Authorization
// header or "Bearer <publishable key>" (as supabase-js sends when nobody is signed in), and the
// signed-in user for a valid access token, with the claims exactly as signed so auth.uid() and
// auth.jwt() see what the client holds. A bad or expired token is an error wrapping
// ErrInvalidToken; any other error is an outage (answer 5xx). A token of a session that has
// ended is refused by the database when the caller's transaction starts (pg.ErrSessionEnded).
// The apikey header is checked by RequireAPIKey, not here: MCP clients never have the key.
func (s *Service) Caller(r *http.Request) (pg.Caller, error) {
	token, ok, err := bearer(r)
	if err != nil {
		return pg.Caller{}, err
	}
	if !ok || s.isPublishableKey(token) {
		return pg.Anon, nil
	}
	claims, err := s.verifier.Verify(token)
	if err != nil {
		return pg.Caller{}, err
	}
	// Whether the session still exists is checked by the database as the caller's transaction
	// starts (pg.ErrSessionEnded), so a request pays no round trip for it here. Passing sub and
	// session_id as decoded here spares the database parsing the claims for them.
	return pg.VerifiedCaller(claims.Raw, claims.Subject, claims.SessionID), nil
}

// bearer returns the token of an "Authorization: Bearer …" header; ok is false when there is
// no Authorization header at all.
func bearer(r *http.Request) (token string, ok bool, err error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false, nil
	}
	scheme, token, found := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false, invalid("authorization header is not a bearer token")
	}
	return token, true, nil
}

func (s *Service) isPublishableKey(k string) bool {
	return subtle.ConstantTimeCompare([]byte(k), []byte(s.opts.PublishableKey)) == 1
}

// sessionAlive reports whether the token's session still exists: logout and refresh-token
// theft delete sessions, and every token bound to one must stop working at once. Every
// authenticated request pays for this, so it is one pipelined round trip.
func (s *Service) sessionAlive(ctx context.Context, c *Claims) (bool, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("auth: check session: %w", err)
	}
	defer conn.Release()
	res, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), pg.Caller{Role: pg.RoleAuth}, true, false, pg.Stmt{
		SQL:    `select exists (select 1 from auth.sessions where id = $1::uuid and user_id = $2::uuid)`,
		Params: [][]byte{[]byte(c.SessionID), []byte(c.Subject)},
	})
	if err != nil {
		return false, fmt.Errorf("auth: check session: %w", err)
	}
	return len(res[0].Rows) == 1 && string(res[0].Rows[0][0]) == "t", nil
}

// sessionClient is the OAuth client a session was issued to, and the scope it was granted;
// the zero value is a session the person started by signing in.
type sessionClient struct {
	ID, Scope string
}

// issue signs an access token for u in session sid, begun at sessionStart, on behalf of client.
func (s *Service) issue(u *userRow, sid, aal string, sessionStart time.Time, refresh string, client sessionClient) (*TokenResponse, error) {
	now := s.now()
	exp := now.Add(s.opts.AccessTTL)
	payload, err := json.Marshal(accessClaims{
		Issuer: s.opts.Issuer, Subject: u.ID, Audience: Audience, ExpiresAt: exp.Unix(), IssuedAt: now.Unix(),
		Email: u.Email, AppMetadata: orEmptyObject(u.AppMeta), UserMetadata: orEmptyObject(u.UserMeta),
		Role: Audience, AAL: aal, AMR: []amrEntry{{Method: "password", Timestamp: sessionStart.Unix()}},
		SessionID: sid, IsAnonymous: u.IsAnonymous, ClientID: client.ID, Scope: client.Scope,
	})
	if err != nil {
		return nil, fmt.Errorf("auth: encode claims: %w", err)
	}
	token, err := s.opts.Keys.sign(payload)
	if err != nil {
		return nil, err
	}
	return &TokenResponse{
		AccessToken: token, TokenType: "bearer", ExpiresIn: int(s.opts.AccessTTL / time.Second),
		ExpiresAt: exp.Unix(), RefreshToken: refresh, Scope: client.Scope, User: u.json(),
	}, nil
}

// hashToken is how refresh tokens are stored: SHA-256 suffices for 256-bit random secrets.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// childToken derives the refresh token that replaced parent, from the nonce stored with it.
func childToken(parent string, nonce []byte) string {
	m := hmac.New(sha256.New, []byte(parent))
	m.Write(nonce)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
