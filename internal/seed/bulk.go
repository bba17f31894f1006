package seed

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Large sets are made set-based, because one RPC per row costs about half a millisecond under
// the seed's load (it re-reads, locks and re-checks the row, each statement paying for
// row-level security, before the same guarded UPDATE, whose audit triggers then run for one
// row): 490 µs a row sent back, against 84 µs a row approved in bulk, in connection time,
// timed step by step over BenchmarkFloorSeed100k's load before migration 039. Instead each
// move is one UPDATE of many rows, run as the user who makes that move. The guard trigger
// still checks every row's transition and the user's role, and the audit trigger still writes
// one status_events row per row and move with that user as actor; it records them as
// via='direct' (a plain update, not an RPC), which is exactly what happened. A direct move has its RPC's side effects, so each approval also writes
// its verdict review (without a note); reviewers also leave a comment on every third piece they
// pass. Sending back needs a note, which only the RPC carries: those rows (8% of them) take one
// request_changes call each.
//
// A generated row's slug is bulk-<n>-<subject>, and n decides its final status (bulkEnds), so
// every step can pick its rows in SQL instead of shipping id lists: a batch's rows share their
// created_at (their transaction's), which publications_recent_idx (project_id, created_at)
// finds; that index stays during the load, while those on status are set aside (setAside).

// bulkMix is the share, in percent, of generated publications ending in each status: over a
// quarter waiting in review (so the queue has depth), a quarter published, a steady schedule.
// Every move is a guarded, audited row update (about 150µs of database time here), so the
// mix, 1.56 moves per row, is also what the seed's time depends on.
var bulkMix = []struct {
	status string
	pct    int
}{
	{"draft", 25}, {"reviewing", 28}, {"changes_requested", 8}, {"approved", 7},
	{"scheduled", 7}, {"published", 23}, {"archived", 2},
}

// bulkSteps are the moves in the order they are made; a row takes every step whose ends
// include its final status. Each step is one UPDATE as one user.
var bulkSteps = []struct {
	by       string // "editor", "reviewer" or "lead"
	from, to string
	ends     []string
}{
	{"editor", "draft", "reviewing", []string{"reviewing", "changes_requested", "approved", "scheduled", "published", "archived"}},
	{"reviewer", "reviewing", "changes_requested", []string{"changes_requested"}},
	{"reviewer", "reviewing", "approved", []string{"approved", "scheduled", "published", "archived"}},
	{"lead", "approved", "scheduled", []string{"scheduled"}},
	{"lead", "approved", "published", []string{"published", "archived"}},
	{"lead", "published", "archived", []string{"archived"}},
}

// bulkBatch is how many drafts one transaction inserts. Each batch has its own created_at,
// so the queue's newest-first order has something to sort on.
const bulkBatch = 10_000

// bulkN is a generated row's number, read back from its slug.
const bulkN = `split_part(p.slug, '-', 2)::int`

// bulkEndSQL is a generated row's final status; $2 must be bulkEnds().
const bulkEndSQL = `($2::text[])[1 + (` + bulkN + ` * 37) % 100]`

// bulkAngles combine with a project's subjects into titles.
var bulkAngles = []string{
	"what changes this week", "the numbers explained", "readers' questions answered",
	"a closer look", "five things to know", "the view from the ground", "what happens next",
}

// seedBulk adds n generated publications to t's project, written by its editor and taken
// through the workflow in bulk. Every other one shows one of the demo images (each link is a
// checked, triggered insert, so not all of them); those that go live get a promo per channel.
//
// It works a batch at a time, drafts to final status, so the rows each UPDATE touches were
// written moments before and are still in shared buffers: a whole project at 100k rows, with
// the dead versions every move leaves, is several times larger than the server's cache.
func seedBulk(ctx context.Context, pool *pgxpool.Pool, t *team, n int, log *slog.Logger) error {
	if len(t.altMediaIDs) == 0 {
		return fmt.Errorf("seed: no demo media to reuse for %s", t.spec.Slug)
	}
	start := time.Now()
	b := bulkWriter{pool: pool, t: t, ends: bulkEnds(), templates: bulkTemplates(t.spec)}
	for _, s := range t.spec.BulkSubjects {
		b.titles = append(b.titles, strings.ToUpper(s[:1])+s[1:])
		b.slugs = append(b.slugs, slugify(s))
	}
	for from := 1; from <= n; from += bulkBatch {
		to := min(from+bulkBatch-1, n)
		at, err := b.batch(ctx, from, to)
		if err != nil {
			return err
		}
		if from == 1 {
			// The planner still believes the table holds a few dozen rows. Without fresh
			// statistics the foreign-key checks of every row written next (images, promos,
			// the audit) and the UPDATEs would each scan the whole table: quadratic time.
			if _, err := pool.Exec(ctx, `analyze public.publications`); err != nil {
				return fmt.Errorf("seed: analyze: %w", err)
			}
		}
		if err := b.dress(ctx, at, from, to); err != nil {
			return err
		}
		if err := b.move(ctx, at, from, to); err != nil {
			return err
		}
		if from == 1 {
			// Likewise for the tables the triggers write and read (the audit, revisions,
			// promos, media links), now that they hold a batch's rows: autovacuum, which would
			// analyze them in time, is paused during the load (setAside), and the triggers'
			// plans made while they were nearly empty would otherwise be kept, the cost of
			// each of their lookups growing with the table.
			if _, err := pool.Exec(ctx, `analyze public.status_events, public.reviews, public.promos,
				public.publication_media, public.publication_revisions`); err != nil {
				return fmt.Errorf("seed: analyze: %w", err)
			}
		}
		log.Debug("seed bulk batch", "project", t.spec.Slug, "to", to, "duration", time.Since(start))
	}
	log.Info("seed bulk publications written", "project", t.spec.Slug, "publications", n, "duration", time.Since(start))
	return nil
}

// bulkWriter holds what every batch of one project needs.
type bulkWriter struct {
	pool            *pgxpool.Pool
	t               *team
	ends, templates []string
	titles, slugs   []string // of the project's bulk subjects
}

// batch inserts drafts number from to to, as the editor, and returns their created_at (the
// transaction's time, the same for the whole batch), by which the next steps find them.
func (b *bulkWriter) batch(ctx context.Context, from, to int) (time.Time, error) {
	var at time.Time
	err := as(ctx, b.pool, b.t.editor, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			insert into public.publications (project_id, collection_id, title, slug, summary, body)
			select $1,
			       ($2::uuid[])[1 + g % cardinality($2::uuid[])],
			       x.subject || ': ' || x.angle || ' (' || g || ')',
			       'bulk-' || g || '-' || x.slug,
			       'Our regular look at ' || lower(x.subject) || ', with the latest figures and what they mean for you.',
			       format(($6::text[])[1 + g % cardinality($6::text[])], lower(x.subject), g)
			from generate_series($7::int, $8::int) g
			cross join lateral (select ($3::text[])[1 + g % cardinality($3::text[])] as subject,
			                           ($4::text[])[1 + g % cardinality($4::text[])] as slug,
			                           ($5::text[])[1 + (g / cardinality($3::text[])) % cardinality($5::text[])] as angle) x`,
			b.t.projectID, b.t.collectionIDs, b.titles, b.slugs, bulkAngles, b.templates, from, to)
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, `select now()`).Scan(&at)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("seed: bulk drafts: %w", err)
	}
	return at, nil
}

// dress gives the batch's drafts their images and those that will go live a promo for every
// channel, as the editor: the database schedules and publishes only ready publications, so
// those rows get what readiness asks for (images with alt text, a promo per default channel).
func (b *bulkWriter) dress(ctx context.Context, at time.Time, from, to int) error {
	p := b.t.spec
	err := as(ctx, b.pool, b.t.editor, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			insert into public.publication_media (project_id, publication_id, media_id, position)
			select p.project_id, p.id, ($2::uuid[])[1 + `+bulkN+` % cardinality($2::uuid[])], 0
			from public.publications p
			where p.project_id = $1 and p.created_at = $5 and p.status = 'draft' and p.slug like 'bulk-%'
			  and `+bulkN+` between $3 and $4 and `+bulkN+` % 2 = 1`,
			b.t.projectID, b.t.altMediaIDs, from, to, at); err != nil {
			return fmt.Errorf("place media: %w", err)
		}
		if _, err := tx.Exec(ctx, `
			insert into public.promos (project_id, publication_id, channel, body, link)
			select p.project_id, p.id, ch, p.title || ' ' || $4 || p.slug, $4 || p.slug
			from public.publications p cross join unnest($3::text[]) ch
			where p.project_id = $1 and p.created_at = $7 and p.status = 'draft' and p.slug like 'bulk-%'
			  and `+bulkN+` between $5 and $6 and `+bulkEndSQL+` in ('scheduled', 'published', 'archived')`,
			b.t.projectID, b.ends, p.Channels, "https://"+p.Domain+"/", from, to, at); err != nil {
			return fmt.Errorf("promos: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed: bulk media and promos: %w", err)
	}
	return nil
}

// move takes the batch through bulkSteps, each step one UPDATE as the person who makes it.
func (b *bulkWriter) move(ctx context.Context, at time.Time, from, to int) error {
	people := map[string]actor{"editor": b.t.editor, "reviewer": b.t.reviewer, "lead": b.t.lead}
	for _, step := range bulkSteps {
		err := as(ctx, b.pool, people[step.by], func(tx pgx.Tx) error {
			if step.to == "changes_requested" {
				// Sending back needs a note, which only the RPC carries: one call per row.
				_, err := tx.Exec(ctx, `
					select count(public.request_changes(p.id, ($2::text[])[1 + `+bulkN+` % cardinality($2::text[])]))
					from public.publications p
					where p.project_id = $1 and p.created_at = $7 and p.status = 'reviewing' and p.slug like 'bulk-%'
					  and `+bulkN+` between $3 and $4 and ($5::text[])[1 + (`+bulkN+` * 37) % 100] = any ($6::text[])`,
					b.t.projectID, changesNotes, from, to, b.ends, step.ends, at)
				return err
			}
			// Only a scheduled row carries a date, somewhere in the next thirty days.
			_, err := tx.Exec(ctx, `
				update public.publications p
				   set status = $4,
				       scheduled_for = case when $4 = 'scheduled'
				                            then now() + make_interval(hours => 1 + `+bulkN+` % (24 * 30))
				                       end
				 where p.project_id = $1 and p.created_at = $8 and p.status = $3 and p.slug like 'bulk-%'
				   and `+bulkN+` between $6 and $7 and `+bulkEndSQL+` = any ($5::text[])`,
				b.t.projectID, b.ends, step.from, step.to, step.ends, from, to, at)
			if err != nil || step.to != "approved" {
				return err
			}
			// Reviewers leave a comment on every third piece they pass.
			_, err = tx.Exec(ctx, `
				insert into public.reviews (project_id, publication_id, verdict, notes)
				select p.project_id, p.id, 'comment', ($2::text[])[1 + `+bulkN+` % cardinality($2::text[])]
				from public.publications p
				where p.project_id = $1 and p.created_at = $5 and p.status = 'approved' and p.slug like 'bulk-%'
				  and `+bulkN+` between $3 and $4 and `+bulkN+` % 3 = 0`,
				b.t.projectID, commentNotes, from, to, at)
			return err
		})
		if err != nil {
			return fmt.Errorf("seed: bulk move to %s as %s: %w", step.to, step.by, err)
		}
	}
	return nil
}

// bulkEnds maps a generated row's bucket, (n*37) mod 100, to its final status. Stepping by 37
// (coprime with 100) spreads each status evenly over creation order instead of in blocks.
func bulkEnds() []string {
	var byBucket []string
	for _, m := range bulkMix {
		for range m.pct {
			byBucket = append(byBucket, m.status)
		}
	}
	return byBucket
}

// bulkTemplates are format() strings for generated bodies: %1$s is the subject, %2$s the
// number in the series. They use the project's own pools so generated rows read like its
// demo rows.
func bulkTemplates(p *projectSpec) []string {
	esc := func(s string) string { return strings.ReplaceAll(s, "%", "%%") }
	out := make([]string, 3)
	for v := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "Our regular look at %%1$s, number %%2$s in the series.\n\n%s\n\n## Key points\n\n", esc(pick(p.Ledes, v)))
		for k := range 3 {
			fmt.Fprintf(&b, "- %s\n", esc(pick(p.Points, v*3+k)))
		}
		fmt.Fprintf(&b, "\n## By the numbers\n\n| %s | %s |\n|---|---:|\n", esc(p.TableHead[0]), esc(p.TableHead[1]))
		for k := range 2 {
			r := p.Rows[(v*2+k)%len(p.Rows)]
			fmt.Fprintf(&b, "| %s | %s |\n", esc(r.Label), esc(r.Value))
		}
		if v != 1 {
			sn := pick(p.Snippets, v)
			fmt.Fprintf(&b, "\n```%s\n%s\n```\n", sn.Lang, esc(sn.Code))
		}
		l := pick(p.Links, v)
		fmt.Fprintf(&b, "\nMore: [%s](%s)\n", esc(l.Text), esc(l.URL))
		out[v] = b.String()
	}
	return out
}
