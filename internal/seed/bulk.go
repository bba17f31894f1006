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

// Large sets are made set-based, because one RPC per row costs about a millisecond (the RPC
// re-reads, locks and re-checks the row, then updates it through the same guard and audit
// triggers): a 100k-per-project set would take many minutes. Instead each step is one UPDATE
// of many rows, run as the user who makes that move. The guard trigger still checks every
// row's transition and the user's role, and the audit trigger still writes one status_events
// row per row and move, with that user as actor; the audit records them as via='direct'
// (a plain update, not an RPC), which is exactly what happened. Verdict reviews are written
// only by the approve/request_changes RPCs, so bulk rows carry reviewers' comment reviews
// instead of verdicts.

// bulkMix is the share, in percent, of generated publications ending in each status: a deep
// review queue, a steady schedule and a large published archive.
var bulkMix = []struct {
	status string
	pct    int
}{
	{"draft", 14}, {"reviewing", 20}, {"changes_requested", 8}, {"approved", 8},
	{"scheduled", 10}, {"published", 35}, {"archived", 5},
}

// bulkSteps are the moves in the order they are made; a row takes every step whose ends
// include its final status. Each step is one UPDATE as one user.
var bulkSteps = []struct {
	by   string // "editor", "reviewer" or "lead"
	to   string
	ends []string
}{
	{"editor", "reviewing", []string{"reviewing", "changes_requested", "approved", "scheduled", "published", "archived"}},
	{"reviewer", "changes_requested", []string{"changes_requested"}},
	{"reviewer", "approved", []string{"approved", "scheduled", "published", "archived"}},
	{"lead", "scheduled", []string{"scheduled"}},
	{"lead", "published", []string{"published", "archived"}},
	{"lead", "archived", []string{"archived"}},
}

// bulkBatch is how many drafts one transaction inserts. Each batch has its own created_at,
// so the queue's newest-first order has something to sort on.
const bulkBatch = 10_000

// bulkAngles combine with a project's subjects into titles.
var bulkAngles = []string{
	"what changes this week", "the numbers explained", "readers' questions answered",
	"a closer look", "five things to know", "the view from the ground", "what happens next",
}

// seedBulk adds n generated publications to t's project, written by its editor, taken through
// the workflow in bulk, each linked to one of the demo images and given one promo.
func seedBulk(ctx context.Context, pool *pgxpool.Pool, t *team, n int, log *slog.Logger) error {
	if len(t.mediaIDs) == 0 {
		return fmt.Errorf("seed: no demo media to reuse for %s", t.spec.Slug)
	}
	start := time.Now()
	p := t.spec
	titles := make([]string, len(p.BulkSubjects))
	slugs := make([]string, len(p.BulkSubjects))
	for i, s := range p.BulkSubjects {
		titles[i] = strings.ToUpper(s[:1]) + s[1:]
		slugs[i] = slugify(s)
	}
	templates := bulkTemplates(p)
	channel := p.Channels[0]

	ends := map[string][]string{} // final status → ids
	for from := 0; from < n; from += bulkBatch {
		to := min(from+bulkBatch, n) - 1
		err := as(ctx, pool, t.editor, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `
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
				                           ($5::text[])[1 + (g / cardinality($3::text[])) % cardinality($5::text[])] as angle) x
				returning id::text`,
				t.projectID, t.collectionIDs, titles, slugs, bulkAngles, templates, from+1, to+1)
			if err != nil {
				return err
			}
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			for k, id := range ids {
				end := bulkEnd(from + k)
				ends[end] = append(ends[end], id)
			}
			if _, err := tx.Exec(ctx, `
				insert into public.publication_media (project_id, publication_id, media_id, position)
				select $1, u.id, ($3::uuid[])[1 + (u.ord % cardinality($3::uuid[]))::int], 0
				from unnest($2::uuid[]) with ordinality as u(id, ord)`, t.projectID, ids, t.mediaIDs); err != nil {
				return fmt.Errorf("place media: %w", err)
			}
			if _, err := tx.Exec(ctx, `
				insert into public.promos (project_id, publication_id, channel, body, link)
				select p.project_id, p.id, $2, p.title || ' ' || $3 || p.slug, $3 || p.slug
				from public.publications p join unnest($1::uuid[]) as u(id) on u.id = p.id`,
				ids, channel, "https://"+p.Domain+"/"); err != nil {
				return fmt.Errorf("promos: %w", err)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed: bulk drafts: %w", err)
		}
	}
	log.Info("seed bulk drafts written", "project", p.Slug, "publications", n, "duration", time.Since(start))

	people := map[string]actor{"editor": t.editor, "reviewer": t.reviewer, "lead": t.lead}
	for _, step := range bulkSteps {
		var ids []string
		for _, e := range step.ends {
			ids = append(ids, ends[e]...)
		}
		if len(ids) == 0 {
			continue
		}
		stepStart := time.Now()
		err := as(ctx, pool, people[step.by], func(tx pgx.Tx) error {
			// Only a scheduled row carries a date; the guard refuses one in the past.
			_, err := tx.Exec(ctx, `
				update public.publications p
				   set status = $2,
				       scheduled_for = case when $2 = 'scheduled'
				                            then now() + make_interval(hours => 1 + abs(hashtext(p.id::text)) % (24 * 30))
				                       end
				  from unnest($1::uuid[]) as u(id)
				 where p.id = u.id`, ids, step.to)
			if err != nil {
				return err
			}
			if step.to != "approved" {
				return nil
			}
			// Reviewers leave a comment on every third piece they pass.
			_, err = tx.Exec(ctx, `
				insert into public.reviews (project_id, publication_id, verdict, notes)
				select $1, u.id, 'comment', ($3::text[])[1 + (u.ord % cardinality($3::text[]))::int]
				from unnest($2::uuid[]) with ordinality as u(id, ord)
				where u.ord % 3 = 0`, t.projectID, ids, commentNotes)
			return err
		})
		if err != nil {
			return fmt.Errorf("seed: bulk move to %s as %s: %w", step.to, step.by, err)
		}
		log.Info("seed bulk move", "project", p.Slug, "to", step.to, "rows", len(ids), "duration", time.Since(stepStart))
	}
	return nil
}

// bulkEnd is the final status of the i-th generated publication. Stepping by 37 (coprime with
// 100) spreads each status evenly over creation order instead of in blocks.
func bulkEnd(i int) string {
	b := (i * 37) % 100
	for _, m := range bulkMix {
		if b < m.pct {
			return m.status
		}
		b -= m.pct
	}
	return bulkMix[len(bulkMix)-1].status
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
