-- search_publications looks a phrase with a common word up in the trigram index by its other
-- words.
--
-- pg_trgm finds '%Bulk 4711%' by every trigram of the pattern ("bul", "ulk", "lk ", "  4",
-- " 47", "471", "711"), and GIN intersects their posting lists: with "bulk" in every title it
-- steps through three lists of every row of the table to keep the 22 rows the rare trigrams
-- name. In BenchmarkFloorSearch (100,000 publications in each of two projects) that scan was
-- 12 ms of the 12.2 a search for "Bulk 4711" cost, against 0.25 ms for '%4711%' alone
-- (gingetbitmap, ginPostingListDecodeAllSegments and gin_trgm_triconsistent: 70% of perf's
-- samples of the backend).
--
-- app.search_words picks, from the newest 100 rows of the project searched (as
-- app.search_by_field samples them), the phrase's words that are common (in at least 20 of
-- them). When some are common and the others rare (all of them together in at most 2),
-- search_publications asks the index for the rare ones only ('%4711%'; several in the
-- phrase's order, '%regatta%lighthouse%'), and keeps of what the index finds the rows that
-- hold the phrase.
-- The rows are the same: every row holding the phrase holds each of its words, in that order,
-- so the index's pattern lets through every row the phrase matches, and the phrase itself then
-- decides, matched as ilike matches (lower(text) like lower(pattern) is what ilike does in a
-- UTF-8 database; written out so that the planner cannot hand the phrase to the index as a
-- second condition, which would bring the common trigrams back). Otherwise (one word, no common
-- word, only common words, no project, or a phrase common enough to be walked, 023) the query
-- is the one of 026, unchanged.

-- search_words returns the pattern search_publications gives the trigram index for phrase in
-- project instead of the phrase: its words (runs of 3 or more letters or digits, so that each
-- has a trigram of its own and none holds a LIKE wildcard) that fewer than 20 of the project's
-- newest 100 rows the caller may search hold in their title, summary or the first 200
-- characters of their body (substr reads no more of a long body than that), in the phrase's
-- order, as '%w1%w2%', when at most 2 of those rows hold them all (rare words: few rows for
-- the phrase to decide on; words as common as a few in a hundred would cost more rows than
-- the common word's posting lists). The words are cut from the lowered phrase, so each is a
-- piece of what ilike looks for in the lowered text whatever lower() makes of a letter's
-- neighbours. Null, "the phrase itself", when there is no such choice: no common word, no
-- rare word, words neither common nor rare, or no project.
-- Called by search_publications as its owner; no caller may call it.
create function app.search_words(phrase text, project uuid) returns text
language plpgsql stable set search_path = ''
as $$
begin
  -- PL/pgSQL, so that the plan is kept for the session (018); one word alone is no choice, and
  -- costs no sample.
  return (
    with words as (
      select r.m[1] as word, r.o
        from regexp_matches(lower(phrase), '[[:alnum:]]{3,}', 'g') with ordinality r(m, o)),
    sample as materialized (
      select lower(n.title) || E'\n' || lower(n.summary) || E'\n' || lower(substr(n.body, 1, 200))
               as text
        from public.publications n
       where n.project_id = project
         and n.project_id = any ((select app.project_ids())::uuid[])
       order by n.created_at desc, n.id desc
       limit 100),
    counted as (
      select w.word, w.o,
             (select count(*) from sample s where s.text like '%' || w.word || '%') >= 20 as common
        from words w
       where (select count(*) from words) > 1),
    chosen as (
      select '%' || string_agg(c.word, '%' order by c.o) filter (where not c.common) || '%' as pattern
        from counted c
      having bool_or(c.common) and not bool_and(c.common))
    select h.pattern from chosen h
     where (select count(*) from sample s where s.text like h.pattern) <= 2);
end
$$;

revoke execute on function app.search_words(text, uuid) from public;

-- search_publications: as in 026, and $10, when app.search_words gives a pattern, is what the
-- trigram index is asked for (the words query below). The first query stays the rare phrase's
-- query of 026, written out whole, so tests and the benchmark's floor can EXPLAIN it.
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
          and app.search_text(r.title, r.summary, r.body) ilike $10
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
