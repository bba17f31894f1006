-- The inbox in time bounded by what it shows, not by how much waits.
--
-- The dashboard loads /inbox/count after every page, so my_inbox is its most frequent query.
-- 013's version read every publication in review in the caller's projects, and a lead's every
-- approved one, to number and count them: in the seed at 100,000 publications a project (28,000
-- of them in review) that took 130 ms for the lead and 129 ms for the reviewer (JIT off, as the
-- service runs), each row a heap visit. Now:
--
-- * publications_waiting_idx holds, in the order the inbox lists them (the longest waiting
--   first), only the publications in review or approved, with their authors. A list walks it
--   per project and stops at max_per_reason rows; "not reviewed by me in the round in
--   progress" is asked of the rows walked only, through their reviews (reviews_publication_idx).
-- * A reason's total is counted apart from its list, from that index (an index-only scan where
--   vacuum has marked the pages): publications in review, not mine, less those I reviewed in
--   their round in progress, which are found from my own reviews (reviews_reviewer_idx, the
--   caller's id an InitPlan so that it is an index condition, not a join).
-- * Each list's cap is app.inbox_cap(max_per_reason), not a CTE's column: where my_inbox is
--   inlined with a constant (it is plain SQL), the cap folds into a number, so the planner
--   knows how few rows a walk needs.
--
-- The same answers as 013's: TestInboxAnswersAs013 compares the two, row for row with their
-- totals, for every kind of caller and several caps. In that seed: the lead 130 -> 27 ms, the
-- reviewer 129 -> 15 ms, the same rows (a probe run once, alternating the two). BenchmarkInbox
-- measures both on a fixture where the reviewer has also commented on a third of everything in
-- review. What is left of the lead's time is "due within a day, not ready", which asks
-- app.is_ready of every scheduled publication due within a day (about 750 in that seed), as
-- before.
--
-- The index is partial, so a draft's edits never touch it; it names moving columns (status,
-- updated_at), so a bulk seed sets it aside for its load like the others.

-- inbox_cap is how many entries of a reason my_inbox lists: max_per_reason, 50 when null, at
-- least one. Immutable plain SQL (no SET clause, as auth.uid), so it is inlined wherever it is
-- written and folds into a constant for a constant cap.
create function app.inbox_cap(max_per_reason integer) returns integer
language sql immutable parallel safe
return greatest(coalesce(max_per_reason, 50), 1);
grant execute on function app.inbox_cap(integer) to authenticated;

create index publications_waiting_idx on public.publications (project_id, status, updated_at, id)
  include (author_id) where status in ('reviewing', 'approved');

create or replace function public.my_inbox(max_per_reason integer default 50)
returns table (publication_id uuid, project_id uuid, project_slug text, title text, status text,
               reason text, detail text, since timestamptz, reason_total integer)
language sql stable
as $$
  with me as materialized (
    select (select auth.uid()) as uid
  ),
  review_projects as materialized (
    select mp.id from unnest((select app.project_ids('{reviewer,lead,owner}'))::uuid[]) as mp(id)
  ),
  lead_projects as materialized (
    select mp.id from unnest((select app.project_ids('{lead,owner}'))::uuid[]) as mp(id)
  ),
  -- In review in a project I review for, not mine, and not reviewed by me in the round in
  -- progress: per project the longest waiting, through publications_waiting_idx, then the
  -- longest waiting of those. The round in progress is app.current_round's (the latest
  -- revision's, 0 for none), asked inline as in 013: the function, a call the planner cannot
  -- see into, made the total 1.6 times as slow for a reviewer with many reviews in progress
  -- (BenchmarkInbox: 40.6 against 24.6 ms).
  reviewing_rows as (
    select w.id, w.project_id, w.title, w.status, w.updated_at as since
      from review_projects mp cross join me
      cross join lateral (
        select p.id, p.project_id, p.title, p.status, p.updated_at
          from public.publications p
         where p.project_id = mp.id and p.status = 'reviewing' and p.author_id <> me.uid
           and not exists (
                 select 1 from public.reviews r
                  where r.publication_id = p.id and r.reviewer_id = me.uid
                    and r.round >= coalesce((select max(v.round) from public.publication_revisions v
                                              where v.publication_id = p.id), 0))
         order by p.updated_at, p.id
         limit app.inbox_cap(max_per_reason)) w
     order by since, id
     limit app.inbox_cap(max_per_reason)
  ),
  -- Their total: everything in review there that is not mine, less what I reviewed in its
  -- round in progress, found from my own reviews (reviews_reviewer_idx).
  reviewing_total as (
    select (select count(*) from review_projects mp, public.publications p
             where p.project_id = mp.id and p.status = 'reviewing' and p.author_id <> (select uid from me))
         - (select count(distinct p.id) from review_projects mp, public.reviews r
              join public.publications p on p.id = r.publication_id
             where r.reviewer_id = (select uid from me) and p.project_id = mp.id and p.status = 'reviewing'
               and p.author_id <> (select uid from me)
               and r.round >= coalesce((select max(v.round) from public.publication_revisions v
                                         where v.publication_id = p.id), 0)) as total
  ),
  reviewing as (
    select r.id, r.project_id, r.title, r.status, 'review'::text as reason, ''::text as detail,
           r.since, t.total
      from reviewing_rows r, reviewing_total t
  ),
  sent_back as (
    select p.id, p.project_id, p.title, p.status, 'changes_requested'::text as reason,
           coalesce((select r.notes from public.reviews r where r.publication_id = p.id and r.verdict = 'changes_requested'
                     order by r.created_at desc limit 1), '') as detail,
           p.updated_at as since, count(*) over () as total
      from public.publications p, me
     where p.status = 'changes_requested' and p.author_id = me.uid
     order by since, p.id
     limit app.inbox_cap(max_per_reason)
  ),
  stale as (
    select p.id, p.project_id, p.title, p.status, 'stale_draft'::text as reason, ''::text as detail,
           p.updated_at as since, count(*) over () as total
      from public.publications p, me
     where p.status = 'draft' and p.author_id = me.uid and p.updated_at < now() - interval '7 days'
     order by since, p.id
     limit app.inbox_cap(max_per_reason)
  ),
  -- A lead's approved publications, waiting for a date: walked and counted as those in review.
  needs_date as (
    select w.id, w.project_id, w.title, w.status, 'needs_date'::text as reason, ''::text as detail,
           w.since,
           (select count(*) from lead_projects mp, public.publications p
             where p.project_id = mp.id and p.status = 'approved') as total
      from (select w.* from lead_projects mp
              cross join lateral (
                select p.id, p.project_id, p.title, p.status, p.updated_at as since
                  from public.publications p
                 where p.project_id = mp.id and p.status = 'approved'
                 order by p.updated_at, p.id
                 limit app.inbox_cap(max_per_reason)) w
             order by w.since, w.id
             limit app.inbox_cap(max_per_reason)) w
  ),
  -- A lead's scheduled publications due within a day, through the due index: overdue, or not
  -- ready yet; each reason counted and cut.
  due_rows as (
    select p.id, p.project_id, p.title, p.status,
           case when p.scheduled_for <= now() then 'overdue' else 'due_not_ready' end as reason,
           p.scheduled_for as since
      from lead_projects mp
      join public.publications p on p.project_id = mp.id and p.status = 'scheduled'
     where p.scheduled_for <= now() + interval '1 day'
       and (p.scheduled_for <= now() or not app.is_ready(p.id))
  ),
  due as (
    select d.id, d.project_id, d.title, d.status, d.reason,
           coalesce((select string_agg(r.detail, '; ') from public.publications p, app.readiness_of(p) r
                      where p.id = d.id and not r.ok), '') as detail,
           d.since, d.total
      from (select d.*, row_number() over (partition by d.reason order by d.since, d.id) as k,
                   count(*) over (partition by d.reason) as total
              from due_rows d) d
     where d.k <= app.inbox_cap(max_per_reason)
  ),
  all_of as (
    select * from reviewing
    union all select * from sent_back
    union all select * from stale
    union all select * from needs_date
    union all select * from due
  )
  select a.id, a.project_id, j.slug, a.title, a.status, a.reason, a.detail, a.since, a.total::integer
    from all_of a join public.projects j on j.id = a.project_id
   order by a.since
$$;
