package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// UserUpdate is what PUT /auth/v1/user changes; nil and "" fields are left alone.
type UserUpdate struct {
	// Name becomes user_metadata.name, which is the profile's display name.
	Name *string
	// Password is the new password; CurrentPassword proves the person when their sign-in is
	// older than the service's reauthentication window.
	Password        string
	CurrentPassword string
}

// UpdateUser is PUT /auth/v1/user (supabase-js's updateUser). A refusal is an *Error with
// GoTrue's code: weak_password, same_password, reauthentication_needed, invalid_credentials.
func (c *Client) UpdateUser(ctx context.Context, accessToken string, u UserUpdate) (*User, error) {
	body := map[string]any{}
	if u.Name != nil {
		body["data"] = map[string]string{"name": *u.Name}
	}
	if u.Password != "" {
		body["password"] = u.Password
	}
	if u.CurrentPassword != "" {
		body["current_password"] = u.CurrentPassword
	}
	res, err := c.do(ctx, request{method: http.MethodPut, path: "/auth/v1/user", token: accessToken, body: body})
	if err != nil {
		return nil, err
	}
	var out User
	if err := json.Unmarshal(res.body, &out); err != nil {
		return nil, fmt.Errorf("client: decode user: %w", err)
	}
	return &out, nil
}

// AuthSession is one of the person's sign-in sessions (GET /auth/v1/user/sessions).
type AuthSession struct {
	ID          string     `json:"id"`
	CreatedAt   time.Time  `json:"created_at"`
	RefreshedAt *time.Time `json:"refreshed_at"`
	UserAgent   string     `json:"user_agent"`
	IP          string     `json:"ip"`
	ClientName  string     `json:"client_name"`
	Current     bool       `json:"current"`
}

// Sessions lists the caller's sessions, newest first, marking the one of accessToken.
func (c *Client) Sessions(ctx context.Context, accessToken string) ([]AuthSession, error) {
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/auth/v1/user/sessions", token: accessToken})
	if err != nil {
		return nil, err
	}
	var out []AuthSession
	if err := json.Unmarshal(res.body, &out); err != nil {
		return nil, fmt.Errorf("client: decode sessions: %w", err)
	}
	return out, nil
}

// Invitation is what an invitation link offers, as POST /auth/v1/invite/lookup describes it.
type Invitation struct {
	ProjectSlug   string    `json:"project_slug"`
	ProjectName   string    `json:"project_name"`
	Email         string    `json:"email"`
	Role          string    `json:"role"`
	ExpiresAt     time.Time `json:"expires_at"`
	AccountExists bool      `json:"account_exists"`
}

// LookupInvitation describes the invitation of token; an unknown or used one is an *Error
// with status 404, an expired one 403 (code otp_expired).
func (c *Client) LookupInvitation(ctx context.Context, token string) (*Invitation, error) {
	res, err := c.do(ctx, request{method: http.MethodPost, path: "/auth/v1/invite/lookup", body: map[string]string{"token": token}})
	if err != nil {
		return nil, err
	}
	var out Invitation
	if err := json.Unmarshal(res.body, &out); err != nil {
		return nil, fmt.Errorf("client: decode invitation: %w", err)
	}
	return &out, nil
}

// AcceptInvitation accepts the invitation of token: a newcomer's account is made with password
// and name, someone with an account gives its password. The answer is their new session and
// the invitation it used.
func (c *Client) AcceptInvitation(ctx context.Context, token, password, name string) (*Session, *Invitation, error) {
	body := map[string]any{"token": token, "password": password}
	if name != "" {
		body["data"] = map[string]string{"name": name}
	}
	res, err := c.do(ctx, request{method: http.MethodPost, path: "/auth/v1/invite/accept", body: body})
	if err != nil {
		return nil, nil, err
	}
	var out struct {
		Session
		Invitation Invitation `json:"invitation"`
	}
	if err := json.Unmarshal(res.body, &out); err != nil || out.AccessToken == "" || out.Invitation.ProjectSlug == "" {
		return nil, nil, fmt.Errorf("client: decode accepted invitation: %v", err)
	}
	out.Received = time.Now()
	return &out.Session, &out.Invitation, nil
}

// MemberRow is one member of a project with the profile co-members see.
type MemberRow struct {
	UserID    string    `json:"user_id"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	Profile   struct {
		Email       string `json:"email"`
		DisplayName string `json:"display_name"`
	} `json:"profile"`
}

// PendingInvitation is an invitation nobody has accepted yet, as owners see it.
type PendingInvitation struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Members lists a project's members, longest-standing first, those who joined together (a
// project's first members, a seed) by name, so the list reads the same on every visit.
func (c *Client) Members(ctx context.Context, accessToken, projectID string) ([]MemberRow, error) {
	var out []MemberRow
	_, err := c.Get(ctx, accessToken, From("project_members").
		Select("user_id,role,created_at,profile:profiles(email,display_name)").
		Eq("project_id", projectID).Order("created_at.asc,profile(display_name).asc,user_id.asc"), &out)
	return out, err
}

// Invitations lists a project's pending invitations, newest first; RLS shows them to owners
// only (to anyone else the list is empty).
func (c *Client) Invitations(ctx context.Context, accessToken, projectID string) ([]PendingInvitation, error) {
	var out []PendingInvitation
	_, err := c.Get(ctx, accessToken, From("invitations").Select("id,email,role,created_at,expires_at").
		Eq("project_id", projectID).Filter("accepted_at", "is", "null").Order("created_at.desc"), &out)
	return out, err
}

// NewInvitation is the answer of invite_member: the token exists only here and in the link.
type NewInvitation struct {
	ID        string    `json:"invitation_id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// InviteMember invites email to a project with role, as the caller (an owner, or a 403).
func (c *Client) InviteMember(ctx context.Context, accessToken, projectID, email, role string) (*NewInvitation, error) {
	var out []NewInvitation
	err := c.RPC(ctx, accessToken, "invite_member", map[string]string{"project_id": projectID, "email": email, "role": role}, &out)
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, fmt.Errorf("client: invite_member answered %d rows", len(out))
	}
	return &out[0], nil
}

// CreateProject starts a project with the caller as its owner (create_project).
func (c *Client) CreateProject(ctx context.Context, accessToken, slug, name, timezone string, channels []string) (*Project, error) {
	if channels == nil {
		channels = []string{}
	}
	var p Project
	err := c.RPC(ctx, accessToken, "create_project",
		map[string]any{"slug": slug, "name": name, "timezone": timezone, "default_channels": channels}, &p)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// errNothingChanged is a write RLS let through to no row: the caller may not change it, or it
// is not there. PostgREST answers such writes with an empty list.
func errNothingChanged(what string) *Error {
	return &Error{Status: http.StatusForbidden, Message: "only an owner of the project can change " + what}
}

// write changes the rows matching q (see changed) and reports an *Error with status 403 when
// no row changed.
func (c *Client) write(ctx context.Context, accessToken string, q *Query, body any, what string) error {
	ok, err := c.changed(ctx, accessToken, q, body)
	if err == nil && !ok {
		return errNothingChanged(what)
	}
	return err
}

// SetMemberRole changes a member's role; the last owner cannot be demoted (409).
func (c *Client) SetMemberRole(ctx context.Context, accessToken, projectID, userID, role string) error {
	return c.write(ctx, accessToken, From("project_members").Select("user_id").Eq("project_id", projectID).Eq("user_id", userID),
		map[string]string{"role": role}, "roles")
}

// RemoveMember removes a member from a project; the last owner cannot be removed (409).
func (c *Client) RemoveMember(ctx context.Context, accessToken, projectID, userID string) error {
	return c.write(ctx, accessToken, From("project_members").Select("user_id").Eq("project_id", projectID).Eq("user_id", userID),
		nil, "members")
}

// RevokeInvitation deletes a pending invitation, so its link stops working.
func (c *Client) RevokeInvitation(ctx context.Context, accessToken, projectID, id string) error {
	return c.write(ctx, accessToken, From("invitations").Select("id").Eq("project_id", projectID).Eq("id", id), nil, "invitations")
}

// ProjectUpdate is what an owner edits about a project.
type ProjectUpdate struct {
	Name            string   `json:"name"`
	Timezone        string   `json:"timezone"`
	DefaultChannels []string `json:"default_channels"`
}

// UpdateProject saves a project's name, time zone and default channels.
func (c *Client) UpdateProject(ctx context.Context, accessToken, projectID string, u ProjectUpdate) error {
	if u.DefaultChannels == nil {
		u.DefaultChannels = []string{}
	}
	return c.write(ctx, accessToken, From("projects").Select("id").Eq("id", projectID), u, "the project")
}

// AddCollection adds a collection (a section or a campaign) to a project.
func (c *Client) AddCollection(ctx context.Context, accessToken, projectID, slug, name, kind string) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/rest/v1/collections", token: accessToken,
		body: map[string]string{"project_id": projectID, "slug": slug, "name": name, "kind": kind}})
	return err
}

// RemoveCollection deletes a collection that holds no publications; one that does is an *Error
// with status 409 (the publications would lose it).
func (c *Client) RemoveCollection(ctx context.Context, accessToken, projectID, id string) error {
	return c.write(ctx, accessToken, From("collections").Select("id").Eq("project_id", projectID).Eq("id", id), nil, "collections")
}
