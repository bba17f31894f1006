-- The workflow's bookkeeping once per statement instead of once per row.
--
-- The audit rows, the revision of a submit and the version bump of a promo or media-link
-- change were each written by a row-level trigger: one function call, one single-row INSERT or
-- UPDATE (each with its own executor start, row-level security and triggers) per row. A
-- statement that writes many rows (the bulk seed, a filtered PATCH or DELETE, the scheduler's
-- batch) paid that for every row. They are now statement-level AFTER triggers that read the
-- statement's transition tables and write every row in one INSERT or UPDATE: one on
-- publications for the audit, verdicts and revisions, and one per table and operation on
-- promos and publication_media for the version. What they write is unchanged, row for row:
-- one status_events row per row and move (same actor, via, intent, note), the verdict of an
-- approval or a request for changes, the revision of a submit (same round, version, snapshot
-- and submitter), and a publication's version raised by one for every promo or media-link row
-- changed, as each row's own trigger raised it (two for a row an upsert updates: its insert
-- attempt and its update). Two corners now count what was written rather than what was
-- attempted: a row that INSERT … ON CONFLICT DO NOTHING skips no longer raises the version,
-- and an UPDATE of promos or links in the same query as an INSERT into that table (a
-- data-modifying WITH; no surface writes one) may count twice, as an upsert's update does.
--
-- What is checked row by row stays so, and in the same order: the guard (the transition and
-- the caller's role), readiness, and the content freeze, which still refuses the first row of
-- a frozen publication before anything is written.

-------------------------------------------------------------------------------------------------
-- The guard, as in 008, with one change: an UPDATE issued by a trigger (trigger depth 2 or
-- more: the version bump below) may raise the version by more than one, so a statement that
-- changed three promos of a publication raises its version by three in one row update, as
-- three row updates did. Clients still cannot set the version: their statements, and the
-- functions they call, run at depth 1 in the guard.

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
begin
  if new.id <> old.id or new.project_id <> old.project_id or new.author_id <> old.author_id
     or new.created_at <> old.created_at or (new.version <> old.version and not v_bumped)
     or new.published_at is distinct from old.published_at then
    raise exception using errcode = '42501',
      message = 'id, project_id, author_id, created_at, version and published_at are maintained by Masthead and cannot be set';
  end if;

  if v_scheduler then
    if not (old.status = 'scheduled' and new.status = 'published' and old.scheduled_for <= now())
       or (new.title, new.slug, new.summary, new.body, new.collection_id)
          is distinct from (old.title, old.slug, old.summary, old.body, old.collection_id) then
      raise exception using errcode = '42501', message = 'the scheduler only publishes due publications';
    end if;
  else
    v_role := app.member_role(old.project_id);
  end if;

  if (new.title, new.slug, new.summary, new.body, new.collection_id)
     is distinct from (old.title, old.slug, old.summary, old.body, old.collection_id) then
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
-- The audit: one status_events row per row and move, and the verdict of an approval or a
-- request for changes, for every row of the statement at once.

-- write_events is the only writer of status_events (and of verdicts) now. It runs as the owner
-- because callers hold no INSERT on the audit, and only from a trigger: the audit's own trigger
-- refuses any other insert, and this function refuses to write verdicts for anyone else.
-- Row i of the arrays is one move and its intent; p_actor, p_note and p_via are the
-- statement's; p_verdicts says whether any move is an approval or a request for changes.
create function app.write_events(p_projects uuid[], p_ids uuid[], p_from text[], p_to text[], p_intents text[],
                                 p_actor uuid, p_note text, p_via text, p_verdicts boolean) returns void
language plpgsql security definer set search_path = ''
as $$
begin
  if pg_trigger_depth() < 1 then
    raise exception using errcode = '42501', message = 'the audit is written by the workflow''s triggers only';
  end if;
  insert into public.status_events (project_id, publication_id, from_status, to_status, actor_id, intent, note, via)
  select m.project_id, m.id, m.from_status, m.to_status, p_actor, m.intent, coalesce(p_note, ''), p_via
    from unnest(p_projects, p_ids, p_from, p_to, p_intents) with ordinality as m(project_id, id, from_status, to_status, intent, n)
   order by m.n;
  if p_verdicts then
    insert into public.reviews (project_id, publication_id, reviewer_id, verdict, notes)
    select m.project_id, m.id, auth.uid(),
           case m.intent when 'approve' then 'approved' else 'changes_requested' end, coalesce(p_note, '')
      from unnest(p_projects, p_ids, p_intents) with ordinality as m(project_id, id, intent, n)
     where m.intent in ('approve', 'request_changes')
     order by m.n;
  end if;
end $$;
grant execute on function app.write_events(uuid[], uuid[], text[], text[], text[], uuid, text, text, boolean)
  to authenticated, masthead_scheduler;

-- publications_audit runs as the caller, so that current_user names the scheduler and the
-- caller's intent and note are theirs, and hands the statement's moves, each with the intent
-- the workflow table gives it, to write_events, then its submits to write_revisions (the
-- order in which the row triggers publications_audit and publications_revision ran). A
-- statement that moves nothing (an edit, a version bump) costs one query over its transition
-- tables and no call.
create or replace function app.publications_audit() returns trigger
language plpgsql set search_path = ''
as $$
declare
  v_intent   text := nullif(current_setting('masthead.intent', true), '');
  v_via      text := case
                       when current_user = 'masthead_scheduler' then 'scheduler'
                       when v_intent is not null then 'rpc'
                       else 'direct' end;
  v_projects uuid[];
  v_ids      uuid[];
  v_from     text[];
  v_to       text[];
  v_intents  text[];
  v_verdicts boolean;
  v_submits  uuid[];
begin
  select array_agg(n.project_id), array_agg(n.id), array_agg(o.status), array_agg(n.status), array_agg(t.intent),
         bool_or(t.intent in ('approve', 'request_changes')),
         array_agg(n.id) filter (where n.status = 'reviewing' and o.status is distinct from 'reviewing')
    into v_projects, v_ids, v_from, v_to, v_intents, v_verdicts, v_submits
    from new_rows n
    join old_rows o on o.id = n.id
    left join app.transitions t on t.from_status = o.status and t.to_status = n.status
   where n.status is distinct from o.status
      or (n.status = 'scheduled' and n.scheduled_for is distinct from o.scheduled_for);
  if v_ids is not null then
    perform app.write_events(v_projects, v_ids, v_from, v_to, v_intents,
      case when v_via = 'scheduler' then null else auth.uid() end,
      case when v_via = 'rpc' then current_setting('masthead.note', true) else '' end,
      v_via, coalesce(v_verdicts, false));
  end if;
  if v_submits is not null then
    perform app.write_revisions(v_submits);
  end if;
  return null;
end $$;

-- Same name, so the same place among the publication's AFTER triggers.
drop trigger publications_audit on public.publications;
create trigger publications_audit after update on public.publications
  referencing old table as old_rows new table as new_rows
  for each statement execute function app.publications_audit();

-------------------------------------------------------------------------------------------------
-- Revisions: the revision of every row the statement submitted, in one INSERT. The round is
-- the publication's latest plus one, as app.current_round counts it; the snapshot is the one
-- app.snapshot builds, whose promos and media now come from app.snapshot_parts, a plain SQL
-- function that PostgreSQL inlines into the INSERT instead of calling once per row.

create function app.snapshot_parts(p_publication uuid) returns table (promos jsonb, media jsonb)
language sql stable
as $$
  select coalesce((select jsonb_agg(jsonb_build_object('channel', pr.channel, 'body', pr.body, 'link', pr.link)
                                    order by pr.channel)
                     from public.promos pr where pr.publication_id = p_publication), '[]'),
         coalesce((select jsonb_agg(jsonb_build_object('id', m.id, 'position', pm.position,
                                                       'alt_text', m.alt_text, 'storage_path', m.storage_path)
                                    order by pm.position, m.id)
                     from public.publication_media pm join public.media m on m.id = pm.media_id
                    where pm.publication_id = p_publication), '[]')
$$;

-- snapshot is a publication's content as a revision stores it (as in 018).
create or replace function app.snapshot(p public.publications) returns jsonb
language plpgsql stable security definer set search_path = ''
as $$
begin
  return (select jsonb_build_object('title', p.title, 'summary', p.summary, 'body', p.body,
                                    'promos', s.promos, 'media', s.media)
            from app.snapshot_parts(p.id) s);
end $$;

-- write_revisions records the revision of each publication submitted, as it stands after the
-- statement that submitted it. It runs as the owner because callers hold no INSERT on
-- revisions, and only from a trigger: the revisions' own trigger refuses any other insert.
create function app.write_revisions(p_ids uuid[]) returns void
language plpgsql security definer set search_path = ''
as $$
begin
  if pg_trigger_depth() < 1 then
    raise exception using errcode = '42501', message = 'revisions are written by the workflow''s triggers only';
  end if;
  insert into public.publication_revisions (project_id, publication_id, round, version, snapshot, submitted_by)
  select p.project_id, p.id,
         (select coalesce(max(r.round), 0) from public.publication_revisions r where r.publication_id = p.id) + 1,
         p.version,
         jsonb_build_object('title', p.title, 'summary', p.summary, 'body', p.body, 'promos', s.promos, 'media', s.media),
         auth.uid()
    from unnest(p_ids) with ordinality as x(id, n)
    join public.publications p on p.id = x.id
    cross join lateral app.snapshot_parts(p.id) s
   order by x.n;
end $$;
grant execute on function app.write_revisions(uuid[]) to authenticated, masthead_scheduler;

-- The audit trigger writes the revisions now.
drop trigger publications_revision on public.publications;
drop function app.record_revision();

-------------------------------------------------------------------------------------------------
-- Promos and media links: the freeze is still checked row by row, before the row is written;
-- the version bump comes once per statement, by the number of rows changed per publication.

-- content_frozen refuses a change to a promo or media link unless its publication is a draft
-- or has changes requested, exactly as in 008, and leaves the version to content_bump.
create or replace function app.content_frozen() returns trigger
language plpgsql set search_path = ''
as $$
declare
  v_ids     uuid[] := '{}';
  v_id      uuid;
  v_status  text;
  v_project uuid;
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
    select p.status, p.project_id into v_status, v_project from public.publications p where p.id = v_id;
    continue when not found;
    continue when coalesce(app.member_role(v_project), '') not in ('editor', 'lead', 'owner');
    if v_status not in ('draft', 'changes_requested') then
      raise exception using errcode = 'PT409',
        message = format('%s can only change while the publication is a draft or has changes requested; this publication is %s',
                         v_what, lower(app.status_label(v_status))),
        hint = 'Withdraw it to draft, or have a lead reopen it, before changing it.';
    end if;
  end loop;
  return case when tg_op = 'DELETE' then old else new end;
end $$;

-- content_insert_begins marks an INSERT into promos or publication_media as under way until
-- its own AFTER statement trigger: an UPDATE that ends meanwhile on the same table is the
-- DO UPDATE of an upsert, whose rows each met the row triggers of the insert too.
create function app.content_insert_begins() returns trigger
language plpgsql set search_path = ''
as $$
begin
  perform set_config('masthead.inserting_' || tg_table_name, 'on', true);
  return null;
end $$;
grant execute on function app.content_insert_begins() to authenticated;

-- bump_versions raises the version of publication p_ids[i] by p_steps[i]. It runs as the owner
-- because clients may not write the version column (the guard refuses them anyway), and only
-- from a trigger: content_bump, below, decides what to raise, for the caller's own changes.
create function app.bump_versions(p_ids uuid[], p_steps integer[]) returns void
language plpgsql security definer set search_path = ''
as $$
begin
  if pg_trigger_depth() < 1 then
    raise exception using errcode = '42501', message = 'versions are raised by the workflow''s triggers only';
  end if;
  update public.publications p set version = p.version + b.step
    from unnest(p_ids, p_steps) as b(id, step)
   where p.id = b.id;
end $$;
grant execute on function app.bump_versions(uuid[], integer[]) to authenticated;

-- content_bump raises the version of every publication whose promos or media links the
-- statement changed by one per row changed: each row inserted, updated or deleted, and each
-- row an upsert updated twice (its insert attempt and its update), which is what one bump per
-- row trigger gave. An update that moves rows between publications counts for both sides.
-- Only clients (role authenticated) are held, as by content_frozen: the owner writes
-- fixtures and repairs without moving versions. Rows removed by a cascade are not counted:
-- their publication is gone, or media_frozen counted the media item's removal.
create function app.content_bump() returns trigger
language plpgsql set search_path = ''
as $$
declare
  v_key   text := 'masthead.inserting_' || tg_table_name;
  v_each  integer := 1;
  v_ids   uuid[];
  v_steps integer[];
begin
  if tg_op = 'INSERT' then
    perform set_config(v_key, '', true);
  end if;
  if current_user <> 'authenticated' then
    return null;
  end if;
  if tg_op = 'INSERT' then
    select array_agg(b.publication_id), array_agg(b.n) into v_ids, v_steps
      from (select r.publication_id, count(*)::integer as n from new_rows r group by 1) b;
  elsif tg_op = 'DELETE' and tg_table_name = 'publication_media' then
    -- Links removed with their media item (the cascade's AFTER triggers fire in the deleting
    -- caller's statement) were counted by media_frozen, once per publication, before it.
    select array_agg(b.publication_id), array_agg(b.n) into v_ids, v_steps
      from (select r.publication_id, count(*)::integer as n from old_rows r
             where exists (select 1 from public.media m where m.id = r.media_id) group by 1) b;
  elsif tg_op = 'DELETE' then
    select array_agg(b.publication_id), array_agg(b.n) into v_ids, v_steps
      from (select r.publication_id, count(*)::integer as n from old_rows r group by 1) b;
  else
    if coalesce(current_setting(v_key, true), '') = 'on' then
      v_each := 2;
    end if;
    select array_agg(b.publication_id), array_agg(v_each * b.n) into v_ids, v_steps
      from (select x.publication_id, max(x.n)::integer as n
              from (select r.publication_id, count(*) as n from new_rows r group by 1
                    union all
                    select r.publication_id, count(*) from old_rows r group by 1) x
             group by 1) b;
  end if;
  if v_ids is not null then
    perform app.bump_versions(v_ids, v_steps);
  end if;
  return null;
end $$;
grant execute on function app.content_bump() to authenticated;

create trigger promos_inserting before insert on public.promos
  for each statement execute function app.content_insert_begins();
create trigger promos_version_insert after insert on public.promos
  referencing new table as new_rows
  for each statement execute function app.content_bump();
create trigger promos_version_update after update on public.promos
  referencing old table as old_rows new table as new_rows
  for each statement execute function app.content_bump();
create trigger promos_version_delete after delete on public.promos
  referencing old table as old_rows
  for each statement execute function app.content_bump();

create trigger publication_media_inserting before insert on public.publication_media
  for each statement execute function app.content_insert_begins();
create trigger publication_media_version_insert after insert on public.publication_media
  referencing new table as new_rows
  for each statement execute function app.content_bump();
create trigger publication_media_version_update after update on public.publication_media
  referencing old table as old_rows new table as new_rows
  for each statement execute function app.content_bump();
create trigger publication_media_version_delete after delete on public.publication_media
  referencing old table as old_rows
  for each statement execute function app.content_bump();
