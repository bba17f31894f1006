-- The inbox without a scan of the review queue's history. 012's my_inbox found, for every
-- publication in review, its current round (a grouped scan of publication_revisions) and then
-- sorted every entry of every reason to number them: about 20–30 ms at 10,000 publications a
-- project, most of the inbox page. Two changes, same answers (the inbox tests of 006 hold it to
-- them):
--
-- * "Reviewed by me in this round" is asked only of my own reviews: the publications in review I
--   have reviewed, each compared with its current round. That set is as small as my reviews, not
--   as large as the queue; the queue itself is then one index scan with an anti-join.
-- * Each reason is counted with a window over its rows (no sort) and cut to its first
--   max_per_reason by a bounded sort, instead of numbering all rows of all reasons.

-- An author's own work by status and age: the inbox's "changes requested" and "untouched for a
-- week", and the queue's "mine" filter (which the leading column still serves).
drop index public.publications_author_idx;
create index publications_author_idx on public.publications (author_id, status, updated_at);

create or replace function public.my_inbox(max_per_reason integer default 50)
returns table (publication_id uuid, project_id uuid, project_slug text, title text, status text,
               reason text, detail text, since timestamptz, reason_total integer)
language sql stable
as $$
  with me as materialized (
    select (select auth.uid()) as uid, greatest(coalesce(max_per_reason, 50), 1) as n
  ),
  -- The latest round I reviewed each publication in (an index scan of my own reviews).
  mine as (
    select r.publication_id, max(r.round) as round
      from public.reviews r, me
     where r.reviewer_id = me.uid
     group by r.publication_id
  ),
  -- In review in a project I review for, not mine, and not reviewed by me in the round in
  -- progress. The queue is read per project through its index; the current round is looked up
  -- only for the publications I reviewed in some round.
  reviewing as (
    select p.id, p.project_id, p.title, p.status, 'review'::text as reason, ''::text as detail,
           p.updated_at as since, count(*) over () as total
      from unnest((select app.project_ids('{reviewer,lead,owner}'))::uuid[]) as mp(id)
      join public.publications p on p.project_id = mp.id and p.status = 'reviewing'
      cross join me
      left join mine on mine.publication_id = p.id
     where p.author_id <> me.uid
       and (mine.round is null
            or mine.round < (select max(v.round) from public.publication_revisions v where v.publication_id = p.id))
     order by since, p.id
     limit (select n from me)
  ),
  sent_back as (
    select p.id, p.project_id, p.title, p.status, 'changes_requested'::text as reason,
           coalesce((select r.notes from public.reviews r where r.publication_id = p.id and r.verdict = 'changes_requested'
                     order by r.created_at desc limit 1), '') as detail,
           p.updated_at as since, count(*) over () as total
      from public.publications p, me
     where p.status = 'changes_requested' and p.author_id = me.uid
     order by since, p.id
     limit (select n from me)
  ),
  stale as (
    select p.id, p.project_id, p.title, p.status, 'stale_draft'::text as reason, ''::text as detail,
           p.updated_at as since, count(*) over () as total
      from public.publications p, me
     where p.status = 'draft' and p.author_id = me.uid and p.updated_at < now() - interval '7 days'
     order by since, p.id
     limit (select n from me)
  ),
  -- A lead's three reasons: approved items through the queue index, scheduled ones due within a
  -- day through the due index, per project the caller leads; each reason is then counted and cut.
  lead_rows as (
    select p.id, p.project_id, p.title, p.status, 'needs_date'::text as reason, p.updated_at as since
      from unnest((select app.project_ids('{lead,owner}'))::uuid[]) as mp(id)
      join public.publications p on p.project_id = mp.id and p.status = 'approved'
    union all
    select p.id, p.project_id, p.title, p.status,
           case when p.scheduled_for <= now() then 'overdue' else 'due_not_ready' end,
           p.scheduled_for
      from unnest((select app.project_ids('{lead,owner}'))::uuid[]) as mp(id)
      join public.publications p on p.project_id = mp.id and p.status = 'scheduled'
     where p.scheduled_for <= now() + interval '1 day'
       and (p.scheduled_for <= now() or not app.is_ready(p.id))
  ),
  lead_work as (
    select l.id, l.project_id, l.title, l.status, l.reason, l.since, l.total
      from (select l.*, row_number() over (partition by l.reason order by l.since, l.id) as k,
                   count(*) over (partition by l.reason) as total
              from lead_rows l) l, me
     where l.k <= me.n
  ),
  all_of as (
    select * from reviewing
    union all select * from sent_back
    union all select * from stale
    union all
    select w.id, w.project_id, w.title, w.status, w.reason,
           case when w.reason = 'needs_date' then ''
                else coalesce((select string_agg(r.detail, '; ') from public.publications p, app.readiness_of(p) r
                                where p.id = w.id and not r.ok), '') end,
           w.since, w.total
      from lead_work w
  )
  select a.id, a.project_id, j.slug, a.title, a.status, a.reason, a.detail, a.since, a.total::integer
    from all_of a join public.projects j on j.id = a.project_id
   order by a.since
$$;

-- JIT off for the service's login role itself, not only per connection: through a
-- transaction-mode pooler the service cannot send it at connect (see pg.Options.Pooler).
alter role authenticator set jit = off;
