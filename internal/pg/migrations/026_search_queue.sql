-- The review queue's search: its filters applied before the cap, and an estimate of the count.
--
-- The dashboard's queue searched with search_publications capped at 1,001 rows and applied its
-- other filters (status, collection, author, schedule) to what came back, so a common phrase
-- filtered by status counted and paged only the matches among the newest 1,001 of any status:
-- "the" in review in a 10,000-row project showed 277 of 2,798. search_publications now takes
-- those filters and applies them before the cap (every new argument defaults to null, "any",
-- so calls naming phrase, project and max_rows are unchanged).
--
-- The dashboard then asks for no more matches than the page it shows (and a few pages ahead,
-- where an exact count is cheap): a common phrase costs a walk to the end of the page, not to
-- the 1,001st match, which was most of the filtered queue's statement (about 4 of its 8 ms of
-- PostgreSQL CPU with "the" in 10,000 publications). When the walk stops at its cap there are
-- more matches than it returned, and search_estimate says about how many, labelled as such.

drop function public.search_publications(text, uuid, integer);

-- search_publications returns the caller's publications whose title, summary or body contains
-- phrase (case-insensitive, as ilike; LIKE's wildcards in phrase are matched literally), in
-- project when given, newest first (created_at, then id: a total order, so pages of it never
-- share or skip a row), at most max_rows of them when given. An empty phrase matches nothing.
-- The other arguments narrow it as the queue's filters do, each ignored when null: status one
-- of statuses, in collection, by author, not by not_author, scheduled_for in
-- [scheduled_from, scheduled_to). PL/pgSQL with EXECUTE, so every call is planned with its own
-- pattern, filters and cap: a rare phrase goes through the trigram index, a common one walks
-- the project's newest rows (publications_recent_idx) and stops at the cap; which one is
-- decided as in 023 (app.search_by_field). SECURITY DEFINER so that the index may serve the
-- match; it returns only rows publications_read would show the caller (TestSearchStaysInTenant,
-- TestSearchFiltersBeforeCap).
create function public.search_publications(
  phrase text, project uuid default null, max_rows integer default null,
  statuses text[] default null, collection uuid default null, author uuid default null,
  not_author uuid default null, scheduled_from timestamptz default null,
  scheduled_to timestamptz default null)
returns setof public.publications
language plpgsql stable security definer set search_path = ''
rows 200
as $$
declare
  p text := btrim(coalesce(phrase, ''));
  -- $4 to $9 are the queue's filters as REST applies them (author_id=neq. leaves out rows
  -- without an author); each query is written out whole, so tests can EXPLAIN it.
  q text := 'select p.* from public.publications p
      where p.project_id = any ((select app.project_ids())::uuid[])
        and ($2::uuid is null or p.project_id = $2)
        and app.search_text(p.title, p.summary, p.body) ilike $1
        and ($4::text[] is null or p.status = any ($4))
        and ($5::uuid is null or p.collection_id = $5)
        and ($6::uuid is null or p.author_id = $6)
        and ($7::uuid is null or p.author_id <> $7)
        and ($8::timestamptz is null or p.scheduled_for >= $8)
        and ($9::timestamptz is null or p.scheduled_for < $9)
      order by p.created_at desc, p.id desc
      limit $3';
  pattern text;
begin
  if p = '' then
    return;
  end if;
  pattern := '%' || replace(replace(replace(p, '\', '\\'), '%', '\%'), '_', '\_') || '%';
  if position(E'\n' in p) = 0 and app.search_by_field(pattern, project) then
    -- The newest rows in order (offset 0 keeps the subquery whole, so the outer LIMIT plans it
    -- to start fast: a walk of publications_recent_idx), kept while they match.
    q := 'select w.* from (select p.* from public.publications p
        where p.project_id = any ((select app.project_ids())::uuid[])
          and ($2::uuid is null or p.project_id = $2)
          and ($4::text[] is null or p.status = any ($4))
          and ($5::uuid is null or p.collection_id = $5)
          and ($6::uuid is null or p.author_id = $6)
          and ($7::uuid is null or p.author_id <> $7)
          and ($8::timestamptz is null or p.scheduled_for >= $8)
          and ($9::timestamptz is null or p.scheduled_for < $9)
        order by p.created_at desc, p.id desc
        offset 0) w
      where w.title ilike $1 or w.summary ilike $1 or w.body ilike $1
      limit $3';
  end if;
  return query execute q using pattern, project, max_rows, statuses, collection, author,
    not_author, scheduled_from, scheduled_to;
end
$$;

revoke execute on function public.search_publications(text, uuid, integer, text[], uuid, uuid, uuid, timestamptz, timestamptz) from public;
grant execute on function public.search_publications(text, uuid, integer, text[], uuid, uuid, uuid, timestamptz, timestamptz) to anon, authenticated;

-- search_estimate counts what search_publications would return for the same phrase, project and
-- filters without a cap, exactly where that is cheap and about where it is not: total is the
-- count and exact says which. For a phrase rare enough to go through the trigram index (not
-- app.search_by_field) it counts the matches, exactly, up to 1,001 (total 1,001 then means
-- "more than 1,000", as the dashboard has said before). For a common phrase (the walk) it
-- estimates: the planner's estimate of the project's rows that pass the filters (what
-- count=planned says of them) times the share of the newest 200 of those rows that hold the
-- phrase in any field (fewer than 200 such rows are all of them: their count is exact). 0,
-- exact, for an empty phrase, without a project, or for a project the caller is not a member
-- of. SECURITY DEFINER to ask the planner about the table without the caller's policy (whose
-- membership test it cannot estimate): it runs only after checking that membership, and a
-- member may read every row it counts. VOLATILE only because PostgreSQL allows EXPLAIN in no
-- other function; it writes nothing.
create function public.search_estimate(
  phrase text, project uuid,
  statuses text[] default null, collection uuid default null, author uuid default null,
  not_author uuid default null, scheduled_from timestamptz default null,
  scheduled_to timestamptz default null, out total bigint, out exact boolean)
language plpgsql volatile security definer set search_path = ''
as $$
declare
  p text := btrim(coalesce(phrase, ''));
  pattern text;
  filters text;
  sampled integer;
  matched integer;
  plan json;
begin
  total := 0;
  exact := true;
  if p = '' or project is null or not (project = any (app.project_ids())) then
    return;
  end if;
  pattern := '%' || replace(replace(replace(p, '\', '\\'), '%', '\%'), '_', '\_') || '%';
  if position(E'\n' in p) > 0 or not app.search_by_field(pattern, project) then
    select count(*) into total
      from public.search_publications(phrase, project, 1001, statuses, collection, author,
                                      not_author, scheduled_from, scheduled_to);
    return;
  end if;
  -- Literals, not parameters, so that EXPLAIN plans with the values (format's %L quotes them).
  filters := format(' where p.project_id = %L', project);
  if statuses is not null then
    filters := filters || format(' and p.status = any (%L::text[])', statuses);
  end if;
  if collection is not null then
    filters := filters || format(' and p.collection_id = %L', collection);
  end if;
  if author is not null then
    filters := filters || format(' and p.author_id = %L', author);
  end if;
  if not_author is not null then
    filters := filters || format(' and p.author_id <> %L', not_author);
  end if;
  if scheduled_from is not null then
    filters := filters || format(' and p.scheduled_for >= %L::timestamptz', scheduled_from);
  end if;
  if scheduled_to is not null then
    filters := filters || format(' and p.scheduled_for < %L::timestamptz', scheduled_to);
  end if;
  -- Field by field, as the walk matches (the phrase has no newline here): most rows stop at
  -- their title or summary instead of lowering their body.
  execute 'select count(*), count(*) filter (where s.title ilike $1 or s.summary ilike $1 or s.body ilike $1)
      from (select p.title, p.summary, p.body from public.publications p' || filters || '
             order by p.created_at desc, p.id desc limit 200) s'
    into sampled, matched using pattern;
  if sampled < 200 then
    total := matched;
    return;
  end if;
  execute 'explain (format json) select 1 from public.publications p' || filters into plan;
  total := round((plan -> 0 -> 'Plan' ->> 'Plan Rows')::double precision * matched / sampled);
  exact := false;
end
$$;

revoke execute on function public.search_estimate(text, uuid, text[], uuid, uuid, uuid, timestamptz, timestamptz) from public;
grant execute on function public.search_estimate(text, uuid, text[], uuid, uuid, uuid, timestamptz, timestamptz) to authenticated;
