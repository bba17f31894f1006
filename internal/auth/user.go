package auth

import (
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// userColumns is the part of auth.users the service shows; scanUser reads them in this order.
const userColumns = `u.id::text, u.aud, u.role, u.email, u.email_confirmed_at, u.last_sign_in_at,
	u.raw_app_meta_data, u.raw_user_meta_data, u.is_anonymous, u.banned_until, u.created_at, u.updated_at`

type userRow struct {
	ID, Aud, Role, Email string
	EmailConfirmedAt     *time.Time
	LastSignInAt         *time.Time
	AppMeta, UserMeta    json.RawMessage
	IsAnonymous          bool
	BannedUntil          *time.Time
	CreatedAt, UpdatedAt time.Time
}

// scanTargets returns pointers for userColumns, followed by extra.
func (u *userRow) scanTargets(extra ...any) []any {
	return append([]any{&u.ID, &u.Aud, &u.Role, &u.Email, &u.EmailConfirmedAt, &u.LastSignInAt,
		&u.AppMeta, &u.UserMeta, &u.IsAnonymous, &u.BannedUntil, &u.CreatedAt, &u.UpdatedAt}, extra...)
}

func scanUser(row pgx.Row, extra ...any) (*userRow, error) {
	u := &userRow{}
	if err := row.Scan(u.scanTargets(extra...)...); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *userRow) banned(now time.Time) bool {
	return u.BannedUntil != nil && u.BannedUntil.After(now)
}

// UserJSON is the user object of GoTrue's /user and token responses.
type UserJSON struct {
	ID               string          `json:"id"`
	Aud              string          `json:"aud"`
	Role             string          `json:"role"`
	Email            string          `json:"email"`
	EmailConfirmedAt *time.Time      `json:"email_confirmed_at,omitempty"`
	Phone            string          `json:"phone"`
	ConfirmedAt      *time.Time      `json:"confirmed_at,omitempty"`
	LastSignInAt     *time.Time      `json:"last_sign_in_at,omitempty"`
	AppMetadata      json.RawMessage `json:"app_metadata"`
	UserMetadata     json.RawMessage `json:"user_metadata"`
	Identities       []struct{}      `json:"identities"`
	CreatedAt        time.Time       `json:"created_at"`
	UpdatedAt        time.Time       `json:"updated_at"`
	IsAnonymous      bool            `json:"is_anonymous"`
}

func (u *userRow) json() UserJSON {
	return UserJSON{
		ID: u.ID, Aud: u.Aud, Role: u.Role, Email: u.Email,
		EmailConfirmedAt: u.EmailConfirmedAt, ConfirmedAt: u.EmailConfirmedAt, LastSignInAt: u.LastSignInAt,
		AppMetadata: orEmptyObject(u.AppMeta), UserMetadata: orEmptyObject(u.UserMeta),
		Identities: []struct{}{}, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt, IsAnonymous: u.IsAnonymous,
	}
}

func orEmptyObject(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage(`{}`)
	}
	return m
}

// amrEntry is one authentication method reference, as GoTrue puts them in tokens.
type amrEntry struct {
	Method    string `json:"method"`
	Timestamp int64  `json:"timestamp"`
}

// accessClaims are the claims of an access token, in the order GoTrue writes them.
type accessClaims struct {
	Issuer       string          `json:"iss"`
	Subject      string          `json:"sub"`
	Audience     string          `json:"aud"`
	ExpiresAt    int64           `json:"exp"`
	IssuedAt     int64           `json:"iat"`
	Email        string          `json:"email"`
	Phone        string          `json:"phone"`
	AppMetadata  json.RawMessage `json:"app_metadata"`
	UserMetadata json.RawMessage `json:"user_metadata"`
	Role         string          `json:"role"`
	AAL          string          `json:"aal"`
	AMR          []amrEntry      `json:"amr"`
	SessionID    string          `json:"session_id"`
	IsAnonymous  bool            `json:"is_anonymous"`
	// ClientID and Scope are set on tokens of a session an OAuth client started, so every
	// surface (and the database, through auth.jwt()) can tell which app acts for the person.
	ClientID string `json:"client_id,omitempty"`
	Scope    string `json:"scope,omitempty"`
}

// TokenResponse is the body of a successful /token call. Scope is what an OAuth client was
// granted (RFC 6749 5.1), absent for sign-ins.
type TokenResponse struct {
	AccessToken  string   `json:"access_token"`
	TokenType    string   `json:"token_type"`
	ExpiresIn    int      `json:"expires_in"`
	ExpiresAt    int64    `json:"expires_at"`
	RefreshToken string   `json:"refresh_token"`
	Scope        string   `json:"scope,omitempty"`
	User         UserJSON `json:"user"`
}
