-- Accounts and teams: people create projects, owners invite colleagues and manage members, a
-- project always keeps an owner, and membership changes leave an append-only trail.
--
-- Who may do what stays with row-level security: owners hold the membership policies of
-- 001_foundation; the invitation table below has its own. Two things cannot be plain RLS and are
-- SECURITY DEFINER functions with explicit checks: create_project (nobody may insert projects
-- directly; the creator must become the owner in the same transaction) and accepting an
-- invitation (the person has no session yet; only the identity service, role masthead_auth,
-- may call it, after it has checked or set their password).

-------------------------------------------------------------------------------------------------
-- create_project: any signed-in person may start a project; they become its owner.

create function public.create_project(slug text, name text, timezone text default 'UTC',
                                      default_channels text[] default '{}')
returns public.projects
language plpgsql security definer set search_path = ''
as $$
declare
  v_uid     uuid := (select auth.uid());
  v_project public.projects;
  v_unknown text;
begin
  if v_uid is null then
    raise exception using errcode = '42501', message = 'sign in to create a project';
  end if;
  select string_agg(c, ', ') into v_unknown
    from unnest(coalesce(create_project.default_channels, '{}')) c
   where not exists (select 1 from public.channels ch where ch.slug = c);
  if v_unknown is not null then
    raise exception using errcode = 'PT400', message = 'unknown channel: ' || v_unknown,
      hint = 'Use the slugs of /rest/v1/channels.';
  end if;
  if exists (select 1 from public.projects p where p.slug = create_project.slug) then
    raise exception using errcode = 'PT409', message = 'a project with slug "' || create_project.slug || '" already exists',
      hint = 'Choose another slug.';
  end if;
  insert into public.projects (slug, name, timezone, default_channels)
  values (create_project.slug, create_project.name, coalesce(create_project.timezone, 'UTC'),
          coalesce(create_project.default_channels, '{}'))
  returning * into v_project;
  insert into public.project_members (project_id, user_id, role) values (v_project.id, v_uid, 'owner');
  return v_project;
end $$;
revoke all on function public.create_project(text, text, text, text[]) from public;
grant execute on function public.create_project(text, text, text, text[]) to authenticated;

-- A project's default channels must be channels (an owner edits them over REST).
create function app.check_default_channels() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  v_unknown text;
begin
  select string_agg(c, ', ') into v_unknown
    from unnest(new.default_channels) c
   where not exists (select 1 from public.channels ch where ch.slug = c);
  if v_unknown is not null then
    raise exception using errcode = 'PT400', message = 'unknown channel: ' || v_unknown;
  end if;
  return new;
end $$;
create trigger projects_default_channels before insert or update of default_channels on public.projects
  for each row execute function app.check_default_channels();
grant execute on function app.check_default_channels() to authenticated;

-------------------------------------------------------------------------------------------------
-- The last owner: a project always has one. Changes to one project's members are serialised
-- on its row, so two owners demoting each other at once cannot both succeed.

create function app.keep_an_owner() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if old.role <> 'owner' or (tg_op = 'UPDATE' and new.role = 'owner' and new.project_id = old.project_id) then
    return coalesce(new, old);
  end if;
  -- The project itself is going (a cascade): nothing to keep.
  perform 1 from public.projects where id = old.project_id for update;
  if not found then
    return coalesce(new, old);
  end if;
  if not exists (select 1 from public.project_members m
                  where m.project_id = old.project_id and m.role = 'owner' and m.user_id <> old.user_id) then
    raise exception using errcode = 'PT409',
      message = 'a project needs at least one owner: this is its last owner',
      hint = 'Make another member an owner first.';
  end if;
  return coalesce(new, old);
end $$;
create trigger project_members_keep_owner before update or delete on public.project_members
  for each row execute function app.keep_an_owner();
grant execute on function app.keep_an_owner() to authenticated;

-------------------------------------------------------------------------------------------------
-- Membership trail: one row per membership change, written only by the trigger, never changed.

create table public.member_events (
  id         bigint generated always as identity primary key,
  project_id uuid not null references public.projects (id) on delete cascade,
  user_id    uuid not null,
  from_role  text,
  to_role    text,
  actor_id   uuid,
  via        text not null check (via in ('rest', 'invitation', 'admin')),
  created_at timestamptz not null default now()
);
create index member_events_project_idx on public.member_events (project_id, created_at);

create function app.member_audit() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  v_via text := coalesce(nullif(current_setting('masthead.member_via', true), ''),
                         case when (select auth.uid()) is null then 'admin' else 'rest' end);
  v_project uuid := coalesce(new.project_id, old.project_id);
begin
  if tg_op = 'UPDATE' and new.role = old.role then
    return null;
  end if;
  if tg_op = 'DELETE' and not exists (select 1 from public.projects where id = v_project) then
    return null; -- the project is being deleted
  end if;
  perform set_config('masthead.member_event', 'trigger', true);
  insert into public.member_events (project_id, user_id, from_role, to_role, actor_id, via)
  values (v_project, coalesce(new.user_id, old.user_id),
          case when tg_op = 'INSERT' then null else old.role end,
          case when tg_op = 'DELETE' then null else new.role end,
          (select auth.uid()), v_via);
  perform set_config('masthead.member_event', '', true);
  return null;
end $$;
create trigger project_members_audit after insert or update or delete on public.project_members
  for each row execute function app.member_audit();

create function app.member_events_append_only() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' and current_setting('masthead.member_event', true) = 'trigger' then
    return new;
  end if;
  -- The trail goes with its project, and only then (the cascade of deleting the project).
  if tg_op = 'DELETE' and not exists (select 1 from public.projects where id = old.project_id) then
    return old;
  end if;
  raise exception using errcode = '42501',
    message = 'member_events is an append-only trail written by membership changes; it cannot be written directly';
end $$;
create trigger member_events_append_only before insert or update or delete on public.member_events
  for each row execute function app.member_events_append_only();
grant execute on function app.member_audit(), app.member_events_append_only() to authenticated;

alter table public.member_events enable row level security;
grant select on public.member_events to anon, authenticated;
create policy member_events_read on public.member_events for select to authenticated
  using (project_id = any ((select app.project_ids('{owner}'))::uuid[]));

-------------------------------------------------------------------------------------------------
-- Invitations. The link carries a random token; only its SHA-256 is stored, so a copy of the
-- database cannot be used to join a project. Owners see and revoke their project's invitations
-- (never the hash); nobody else sees them.

create table public.invitations (
  id          uuid primary key default gen_random_uuid(),
  project_id  uuid not null references public.projects (id) on delete cascade,
  email       text not null check (email ~ '^[^@\s]+@[^@\s]+$' and length(email) <= 320),
  role        text not null check (role in ('owner', 'lead', 'editor', 'reviewer', 'viewer')),
  token_hash  bytea not null unique check (length(token_hash) = 32),
  invited_by  uuid default auth.uid() references public.profiles (id) on delete set null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null default now() + interval '7 days',
  accepted_at timestamptz,
  accepted_by uuid references public.profiles (id) on delete set null
);
create index invitations_project_idx on public.invitations (project_id, created_at);

alter table public.invitations enable row level security;
grant select (id, project_id, email, role, invited_by, created_at, expires_at, accepted_at, accepted_by)
  on public.invitations to anon, authenticated;
grant insert (project_id, email, role, token_hash), delete on public.invitations to authenticated;
create policy invitations_read on public.invitations for select to authenticated
  using (project_id = any ((select app.project_ids('{owner}'))::uuid[]));
create policy invitations_insert on public.invitations for insert to authenticated
  with check (project_id = any ((select app.project_ids('{owner}'))::uuid[]) and invited_by = (select auth.uid()));
-- Revoking is deleting an invitation nobody accepted; an accepted one stays as a record.
create policy invitations_delete on public.invitations for delete to authenticated
  using (project_id = any ((select app.project_ids('{owner}'))::uuid[]) and accepted_at is null);

-- invite_member makes an invitation as the caller (RLS decides: owners of the project only) and
-- returns its token, the only time the token exists outside the link.
create function public.invite_member(project_id uuid, email text, role text default 'viewer')
returns table (invitation_id uuid, token text, expires_at timestamptz)
language plpgsql security invoker set search_path = ''
as $$
declare
  v_token text := translate(encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), '+/=', '-_');
  v_email text := trim(invite_member.email);
begin
  if exists (select 1 from public.project_members m join public.profiles p on p.id = m.user_id
              where m.project_id = invite_member.project_id and lower(p.email) = lower(v_email)) then
    raise exception using errcode = 'PT409', message = v_email || ' is already a member of this project',
      hint = 'Change their role in the member list instead.';
  end if;
  return query
    insert into public.invitations as i (project_id, email, role, token_hash)
    values (invite_member.project_id, v_email, invite_member.role, sha256(convert_to(v_token, 'UTF8')))
    returning i.id, v_token, i.expires_at;
end $$;
revoke all on function public.invite_member(uuid, text, text) from public;
grant execute on function public.invite_member(uuid, text, text) to authenticated;

-- invitation_by_token is what the acceptance page shows before the person has an account:
-- project, role, email and whether the invitation can still be used. Only the identity service
-- may ask, with the hash of a token it was given.
create function app.invitation_by_token(p_hash bytea)
returns table (id uuid, project_slug text, project_name text, email text, role text,
               expires_at timestamptz, accepted boolean, expired boolean)
language sql stable security definer set search_path = ''
as $$
  select i.id, p.slug, p.name, i.email, i.role, i.expires_at, i.accepted_at is not null, i.expires_at <= now()
    from public.invitations i join public.projects p on p.id = i.project_id
   where i.token_hash = p_hash
$$;

-- accept_invitation joins p_user to the invitation's project with its role, once: the row is
-- locked, must be unused, unexpired and addressed to the person's email. A person who already
-- belongs to the project keeps their role.
create function app.accept_invitation(p_hash bytea, p_user uuid)
returns table (project_slug text, role text)
language plpgsql security definer set search_path = ''
as $$
declare
  v_inv   public.invitations;
  v_email text;
begin
  select * into v_inv from public.invitations where token_hash = p_hash for update;
  if not found then
    raise exception using errcode = 'PT404', message = 'this invitation link is not valid';
  end if;
  if v_inv.accepted_at is not null then
    raise exception using errcode = 'PT409', message = 'this invitation has already been used';
  end if;
  if v_inv.expires_at <= now() then
    raise exception using errcode = 'PT410', message = 'this invitation has expired';
  end if;
  select u.email into v_email from auth.users u where u.id = p_user;
  if v_email is null or lower(v_email) <> lower(v_inv.email) then
    raise exception using errcode = '42501', message = 'this invitation is for another email address';
  end if;
  perform set_config('masthead.member_via', 'invitation', true);
  insert into public.project_members (project_id, user_id, role)
  values (v_inv.project_id, p_user, v_inv.role)
  on conflict (project_id, user_id) do nothing;
  perform set_config('masthead.member_via', '', true);
  update public.invitations set accepted_at = now(), accepted_by = p_user where id = v_inv.id;
  return query select p.slug, coalesce(m.role, v_inv.role)
    from public.projects p left join public.project_members m on m.project_id = p.id and m.user_id = p_user
   where p.id = v_inv.project_id;
end $$;

revoke all on function app.invitation_by_token(bytea), app.accept_invitation(bytea, uuid) from public;
grant execute on function app.invitation_by_token(bytea), app.accept_invitation(bytea, uuid) to masthead_auth;
