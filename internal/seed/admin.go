package seed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// The operator's account changes for `masthead users`. They run as the schema owner (no person
// may make them), each in one transaction, and they answer in words an operator can act on:
// no package prefixes, the database's own refusals (the last owner) by their message and hint.

// adminTx runs fn in one transaction on the owner's connection.
func adminTx(ctx context.Context, ownerURL string, fn func(pgx.Tx) error) error {
	conn, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		return fmt.Errorf("cannot connect to the database: %w", err)
	}
	defer conn.Close(ctx)
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// Membership changes made here are the operator's: the trail says so.
		if _, err := tx.Exec(ctx, `select set_config('masthead.member_via', 'admin', true)`); err != nil {
			return err
		}
		return fn(tx)
	})
	if f, ok := pg.ErrorFields(err); ok && strings.HasPrefix(f.Code, "PT") {
		msg := f.Message
		if f.Hint != "" {
			msg += " (" + f.Hint + ")"
		}
		return errors.New(msg)
	}
	return err
}

// userID finds the account of email (case-insensitively).
func userID(ctx context.Context, tx pgx.Tx, email string) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `select id::text from auth.users where lower(email) = lower($1)`, strings.TrimSpace(email)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("no account has the email %s", email)
	}
	return id, err
}

func checkRole(role string) error {
	if !slices.Contains(Roles, role) {
		return fmt.Errorf("role %q is not one of %s", role, strings.Join(Roles, ", "))
	}
	return nil
}

// AddMember gives an existing account a role in a project it does not belong to yet.
func AddMember(ctx context.Context, ownerURL, email, projectSlug, role string) error {
	if err := checkRole(role); err != nil {
		return err
	}
	return adminTx(ctx, ownerURL, func(tx pgx.Tx) error {
		id, err := userID(ctx, tx, email)
		if err != nil {
			return err
		}
		var project string
		var member bool
		err = tx.QueryRow(ctx, `select p.id::text, exists (select 1 from public.project_members m where m.project_id = p.id and m.user_id = $2)
			from public.projects p where p.slug = $1`, projectSlug, id).Scan(&project, &member)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("no project has the slug %q", projectSlug)
		} else if err != nil {
			return err
		}
		if member {
			return fmt.Errorf("%s is already a member of %s: use 'masthead users role' to change their role", email, projectSlug)
		}
		_, err = tx.Exec(ctx, `insert into public.project_members (project_id, user_id, role) values ($1, $2, $3)`, project, id, role)
		return err
	})
}

// SetRole changes a member's role in a project. The last owner cannot be demoted.
func SetRole(ctx context.Context, ownerURL, email, projectSlug, role string) error {
	if err := checkRole(role); err != nil {
		return err
	}
	return adminTx(ctx, ownerURL, func(tx pgx.Tx) error {
		id, err := userID(ctx, tx, email)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `update public.project_members m set role = $3 from public.projects p
			where p.id = m.project_id and p.slug = $1 and m.user_id = $2`, projectSlug, id, role)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%s is not a member of a project with the slug %q: use 'masthead users add'", email, projectSlug)
		}
		return nil
	})
}

// ResetPassword sets an account's password of at least minPassword characters (see
// checkPassword), hashed at bcrypt cost (see hashPassword), and ends its sessions, so whoever
// held the old one is signed out everywhere.
func ResetPassword(ctx context.Context, ownerURL, email, password string, minPassword, cost int) error {
	if err := checkPassword(password, minPassword); err != nil {
		return err
	}
	hash, err := hashPassword(password, cost)
	if err != nil {
		return err
	}
	return adminTx(ctx, ownerURL, func(tx pgx.Tx) error {
		id, err := userID(ctx, tx, email)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update auth.users set encrypted_password = $2, updated_at = now() where id = $1`, id, hash); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `delete from auth.sessions where user_id = $1`, id)
		return err
	})
}

// SetDisabled disables an account (it can no longer sign in, and its sessions end at once) or
// enables it again. Its memberships and its work stay.
func SetDisabled(ctx context.Context, ownerURL, email string, disabled bool) error {
	return adminTx(ctx, ownerURL, func(tx pgx.Tx) error {
		id, err := userID(ctx, tx, email)
		if err != nil {
			return err
		}
		until := any(nil)
		if disabled {
			until = "9999-12-31 23:59:59+00" // 'infinity' would not scan into a Go time
		}
		if _, err := tx.Exec(ctx, `update auth.users set banned_until = $2::timestamptz, updated_at = now() where id = $1`, id, until); err != nil {
			return err
		}
		if disabled {
			_, err = tx.Exec(ctx, `delete from auth.sessions where user_id = $1`, id)
		}
		return err
	})
}
