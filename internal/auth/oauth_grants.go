package auth

import (
	"context"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// Grant is one app a person connected (Supabase's OAuthGrant).
type Grant struct {
	Client    ClientSummary `json:"client"`
	Scopes    []string      `json:"scopes"`
	GrantedAt time.Time     `json:"granted_at"`
}

// Grants lists the apps the token's person connected, most recent first.
func (s *Service) Grants(ctx context.Context, claims *Claims) ([]Grant, error) {
	out := []Grant{}
	err := s.asAuthTx(ctx, "list grants", pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			select c.id::text, coalesce(c.client_name, ''), coalesce(c.client_uri, ''), coalesce(c.logo_uri, ''),
			  g.scopes, g.granted_at
			from auth.oauth_consents g join auth.oauth_clients c on c.id = g.client_id
			where g.user_id = $1 order by g.granted_at desc, c.id`, claims.Subject)
		if err != nil {
			return err
		}
		out, err = pgx.AppendRows(out, rows, func(r pgx.CollectableRow) (Grant, error) {
			var g Grant
			err := r.Scan(&g.Client.ID, &g.Client.Name, &g.Client.URI, &g.Client.LogoURI, &g.Scopes, &g.GrantedAt)
			return g, err
		})
		return err
	})
	return out, err
}

var errGrantNotFound = apiError(http.StatusNotFound, "oauth_grant_not_found", "No connected app with this client_id")

// RevokeGrant disconnects an app: the consent goes, every session the app holds for the person
// ends (so its access tokens stop working on every surface and its refresh tokens are dead),
// and codes not yet exchanged can no longer be.
func (s *Service) RevokeGrant(ctx context.Context, claims *Claims, clientID string) error {
	if !isUUID(clientID) {
		return errGrantNotFound
	}
	return s.asAuthTx(ctx, "revoke grant", pg.ReadWrite, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `delete from auth.oauth_consents where user_id = $1 and client_id = $2`, claims.Subject, clientID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errGrantNotFound
		}
		if _, err := tx.Exec(ctx, `delete from auth.sessions where user_id = $1 and oauth_client_id = $2`, claims.Subject, clientID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `delete from auth.oauth_authorizations where user_id = $1 and client_id = $2`, claims.Subject, clientID)
		return err
	})
}

// listGrants is GET /user/oauth/grants.
func (o *oauthServer) listGrants(c echo.Context) error {
	claims, err := o.userOf(c)
	if err != nil {
		return writeError(c, o.log, err)
	}
	gs, err := o.Grants(c.Request().Context(), claims)
	if err != nil {
		return writeError(c, o.log, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, gs)
}

// revokeGrant is DELETE /user/oauth/grants?client_id=….
func (o *oauthServer) revokeGrant(c echo.Context) error {
	claims, err := o.userOf(c)
	if err != nil {
		return writeError(c, o.log, err)
	}
	if err := o.RevokeGrant(c.Request().Context(), claims, c.QueryParam("client_id")); err != nil {
		return writeError(c, o.log, err)
	}
	return c.NoContent(http.StatusNoContent)
}
