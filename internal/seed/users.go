package seed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"
)

// User is one account as `masthead users list` shows it.
type User struct {
	ID          string
	Email       string
	Name        string
	Memberships []Membership
}

// Membership is a user's role in one project.
type Membership struct {
	Project string `json:"project"` // the project's slug
	Role    string `json:"role"`
}

// Roles are the project roles DESIGN.md defines, for validating input before the database does.
var Roles = []string{"owner", "lead", "editor", "reviewer", "viewer"}

// DefaultPasswordMinLength is the shortest password CreateUser and ResetPassword accept when
// their caller names no other (the service's default MASTHEAD_PASSWORD_MIN_LENGTH).
const DefaultPasswordMinLength = 8

// checkPassword applies the service's password rule to one an operator sets: at least minLength
// characters (0 means DefaultPasswordMinLength), as MASTHEAD_PASSWORD_MIN_LENGTH asks of people
// setting their own, and at most the 72 bytes bcrypt reads.
func checkPassword(password string, minLength int) error {
	if minLength <= 0 {
		minLength = DefaultPasswordMinLength
	}
	if utf8.RuneCountInString(password) < minLength {
		return fmt.Errorf("the password must be at least %d characters (MASTHEAD_PASSWORD_MIN_LENGTH)", minLength)
	}
	if len(password) > 72 {
		return errors.New("the password must be at most 72 bytes (bcrypt reads no more)")
	}
	return nil
}

// CreateUser makes a confirmed account with a password of at least minPassword characters (see
// checkPassword), hashed at bcrypt cost (see hashPassword), and, when projectSlug is not empty,
// a membership with role in that project; both or neither happen. It refuses an email that
// already has an account, so a typo cannot silently reset someone's password.
func CreateUser(ctx context.Context, ownerURL, email, password string, minPassword, cost int, projectSlug, role string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" || !strings.Contains(email, "@") {
		return "", fmt.Errorf("%q is not an email address", email)
	}
	if err := checkPassword(password, minPassword); err != nil {
		return "", err
	}
	if projectSlug != "" {
		if err := checkRole(role); err != nil {
			return "", err
		}
	}
	hash, err := hashPassword(password, cost)
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		return "", fmt.Errorf("cannot connect to the database: %w", err)
	}
	defer conn.Close(ctx)

	var id string
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var created bool
		id, created, err = insertUser(ctx, tx, email, "", hash)
		if err != nil {
			return err
		}
		if !created {
			return fmt.Errorf("a user with email %s already exists", email)
		}
		if projectSlug == "" {
			return nil
		}
		tag, err := tx.Exec(ctx, `
			insert into public.project_members (project_id, user_id, role)
			select p.id, $2, $3 from public.projects p where p.slug = $1`, projectSlug, id, role)
		if err != nil {
			return fmt.Errorf("add membership: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("project %q not found", projectSlug)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// ListUsers returns every account with its memberships, ordered by email.
func ListUsers(ctx context.Context, ownerURL string) ([]User, error) {
	conn, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the database: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
		select u.id::text, u.email, coalesce(pf.display_name, ''),
		       coalesce(json_agg(json_build_object('project', p.slug, 'role', m.role) order by p.slug)
		                  filter (where m.project_id is not null), '[]')
		from auth.users u
		left join public.profiles pf on pf.id = u.id
		left join public.project_members m on m.user_id = u.id
		left join public.projects p on p.id = m.project_id
		group by u.id, pf.display_name
		order by lower(u.email)`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	users, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (User, error) {
		var u User
		err := r.Scan(&u.ID, &u.Email, &u.Name, &u.Memberships)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return users, nil
}

// hashPassword hashes password at bcrypt cost, the service's MASTHEAD_BCRYPT_COST; 0 means
// bcrypt's default, 10, which is the service's default too. The service checks a sign-in with an
// unknown email against a hash of that cost, so an account hashed at another one would answer
// faster or slower than an unknown email does, and would cost what the operator did not choose.
func hashPassword(password string, cost int) (string, error) {
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("seed: hash password: %w", err)
	}
	return string(h), nil
}

// insertUser adds a confirmed account unless the email is taken (case-insensitively, as the
// unique index says) and returns its id either way; created says which. The profile row
// comes from the users_sync_profile trigger, with name as the display name when given.
func insertUser(ctx context.Context, tx pgx.Tx, email, name, hash string) (id string, created bool, err error) {
	meta := map[string]string{}
	if name != "" {
		meta["name"] = name
	}
	err = tx.QueryRow(ctx, `
		insert into auth.users (email, encrypted_password, email_confirmed_at, raw_user_meta_data)
		values ($1, $2, now(), $3)
		on conflict (lower(email)) do nothing
		returning id::text`, email, hash, meta).Scan(&id)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", false, fmt.Errorf("seed: create user %s: %w", email, err)
	}
	err = tx.QueryRow(ctx, `select id::text from auth.users where lower(email) = lower($1)`, email).Scan(&id)
	if err != nil {
		return "", false, fmt.Errorf("seed: find user %s: %w", email, err)
	}
	return id, false, nil
}
