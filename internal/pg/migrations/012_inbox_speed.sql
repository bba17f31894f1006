-- The inbox at newsroom size. my_inbox asked, for each publication in review, for its current
-- round through app.current_round, a function call per row that the planner cannot see into
-- (about 30 ms of a 46 ms inbox at 10,000 publications a project). It now joins, once, the
-- rounds in progress with the latest round the caller reviewed each in (reviews_reviewer_idx).
-- Same answers; the inbox tests of 006 hold it to them.

create index reviews_reviewer_idx on public.reviews (reviewer_id, publication_id, round);

create or replace function public.my_inbox(max_per_reason integer default 50)
returns table (publication_id uuid, project_id uuid, project_slug text, title text, status text,
               reason text, detail text, since timestamptz, reason_total integer)
language sql stable
as $$
  with me as (select (select auth.uid()) as uid),
  -- The round in progress of every publication in review, and the latest round I reviewed
  -- each in: two grouped scans joined once, not a lookup per row.
  cur as (
    select v.publication_id, max(v.round) as round
      from public.publication_revisions v join public.publications p on p.id = v.publication_id
     where p.status = 'reviewing'
     group by v.publication_id
  ),
  mine as (
    select r.publication_id, max(r.round) as round
      from public.reviews r, me where r.reviewer_id = me.uid
     group by r.publication_id
  ),
  reviewing as (
    select p.id, p.project_id, p.title, p.status, 'review'::text as reason,
           ''::text as detail, p.updated_at as since
      from public.publications p
      cross join me
      left join cur on cur.publication_id = p.id
      left join mine on mine.publication_id = p.id
     where p.status = 'reviewing' and p.author_id <> me.uid
       and p.project_id = any ((select app.project_ids('{reviewer,lead,owner}'))::uuid[])
       and coalesce(mine.round, -1) < coalesce(cur.round, 0)
  ),
  sent_back as (
    select p.id, p.project_id, p.title, p.status, 'changes_requested',
           coalesce((select r.notes from public.reviews r where r.publication_id = p.id and r.verdict = 'changes_requested'
                     order by r.created_at desc limit 1), ''),
           p.updated_at
      from public.publications p, me
     where p.status = 'changes_requested' and p.author_id = me.uid
  ),
  stale as (
    select p.id, p.project_id, p.title, p.status, 'stale_draft', '', p.updated_at
      from public.publications p, me
     where p.status = 'draft' and p.author_id = me.uid and p.updated_at < now() - interval '7 days'
  ),
  lead_work as (
    select p.id, p.project_id, p.title, p.status,
           case when p.status = 'approved' then 'needs_date'
                when p.scheduled_for <= now() then 'overdue'
                else 'due_not_ready' end,
           case when p.status = 'approved' then ''
                else coalesce((select string_agg(r.detail, '; ') from app.readiness_of(p) r where not r.ok), '') end,
           coalesce(p.scheduled_for, p.updated_at)
      from public.publications p
     where p.project_id = any ((select app.project_ids('{lead,owner}'))::uuid[])
       and (p.status = 'approved'
            or (p.status = 'scheduled' and p.scheduled_for <= now())
            or (p.status = 'scheduled' and p.scheduled_for <= now() + interval '1 day' and not app.is_ready(p.id)))
  ),
  all_of as (
    select x.*, row_number() over (partition by x.reason order by x.since, x.id) as n,
           count(*) over (partition by x.reason) as total
      from (select * from reviewing union all select * from sent_back
            union all select * from stale union all select * from lead_work) x
  )
  select a.id, a.project_id, j.slug, a.title, a.status, a.reason, a.detail, a.since, a.total::integer
    from all_of a join public.projects j on j.id = a.project_id
   where a.n <= greatest(coalesce(max_per_reason, 50), 1)
   order by a.since
$$;

-- readiness_summary judges many publications at once, for lists (the dashboard's queue shows a
-- badge per row): for each id the caller can see, whether every check passes and, if not, what
-- fails, in the words of readiness(). Ids the caller cannot see are left out.
create function public.readiness_summary(publication_ids uuid[])
returns table (publication_id uuid, ready boolean, failing text[])
language sql stable
as $$
  select p.id, bool_and(r.ok), coalesce(array_agg(r.detail order by r."check") filter (where not r.ok), '{}')
    from public.publications p, app.readiness_of(p) r
   where p.id = any (publication_ids)
   group by p.id
$$;
revoke execute on function public.readiness_summary(uuid[]) from public, anon;
grant execute on function public.readiness_summary(uuid[]) to authenticated;
