-- Writing, as the workflow's other half: create_draft and update_draft are the one way the
-- dashboard and the MCP tools write a publication's text, so their rules live here with the
-- rest of the workflow. REST clients may still INSERT and PATCH directly; the guard trigger
-- (008) holds both paths to the same rules: editors and up, only while draft or changes
-- requested, every change bumps version.

-- slugify derives a publication slug from a title: lower-case ASCII words joined by hyphens,
-- at most 80 characters, 'untitled' when nothing is left.
create function app.slugify(t text) returns text
language sql immutable
as $$
  select coalesce(nullif(left(trim(both '-' from regexp_replace(lower(coalesce(t, '')), '[^a-z0-9]+', '-', 'g')), 80), ''), 'untitled')
$$;
grant execute on function app.slugify(text) to authenticated;

-- create_draft creates a draft in a project as the caller (its author), with a slug derived
-- from the title unless one is given; a derived slug that is taken gets -2, -3, … A project the
-- caller is not a member of is not found, whoever owns it.
create function public.create_draft(project_id uuid, title text, summary text default '', body text default '',
                                    collection_id uuid default null, slug text default null)
returns public.publications
language plpgsql
as $$
declare
  v_role text := app.member_role(create_draft.project_id);
  v_base text;
  v_slug text;
  v_n    integer := 1;
  v      public.publications;
begin
  if v_role is null then
    raise exception using errcode = 'PT404', message = 'project not found';
  end if;
  if v_role not in ('editor', 'lead', 'owner') then
    raise exception using errcode = '42501', message = format('%s cannot create publications', app.role_phrase(v_role));
  end if;
  if coalesce(btrim(title), '') = '' then
    raise exception using errcode = 'PT400', message = 'a title is required';
  end if;
  if nullif(btrim(slug), '') is not null then
    v_slug := btrim(slug);
    if v_slug !~ '^[a-z0-9][a-z0-9-]{0,199}$' then
      raise exception using errcode = 'PT400',
        message = 'a slug is lower-case letters, digits and hyphens, starting with a letter or digit';
    end if;
    if exists (select 1 from public.publications p where p.project_id = create_draft.project_id and p.slug = v_slug) then
      raise exception using errcode = 'PT409', message = format('the slug %s is taken in this project', v_slug),
        hint = 'Choose another slug, or leave it empty to derive one from the title.';
    end if;
  else
    v_base := app.slugify(title);
    v_slug := v_base;
    while exists (select 1 from public.publications p where p.project_id = create_draft.project_id and p.slug = v_slug) loop
      v_n := v_n + 1;
      v_slug := v_base || '-' || v_n;
    end loop;
  end if;
  insert into public.publications (project_id, collection_id, title, slug, summary, body)
  values (create_draft.project_id, create_draft.collection_id, btrim(title), v_slug,
          coalesce(summary, ''), coalesce(body, ''))
  returning * into v;
  return v;
end $$;

-- update_draft changes a draft's text, collection or slug, only if it is still at the version
-- the caller read: a save against a newer version changes nothing and says which version it
-- is at (PT409), so the caller can show what changed meanwhile instead of overwriting it.
-- Arguments left null keep their value; clear_collection removes the collection.
create function public.update_draft(publication_id uuid, expected_version integer, title text default null,
                                    summary text default null, body text default null,
                                    collection_id uuid default null, clear_collection boolean default false,
                                    slug text default null)
returns public.publications
language plpgsql
as $$
declare
  v public.publications;
begin
  if expected_version is null then
    raise exception using errcode = 'PT400', message = 'expected_version is required: the version you last read',
      hint = 'Read the publication, then save with its version.';
  end if;
  if title is not null and btrim(title) = '' then
    raise exception using errcode = 'PT400', message = 'a title is required';
  end if;
  update public.publications p
     set title = coalesce(btrim(update_draft.title), p.title),
         summary = coalesce(update_draft.summary, p.summary),
         body = coalesce(update_draft.body, p.body),
         slug = coalesce(nullif(btrim(update_draft.slug), ''), p.slug),
         collection_id = case when clear_collection then null
                              else coalesce(update_draft.collection_id, p.collection_id) end
   where p.id = update_draft.publication_id and p.version = expected_version
  returning * into v;
  if found then
    return v;
  end if;
  -- Nothing was updated: say why.
  select * into v from public.publications p where p.id = update_draft.publication_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'publication not found';
  end if;
  if coalesce(app.member_role(v.project_id), '') not in ('editor', 'lead', 'owner') then
    raise exception using errcode = '42501',
      message = format('%s cannot edit publications', app.role_phrase(app.member_role(v.project_id)));
  end if;
  if v.version <> expected_version then
    raise exception using errcode = 'PT409',
      message = format('this publication changed since you read it: it is at version %s, you read version %s',
                       v.version, expected_version),
      hint = 'Read it again, bring your changes over, and save with the new version.';
  end if;
  raise exception using errcode = '42501',
    message = format('%s cannot edit publications', app.role_phrase(app.member_role(v.project_id)));
end $$;

grant execute on function public.create_draft(uuid, text, text, text, uuid, text),
  public.update_draft(uuid, integer, text, text, text, uuid, boolean, text) to authenticated;

-- A draft that was ever submitted has a history (status_events, revisions) that outlives it:
-- deleting it is refused in words, not with a foreign-key error.
-- It reads the audit as its owner, so what it says does not depend on what the caller may see.
create function app.publications_delete_guard() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if exists (select 1 from public.status_events e where e.publication_id = old.id) then
    raise exception using errcode = 'PT409',
      message = 'this draft has a history (it was submitted before), so it cannot be deleted',
      hint = 'Archive it instead (a lead can): that keeps its history.';
  end if;
  return old;
end $$;

create trigger publications_delete_guard before delete on public.publications
  for each row execute function app.publications_delete_guard();

-- A title is one line of plain text: control characters and the bidi controls that can make it
-- read differently from what it holds (U+202A–U+202E, U+2066–U+2069) are refused, wherever
-- the write comes from.
alter table public.publications
  add constraint title_without_control_or_bidi_characters
  check (title !~ '[[:cntrl:]\u202a-\u202e\u2066-\u2069]');

-- site_url is where a project's publications are read (https://northwind.example): a
-- publication's canonical URL is site_url/slug, the link a promo gets unless it says otherwise.
alter table public.projects
  add column site_url text constraint site_url_is_an_http_url
    check (site_url ~ '^https?://[^[:space:]]+$' and length(site_url) <= 500);
grant update (site_url) on public.projects to authenticated;
