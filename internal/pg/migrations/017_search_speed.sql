-- Search over every status (title, summary and body) through an index that works under
-- row-level security.
--
-- A search made through REST as a filter (title=ilike.*x*) cannot use any index: ilike is not
-- leakproof, so under RLS PostgreSQL evaluates it only after the policy, row by row, never as
-- an index condition. search_publications narrows to the caller's projects itself, with the
-- policy's own membership check (app.project_ids(), the same function publications_read
-- calls), and then matches through a trigram index. It is SECURITY DEFINER so that the index
-- may serve the match; it returns only rows publications_read would show the caller (the
-- test TestSearchStaysInTenant holds it to that), and everything the REST engine reads around
-- it (embeds, counts) still runs as the caller under RLS.

create schema if not exists extensions;
create extension if not exists pg_trgm with schema extensions;

-- search_text is what a search matches: title, summary and body, one line apart (a newline,
-- which no search phrase contains, so a match never straddles two fields).
create function app.search_text(title text, summary text, body text) returns text
language sql immutable parallel safe
return coalesce(title, '') || E'\n' || coalesce(summary, '') || E'\n' || coalesce(body, '');

grant execute on function app.search_text(text, text, text) to anon, authenticated, masthead_scheduler;

create index publications_search_idx on public.publications
  using gin (app.search_text(title, summary, body) extensions.gin_trgm_ops);

-- search_publications returns the caller's publications whose title, summary or body contains
-- phrase (case-insensitive, as ilike; LIKE's wildcards in phrase are matched literally), in
-- project when given, newest first, at most max_rows of them when given. An empty phrase
-- matches nothing: list without it. PL/pgSQL with EXECUTE, so every call is planned with its
-- own pattern and cap: a rare phrase goes through the trigram index, a common one walks the
-- project's newest rows (publications_recent_idx) and stops at the cap. A caller that pages
-- through the matches and shows their number passes a cap (the dashboard: 1,001, shown as
-- "more than 1,000"), so a phrase found in every row costs a page, not the whole project.
create function public.search_publications(phrase text, project uuid default null, max_rows integer default null)
returns setof public.publications
language plpgsql stable security definer set search_path = ''
rows 200
as $$
declare
  p text := btrim(coalesce(phrase, ''));
begin
  if p = '' then
    return;
  end if;
  return query execute
    'select p.* from public.publications p
      where p.project_id = any ((select app.project_ids())::uuid[])
        and ($2::uuid is null or p.project_id = $2)
        and app.search_text(p.title, p.summary, p.body) ilike $1
      order by p.created_at desc, p.id desc
      limit $3'
    using '%' || replace(replace(replace(p, '\', '\\'), '%', '\%'), '_', '\_') || '%', project, max_rows;
end
$$;

revoke execute on function public.search_publications(text, uuid, integer) from public;
grant execute on function public.search_publications(text, uuid, integer) to anon, authenticated;

-- The publication triggers that act only on some changes now say so in their WHEN clause, the
-- very condition each function tests first, so PostgreSQL skips the call instead of entering
-- PL/pgSQL (and, for the SECURITY DEFINER ones, switching user and search_path) to find there
-- is nothing to do. Every content change bumps the version through an UPDATE of the
-- publication (app.content_frozen), and the bulk seed makes hundreds of thousands of them.
-- Same triggers, same names (so the same order), same functions: only the calls that returned
-- at once are gone. In a BEFORE trigger WHEN is evaluated just before the call, after the
-- triggers named before it, exactly as the function's own test was.
drop trigger publications_audit on public.publications;
create trigger publications_audit after update on public.publications
  for each row
  when (new.status is distinct from old.status
        or (new.status = 'scheduled' and new.scheduled_for is distinct from old.scheduled_for))
  execute function app.publications_audit();

drop trigger publications_revision on public.publications;
create trigger publications_revision after update on public.publications
  for each row
  when (new.status = 'reviewing' and old.status is distinct from 'reviewing')
  execute function app.record_revision();

drop trigger publications_ready on public.publications;
create trigger publications_ready before update on public.publications
  for each row
  when (new.status in ('scheduled', 'published')
        and (new.status is distinct from old.status or new.scheduled_for is distinct from old.scheduled_for))
  execute function app.publications_ready();
