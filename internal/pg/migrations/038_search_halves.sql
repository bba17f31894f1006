-- The trigram search index in two halves, so that it builds on two cores.
--
-- PostgreSQL 15 builds a GIN index in one process (parallel GIN builds came in 18), and the
-- trigram index over title, summary and body (017) is the longest build of the schema: 32 s
-- over the 300,000 publications of BenchmarkFloorSeed100k, with the machine's other core idle
-- for all but the first few seconds of it (sampled from /proc/stat: 1.0 core busy for 30 s at
-- the end of the seed). Two partial indexes, each over the half of the rows that
-- app.search_half puts in it, are the same entries split in two; built at once, they took
-- 16.5 s together on the same rows, against 32.5 s for the one. The same holds wherever the
-- index is built again: a restore (pg_restore -j builds them at once), a REINDEX, a settle of
-- the bulk seed (internal/seed, which now builds them side by side).
--
-- Every row is in exactly one half (a bit of its id), so search_publications asks both, one
-- OR arm each, which the planner answers with a BitmapOr of the two index scans; a row is
-- found as before (TestSearchPlanUsesTrigramIndex holds the plan and a match in each half).
-- A write enters one of the two, as it entered the one. A search pays the index scan's fixed
-- cost twice, and the recheck may match the phrase twice on a row of the second half (the OR
-- tries the first arm first): BenchmarkFloorSearch measured 3.35 ms of database CPU a search
-- with the halves, against 3.15-3.65 ms in the last three reports with the one index. The rest
-- of search_publications is 028's. With PostgreSQL 18, which builds a GIN index in parallel,
-- one index would do again.

-- search_half is which half of the search index a publication's row is in: the low bit of the
-- last byte of its id, random in every id gen_random_uuid makes (v4) as in a time-ordered one
-- (v7), so the halves stay even. Immutable: it is an index predicate.
create function app.search_half(id uuid) returns integer
language sql immutable parallel safe
return get_byte(uuid_send(id), 15) & 1;

grant execute on function app.search_half(uuid) to anon, authenticated, masthead_scheduler;

drop index public.publications_search_idx;
create index publications_search_idx_0 on public.publications
  using gin (app.search_text(title, summary, body) extensions.gin_trgm_ops) where app.search_half(id) = 0;
create index publications_search_idx_1 on public.publications
  using gin (app.search_text(title, summary, body) extensions.gin_trgm_ops) where app.search_half(id) = 1;

-- search_publications: 028's, each trigram match written as one arm per half.
create or replace function public.search_publications(
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
        and (app.search_half(p.id) = 0 and app.search_text(p.title, p.summary, p.body) ilike $1
             or app.search_half(p.id) = 1 and app.search_text(p.title, p.summary, p.body) ilike $1)
        and ($4::text[] is null or p.status = any ($4))
        and ($5::uuid is null or p.collection_id = $5)
        and ($6::uuid is null or p.author_id = $6)
        and ($7::uuid is null or p.author_id <> $7)
        and ($8::timestamptz is null or p.scheduled_for >= $8)
        and ($9::timestamptz is null or p.scheduled_for < $9)
      order by p.created_at desc, p.id desc
      limit $3';
  pattern text;
  words text;
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
  elsif project is not null then
    words := app.search_words(p, project);
    if words is not null then
      -- The index finds the rare words ($10); the phrase, lowered as ilike lowers it, decides.
      q := 'select r.* from public.publications r
        where r.project_id = any ((select app.project_ids())::uuid[])
          and ($2::uuid is null or r.project_id = $2)
          and (app.search_half(r.id) = 0 and app.search_text(r.title, r.summary, r.body) ilike $10
               or app.search_half(r.id) = 1 and app.search_text(r.title, r.summary, r.body) ilike $10)
          and lower(app.search_text(r.title, r.summary, r.body)) like lower($1)
          and ($4::text[] is null or r.status = any ($4))
          and ($5::uuid is null or r.collection_id = $5)
          and ($6::uuid is null or r.author_id = $6)
          and ($7::uuid is null or r.author_id <> $7)
          and ($8::timestamptz is null or r.scheduled_for >= $8)
          and ($9::timestamptz is null or r.scheduled_for < $9)
        order by r.created_at desc, r.id desc
        limit $3';
    end if;
  end if;
  return query execute q using pattern, project, max_rows, statuses, collection, author,
    not_author, scheduled_from, scheduled_to, words;
end
$$;
