package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"masthead/internal/pg"
)

// Bounds of what a person writes about themselves. The name is the profile's display_name
// (public.profiles, at most 100 characters); the metadata object as a whole is bounded so that
// it stays small in every access token.
const (
	maxNameChars    = 100
	maxUserMetaSize = 16 << 10
)

// UpdateParams is the body of PUT /auth/v1/user, as supabase-js's updateUser sends it, plus
// current_password, which Masthead accepts in place of a recent sign-in for a password change.
type UpdateParams struct {
	Email           string          `json:"email"`
	Password        *string         `json:"password"`
	Data            json.RawMessage `json:"data"`
	Nonce           string          `json:"nonce"`
	CurrentPassword string          `json:"current_password"`
}

// minPassword is the shortest password that may be set.
func (s *Service) minPassword() int {
	if s.opts.PasswordMinLength > 0 {
		return s.opts.PasswordMinLength
	}
	return 8
}

// checkNewPassword refuses a password that is too short (GoTrue's weak_password, 422) or one
// bcrypt cannot take whole (over 72 bytes).
func (s *Service) checkNewPassword(p string) error {
	if utf8.RuneCountInString(p) < s.minPassword() {
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeWeakPassword,
			Msg: fmt.Sprintf("Password should be at least %d characters.", s.minPassword()), Reasons: []string{"length"}}
	}
	if len(p) > 72 || strings.ContainsRune(p, 0) {
		return validationError("Password must be at most 72 bytes and must not contain NUL characters")
	}
	return nil
}

// hashPassword is a bcrypt hash at the configured cost (the cost of the dummy hash, so every
// comparison takes the same time).
func (s *Service) hashPassword(p string) (string, error) {
	cost := s.opts.BcryptCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(p), cost)
	if err != nil {
		return "", fmt.Errorf("auth: hash password: %w", err)
	}
	return string(h), nil
}

// mergeUserMeta applies patch to meta as GoTrue does: each key of patch is set, a null deletes
// it. The name (the profile's display name) must be a string of at most maxNameChars.
func mergeUserMeta(meta, patch json.RawMessage) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return nil, apiError(http.StatusBadRequest, CodeBadJSON, "data must be a JSON object")
	}
	m := map[string]json.RawMessage{}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m); err != nil {
			return nil, fmt.Errorf("auth: stored user_metadata: %w", err)
		}
	}
	for k, v := range p {
		if string(v) == "null" {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	if raw, ok := m["name"]; ok {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, validationError("user_metadata.name must be a string")
		}
		if strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > maxNameChars || strings.ContainsFunc(name, isControl) {
			return nil, validationError(fmt.Sprintf("user_metadata.name must be 1 to %d characters without control characters", maxNameChars))
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("auth: encode user_metadata: %w", err)
	}
	if len(out) > maxUserMetaSize {
		return nil, validationError(fmt.Sprintf("user_metadata must be at most %d bytes", maxUserMetaSize))
	}
	return out, nil
}

// UpdateUser is GoTrue's PUT /user for the token's user: data is merged into user_metadata
// (its name becomes the profile's display name, through the users_sync_profile trigger), and a
// new password is set when the person signed in within the reauthentication window or gives
// current_password. As GoTrue does, a password change ends the user's other sessions. Email
// changes need a confirmation mail, which Masthead does not send, so they are refused.
func (s *Service) UpdateUser(ctx context.Context, c *Claims, p UpdateParams, client Client) (*UserJSON, error) {
	if p.Nonce != "" {
		return nil, apiError(http.StatusUnprocessableEntity, CodeReauthenticationInvalid,
			"Reauthentication codes are not sent by this server: send current_password with the new password")
	}
	var (
		u        *userRow
		hash     *string
		signedIn time.Time
		app      bool
	)
	err := s.asAuth(ctx, pg.ReadOnly, func(tx pgx.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRow(ctx, `select `+userColumns+`, u.encrypted_password, s.created_at, s.oauth_client_id is not null
			from auth.sessions s join auth.users u on u.id = s.user_id where s.id = $1 and s.user_id = $2`,
			c.SessionID, c.Subject), &hash, &signedIn, &app)
		return err
	})
	if pg.IsNoRows(err) {
		return nil, errSessionNotFound
	} else if err != nil {
		return nil, fmt.Errorf("auth: load user: %w", err)
	}
	if e := strings.TrimSpace(p.Email); e != "" && !strings.EqualFold(e, u.Email) {
		return nil, apiError(http.StatusUnprocessableEntity, CodeEmailChangeUnsupported,
			"Changing the email address is not supported: ask an administrator")
	}
	meta := u.UserMeta
	if len(p.Data) > 0 && string(p.Data) != "null" {
		if meta, err = mergeUserMeta(u.UserMeta, p.Data); err != nil {
			return nil, err
		}
	}
	var newHash *string
	if p.Password != nil && app {
		// An app the person connected acts for them, but never holds the keys to the account.
		return nil, apiError(http.StatusForbidden, CodeAppSessionRefused, "A connected app cannot change the password; the person does that in Masthead")
	}
	if p.Password != nil {
		if newHash, err = s.passwordChange(c, u, hash, signedIn, *p.Password, p.CurrentPassword, client); err != nil {
			return nil, err
		}
	}
	err = s.asAuth(ctx, pg.ReadWrite, func(tx pgx.Tx) error {
		var err error
		// The stored hash must still be the one the checks above compared against.
		u, err = scanUser(tx.QueryRow(ctx, `
			update auth.users u set raw_user_meta_data = $2, encrypted_password = coalesce($3, u.encrypted_password),
			       updated_at = now()
			 where u.id = $1 and u.encrypted_password is not distinct from $4
			returning `+userColumns, c.Subject, meta, newHash, hash))
		if pg.IsNoRows(err) {
			return apiError(http.StatusConflict, CodeConflict, "The password was changed meanwhile; sign in again")
		} else if err != nil || newHash == nil {
			return err
		}
		_, err = tx.Exec(ctx, `delete from auth.sessions where user_id = $1 and id <> $2`, c.Subject, c.SessionID)
		return err
	})
	if err != nil {
		if isAPIError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("auth: update user: %w", err)
	}
	if newHash != nil {
		s.log.InfoContext(ctx, "auth: password changed; other sessions ended", "user_id", u.ID)
	}
	j := u.json()
	return &j, nil
}

// passwordChange checks a password change and returns the new hash. Without current_password
// the session must have begun within the reauthentication window (GoTrue's secure password
// change asks for a reauthentication nonce instead; we take the current password). A wrong
// current password counts against the sign-in limits, like a sign-in.
func (s *Service) passwordChange(c *Claims, u *userRow, stored *string, signedIn time.Time, next, current string, client Client) (*string, error) {
	if err := s.checkNewPassword(next); err != nil {
		return nil, err
	}
	if stored == nil || *stored == "" {
		// Someone who signs in through a provider has no password to confirm: a recent
		// sign-in is the only proof.
		stored = nil
	}
	switch {
	case current != "":
		if err := s.limit(client, strings.ToLower(u.Email)); err != nil {
			return nil, err
		}
		if stored == nil || bcrypt.CompareHashAndPassword([]byte(*stored), []byte(current)) != nil {
			return nil, apiError(http.StatusBadRequest, CodeInvalidCredentials, "The current password is not correct")
		}
	case s.now().Sub(signedIn) > s.opts.ReauthWindow:
		return nil, apiError(http.StatusBadRequest, CodeReauthenticationNeeded,
			fmt.Sprintf("Password update requires reauthentication: send current_password, or sign in again (a password may be changed without it for %s after signing in)", s.opts.ReauthWindow))
	}
	if stored != nil && bcrypt.CompareHashAndPassword([]byte(*stored), []byte(next)) == nil {
		return nil, apiError(http.StatusUnprocessableEntity, CodeSamePassword, "New password should be different from the old password.")
	}
	h, err := s.hashPassword(next)
	if err != nil {
		return nil, err
	}
	return &h, nil
}

func (s *Service) updateUser(c echo.Context) error {
	claims, err := s.claims(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	var p UpdateParams
	if err := json.NewDecoder(c.Request().Body).Decode(&p); err != nil {
		return writeError(c, s.log, apiError(http.StatusBadRequest, CodeBadJSON, "Could not parse request body as JSON"))
	}
	u, err := s.UpdateUser(c.Request().Context(), claims, p, Client{IP: c.RealIP(), UserAgent: c.Request().UserAgent()})
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(http.StatusOK, u)
}

// signup is GoTrue's POST /signup on an instance with sign-ups disabled: accounts come from
// invitations and `masthead users create`.
func (s *Service) signup(c echo.Context) error {
	return writeError(c, s.log, apiError(http.StatusUnprocessableEntity, CodeSignupDisabled, "Signups not allowed for this instance"))
}

// SessionJSON is one of the person's sessions, for GET /auth/v1/user/sessions (not in GoTrue;
// the account page lists them so a person can end the ones they do not recognise).
type SessionJSON struct {
	ID          string     `json:"id"`
	CreatedAt   time.Time  `json:"created_at"`
	RefreshedAt *time.Time `json:"refreshed_at,omitempty"`
	UserAgent   string     `json:"user_agent"`
	IP          string     `json:"ip"`
	// ClientName is the app the session belongs to, for sessions an OAuth client started.
	ClientName string `json:"client_name,omitempty"`
	Current    bool   `json:"current"`
}

// Sessions lists the token's user's sessions, newest first.
func (s *Service) Sessions(ctx context.Context, c *Claims) ([]SessionJSON, error) {
	var out []SessionJSON
	err := s.asAuth(ctx, pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			select s.id::text, s.created_at, s.refreshed_at, coalesce(s.user_agent, ''), coalesce(host(s.ip), ''),
			       coalesce(oc.client_name, ''), s.id = $2
			  from auth.sessions s left join auth.oauth_clients oc on oc.id = s.oauth_client_id
			 where s.user_id = $1
			 order by s.created_at desc`, c.Subject, c.SessionID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (SessionJSON, error) {
			var j SessionJSON
			err := r.Scan(&j.ID, &j.CreatedAt, &j.RefreshedAt, &j.UserAgent, &j.IP, &j.ClientName, &j.Current)
			return j, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("auth: list sessions: %w", err)
	}
	for _, j := range out {
		if j.Current {
			return out, nil
		}
	}
	return nil, errSessionNotFound
}

func (s *Service) sessions(c echo.Context) error {
	claims, err := s.claims(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	out, err := s.Sessions(c.Request().Context(), claims)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(http.StatusOK, out)
}

var errBadInviteToken = apiError(http.StatusNotFound, CodeInviteNotFound, "This invitation link is not valid")

// inviteError turns the refusals of app.accept_invitation into GoTrue-shaped errors.
func inviteError(err error) error {
	f, ok := pg.ErrorFields(err)
	if !ok {
		return err
	}
	if e := inviteRefusal(f.Code); e != nil {
		return e
	}
	return err
}

// inviteRefusal words the SQLSTATE of an invitation refusal; nil for any other code.
func inviteRefusal(code string) *Error {
	switch code {
	case "PT404":
		return errBadInviteToken
	case "PT409":
		return apiError(http.StatusNotFound, CodeInviteNotFound, "This invitation has already been used")
	case "PT410":
		return apiError(http.StatusForbidden, CodeInviteExpired, "This invitation has expired: ask for a new one")
	case "42501":
		return apiError(http.StatusForbidden, CodeInviteNotFound, "This invitation is for another email address")
	}
	return nil
}
