-- search_publications matches a common phrase field by field.
--
-- ilike lowers the whole text it matches (in a UTF-8 database, lower() of every character)
-- before it looks, so matching the concatenation of title, summary and body (017) lowers the
-- body of every row it reads, even when the title or the summary already holds the phrase.
-- A phrase common enough that search_publications walks the newest rows until the cap (the
-- dashboard's 1,001) costs that for each of them: "the" in 10,000 publications, 6 to 8 µs a
-- row, 1,001 rows. Matched as title ilike p or summary ilike p or body ilike p, a row whose
-- title or summary holds it stops there: about a quarter of the cost.
--
-- The concatenation stays what a rare phrase is matched with, because only it is served by the
-- trigram index (publications_search_idx), and the planner chooses between that index and the
-- walk from its own estimate of that expression. Which query to run is decided on the newest
-- 100 rows of the project searched (publications_recent_idx reads them in order): when at
-- least 10 hold the phrase in their title or summary, the field by field query, which walks the
-- project's newest rows (left to choose from its estimate of three ilikes, the planner made
-- "Harbour Festival" over 100,000 rows in BenchmarkFloorSearch about three times slower);
-- otherwise, and for a search over all the caller's projects, the concatenation, as before.
-- The sample reads titles and summaries only (short), so a rare phrase pays a tenth of a
-- millisecond for it. Both queries return the same rows: a phrase found in the concatenation is
-- found in one of its fields, because the newline joining them is in no phrase (a phrase with a
-- newline always takes the concatenation).

-- search_by_field says whether search_publications matches pattern field by field in project:
-- whether at least 10 of its newest 100 rows the caller may search hold it in their title or
-- summary. False without a project. Called by search_publications, as its owner; no caller may
-- call it directly.
create function app.search_by_field(pattern text, project uuid) returns boolean
language sql stable set search_path = ''
as $$
  select count(*) filter (where s.title ilike pattern or s.summary ilike pattern) >= 10
    from (select n.title, n.summary from public.publications n
           where n.project_id = project
             and n.project_id = any ((select app.project_ids())::uuid[])
           order by n.created_at desc, n.id desc
           limit 100) s
$$;

revoke execute on function app.search_by_field(text, uuid) from public;

create or replace function public.search_publications(phrase text, project uuid default null, max_rows integer default null)
returns setof public.publications
language plpgsql stable security definer set search_path = ''
rows 200
as $$
declare
  p text := btrim(coalesce(phrase, ''));
  q text := 'select p.* from public.publications p
      where p.project_id = any ((select app.project_ids())::uuid[])
        and ($2::uuid is null or p.project_id = $2)
        and app.search_text(p.title, p.summary, p.body) ilike $1
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
        order by p.created_at desc, p.id desc
        offset 0) w
      where w.title ilike $1 or w.summary ilike $1 or w.body ilike $1
      limit $3';
  end if;
  return query execute q using pattern, project, max_rows;
end
$$;
