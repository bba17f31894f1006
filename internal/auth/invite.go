package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"masthead/internal/pg"
)

// Invitations are accepted here, not over REST: the person has no session yet, accepting sets
// (or checks) their password in schema auth, and starts their first session. Owners create
// invitations over REST (public.invite_member, decided by RLS); the link carries a token whose
// SHA-256 alone is stored. Only the identity service's role may call app.invitation_by_token
// and app.accept_invitation, which check the token hash, the expiry and one-time use.

// InvitationJSON is what POST /auth/v1/invite/lookup answers about a valid invitation, so the
// acceptance page can say what it is joining and whether the person already has an account.
type InvitationJSON struct {
	ProjectSlug   string    `json:"project_slug"`
	ProjectName   string    `json:"project_name"`
	Email         string    `json:"email"`
	Role          string    `json:"role"`
	ExpiresAt     time.Time `json:"expires_at"`
	AccountExists bool      `json:"account_exists"`
}

type invitation struct {
	InvitationJSON
	accepted, expired bool
	banned            bool
	userID            string
	hash              *string
}

// lookupInvitation reads the invitation of token and its addressee's account, if any.
func (s *Service) lookupInvitation(ctx context.Context, token string) (*invitation, error) {
	if token == "" || len(token) > 200 {
		return nil, errBadInviteToken
	}
	inv := &invitation{}
	err := s.asAuth(ctx, pg.ReadOnly, func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `select id::text, project_slug, project_name, email, role, expires_at, accepted, expired
			from app.invitation_by_token($1)`, hashToken(token)).Scan(&id, &inv.ProjectSlug, &inv.ProjectName,
			&inv.Email, &inv.Role, &inv.ExpiresAt, &inv.accepted, &inv.expired)
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `select id::text, encrypted_password, coalesce(banned_until > now(), false)
			from auth.users where lower(email) = lower($1)`, inv.Email).Scan(&inv.userID, &inv.hash, &inv.banned)
		if pg.IsNoRows(err) {
			return nil
		}
		inv.AccountExists = err == nil
		return err
	})
	switch {
	case pg.IsNoRows(err):
		return nil, errBadInviteToken
	case err != nil:
		return nil, fmt.Errorf("auth: look up invitation: %w", err)
	case inv.accepted:
		return nil, inviteRefusal("PT409")
	case inv.expired:
		return nil, inviteRefusal("PT410")
	}
	return inv, nil
}

// LookupInvitation describes the invitation of token, or refuses an unknown, used or expired one.
func (s *Service) LookupInvitation(ctx context.Context, token string, c Client) (*InvitationJSON, error) {
	if err := s.limit(c, ""); err != nil {
		return nil, err
	}
	inv, err := s.lookupInvitation(ctx, token)
	if err != nil {
		return nil, err
	}
	return &inv.InvitationJSON, nil
}

// AcceptedJSON is what POST /auth/v1/invite/accept answers: the new session, as a sign-in
// answers it, and the invitation it used, so a client can say what was joined without looking
// the invitation up again (each lookup takes a token of the caller's address's rate limit).
type AcceptedJSON struct {
	*TokenResponse
	Invitation InvitationJSON `json:"invitation"`
}

// AcceptParams is the body of POST /auth/v1/invite/accept.
type AcceptParams struct {
	Token    string          `json:"token"`
	Password string          `json:"password"`
	Data     json.RawMessage `json:"data"`
}

// AcceptInvitation joins the invitation's addressee to its project and signs them in. Someone
// new gets an account with password (and data as user_metadata); someone who has an account
// proves it with their password, which is not changed, so a forwarded link cannot take over an
// account. The invitation is used, the membership made and the session started in one
// transaction.
func (s *Service) AcceptInvitation(ctx context.Context, p AcceptParams, c Client) (*AcceptedJSON, error) {
	if err := s.limit(c, ""); err != nil {
		return nil, err
	}
	inv, err := s.lookupInvitation(ctx, p.Token)
	if err != nil {
		return nil, err
	}
	if err := s.limit(c, strings.ToLower(inv.Email)); err != nil {
		return nil, err
	}
	var newHash string
	meta := json.RawMessage(`{}`)
	switch {
	case inv.banned:
		return nil, errUserBanned
	case inv.AccountExists && (inv.hash == nil || *inv.hash == ""):
		return nil, validationError("This email signs in through a provider: sign in first, then open the invitation link")
	case inv.AccountExists:
		if bcrypt.CompareHashAndPassword([]byte(*inv.hash), []byte(p.Password)) != nil {
			return nil, apiError(http.StatusBadRequest, CodeInvalidCredentials,
				"You already have an account with this email: enter its password")
		}
	default:
		if err := s.checkNewPassword(p.Password); err != nil {
			return nil, err
		}
		if len(p.Data) > 0 && string(p.Data) != "null" {
			if meta, err = mergeUserMeta(nil, p.Data); err != nil {
				return nil, err
			}
		}
		if newHash, err = s.hashPassword(p.Password); err != nil {
			return nil, err
		}
	}
	refresh := randomToken(32)
	var (
		u       *userRow
		sid     string
		started time.Time
	)
	err = s.asAuth(ctx, pg.ReadWrite, func(tx pgx.Tx) error {
		uid := inv.userID
		if uid == "" {
			err := tx.QueryRow(ctx, `
				insert into auth.users (email, encrypted_password, email_confirmed_at, raw_user_meta_data)
				values ($1, $2, now(), $3) returning id::text`, inv.Email, newHash, meta).Scan(&uid)
			if f, ok := pg.ErrorFields(err); ok && f.Code == "23505" {
				return apiError(http.StatusConflict, CodeConflict, "An account with this email was just created: open the link again")
			} else if err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `select * from app.accept_invitation($1, $2)`, hashToken(p.Token), uid); err != nil {
			return inviteError(err)
		}
		var err error
		u, sid, started, err = startSession(ctx, tx, uid, c, sessionClient{}, refresh)
		return err
	})
	if err != nil {
		if isAPIError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("auth: accept invitation: %w", err)
	}
	s.log.InfoContext(ctx, "auth: invitation accepted", "user_id", u.ID, "project", inv.ProjectSlug, "role", inv.Role)
	tokens, err := s.issue(u, sid, "aal1", started, refresh, sessionClient{})
	if err != nil {
		return nil, err
	}
	used := inv.InvitationJSON
	used.AccountExists = true // it does now, whether it did before or not
	return &AcceptedJSON{TokenResponse: tokens, Invitation: used}, nil
}

func (s *Service) lookupInvite(c echo.Context) error {
	var p struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&p); err != nil {
		return writeError(c, s.log, apiError(http.StatusBadRequest, CodeBadJSON, "Could not parse request body as JSON"))
	}
	inv, err := s.LookupInvitation(c.Request().Context(), p.Token, Client{IP: c.RealIP(), UserAgent: c.Request().UserAgent()})
	if err != nil {
		return writeError(c, s.log, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, inv)
}

func (s *Service) acceptInvite(c echo.Context) error {
	var p AcceptParams
	if err := json.NewDecoder(c.Request().Body).Decode(&p); err != nil {
		return writeError(c, s.log, apiError(http.StatusBadRequest, CodeBadJSON, "Could not parse request body as JSON"))
	}
	resp, err := s.AcceptInvitation(c.Request().Context(), p, Client{IP: c.RealIP(), UserAgent: c.Request().UserAgent()})
	if err != nil {
		return writeError(c, s.log, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, resp)
}
