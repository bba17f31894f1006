-- One lookup per promo or media link inserted, where there were two, and none for a verdict
-- the workflow writes.
--
-- A row inserted into promos or publication_media ran two row triggers, each reading its
-- publication: content_frozen (the freeze: app.editable_status, a SECURITY DEFINER query joining
-- the caller's membership) and then fill_project_from_publication (its project, read under the
-- caller's row-level security, and the "not found" refusal). app.content_insert asks once, as
-- the caller, for the publication's project and status, and decides both; only for a
-- publication that is frozen does it also ask the caller's role in its project. Measured as an
-- editor inserting 20,000 promos (four channels on 5,000 drafts) in one statement, three runs
-- each way in one test, in two such tests: 29.5-34.0 µs a row, against 43.8-47.6 µs with the
-- two triggers. The 100,000-publication seed inserts 566,000 such rows.
--
-- What it decides is what the two decided, in the same order:
--   - a client (role authenticated) that is an editor, lead or owner in the publication's
--     project is refused while the publication is neither a draft nor has changes requested
--     (PT409), as content_frozen refused it; a member in another role passes on to row-level
--     security, which refuses them for that reason;
--   - a publication the caller cannot see is "not found" (23503), as fill_project said; the
--     freeze never spoke first for one, because only a member can be an editor of its project,
--     and a member sees every publication of their project (publications_read);
--   - project_id, when not given, is the publication's.
-- content_frozen still holds updates and deletes; reviews keep fill_project_from_publication.
-- TestContentInsertDecidesAsBefore compares the two ways over a grid of callers, publications
-- (every status, another tenant's, none), projects named and tables.

-- publication_not_found is the refusal of a row naming a publication its writer cannot see,
-- worded once for the two triggers below.
create function app.publication_not_found(p_publication uuid) returns void
language plpgsql set search_path = ''
as $$
begin
  raise exception using errcode = '23503',
    message = format('publication %s not found', coalesce(p_publication::text, 'null')),
    detail = 'No publication with that id is visible to you.';
end $$;
grant execute on function app.publication_not_found(uuid) to authenticated;

create function app.content_insert() returns trigger
language plpgsql set search_path = ''
as $$
declare
  v_project uuid;
  v_status  text;
  v_role    text;
begin
  select p.project_id, p.status into v_project, v_status
    from public.publications p
   where p.id = new.publication_id;
  if not found then
    perform app.publication_not_found(new.publication_id);
  end if;
  -- The role matters only to a refusal, so it is asked only of a publication that is frozen,
  -- by a statement of its own: a condition holding a query would go through the executor on
  -- every row, frozen or not.
  if current_user = 'authenticated' and v_status not in ('draft', 'changes_requested') then
    select c.role into v_role from app.caller_projects c where c.project_id = v_project;
    if v_role in ('editor', 'lead', 'owner') then
      raise exception using errcode = 'PT409',
        message = format('%s can only change while the publication is a draft or has changes requested; this publication is %s',
                         case tg_table_name when 'promos' then 'promos' else 'media links' end,
                         lower(app.status_label(v_status))),
        hint = 'Withdraw it to draft, or have a lead reopen it, before changing it.';
    end if;
  end if;
  if new.project_id is null then
    new.project_id := v_project;
  end if;
  return new;
end $$;
grant execute on function app.content_insert() to authenticated;

drop trigger promos_fill_project on public.promos;
drop trigger promos_content_frozen on public.promos;
create trigger promos_content_frozen before update or delete on public.promos
  for each row execute function app.content_frozen();
create trigger promos_content_insert before insert on public.promos
  for each row execute function app.content_insert();

drop trigger publication_media_fill_project on public.publication_media;
drop trigger publication_media_content_frozen on public.publication_media;
create trigger publication_media_content_frozen before update or delete on public.publication_media
  for each row execute function app.content_frozen();
create trigger publication_media_content_insert before insert on public.publication_media
  for each row execute function app.content_insert();

-------------------------------------------------------------------------------------------------
-- fill_project_from_publication, as in 008, with nothing to ask of a row the workflow's own
-- triggers write with its project named: the verdict of an approval or a send-back, which
-- app.write_events inserts from the audit trigger, as its owner (row-level security does not
-- hold it), with the project of the row the statement moved. For such a row the lookup can
-- find no refusal the composite foreign key would not make, and it was the dearer part of the
-- insert: the statement has just moved that publication, so the lookup walks the row's new
-- versions (31-34 µs a call in the 100,000-publication seed, whose moves write 141,000 of its
-- 180,000 reviews). Every row a statement writes directly (trigger depth 1: a client's review,
-- the owner's fixtures) is looked up as before, so what a caller cannot see is still "not
-- found"; TestContentInsertDecidesAsBefore holds reviews to the 008 function too.

create or replace function app.fill_project_from_publication() returns trigger
language plpgsql security invoker set search_path = ''
as $$
declare
  v_project uuid;
begin
  if pg_trigger_depth() > 1 and current_user <> 'authenticated' and new.project_id is not null then
    return new;
  end if;
  select p.project_id into v_project from public.publications p where p.id = new.publication_id;
  if not found then
    perform app.publication_not_found(new.publication_id);
  end if;
  if new.project_id is null then
    new.project_id := v_project;
  end if;
  return new;
end $$;
