-- Foundation: roles, the Supabase-style auth helpers, the tenant tables, row-level security, the
-- publication workflow and its append-only audit.
--
-- Access is decided here and nowhere else. The service logs in as `authenticator`, which holds
-- no privileges of its own and only switches into one of the roles below per transaction.

-- Helper functions are declared before the tables they read; their bodies are checked when first run.
set local check_function_bodies = off;

-- Roles are cluster-wide, so they are created only when missing.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'masthead_auth') then
    create role masthead_auth nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'masthead_scheduler') then
    create role masthead_scheduler nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticator') then
    create role authenticator login noinherit;
  end if;
end $$;

grant anon, authenticated, masthead_auth, masthead_scheduler to authenticator;

-- Functions are executable by PUBLIC by default; here every grant is explicit.
alter default privileges revoke execute on functions from public;

create schema if not exists auth;
create schema if not exists app;
revoke all on schema public from public;
grant usage on schema public to anon, authenticated, masthead_scheduler, masthead_auth;
grant usage on schema auth to anon, authenticated, masthead_auth, masthead_scheduler;
grant usage on schema app to anon, authenticated, masthead_scheduler, masthead_auth;

-------------------------------------------------------------------------------------------------
-- auth: identity, never exposed over REST.

-- auth.jwt() is the verified claims of the current request, as Supabase defines it.
create function auth.jwt() returns jsonb
language sql stable
as $$
  select coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb
$$;

create function auth.uid() returns uuid
language sql stable
as $$
  select nullif(auth.jwt() ->> 'sub', '')::uuid
$$;

create function auth.role() returns text
language sql stable
as $$
  select coalesce(auth.jwt() ->> 'role', current_user)
$$;

create function auth.email() returns text
language sql stable
as $$
  select auth.jwt() ->> 'email'
$$;

grant execute on function auth.jwt(), auth.uid(), auth.role(), auth.email()
  to anon, authenticated, masthead_auth, masthead_scheduler;

create table auth.users (
  id                 uuid primary key default gen_random_uuid(),
  aud                text not null default 'authenticated',
  role               text not null default 'authenticated',
  email              text not null check (email ~ '^[^@\s]+@[^@\s]+$' and length(email) <= 320),
  encrypted_password text,
  email_confirmed_at timestamptz,
  last_sign_in_at    timestamptz,
  raw_app_meta_data  jsonb not null default '{"provider":"email","providers":["email"]}',
  raw_user_meta_data jsonb not null default '{}',
  is_anonymous       boolean not null default false,
  banned_until       timestamptz,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now()
);
create unique index users_email_key on auth.users (lower(email));

grant select, insert, update on auth.users to masthead_auth;

-------------------------------------------------------------------------------------------------
-- app: private helpers used by policies and triggers; never exposed over REST.

-- project_ids returns the projects the caller belongs to, optionally only those where they hold
-- one of roles. Policies call it as `project_id = any ((select app.project_ids(...))::uuid[])`, which
-- PostgreSQL evaluates once per statement (an InitPlan) and then probes the project_id index.
create function app.project_ids(roles text[] default null) returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(m.project_id), '{}')
  from public.project_members m
  where m.user_id = (select auth.uid())
    and (roles is null or m.role = any (roles))
$$;

-- member_role is the caller's role in one project, or null.
create function app.member_role(p_project uuid) returns text
language sql stable security definer set search_path = ''
as $$
  select m.role from public.project_members m
  where m.project_id = p_project and m.user_id = (select auth.uid())
$$;

-- co_member_ids are the users who share at least one project with the caller (and the caller).
create function app.co_member_ids() returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(distinct m.user_id), array[(select auth.uid())])
  from public.project_members m
  where m.project_id = any (app.project_ids())
$$;

create function app.valid_timezone(tz text) returns boolean
language plpgsql immutable
as $$
begin
  perform now() at time zone tz;
  return true;
exception when others then
  return false;
end $$;

create function app.touch_updated_at() returns trigger
language plpgsql
as $$
begin
  new.updated_at := now();
  return new;
end $$;

grant execute on function app.project_ids(text[]), app.member_role(uuid), app.co_member_ids(),
  app.valid_timezone(text), app.touch_updated_at()
  to anon, authenticated, masthead_scheduler;

-------------------------------------------------------------------------------------------------
-- public: the tenant data.

-- profiles are the public face of auth.users: what a co-member may know of a person.
create table public.profiles (
  id           uuid primary key references auth.users (id) on delete cascade,
  email        text not null,
  display_name text not null,
  created_at   timestamptz not null default now()
);

create function app.sync_profile() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  insert into public.profiles (id, email, display_name)
  values (new.id, new.email,
          coalesce(nullif(new.raw_user_meta_data ->> 'name', ''), split_part(new.email, '@', 1)))
  on conflict (id) do update set email = excluded.email, display_name = excluded.display_name;
  return new;
end $$;

create trigger users_sync_profile after insert or update of email, raw_user_meta_data on auth.users
  for each row execute function app.sync_profile();

create table public.projects (
  id               uuid primary key default gen_random_uuid(),
  slug             text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
  name             text not null check (length(name) between 1 and 200),
  default_channels text[] not null default '{}',
  timezone         text not null default 'UTC' check (app.valid_timezone(timezone)),
  created_at       timestamptz not null default now()
);

create table public.project_members (
  project_id uuid not null references public.projects (id) on delete cascade,
  user_id    uuid not null references public.profiles (id) on delete cascade,
  role       text not null check (role in ('owner', 'lead', 'editor', 'reviewer', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (project_id, user_id)
);
create index project_members_user_idx on public.project_members (user_id, project_id, role);

create table public.collections (
  id          uuid primary key default gen_random_uuid(),
  project_id  uuid not null references public.projects (id) on delete cascade,
  slug        text not null check (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name        text not null check (length(name) between 1 and 200),
  kind        text not null default 'section' check (kind in ('campaign', 'section')),
  description text not null default '',
  created_at  timestamptz not null default now(),
  unique (project_id, slug),
  unique (project_id, id)
);

create table public.channels (
  slug                 text primary key check (slug ~ '^[a-z0-9][a-z0-9_-]{0,30}$'),
  name                 text not null,
  limits               jsonb not null default '{}',
  upload_post_platform text not null check (upload_post_platform in
    ('x', 'linkedin', 'instagram', 'facebook', 'threads', 'bluesky', 'tiktok', 'youtube',
     'pinterest', 'reddit', 'mastodon'))
);

create table public.publications (
  id            uuid primary key default gen_random_uuid(),
  project_id    uuid not null references public.projects (id) on delete cascade,
  collection_id uuid,
  title         text not null check (length(title) between 1 and 300),
  slug          text not null check (slug ~ '^[a-z0-9][a-z0-9-]{0,199}$'),
  summary       text not null default '',
  body          text not null default '',
  status        text not null default 'draft' check (status in
    ('draft', 'reviewing', 'changes_requested', 'approved', 'scheduled', 'published', 'archived')),
  scheduled_for timestamptz,
  published_at  timestamptz,
  author_id     uuid not null default auth.uid() references public.profiles (id),
  version       integer not null default 1,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  unique (project_id, slug),
  unique (project_id, id),
  foreign key (project_id, collection_id) references public.collections (project_id, id),
  -- a publication has a date exactly while it is scheduled
  check ((status = 'scheduled') = (scheduled_for is not null))
);
-- The review queue: one project, one status, newest first.
create index publications_queue_idx on public.publications (project_id, status, created_at desc);
-- The queue across all of a person's projects: walk one status newest first, keep their rows.
create index publications_status_idx on public.publications (status, created_at desc);
-- The schedule and the scheduler: what is due, in order.
create index publications_due_idx on public.publications (scheduled_for) where status = 'scheduled';
create index publications_collection_idx on public.publications (collection_id);
create index publications_author_idx on public.publications (author_id);

create table public.promos (
  id             uuid primary key default gen_random_uuid(),
  project_id     uuid not null references public.projects (id) on delete cascade,
  publication_id uuid not null,
  channel        text not null references public.channels (slug),
  body           text not null default '',
  link           text,
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  unique (publication_id, channel),
  foreign key (project_id, publication_id) references public.publications (project_id, id) on delete cascade
);
create index promos_project_idx on public.promos (project_id);

create table public.media (
  id           uuid primary key default gen_random_uuid(),
  project_id   uuid not null references public.projects (id) on delete cascade,
  storage_path text not null unique check (storage_path ~ '^[a-z0-9][a-z0-9-]*/[^/].*$'
                                           and storage_path !~ '(^|/)\.\.?(/|$)'),
  kind         text not null default 'image' check (kind in ('image', 'video')),
  mime_type    text not null,
  alt_text     text not null default '',
  width        integer check (width > 0),
  height       integer check (height > 0),
  bytes        bigint not null default 0 check (bytes >= 0),
  created_at   timestamptz not null default now(),
  unique (project_id, id)
);
create index media_project_idx on public.media (project_id);

create table public.publication_media (
  project_id     uuid not null references public.projects (id) on delete cascade,
  publication_id uuid not null,
  media_id       uuid not null,
  position       integer not null default 0,
  primary key (publication_id, media_id),
  foreign key (project_id, publication_id) references public.publications (project_id, id) on delete cascade,
  foreign key (project_id, media_id) references public.media (project_id, id) on delete cascade
);
create index publication_media_media_idx on public.publication_media (media_id);
create index publication_media_project_idx on public.publication_media (project_id);

create table public.reviews (
  id             uuid primary key default gen_random_uuid(),
  project_id     uuid not null references public.projects (id) on delete cascade,
  publication_id uuid not null,
  reviewer_id    uuid not null default auth.uid() references public.profiles (id),
  verdict        text not null check (verdict in ('approved', 'changes_requested', 'comment')),
  notes          text not null default '',
  created_at     timestamptz not null default now(),
  foreign key (project_id, publication_id) references public.publications (project_id, id) on delete cascade
);
create index reviews_publication_idx on public.reviews (publication_id, created_at);
create index reviews_project_idx on public.reviews (project_id);

create table public.status_events (
  id             bigint generated always as identity primary key,
  project_id     uuid not null references public.projects (id),
  publication_id uuid not null,
  from_status    text not null,
  to_status      text not null,
  actor_id       uuid references public.profiles (id),
  intent         text not null,
  note           text not null default '',
  via            text not null check (via in ('rpc', 'direct', 'scheduler')),
  created_at     timestamptz not null default now(),
  -- the audit outlives nothing it describes: a publication with history cannot be deleted
  foreign key (project_id, publication_id) references public.publications (project_id, id)
);
create index status_events_publication_idx on public.status_events (publication_id, id);
create index status_events_project_idx on public.status_events (project_id, created_at desc);

create trigger promos_touch before update on public.promos
  for each row execute function app.touch_updated_at();

-- Child rows name their project; fill it from the parent so clients need not repeat it, and
-- the composite foreign keys above make a mismatch impossible.
create function app.fill_project_from_publication() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if new.project_id is null then
    select p.project_id into new.project_id from public.publications p where p.id = new.publication_id;
  end if;
  return new;
end $$;

create trigger promos_fill_project before insert on public.promos
  for each row execute function app.fill_project_from_publication();
create trigger reviews_fill_project before insert on public.reviews
  for each row execute function app.fill_project_from_publication();
create trigger publication_media_fill_project before insert on public.publication_media
  for each row execute function app.fill_project_from_publication();

-- A media object lives under its project's folder, so storage paths cannot cross tenants.
create function app.check_media_path() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  v_slug text;
begin
  select p.slug into v_slug from public.projects p where p.id = new.project_id;
  if split_part(new.storage_path, '/', 1) is distinct from v_slug then
    raise exception using errcode = '23514',
      message = format('storage_path must start with the project folder "%s/"', v_slug);
  end if;
  return new;
end $$;

create trigger media_check_path before insert or update of storage_path, project_id on public.media
  for each row execute function app.check_media_path();

grant execute on function app.fill_project_from_publication(), app.check_media_path() to authenticated;

-------------------------------------------------------------------------------------------------
-- The workflow. One table says which transition each intent makes and who may make it; the
-- RPCs and the trigger both read it, so the rules live in one place.

create table app.transitions (
  intent      text not null,
  from_status text not null,
  to_status   text not null,
  roles       text[] not null,
  primary key (from_status, to_status)
);

insert into app.transitions (intent, from_status, to_status, roles) values
  ('submit',          'draft',             'reviewing',         '{editor,lead,owner}'),
  ('submit',          'changes_requested', 'reviewing',         '{editor,lead,owner}'),
  ('withdraw',        'reviewing',         'draft',             '{editor,lead,owner}'),
  ('withdraw',        'changes_requested', 'draft',             '{editor,lead,owner}'),
  ('approve',         'reviewing',         'approved',          '{reviewer,lead,owner}'),
  ('request_changes', 'reviewing',         'changes_requested', '{reviewer,lead,owner}'),
  ('schedule',        'approved',          'scheduled',         '{lead,owner}'),
  ('schedule',        'scheduled',         'scheduled',         '{lead,owner}'),
  ('unschedule',      'scheduled',         'approved',          '{lead,owner}'),
  ('publish',         'approved',          'published',         '{lead,owner}'),
  ('publish',         'scheduled',         'published',         '{lead,owner}'),
  ('archive',         'draft',             'archived',          '{lead,owner}'),
  ('archive',         'approved',          'archived',          '{lead,owner}'),
  ('archive',         'published',         'archived',          '{lead,owner}'),
  ('restore',         'archived',          'draft',             '{lead,owner}');

grant select on app.transitions to authenticated, masthead_scheduler;

-- status_label is the word a person reads for a status.
create function app.status_label(s text) returns text
language sql immutable
as $$
  select case s
    when 'draft' then 'Draft'
    when 'reviewing' then 'In review'
    when 'changes_requested' then 'Changes requested'
    when 'approved' then 'Approved'
    when 'scheduled' then 'Scheduled'
    when 'published' then 'Published'
    when 'archived' then 'Archived'
    else s end
$$;
grant execute on function app.status_label(text) to authenticated, masthead_scheduler;

-- role_phrase names a project role as a sentence starts with it: "an editor cannot …".
create function app.role_phrase(r text) returns text
language sql immutable
as $$
  select case r
    when 'owner' then 'An owner'
    when 'lead' then 'A lead'
    when 'editor' then 'An editor'
    when 'reviewer' then 'A reviewer'
    when 'viewer' then 'A viewer'
    else 'Someone outside this project' end
$$;
grant execute on function app.role_phrase(text) to authenticated, masthead_scheduler;

-- write_event is the only writer of status_events. It runs as the owner because callers hold no
-- INSERT on the audit; the audit's own trigger refuses any insert not made from a trigger.
create function app.write_event(p_project uuid, p_publication uuid, p_from text, p_to text,
                                p_actor uuid, p_intent text, p_note text, p_via text) returns void
language sql security definer set search_path = ''
as $$
  insert into public.status_events (project_id, publication_id, from_status, to_status, actor_id, intent, note, via)
  values (p_project, p_publication, p_from, p_to, p_actor, p_intent, coalesce(p_note, ''), p_via)
$$;

-- publications_guard runs as the caller (so current_user and auth.uid() are theirs) before every
-- update of a publication: it refuses illegal changes, applies the side effects of a transition
-- and bumps the version.
create function app.publications_guard() returns trigger
language plpgsql
as $$
declare
  v_rule      app.transitions;
  v_role      text;
  v_scheduler boolean := current_user = 'masthead_scheduler';
  v_moves     boolean := new.status is distinct from old.status
                         or (old.status = 'scheduled' and new.scheduled_for is distinct from old.scheduled_for);
begin
  if new.id <> old.id or new.project_id <> old.project_id or new.author_id <> old.author_id
     or new.created_at <> old.created_at or new.version <> old.version
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
        hint = 'Withdraw it to draft (or restore it, if archived) before editing.';
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
    end if;
    if new.status = 'scheduled' and new.scheduled_for <= now() then
      raise exception using errcode = 'PT400', message = 'scheduled_for must be in the future';
    end if;
    if new.status = 'published' then
      new.published_at := now();
    end if;
    if new.status <> 'scheduled' then
      new.scheduled_for := null;
    end if;
  end if;

  new.version := old.version + 1;
  new.updated_at := now();
  return new;
end $$;

-- publications_audit writes one status_events row per transition, after the row changed.
create function app.publications_audit() returns trigger
language plpgsql
as $$
declare
  v_intent text := nullif(current_setting('masthead.intent', true), '');
  v_via    text;
begin
  if new.status is distinct from old.status
     or (new.status = 'scheduled' and new.scheduled_for is distinct from old.scheduled_for) then
    v_via := case
      when current_user = 'masthead_scheduler' then 'scheduler'
      when v_intent is not null then 'rpc'
      else 'direct' end;
    perform app.write_event(new.project_id, new.id, old.status, new.status,
      case when v_via = 'scheduler' then null else auth.uid() end,
      (select t.intent from app.transitions t where t.from_status = old.status and t.to_status = new.status),
      case when v_via = 'rpc' then current_setting('masthead.note', true) else '' end,
      v_via);
  end if;
  return null;
end $$;

create trigger publications_guard before update on public.publications
  for each row execute function app.publications_guard();
create trigger publications_audit after update on public.publications
  for each row execute function app.publications_audit();

-- New publications start as drafts written by the caller.
create function app.publications_new() returns trigger
language plpgsql
as $$
begin
  if new.status <> 'draft' then
    raise exception using errcode = 'PT400', message = 'new publications start as drafts',
      hint = 'Create it, then submit it for review.';
  end if;
  new.version := 1;
  new.published_at := null;
  new.created_at := now();
  new.updated_at := now();
  return new;
end $$;

create trigger publications_new before insert on public.publications
  for each row execute function app.publications_new();

-- status_events is append-only: nobody, the owner included, may change or remove a row, and
-- rows only arrive through the transition trigger (app.write_event, called from a trigger).
create function app.status_events_append_only() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'INSERT' and pg_trigger_depth() >= 2 then
    return new;
  end if;
  raise exception using errcode = '42501',
    message = 'status_events is an append-only audit written by the workflow; it cannot be '
              || case tg_op when 'INSERT' then 'written directly' else 'changed' end;
end $$;

create trigger status_events_append_only before insert or update or delete on public.status_events
  for each row execute function app.status_events_append_only();
create trigger status_events_no_truncate before truncate on public.status_events
  for each statement execute function app.status_events_append_only();

grant execute on function app.publications_guard(), app.publications_audit(), app.publications_new(),
  app.write_event(uuid, uuid, text, text, uuid, text, text, text), app.status_events_append_only()
  to authenticated, masthead_scheduler;

-- write_verdict records the review a verdict transition produces. Callers may only insert
-- comment reviews themselves (see the policy), so verdicts cannot be forged.
create function app.write_verdict(p_pub public.publications, p_verdict text, p_notes text)
returns void
language sql security definer set search_path = ''
as $$
  insert into public.reviews (project_id, publication_id, reviewer_id, verdict, notes)
  values (p_pub.project_id, p_pub.id, auth.uid(), p_verdict, coalesce(p_notes, ''))
$$;
grant execute on function app.write_verdict(public.publications, text, text) to authenticated;

-- transition is the body of every workflow RPC. It runs as the caller, so row-level security
-- decides visibility; it answers 404 for a row the caller cannot see, 403 for a role that may
-- not make the move, 409 for a stale version or a status that does not allow it, 400 for bad
-- arguments, and changes nothing when it refuses.
create function app.transition(p_id uuid, p_intent text, p_note text, p_expected integer,
                               p_scheduled_for timestamptz default null)
returns public.publications
language plpgsql
as $$
declare
  v      public.publications;
  v_rule app.transitions;
  v_role text;
begin
  if p_id is null then
    raise exception using errcode = 'PT400', message = 'publication_id is required';
  end if;
  select * into v from public.publications where id = p_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'publication not found',
      detail = format('No publication with id %s is visible to you.', p_id);
  end if;
  v_role := app.member_role(v.project_id);
  if not exists (select 1 from app.transitions t where t.intent = p_intent and v_role = any (t.roles)) then
    raise exception using errcode = '42501',
      message = format('%s cannot %s publications', app.role_phrase(v_role), replace(p_intent, '_', ' '));
  end if;
  if p_intent = 'approve' and v.author_id = auth.uid() then
    raise exception using errcode = '42501', message = 'you cannot approve a publication you wrote',
      hint = 'Ask another reviewer or a lead to approve it.';
  end if;
  if p_intent = 'request_changes' and coalesce(btrim(p_note), '') = '' then
    raise exception using errcode = 'PT400', message = 'a note is required to request changes',
      hint = 'Say what needs to change.';
  end if;
  if p_intent = 'schedule' and (p_scheduled_for is null or p_scheduled_for <= now()) then
    raise exception using errcode = 'PT400', message = 'scheduled_for must be a time in the future';
  end if;

  -- Lock, then judge the row as it is now: concurrent callers queue here and the losers see
  -- the winner's result.
  select * into v from public.publications where id = p_id for update;
  if not found then
    raise exception using errcode = '42501', message = format('you cannot change this publication');
  end if;
  if p_expected is not null and v.version <> p_expected then
    raise exception using errcode = 'PT409',
      message = format('the publication changed since you loaded it (you had version %s, it is now version %s, %s)',
                       p_expected, v.version, lower(app.status_label(v.status))),
      hint = 'Reload it and decide again.';
  end if;
  select * into v_rule from app.transitions t where t.intent = p_intent and t.from_status = v.status;
  if not found then
    raise exception using errcode = 'PT409',
      message = format('cannot %s: the publication is %s', replace(p_intent, '_', ' '), lower(app.status_label(v.status))),
      hint = 'Reload it to see its current state.';
  end if;

  perform set_config('masthead.intent', p_intent, true), set_config('masthead.note', coalesce(p_note, ''), true);
  update public.publications
     set status = v_rule.to_status,
         scheduled_for = case when p_intent = 'schedule' then p_scheduled_for else scheduled_for end
   where id = p_id
  returning * into v;
  perform set_config('masthead.intent', '', true), set_config('masthead.note', '', true);

  if p_intent = 'approve' then
    perform app.write_verdict(v, 'approved', p_note);
  elsif p_intent = 'request_changes' then
    perform app.write_verdict(v, 'changes_requested', p_note);
  end if;
  return v;
end $$;
grant execute on function app.transition(uuid, text, text, integer, timestamptz) to authenticated;

-- The workflow RPCs (POST /rest/v1/rpc/<name>). Argument names are the public contract.
create function public.submit_for_review(publication_id uuid, note text default null, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'submit', $2, $3) $$;

create function public.withdraw(publication_id uuid, note text default null, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'withdraw', $2, $3) $$;

create function public.approve(publication_id uuid, note text default null, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'approve', $2, $3) $$;

create function public.request_changes(publication_id uuid, note text default null, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'request_changes', $2, $3) $$;

create function public.schedule(publication_id uuid, scheduled_for timestamptz default null, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'schedule', null, $3, $2) $$;

create function public.unschedule(publication_id uuid, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'unschedule', null, $2) $$;

create function public.publish_now(publication_id uuid, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'publish', null, $2) $$;

create function public.archive(publication_id uuid, note text default null, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'archive', $2, $3) $$;

create function public.restore(publication_id uuid, expected_version integer default null)
returns public.publications language sql as $$ select * from app.transition($1, 'restore', null, $2) $$;

-- add_review leaves a comment without moving the publication.
create function public.add_review(publication_id uuid, note text default null)
returns public.reviews
language plpgsql
as $$
declare
  v_project uuid;
  r public.reviews;
begin
  select p.project_id into v_project from public.publications p where p.id = add_review.publication_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'publication not found';
  end if;
  if coalesce(btrim(note), '') = '' then
    raise exception using errcode = 'PT400', message = 'a note is required';
  end if;
  if coalesce(app.member_role(v_project), '') not in ('reviewer', 'lead', 'owner') then
    raise exception using errcode = '42501',
      message = format('%s cannot add reviews', app.role_phrase(app.member_role(v_project)));
  end if;
  -- reviewer_id defaults to the caller; callers may not set it.
  insert into public.reviews (project_id, publication_id, verdict, notes)
  values (v_project, add_review.publication_id, 'comment', note)
  returning * into r;
  return r;
end $$;

grant execute on function
  public.submit_for_review(uuid, text, integer), public.withdraw(uuid, text, integer),
  public.approve(uuid, text, integer), public.request_changes(uuid, text, integer),
  public.schedule(uuid, timestamptz, integer), public.unschedule(uuid, integer),
  public.publish_now(uuid, integer), public.archive(uuid, text, integer),
  public.restore(uuid, integer), public.add_review(uuid, text)
  to authenticated;

-- publish_due publishes what is due, a batch at a time. SKIP LOCKED lets several service
-- instances run the scheduler at once without publishing anything twice or waiting on each other.
create function app.publish_due(batch integer default 100) returns table (id uuid)
language sql
as $$
  with due as (
    select id from public.publications
    where status = 'scheduled' and scheduled_for <= now()
    order by scheduled_for
    limit batch
    for update skip locked
  )
  update public.publications p set status = 'published'
  from due where p.id = due.id
  returning p.id
$$;
revoke execute on function app.publish_due(integer) from public, anon, authenticated;
grant execute on function app.publish_due(integer) to masthead_scheduler;

-------------------------------------------------------------------------------------------------
-- Row-level security. anon may SELECT every table (PostgREST answers an empty set rather than an
-- error) but no policy ever gives it a row, and it holds no write privilege.

grant select on public.profiles, public.projects, public.project_members, public.collections,
  public.channels, public.publications, public.promos, public.media, public.publication_media,
  public.reviews, public.status_events to anon, authenticated;

grant update (display_name) on public.profiles to authenticated;
grant update (name, default_channels, timezone) on public.projects to authenticated;
grant insert, update (role), delete on public.project_members to authenticated;
grant insert, update (slug, name, kind, description), delete on public.collections to authenticated;
grant insert (id, project_id, collection_id, title, slug, summary, body, status),
  update (collection_id, title, slug, summary, body, status, scheduled_for), delete
  on public.publications to authenticated;
grant insert (id, project_id, publication_id, channel, body, link), update (channel, body, link), delete
  on public.promos to authenticated;
grant insert (id, project_id, storage_path, kind, mime_type, alt_text, width, height, bytes),
  update (alt_text), delete on public.media to authenticated;
grant insert, update (position), delete on public.publication_media to authenticated;
grant insert (project_id, publication_id, verdict, notes) on public.reviews to authenticated;

grant select (id, project_id, status, scheduled_for), update (status) on public.publications to masthead_scheduler;

alter table public.profiles enable row level security;
alter table public.projects enable row level security;
alter table public.project_members enable row level security;
alter table public.collections enable row level security;
alter table public.channels enable row level security;
alter table public.publications enable row level security;
alter table public.promos enable row level security;
alter table public.media enable row level security;
alter table public.publication_media enable row level security;
alter table public.reviews enable row level security;
alter table public.status_events enable row level security;

create policy profiles_read on public.profiles for select to authenticated
  using (id = any ((select app.co_member_ids())::uuid[]));
create policy profiles_update_self on public.profiles for update to authenticated
  using (id = (select auth.uid())) with check (id = (select auth.uid()));

create policy projects_read on public.projects for select to authenticated
  using (id = any ((select app.project_ids())::uuid[]));
create policy projects_update on public.projects for update to authenticated
  using (id = any ((select app.project_ids('{owner}'))::uuid[]));

create policy members_read on public.project_members for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));
create policy members_insert on public.project_members for insert to authenticated
  with check (project_id = any ((select app.project_ids('{owner}'))::uuid[]));
create policy members_update on public.project_members for update to authenticated
  using (project_id = any ((select app.project_ids('{owner}'))::uuid[]));
create policy members_delete on public.project_members for delete to authenticated
  using (project_id = any ((select app.project_ids('{owner}'))::uuid[]));

create policy collections_read on public.collections for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));
create policy collections_insert on public.collections for insert to authenticated
  with check (project_id = any ((select app.project_ids('{lead,owner}'))::uuid[]));
create policy collections_update on public.collections for update to authenticated
  using (project_id = any ((select app.project_ids('{lead,owner}'))::uuid[]));
create policy collections_delete on public.collections for delete to authenticated
  using (project_id = any ((select app.project_ids('{lead,owner}'))::uuid[]));

create policy channels_read on public.channels for select to authenticated using (true);

create policy publications_read on public.publications for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));
create policy publications_insert on public.publications for insert to authenticated
  with check (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[])
              and author_id = (select auth.uid()));
-- Who may make which change is the guard trigger's job; the policy admits every role that
-- may change something (editors edit, reviewers judge, leads schedule).
create policy publications_update on public.publications for update to authenticated
  using (project_id = any ((select app.project_ids('{editor,reviewer,lead,owner}'))::uuid[]));
create policy publications_delete on public.publications for delete to authenticated
  using (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]) and status = 'draft');
-- The scheduler reads what it may publish and, for RETURNING, what it just published.
create policy publications_scheduler_read on public.publications for select to masthead_scheduler
  using (status in ('scheduled', 'published'));
create policy publications_scheduler_publish on public.publications for update to masthead_scheduler
  using (status = 'scheduled' and scheduled_for <= now()) with check (status = 'published');

create policy promos_read on public.promos for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));
create policy promos_insert on public.promos for insert to authenticated
  with check (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));
create policy promos_update on public.promos for update to authenticated
  using (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));
create policy promos_delete on public.promos for delete to authenticated
  using (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));

create policy media_read on public.media for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));
create policy media_insert on public.media for insert to authenticated
  with check (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));
create policy media_update on public.media for update to authenticated
  using (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));
create policy media_delete on public.media for delete to authenticated
  using (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));

create policy publication_media_read on public.publication_media for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));
create policy publication_media_insert on public.publication_media for insert to authenticated
  with check (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));
create policy publication_media_update on public.publication_media for update to authenticated
  using (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));
create policy publication_media_delete on public.publication_media for delete to authenticated
  using (project_id = any ((select app.project_ids('{editor,lead,owner}'))::uuid[]));

create policy reviews_read on public.reviews for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));
-- Verdicts come only from approve/request_changes; a direct insert may only comment.
create policy reviews_comment on public.reviews for insert to authenticated
  with check (project_id = any ((select app.project_ids('{reviewer,lead,owner}'))::uuid[])
              and reviewer_id = (select auth.uid()) and verdict = 'comment');

create policy status_events_read on public.status_events for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));

-- Seed data every installation needs: the networks promos are written for.
insert into public.channels (slug, name, limits, upload_post_platform) values
  ('x',         'X',         '{"max_chars":280,"count":"chars","url_chars":23,"max_media":4,"max_hashtags":2}', 'x'),
  ('linkedin',  'LinkedIn',  '{"max_chars":3000,"count":"chars","max_media":9}', 'linkedin'),
  ('bluesky',   'Bluesky',   '{"max_chars":300,"count":"graphemes","max_media":4}', 'bluesky'),
  ('threads',   'Threads',   '{"max_chars":500,"count":"bytes","max_media":10}', 'threads'),
  ('instagram', 'Instagram', '{"max_chars":2200,"count":"chars","max_media":10,"max_hashtags":30}', 'instagram'),
  ('facebook',  'Facebook',  '{"max_chars":63206,"count":"chars","max_media":10}', 'facebook'),
  ('mastodon',  'Mastodon',  '{"max_chars":500,"count":"chars","url_chars":23,"max_media":4}', 'mastodon');
