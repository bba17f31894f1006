package seed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// actor is a demo account the seed acts as.
type actor struct {
	ID, Email string
}

// caller is how the service would run a request from a: as `authenticated`, with the claims
// of a verified access token, so RLS, the guard trigger and the audit see a real user. Like
// the service for a verified token (migration 019), it also publishes the sub it put in the
// claims as request.jwt.claim.sub, so auth.uid() reads it instead of parsing the claims JSON
// again: the bulk load calls auth.uid() millions of times (every policy, membership lookup and
// guard), and the parse was some 3% of a seeding backend's CPU. There is no session to check
// (the token has no session_id), so no session_id is passed.
func (a actor) caller() pg.Caller {
	claims, _ := json.Marshal(map[string]string{
		"sub": a.ID, "role": pg.RoleAuthenticated, "aud": "authenticated", "email": a.Email,
	})
	c := pg.UserCaller(claims)
	c.Settings = []pg.Setting{{Name: []byte("request.jwt.claim.sub"), Value: []byte(a.ID)}}
	return c
}

// team is one project and the people working in it.
type team struct {
	spec                   *projectSpec
	projectID              string
	lead, editor, reviewer actor
	altLead, altReviewer   *actor            // the multi-project user, where they hold that role
	collections            map[string]string // slug → id
	maxChars               map[string]int    // channel slug → limit
	collectionIDs          []string          // in spec order, for bulk rows
	altMediaIDs            []string          // the demo images with alt text, reused by bulk rows
}

// as runs fn in one transaction as a.
func as(ctx context.Context, pool *pgxpool.Pool, a actor, fn func(pgx.Tx) error) error {
	return pg.WithCaller(ctx, pool, a.caller(), pg.ReadWrite, fn)
}

// setup creates the accounts, projects and memberships as the owner (no user may create a
// project or join one), then has each project's lead create its sections and campaign.
func setup(ctx context.Context, pool *pgxpool.Pool, opts Options) ([]*team, error) {
	type account struct{ email, name string }
	var accounts []account
	for _, p := range projects {
		for _, pr := range []person{p.Lead, p.Editor, p.Reviewer, p.Viewer} {
			accounts = append(accounts, account{email: pr.Local + "@" + p.Domain, name: pr.Name})
		}
	}
	accounts = append(accounts, account{email: multiUser.Email, name: multiUser.Name})

	// The demo accounts share one password, so one bcrypt hash (salt included) serves them
	// all; bcrypt is slow on purpose, and every fresh test database pays for the demo seed.
	hash, err := hashPassword(opts.Password, opts.BcryptCost)
	if err != nil {
		return nil, err
	}

	ids := map[string]string{} // email → id
	var maxChars map[string]int
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, a := range accounts {
			id, _, err := insertUser(ctx, tx, a.email, a.name, hash)
			if err != nil {
				return err
			}
			ids[a.email] = id
		}
		var err error
		maxChars, err = channelLimits(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}

	teams := make([]*team, len(projects))
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for i := range projects {
			p := &projects[i]
			t := &team{spec: p, collections: map[string]string{}, maxChars: maxChars}
			if err := tx.QueryRow(ctx, `
				insert into public.projects (slug, name, default_channels, timezone, site_url)
				values ($1, $2, $3, $4, $5) returning id::text`,
				p.Slug, p.Name, p.Channels, p.Timezone, "https://"+p.Domain).Scan(&t.projectID); err != nil {
				return fmt.Errorf("seed: create project %s: %w", p.Slug, err)
			}
			members := []struct {
				who  person
				role string
				to   *actor
			}{{p.Lead, "lead", &t.lead}, {p.Editor, "editor", &t.editor}, {p.Reviewer, "reviewer", &t.reviewer}, {p.Viewer, "viewer", nil}}
			for _, m := range members {
				email := m.who.Local + "@" + p.Domain
				if err := addMember(ctx, tx, t.projectID, ids[email], m.role); err != nil {
					return err
				}
				if m.to != nil {
					*m.to = actor{ID: ids[email], Email: email}
				}
			}
			if role, ok := multiUser.Roles[p.Slug]; ok {
				multi := &actor{ID: ids[multiUser.Email], Email: multiUser.Email}
				if err := addMember(ctx, tx, t.projectID, multi.ID, role); err != nil {
					return err
				}
				switch role {
				case "lead":
					t.altLead = multi
				case "reviewer":
					t.altReviewer = multi
				}
			}
			teams[i] = t
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	for _, t := range teams {
		err := as(ctx, pool, t.lead, func(tx pgx.Tx) error {
			for _, c := range t.spec.Collections {
				var id string
				if err := tx.QueryRow(ctx, `
					insert into public.collections (project_id, slug, name, kind, description)
					values ($1, $2, $3, $4, $5) returning id::text`,
					t.projectID, c.Slug, c.Name, c.Kind, c.Description).Scan(&id); err != nil {
					return fmt.Errorf("seed: create collection %s/%s: %w", t.spec.Slug, c.Slug, err)
				}
				t.collections[c.Slug] = id
				t.collectionIDs = append(t.collectionIDs, id)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return teams, nil
}

func addMember(ctx context.Context, tx pgx.Tx, projectID, userID, role string) error {
	_, err := tx.Exec(ctx, `
		insert into public.project_members (project_id, user_id, role) values ($1, $2, $3)
		on conflict (project_id, user_id) do nothing`, projectID, userID, role)
	if err != nil {
		return fmt.Errorf("seed: add member: %w", err)
	}
	return nil
}

// channelLimits reads each channel's character limit, so promos can be written to fit it (or,
// on purpose, not to).
func channelLimits(ctx context.Context, tx pgx.Tx) (map[string]int, error) {
	rows, err := tx.Query(ctx, `select slug, coalesce((limits ->> 'max_chars')::int, 0) from public.channels`)
	if err != nil {
		return nil, fmt.Errorf("seed: read channels: %w", err)
	}
	limits := map[string]int{}
	var (
		slug string
		n    int
	)
	_, err = pgx.ForEachRow(rows, []any{&slug, &n}, func() error {
		limits[slug] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("seed: read channels: %w", err)
	}
	return limits, nil
}
