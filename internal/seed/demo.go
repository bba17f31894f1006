package seed

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A script is the life of one demo publication: the workflow moves made after the draft is
// written, in order. "comment" leaves a review without a transition; the others are the
// intents of DESIGN.md's workflow table.
type script []string

// goesLive says whether the script schedules or publishes, which only a ready publication may.
func (s script) goesLive() bool {
	return slices.Contains(s, "schedule") || slices.Contains(s, "publish")
}

// scriptKinds say how many publications live each life. The mix is a newsroom's on a busy day:
// a deep review queue, a few sent back, a week of scheduled pieces, a published archive, and
// the detours (withdrawn, restored, rescheduled, unscheduled) that the audit must show.
var scriptKinds = []struct {
	n     int
	moves script
}{
	// drafts: untouched, pulled back from review, restored from the archive
	{3, nil},
	{1, script{"submit", "withdraw"}},
	{1, script{"submit", "approve", "archive", "restore"}},
	// in review: fresh, commented on, resubmitted after changes
	{4, script{"submit"}},
	{2, script{"submit", "comment"}},
	{2, script{"submit", "request_changes", "submit"}},
	// sent back
	{4, script{"submit", "request_changes"}},
	// approved: waiting for a slot, or taken off the schedule
	{3, script{"submit", "approve"}},
	{1, script{"submit", "approve", "schedule", "unschedule"}},
	// scheduled, one of them moved once
	{4, script{"submit", "approve", "schedule"}},
	{1, script{"submit", "approve", "schedule", "schedule"}},
	// published: at once, ahead of the slot, after a round of changes
	{3, script{"submit", "approve", "publish"}},
	{2, script{"submit", "approve", "schedule", "publish"}},
	{2, script{"submit", "request_changes", "submit", "approve", "publish"}},
	// archived: after publication, or spiked as a draft
	{2, script{"submit", "approve", "publish", "archive"}},
	{1, script{"archive"}},
}

// demoScripts spreads the kinds over the stories: story i lives demoScripts[i]. Stepping by a
// number coprime with the count mixes statuses across sections instead of grouping them.
var demoScripts = func() []script {
	var flat []script
	for _, k := range scriptKinds {
		for range k.n {
			flat = append(flat, k.moves)
		}
	}
	out := make([]script, len(flat))
	for i := range flat {
		out[i] = flat[(i*7)%len(flat)]
	}
	return out
}()

// seedDemo writes the project's hand-made publications and runs their scripts, one
// transaction per move, each as the person who would make it. It returns the image bytes
// written.
func seedDemo(ctx context.Context, pool *pgxpool.Pool, t *team, opts Options) (int64, error) {
	if len(t.spec.Stories) != len(demoScripts) {
		return 0, fmt.Errorf("seed: %d stories for %d scripts", len(t.spec.Stories), len(demoScripts))
	}
	var written int64
	for i, s := range t.spec.Stories {
		author := t.editor
		if i%5 == 4 {
			author = t.lead
		}
		id, n, err := writeDraft(ctx, pool, t, author, i, s, opts.MediaDir, demoScripts[i].goesLive())
		if err != nil {
			return written, err
		}
		written += n
		version, err := draftVersion(ctx, pool, author, id)
		if err != nil {
			return written, err
		}
		for j, move := range demoScripts[i] {
			who := t.actorFor(move, author, i)
			version, err = runMove(ctx, pool, t, who, id, move, version, i+j)
			if err != nil {
				return written, fmt.Errorf("seed: %s %q as %s: %w", move, s.Title, who.Email, err)
			}
		}
	}
	return written, nil
}

// actorFor picks who makes a move: the author submits and withdraws; reviewers judge (a lead
// now and then, never the author); leads schedule, publish and archive. The multi-project user
// takes a share of the role they hold here.
func (t *team) actorFor(move string, author actor, i int) actor {
	switch move {
	case "submit", "withdraw":
		return author
	case "approve", "request_changes", "comment":
		switch {
		case t.altReviewer != nil && i%3 == 2:
			return *t.altReviewer
		case move == "approve" && i%4 == 1 && author != t.lead:
			return t.lead
		}
		return t.reviewer
	default:
		if t.altLead != nil && i%3 == 2 {
			return *t.altLead
		}
		return t.lead
	}
}

// runMove makes one move through its RPC, passing the version the seed last saw so the
// optimistic check runs as it would for a client, and returns the new version.
func runMove(ctx context.Context, pool *pgxpool.Pool, t *team, who actor, id, move string, version, k int) (int, error) {
	err := as(ctx, pool, who, func(tx pgx.Tx) error {
		var row pgx.Row
		switch move {
		case "submit":
			row = tx.QueryRow(ctx, `select version from public.submit_for_review($1, $2, $3)`, id, pick(submitNotes, k), version)
		case "withdraw":
			row = tx.QueryRow(ctx, `select version from public.withdraw($1, $2, $3)`, id, pick(withdrawNotes, k), version)
		case "approve":
			row = tx.QueryRow(ctx, `select version from public.approve($1, $2, $3)`, id, pick(approveNotes, k), version)
		case "request_changes":
			row = tx.QueryRow(ctx, `select version from public.request_changes($1, $2, $3)`, id, pick(changesNotes, k), version)
		case "schedule":
			// A morning slot in the project's own time zone, one to fourteen days ahead.
			row = tx.QueryRow(ctx, `
				select version from public.schedule($1,
				  (date_trunc('day', now() at time zone $2) + make_interval(days => $3, hours => $4)) at time zone $2, $5)`,
				id, t.spec.Timezone, 1+k%14, 7+k%5, version)
		case "unschedule":
			row = tx.QueryRow(ctx, `select version from public.unschedule($1, $2)`, id, version)
		case "publish":
			row = tx.QueryRow(ctx, `select version from public.publish_now($1, $2)`, id, version)
		case "archive":
			row = tx.QueryRow(ctx, `select version from public.archive($1, $2, $3)`, id, pick(archiveNotes, k), version)
		case "restore":
			row = tx.QueryRow(ctx, `select version from public.restore($1, $2)`, id, version)
		case "comment":
			// A comment is the plain insert POST /rest/v1/reviews makes; RLS lets reviewers
			// write only comments this way. (public.add_review would be the RPC route, but it
			// names reviewer_id, on which callers hold no INSERT privilege, so it fails.)
			_, err := tx.Exec(ctx, `insert into public.reviews (project_id, publication_id, verdict, notes)
				values ($1, $2, 'comment', $3)`, t.projectID, id, pick(commentNotes, k))
			return err
		default:
			return fmt.Errorf("unknown move %q", move)
		}
		return row.Scan(&version)
	})
	return version, err
}

// draftVersion reads the version a fresh draft has reached: attaching its media and promos
// bumped it once per row, as every content change does.
func draftVersion(ctx context.Context, pool *pgxpool.Pool, author actor, id string) (int, error) {
	var v int
	err := as(ctx, pool, author, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `select version from public.publications where id = $1`, id).Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("seed: version of %s: %w", id, err)
	}
	return v, nil
}

// writeDraft is the author's first sitting: the draft, its images, their placement and a
// promo per channel, in one transaction, as editors do it in the dashboard. A draft whose
// script takes it live is written ready (promos within limits, alt text on every image),
// because the database refuses to schedule or publish anything else; the others carry the
// flaws the dashboard's warnings are for.
func writeDraft(ctx context.Context, pool *pgxpool.Pool, t *team, author actor, i int, s story, mediaDir string, live bool) (string, int64, error) {
	p := t.spec
	slug := slugify(s.Title)
	url := fmt.Sprintf("https://%s/%s/%s", p.Domain, s.Section, slug)
	nMedia := 1 + (i*3)%4

	pics := make([]picture, nMedia)
	paths := make([]string, nMedia)
	var written int64
	for k := range nMedia {
		pic, err := makePicture(p.Slug+"/"+slug, k, (i+k)%2 == 1)
		if err != nil {
			return "", 0, err
		}
		ext := ".png"
		if pic.MimeType == "image/jpeg" {
			ext = ".jpg"
		}
		paths[k] = fmt.Sprintf("%s/%s/%d%s", p.Slug, slug, k+1, ext)
		if err := writeObject(mediaDir, paths[k], pic.Data); err != nil {
			return "", 0, err
		}
		pics[k] = pic
		written += int64(len(pic.Data))
	}

	var id string
	err := as(ctx, pool, author, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `
			insert into public.publications (project_id, collection_id, title, slug, summary, body)
			values ($1, $2, $3, $4, $5, $6) returning id::text`,
			t.projectID, t.collections[s.Section], s.Title, slug, s.Summary, body(p, i, s, url)).Scan(&id); err != nil {
			return fmt.Errorf("seed: draft %q: %w", s.Title, err)
		}
		for k, pic := range pics {
			alt := fmt.Sprintf("Illustration %d for %q", k+1, s.Title)
			if (i+k)%7 == 3 && !live {
				alt = "" // deliberately missing, so the dashboard's accessibility warning has work
			}
			var mediaID string
			if err := tx.QueryRow(ctx, `
				insert into public.media (project_id, storage_path, kind, mime_type, alt_text, width, height, bytes)
				values ($1, $2, 'image', $3, $4, $5, $6, $7) returning id::text`,
				t.projectID, paths[k], pic.MimeType, alt, pic.Width, pic.Height, len(pic.Data)).Scan(&mediaID); err != nil {
				return fmt.Errorf("seed: media %s: %w", paths[k], err)
			}
			if _, err := tx.Exec(ctx, `
				insert into public.publication_media (project_id, publication_id, media_id, position)
				values ($1, $2, $3, $4)`, t.projectID, id, mediaID, k); err != nil {
				return fmt.Errorf("seed: place media %s: %w", paths[k], err)
			}
			if alt != "" {
				t.altMediaIDs = append(t.altMediaIDs, mediaID)
			}
		}
		for c, ch := range p.Channels {
			text := promo(p, s, url, t.maxChars[ch], (i+c)%6 == 0 && !live)
			if _, err := tx.Exec(ctx, `
				insert into public.promos (project_id, publication_id, channel, body, link)
				values ($1, $2, $3, $4, $5)`, t.projectID, id, ch, text, url); err != nil {
				return fmt.Errorf("seed: promo %s for %q: %w", ch, s.Title, err)
			}
		}
		return nil
	})
	return id, written, err
}

// body assembles a markdown article from the project's pools: summary and lede, a list, a
// table, a code block and links, varied by index so neighbours do not read alike.
func body(p *projectSpec, i int, s story, url string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n\n", s.Summary, pick(p.Ledes, i))
	b.WriteString("## Key points\n\n")
	for k := range 3 {
		fmt.Fprintf(&b, "- %s\n", pick(p.Points, i+k*3))
	}
	if i%4 != 3 {
		fmt.Fprintf(&b, "\n## By the numbers\n\n| %s | %s |\n|---|---:|\n", p.TableHead[0], p.TableHead[1])
		for k := range 3 {
			r := p.Rows[(i+k)%len(p.Rows)]
			fmt.Fprintf(&b, "| %s | %s |\n", r.Label, r.Value)
		}
	}
	if i%3 != 1 {
		sn := pick(p.Snippets, i)
		fmt.Fprintf(&b, "\n## %s\n\n```%s\n%s\n```\n", sn.Heading, sn.Lang, sn.Code)
	}
	b.WriteString("\n## Further reading\n\n")
	for k := range 2 {
		l := p.Links[(i+k)%len(p.Links)]
		fmt.Fprintf(&b, "- [%s](%s)\n", l.Text, l.URL)
	}
	fmt.Fprintf(&b, "\n*Share this story: <%s>*\n", url)
	return b.String()
}

// promo writes a post for one channel. It fits the channel's limit unless over is set and the
// channel is a short-form one, in which case it runs past the limit on purpose, so the
// dashboard's limit warnings have something to flag.
func promo(p *projectSpec, s story, url string, limit int, over bool) string {
	tags := strings.Join(p.Hashtags[:2], " ")
	text := fmt.Sprintf("%s\n\n%s\n\n%s %s", s.Title, s.Summary, url, tags)
	if over && limit > 0 && limit <= 500 {
		for k := 0; utf8.RuneCountInString(text) <= limit+20; k++ {
			text = strings.Replace(text, "\n\n"+url, "\n\n"+pick(p.Ledes, k)+"\n\n"+url, 1)
		}
		return text
	}
	if limit > 0 && utf8.RuneCountInString(text) > limit {
		text = fmt.Sprintf("%s %s", s.Title, url)
	}
	return text
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slugify turns a title into the URL-safe slug the schema accepts.
func slugify(title string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	return s
}

func pick[T any](xs []T, i int) T { return xs[i%len(xs)] }
