package auth

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"masthead/internal/pg"
)

// Client is what the grants record about the device signing in.
type Client struct {
	IP        string
	UserAgent string
}

// ip returns the client address for an inet column, or nil when it is not an address.
func (c Client) ip() any {
	if a, err := netip.ParseAddr(c.IP); err == nil {
		return a.String()
	}
	return nil
}

// userAgent is the User-Agent header as the database can store it: valid UTF-8 (headers may
// carry any byte) and at most 512 bytes, cut on a character boundary.
func (c Client) userAgent() string {
	ua := c.UserAgent
	if len(ua) > 512 {
		ua = ua[:512]
	}
	return strings.ToValidUTF8(ua, "")
}

// limit applies the per-IP limit and, when account is not empty, the per-client-and-account
// one and the account-wide ceiling.
func (s *Service) limit(c Client, account string) error {
	now := s.now()
	if ok, wait := s.ipLimit.allow(c.IP, now); !ok {
		return rateLimited(wait)
	}
	if account != "" {
		if ok, wait := s.acctLimit.allow(c.IP+" "+account, now); !ok {
			return rateLimited(wait)
		}
		if ok, wait := s.acctTotal.allow(account, now); !ok {
			return rateLimited(wait)
		}
	}
	return nil
}

func rateLimited(wait time.Duration) *Error {
	return &Error{Status: http.StatusTooManyRequests, Code: CodeOverRequestRateLimit,
		Msg: "Request rate limit reached", RetryAfter: wait}
}

// PasswordGrant signs a user in with email and password and starts a session. Unknown emails,
// users without a password and wrong passwords all cost one bcrypt comparison and get the
// same answer, so neither the body nor the timing says which emails exist.
func (s *Service) PasswordGrant(ctx context.Context, email, password string, c Client) (*TokenResponse, error) {
	email = strings.TrimSpace(email)
	if err := s.limit(c, strings.ToLower(email)); err != nil {
		return nil, err
	}
	if email == "" {
		return nil, validationError("An email address is required for password sign-in")
	}
	if strings.ContainsFunc(email, isControl) || strings.ContainsFunc(password, func(r rune) bool { return r == 0 }) {
		return nil, validationError("The email address and password must not contain control characters")
	}
	if password == "" {
		return nil, validationError("A password is required")
	}
	var u *userRow
	var hash *string
	err := s.asAuth(ctx, pg.ReadOnly, func(tx pgx.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRow(ctx,
			`select `+userColumns+`, u.encrypted_password from auth.users u where lower(u.email) = lower($1)`, email), &hash)
		return err
	})
	if err != nil && !pg.IsNoRows(err) {
		return nil, fmt.Errorf("auth: find user: %w", err)
	}
	// The comparison runs outside any transaction: it takes tens of milliseconds by design and
	// must not hold a database connection meanwhile.
	stored := s.dummyHash
	if u != nil && hash != nil && *hash != "" {
		stored = []byte(*hash)
	}
	if bcrypt.CompareHashAndPassword(stored, []byte(password)) != nil || u == nil || hash == nil {
		return nil, errInvalidCredentials
	}
	if u.banned(s.now()) {
		return nil, errUserBanned
	}
	refresh := randomToken(32)
	var sid string
	var started time.Time
	err = s.asAuth(ctx, pg.ReadWrite, func(tx pgx.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRow(ctx, `
			with s as (
			  insert into auth.sessions (user_id, user_agent, ip) values ($1, $2, $3) returning id, created_at
			), r as (
			  insert into auth.refresh_tokens (session_id, token_hash) select id, $4 from s
			)
			update auth.users u set last_sign_in_at = now() from s where u.id = $1
			returning `+userColumns+`, s.id::text, s.created_at`,
			u.ID, c.userAgent(), c.ip(), hashToken(refresh)), &sid, &started)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("auth: start session: %w", err)
	}
	return s.issue(u, sid, "aal1", started, refresh, sessionClient{})
}

// RefreshGrant swaps a refresh token for a new pair. The token rotates on every use; a
// rotated token presented again within the reuse interval gets the session's current refresh
// token back (parallel refreshes from one browser must not sign the user out), and presented
// after it, it is taken as stolen: the whole session is revoked.
func (s *Service) RefreshGrant(ctx context.Context, token string, c Client) (*TokenResponse, error) {
	if err := s.limit(c, ""); err != nil {
		return nil, err
	}
	if token == "" {
		return nil, validationError("refresh_token required")
	}
	hash := hashToken(token)
	var (
		u       *userRow
		sid     string
		aal     string
		started time.Time
		current string
		reused  bool
		client  sessionClient
	)
	err := s.asAuth(ctx, pg.ReadWrite, func(tx pgx.Tx) error {
		u, current, reused = nil, "", false
		err := tx.QueryRow(ctx, `select session_id::text from auth.refresh_tokens where token_hash = $1`, hash).Scan(&sid)
		if pg.IsNoRows(err) {
			return errRefreshNotFound
		} else if err != nil {
			return err
		}
		// The session's row lock serialises every refresh of the session; statements after it
		// see what a refresh that held the lock before us committed.
		u, err = scanUser(tx.QueryRow(ctx, `
			select `+userColumns+`, s.created_at, s.aal, coalesce(s.oauth_client_id::text, ''), coalesce(s.scope, '')
			from auth.sessions s join auth.users u on u.id = s.user_id
			where s.id = $1 for update of s`, sid), &started, &aal, &client.ID, &client.Scope)
		if pg.IsNoRows(err) {
			return errRefreshNoSession
		} else if err != nil {
			return err
		}
		if u.banned(s.now()) {
			return errUserBanned
		}
		var id int64
		var revokedAt *time.Time
		var now time.Time
		err = tx.QueryRow(ctx, `select id, revoked_at, clock_timestamp() from auth.refresh_tokens where token_hash = $1`,
			hash).Scan(&id, &revokedAt, &now)
		if pg.IsNoRows(err) {
			return errRefreshNotFound
		} else if err != nil {
			return err
		}
		switch {
		case revokedAt == nil:
			current, err = rotate(ctx, tx, sid, id, token)
		case now.Sub(*revokedAt) <= s.opts.ReuseInterval:
			current, err = descendant(ctx, tx, id, token)
		default:
			reused = true
			_, err = tx.Exec(ctx, `delete from auth.sessions where id = $1`, sid)
			return err // commit the revocation, then refuse
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `update auth.sessions set refreshed_at = now(), user_agent = $2, ip = $3 where id = $1`,
			sid, c.userAgent(), c.ip())
		return err
	})
	if err != nil {
		if isAPIError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("auth: refresh: %w", err)
	}
	if reused {
		s.log.WarnContext(ctx, "auth: refresh token reused after the reuse interval; session revoked",
			"session_id", sid, "user_id", u.ID)
		return nil, errRefreshUsed
	}
	return s.issue(u, sid, aal, started, current, client)
}

// rotate revokes token (row id) and stores its child, whose value it returns.
func rotate(ctx context.Context, tx pgx.Tx, sid string, id int64, token string) (string, error) {
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	child := childToken(token, nonce)
	_, err := tx.Exec(ctx, `
		with revoked as (update auth.refresh_tokens set revoked_at = now() where id = $2)
		insert into auth.refresh_tokens (session_id, parent_id, token_hash, nonce) values ($1, $2, $3, $4)`,
		sid, id, hashToken(child), nonce)
	return child, err
}

// descendant walks from token (row id) down the rotations to the session's current token.
func descendant(ctx context.Context, tx pgx.Tx, id int64, token string) (string, error) {
	rows, err := tx.Query(ctx, `
		with recursive chain as (
		  select id, nonce, 1 as depth from auth.refresh_tokens where parent_id = $1
		  union all
		  select t.id, t.nonce, c.depth + 1 from auth.refresh_tokens t join chain c on t.parent_id = c.id
		)
		select nonce from chain order by depth`, id)
	if err != nil {
		return "", err
	}
	nonces, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return "", err
	}
	if len(nonces) == 0 {
		return "", errRefreshUsed
	}
	for _, n := range nonces {
		token = childToken(token, n)
	}
	return token, nil
}

// User returns the signed-in user of a verified token whose session still exists.
func (s *Service) User(ctx context.Context, c *Claims) (*UserJSON, error) {
	var u *userRow
	err := s.asAuth(ctx, pg.ReadOnly, func(tx pgx.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRow(ctx, `select `+userColumns+`
			from auth.sessions s join auth.users u on u.id = s.user_id where s.id = $1 and s.user_id = $2`,
			c.SessionID, c.Subject))
		return err
	})
	if pg.IsNoRows(err) {
		return nil, errSessionNotFound
	} else if err != nil {
		return nil, fmt.Errorf("auth: load user: %w", err)
	}
	j := u.json()
	return &j, nil
}

// Logout scopes, as GoTrue: global ends every session of the user, local only the token's,
// others every session but the token's.
const (
	ScopeGlobal = "global"
	ScopeLocal  = "local"
	ScopeOthers = "others"
)

// Logout ends sessions of the token's user according to scope.
func (s *Service) Logout(ctx context.Context, c *Claims, scope string) error {
	var del string
	args := []any{c.Subject}
	switch scope {
	case "", ScopeGlobal:
		del = `delete from auth.sessions where user_id = $1`
	case ScopeLocal:
		del, args = `delete from auth.sessions where user_id = $1 and id = $2`, append(args, c.SessionID)
	case ScopeOthers:
		del, args = `delete from auth.sessions where user_id = $1 and id <> $2`, append(args, c.SessionID)
	default:
		return validationError(fmt.Sprintf("Unsupported logout scope %q", scope))
	}
	err := s.asAuth(ctx, pg.ReadWrite, func(tx pgx.Tx) error {
		var alive bool
		if err := tx.QueryRow(ctx, `select exists (select 1 from auth.sessions where id = $1 and user_id = $2)`,
			c.SessionID, c.Subject).Scan(&alive); err != nil {
			return err
		}
		if !alive {
			return errSessionNotFound
		}
		_, err := tx.Exec(ctx, del, args...)
		return err
	})
	if err == nil || isAPIError(err) {
		return err
	}
	return fmt.Errorf("auth: logout: %w", err)
}
