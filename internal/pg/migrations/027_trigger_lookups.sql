-- Fewer lookups per row in the triggers every content change and every move runs.
--
-- Each call of a SECURITY DEFINER function with its own search_path (app.member_role,
-- app.project_ids, which every publications policy calls once per query) costs some 20 µs
-- here, and the row triggers below made up to three per row: the bulk seed's 100,000
-- publications a project made 1.3 million calls of each. What each trigger decides is
-- unchanged; only lookups whose answer the trigger did not use, or that one query answers, go.

-------------------------------------------------------------------------------------------------
-- The guard, as in 021, with one change: the caller's role is looked up only when the update
-- edits content or moves the publication, the only two checks that read it. A version bump
-- (every promo or media-link change makes one, through app.bump_versions) does neither, and
-- no longer pays for a lookup whose answer nothing read.

create or replace function app.publications_guard() returns trigger
language plpgsql
as $$
declare
  v_rule      app.transitions;
  v_role      text;
  v_rpc       boolean := coalesce(current_setting('masthead.intent', true), '') <> '';
  v_scheduler boolean := current_user = 'masthead_scheduler';
  v_moves     boolean := new.status is distinct from old.status
                         or (old.status = 'scheduled' and new.scheduled_for is distinct from old.scheduled_for);
  v_bumped    boolean := new.version > old.version and pg_trigger_depth() >= 2;
  v_edits     boolean := (new.title, new.slug, new.summary, new.body, new.collection_id)
                         is distinct from (old.title, old.slug, old.summary, old.body, old.collection_id);
begin
  if new.id <> old.id or new.project_id <> old.project_id or new.author_id <> old.author_id
     or new.created_at <> old.created_at or (new.version <> old.version and not v_bumped)
     or new.published_at is distinct from old.published_at then
    raise exception using errcode = '42501',
      message = 'id, project_id, author_id, created_at, version and published_at are maintained by Masthead and cannot be set';
  end if;

  if v_scheduler then
    if not (old.status = 'scheduled' and new.status = 'published' and old.scheduled_for <= now()) or v_edits then
      raise exception using errcode = '42501', message = 'the scheduler only publishes due publications';
    end if;
  elsif v_edits or v_moves then
    v_role := app.member_role(old.project_id);
  end if;

  if v_edits then
    if v_role is null or v_role not in ('editor', 'lead', 'owner') then
      raise exception using errcode = '42501',
        message = format('%s cannot edit publications', app.role_phrase(v_role));
    end if;
    if old.status not in ('draft', 'changes_requested') then
      raise exception using errcode = 'PT409',
        message = format('only drafts can be edited; this publication is %s', lower(app.status_label(old.status))),
        hint = 'Withdraw it to draft (or have a lead reopen it, or restore it, if archived) before editing.';
    end if;
  end if;

  if v_moves then
    select * into v_rule from app.transitions t where t.from_status = old.status and t.to_status = new.status;
    if not found then
      raise exception using errcode = 'PT409',
        message = format('a publication cannot move from %s to %s',
                         lower(app.status_label(old.status)), lower(app.status_label(new.status)));
    end if;
    if not v_scheduler then
      if v_role is null or not (v_role = any (v_rule.roles)) then
        raise exception using errcode = '42501',
          message = format('%s cannot %s publications', app.role_phrase(v_role), replace(v_rule.intent, '_', ' '));
      end if;
      if v_rule.intent = 'approve' and old.author_id = auth.uid() then
        raise exception using errcode = '42501', message = 'you cannot approve a publication you wrote';
      end if;
      -- A direct change carries no note, so a move that needs one must be made by its RPC.
      if not v_rpc and v_rule.note_required then
        raise exception using errcode = 'PT400',
          message = format('a note is required to %s: call %s(publication_id, note) instead of changing status directly',
                           replace(v_rule.intent, '_', ' '), v_rule.rpc),
          hint = format('POST /rest/v1/rpc/%s with {"publication_id": "…", "note": "…"}', v_rule.rpc);
      end if;
    end if;
    if new.status = 'scheduled' then
      perform app.check_scheduled_for(new.scheduled_for);
    end if;
    if new.status = 'published' then
      new.published_at := now();
    end if;
    if new.status <> 'scheduled' then
      new.scheduled_for := null;
    end if;
  end if;

  if not v_bumped then
    new.version := old.version + 1;
  end if;
  new.updated_at := now();
  return new;
end $$;

-------------------------------------------------------------------------------------------------
-- The content freeze, as in 021, asking one question per publication instead of two.
--
-- content_frozen read the publication as the caller (publications_read: a member of its project
-- sees it; a row it could not see was let through, for fill_project_from_publication or the
-- table's policies to refuse) and then asked app.member_role whether the caller edits in that
-- project (anyone else was let through too, for the policies to refuse). Refusing needs both,
-- and an editor, lead or owner of the project is a member who sees it, so the one question is:
-- the status of the publication, if the caller is an editor, lead or owner of its project.
-- app.editable_status answers it in one lookup as the owner; the freeze, its order (before the
-- row is written, first refused row first) and its error are as before.

create function app.editable_status(p_publication uuid) returns text
language plpgsql stable security definer set search_path = ''
as $$
begin
  return (select p.status
            from public.publications p
            join public.project_members m on m.project_id = p.project_id
           where p.id = p_publication and m.user_id = (select auth.uid())
             and m.role in ('editor', 'lead', 'owner'));
end $$;
revoke execute on function app.editable_status(uuid) from public;
grant execute on function app.editable_status(uuid) to authenticated;

create or replace function app.content_frozen() returns trigger
language plpgsql set search_path = ''
as $$
declare
  v_ids     uuid[] := '{}';
  v_id      uuid;
  v_status  text;
  v_what    text := case tg_table_name when 'promos' then 'promos' else 'media links' end;
begin
  if current_user <> 'authenticated' then
    return case when tg_op = 'DELETE' then old else new end;
  end if;
  if tg_op <> 'DELETE' then
    v_ids := v_ids || new.publication_id;
  end if;
  if tg_op = 'DELETE' or (tg_op = 'UPDATE' and old.publication_id is distinct from new.publication_id) then
    v_ids := v_ids || old.publication_id;
  end if;
  foreach v_id in array v_ids loop
    v_status := app.editable_status(v_id);
    continue when v_status is null;
    if v_status not in ('draft', 'changes_requested') then
      raise exception using errcode = 'PT409',
        message = format('%s can only change while the publication is a draft or has changes requested; this publication is %s',
                         v_what, lower(app.status_label(v_status))),
        hint = 'Withdraw it to draft, or have a lead reopen it, before changing it.';
    end if;
  end loop;
  return case when tg_op = 'DELETE' then old else new end;
end $$;

-------------------------------------------------------------------------------------------------
-- The append-only audit and revisions: an insert made by a trigger (the workflow's, at trigger
-- depth 1 or more when the row arrives) no longer calls the refusing function only for it to
-- return at once. The condition moves into the trigger's WHEN clause, which PostgreSQL
-- evaluates before the call, one trigger level further out than the function saw it (the
-- function, at depth 2 or more, let the row through; WHEN sees 1 or more). Any other insert
-- still meets the function and its error; updates, deletes and truncates too, as before.
-- The triggers keep their names, so their place among the tables' triggers.

drop trigger status_events_append_only on public.status_events;
create trigger status_events_append_only before insert on public.status_events
  for each row when (pg_trigger_depth() < 1) execute function app.status_events_append_only();
create trigger status_events_unchanged before update or delete on public.status_events
  for each row execute function app.status_events_append_only();

drop trigger publication_revisions_append_only on public.publication_revisions;
create trigger publication_revisions_append_only before insert on public.publication_revisions
  for each row when (pg_trigger_depth() < 1) execute function app.revisions_append_only();
create trigger publication_revisions_unchanged before update or delete on public.publication_revisions
  for each row execute function app.revisions_append_only();

-------------------------------------------------------------------------------------------------
-- Two CHECK constraints of publications, the same rules written so they cost less. PostgreSQL
-- checks every CHECK of a row on every update, whichever columns changed, so they run for
-- every move and every version bump too (a million times in the 100k seed).
--
-- The slug's bounded repetition, [a-z0-9-]{0,199}, compiles to some two hundred regex states
-- that each match walks: about 9 µs a row here, against 0.1 µs for the same rule as an
-- unbounded class and a length (every character the class admits is one byte, so at most 200
-- characters is exactly one and then at most 199). In a profile of a seeding backend the
-- first form was an eighth of its time.
--
-- The body's bound counts characters, which walks the whole text; a body of at most 200,000
-- bytes has at most 200,000 characters, so only a longer one needs counting (OR stops at its
-- first true argument).
--
-- Same names, so the errors that name them are unchanged.

alter table public.publications
  drop constraint publications_slug_check,
  add constraint publications_slug_check check (slug ~ '^[a-z0-9][a-z0-9-]*$' and length(slug) <= 200),
  drop constraint body_at_most_200000_chars,
  add constraint body_at_most_200000_chars check (octet_length(body) <= 200000 or char_length(body) <= 200000);
