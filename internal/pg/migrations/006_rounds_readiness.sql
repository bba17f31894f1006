-- Review rounds and readiness.
--
-- Rounds: every submit_for_review starts a round and records what was submitted (title, summary,
-- body, promos, media) in publication_revisions, an append-only table written only by the
-- workflow, like status_events. Reviews carry the round they were written in, so "what changed
-- since I asked for changes" is a diff of two rows.
--
-- Readiness: one definition, in the database, of what a publication needs before it may go
-- live. readiness() reports it; scheduling, publishing now and the scheduler refuse an item that
-- is not ready, however they are attempted.

-------------------------------------------------------------------------------------------------
-- Rounds

create table public.publication_revisions (
  project_id     uuid not null references public.projects (id) on delete cascade,
  publication_id uuid not null,
  round          integer not null check (round >= 1),
  version        integer not null,
  -- {title, summary, body, promos: [{channel, body, link}], media: [{id, position, alt_text, storage_path}]}
  snapshot       jsonb not null,
  submitted_by   uuid references public.profiles (id),
  created_at     timestamptz not null default now(),
  primary key (publication_id, round),
  -- like the audit, a revision outlives nothing it describes
  foreign key (project_id, publication_id) references public.publications (project_id, id)
);
create index publication_revisions_project_idx on public.publication_revisions (project_id);

-- Reviews written before rounds existed belong to the round whose submit preceded them.
alter table public.reviews add column round integer not null default 0 check (round >= 0);
update public.reviews r set round = (
  select count(*) from public.status_events e
  where e.publication_id = r.publication_id and e.intent = 'submit' and e.created_at <= r.created_at);

-- current_round is the publication's latest round (0 before its first submit). It reads
-- revisions as their owner so that verdicts, written as the owner, and comments, written as the
-- caller, number rounds alike.
create function app.current_round(p_publication uuid) returns integer
language sql stable security definer set search_path = ''
as $$
  select coalesce(max(round), 0) from public.publication_revisions where publication_id = p_publication
$$;
grant execute on function app.current_round(uuid) to authenticated, masthead_scheduler;

-- A review belongs to the round in progress; callers cannot choose it.
create function app.reviews_round() returns trigger
language plpgsql
as $$
begin
  new.round := app.current_round(new.publication_id);
  return new;
end $$;
create trigger reviews_round before insert on public.reviews
  for each row execute function app.reviews_round();
grant execute on function app.reviews_round() to authenticated;

-- snapshot is a publication's content as a revision stores it.
create function app.snapshot(p public.publications) returns jsonb
language sql stable security definer set search_path = ''
as $$
  select jsonb_build_object(
    'title', p.title, 'summary', p.summary, 'body', p.body,
    'promos', coalesce((select jsonb_agg(jsonb_build_object('channel', pr.channel, 'body', pr.body, 'link', pr.link)
                                         order by pr.channel)
                        from public.promos pr where pr.publication_id = p.id), '[]'),
    'media', coalesce((select jsonb_agg(jsonb_build_object('id', m.id, 'position', pm.position,
                                                           'alt_text', m.alt_text, 'storage_path', m.storage_path)
                                        order by pm.position, m.id)
                       from public.publication_media pm join public.media m on m.id = pm.media_id
                       where pm.publication_id = p.id), '[]'))
$$;

-- record_revision writes the revision of a submit. It runs as the owner because callers hold no
-- INSERT on revisions; the revisions' own trigger refuses any insert not made from a trigger.
create function app.record_revision() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if new.status = 'reviewing' and old.status is distinct from 'reviewing' then
    insert into public.publication_revisions (project_id, publication_id, round, version, snapshot, submitted_by)
    values (new.project_id, new.id, app.current_round(new.id) + 1, new.version, app.snapshot(new), auth.uid());
  end if;
  return null;
end $$;
create trigger publications_revision after update on public.publications
  for each row execute function app.record_revision();
grant execute on function app.record_revision() to authenticated, masthead_scheduler;

-- Revisions are append-only: nobody, the owner included, may change or remove one, and they
-- arrive only through the submit trigger.
create function app.revisions_append_only() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'INSERT' and pg_trigger_depth() >= 2 then
    return new;
  end if;
  raise exception using errcode = '42501',
    message = 'publication_revisions is written by the workflow on every submit; it cannot be '
              || case tg_op when 'INSERT' then 'written directly' else 'changed' end;
end $$;
create trigger publication_revisions_append_only before insert or update or delete on public.publication_revisions
  for each row execute function app.revisions_append_only();
create trigger publication_revisions_no_truncate before truncate on public.publication_revisions
  for each statement execute function app.revisions_append_only();
grant execute on function app.revisions_append_only() to authenticated, masthead_scheduler;

alter table public.publication_revisions enable row level security;
grant select on public.publication_revisions to anon, authenticated;
create policy publication_revisions_read on public.publication_revisions for select to authenticated
  using (project_id = any ((select app.project_ids())::uuid[]));

-------------------------------------------------------------------------------------------------
-- Readiness

-- grapheme_upper counts text in grapheme clusters from above. PostgreSQL has no segmentation,
-- so it counts code points and takes away only those that can never start a cluster of their
-- own: combining diacritics, variation selectors and skin-tone modifiers that follow a
-- printable character, and the ZWJ-joined parts of common emoji sequences. Anything else it
-- cannot judge it counts in full, so it may say "over" where Bluesky would not, never the
-- reverse.
create function app.grapheme_upper(t text) returns integer
language plpgsql immutable
as $$
declare
  -- a printable base: not a control or format character, which break clusters
  base    constant text := '[^\u0000-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff0-\ufffb]';
  extend  constant text := '[\u0300-\u036f\ufe00-\ufe0f\U0001F3FB-\U0001F3FF]';
  pict    constant text := '[\U0001F300-\U0001F3FA\U0001F400-\U0001F64F\U0001F680-\U0001F6FF\U0001F900-\U0001F9FF\U0001FA70-\U0001FAFF\u2640\u2642\u2695\u2696\u2708\u2764]';
  s       text := t;
  prev    text;
begin
  s := regexp_replace(s, '(' || base || ')' || extend || '+', '\1', 'g');
  -- emoji ZWJ sequences: pictograph (extend)* ZWJ pictograph joins into one cluster
  loop
    prev := s;
    s := regexp_replace(s, '(' || pict || ')\u200d' || pict, '\1', 'g');
    exit when s = prev;
  end loop;
  return char_length(s);
end $$;

-- promo_measure measures a promo as internal/channels does: the link is appended after a space
-- unless the body already holds it, URLs count url_chars where the network shortens them, and
-- hashtags are counted against the channel's cap. Hashtags are counted from above too: a '#'
-- followed by a letter or any non-ASCII character, after a character that is not an ASCII
-- letter, digit, '_', '&' or '/'.
create function app.promo_measure(p_body text, p_link text, p_limits jsonb,
                                  out used integer, out max_chars integer, out unit text,
                                  out hashtags integer, out max_hashtags integer)
language plpgsql immutable
as $$
declare
  url_re    constant text := 'https?://[^ \t\n\f\r<>"]+';
  t         text := coalesce(p_body, '');
  link      text := btrim(coalesce(p_link, ''), E' \t\n\r\f\v');
  url_chars integer := coalesce((p_limits ->> 'url_chars')::integer, 0);
  n         integer := 0;
begin
  if link <> '' and strpos(t, link) = 0 then
    t := rtrim(t, E' \n') || ' ' || link;
  end if;
  unit := case p_limits ->> 'count' when 'graphemes' then 'graphemes' when 'bytes' then 'bytes' else 'chars' end;
  max_chars := coalesce((p_limits ->> 'max_chars')::integer, 0);
  max_hashtags := coalesce((p_limits ->> 'max_hashtags')::integer, 0);
  if url_chars > 0 then
    n := url_chars * (select count(*) from regexp_matches(t, url_re, 'g'));
    t := regexp_replace(t, url_re, '', 'g');
  end if;
  used := n + case unit
    when 'graphemes' then app.grapheme_upper(t)
    when 'bytes' then octet_length(t)
    else char_length(t) end;
  hashtags := (select count(*) from regexp_matches(coalesce(p_body, ''),
                 '(^|[^A-Za-z0-9_&/])#[0-9_]*([A-Za-z]|[^\u0001-\u007f])', 'g'));
end $$;
grant execute on function app.promo_measure(text, text, jsonb), app.grapheme_upper(text)
  to authenticated, masthead_scheduler;

-- readiness_of is the one definition of "ready to go live". It reads as the owner, so the
-- scheduler (which sees only status columns) and members judge alike; public.readiness below
-- lets RLS decide who may ask.
create function app.readiness_of(p public.publications)
returns table ("check" text, ok boolean, detail text)
language plpgsql stable security definer set search_path = ''
as $$
declare
  ch       record;
  pr       public.promos;
  m        record;
  n_media  integer;
  n_noalt  integer;
  unitword text;
begin
  "check" := 'title'; ok := btrim(p.title) <> '';
  detail := case when ok then 'Title is set' else 'Title is missing' end;
  return next;
  "check" := 'summary'; ok := btrim(p.summary) <> '';
  detail := case when ok then 'Summary is set' else 'Summary is missing' end;
  return next;
  "check" := 'body'; ok := btrim(p.body) <> '';
  detail := case when ok then 'Body is written' else 'Body is empty' end;
  return next;

  select count(*), count(*) filter (where btrim(md.alt_text) = '') into n_media, n_noalt
    from public.publication_media pm join public.media md on md.id = pm.media_id
   where pm.publication_id = p.id;

  for ch in
    select c.slug, c.name, c.limits
      from public.projects pj, unnest(pj.default_channels) with ordinality as d(slug, ord)
      join public.channels c on c.slug = d.slug
     where pj.id = p.project_id
     order by d.ord
  loop
    "check" := 'promo:' || ch.slug;
    select * into pr from public.promos x where x.publication_id = p.id and x.channel = ch.slug;
    if not found or btrim(pr.body) = '' then
      ok := false; detail := format('%s: no promo written', ch.name);
      return next;
      continue;
    end if;
    select * into m from app.promo_measure(pr.body, pr.link, ch.limits);
    unitword := case m.unit when 'bytes' then 'bytes' when 'graphemes' then 'characters' else 'characters' end;
    if m.max_chars > 0 and m.used > m.max_chars then
      ok := false;
      detail := format('%s: %s / %s %s (%s over)', ch.name, m.used, m.max_chars, unitword, m.used - m.max_chars);
      if m.unit = 'graphemes' then
        detail := detail || '; the database may count a few more characters than Bluesky does';
      end if;
    elsif m.max_hashtags > 0 and m.hashtags > m.max_hashtags then
      ok := false;
      detail := format('%s: %s hashtags, at most %s', ch.name, m.hashtags, m.max_hashtags);
    elsif (ch.limits ->> 'max_media') is not null and n_media > (ch.limits ->> 'max_media')::integer then
      ok := false;
      detail := format('%s: %s media attached, at most %s', ch.name, n_media, ch.limits ->> 'max_media');
    else
      ok := true;
      detail := case when m.max_chars > 0
                     then format('%s: %s / %s %s', ch.name, m.used, m.max_chars, unitword)
                     else format('%s: promo written', ch.name) end;
    end if;
    return next;
  end loop;

  "check" := 'alt_text'; ok := n_noalt = 0;
  detail := case
    when n_media = 0 then 'No media attached'
    when ok then format('All %s media items have alt text', n_media)
    else format('%s of %s media items have no alt text', n_noalt, n_media) end;
  return next;
end $$;

grant execute on function app.readiness_of(public.publications) to authenticated, masthead_scheduler;

-- readiness(publication_id) → [{check, ok, detail}] for a publication the caller can see.
create function public.readiness(publication_id uuid)
returns table ("check" text, ok boolean, detail text)
language plpgsql stable
as $$
declare
  v public.publications;
begin
  select * into v from public.publications p where p.id = readiness.publication_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'publication not found',
      detail = format('No publication with id %s is visible to you.', readiness.publication_id);
  end if;
  return query select * from app.readiness_of(v);
end $$;
revoke execute on function public.readiness(uuid) from public, anon;
grant execute on function public.readiness(uuid) to authenticated;

-- is_ready says whether every check of a publication passes. It takes an id, so the scheduler,
-- which may read only a publication's status columns, can ask.
create function app.is_ready(p_id uuid) returns boolean
language sql stable security definer set search_path = ''
as $$ select bool_and(r.ok) from public.publications p, app.readiness_of(p) r where p.id = p_id $$;
grant execute on function app.is_ready(uuid) to authenticated, masthead_scheduler;

-- publications_ready refuses a move to scheduled or published (a new date included) while any
-- check fails: PT422 with the failing checks as JSON in the error's details. It is a trigger,
-- so schedule, publish_now, a direct PATCH and the scheduler all meet it.
create function app.publications_ready() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  failing jsonb;
begin
  if new.status in ('scheduled', 'published')
     and (new.status is distinct from old.status or new.scheduled_for is distinct from old.scheduled_for) then
    select jsonb_agg(jsonb_build_object('check', r."check", 'detail', r.detail))
      into failing from app.readiness_of(new) r where not r.ok;
    if failing is not null then
      raise exception using errcode = 'PT422',
        message = format('this publication is not ready to %s: %s',
                         case new.status when 'scheduled' then 'schedule' else 'publish' end,
                         (select string_agg(f ->> 'detail', '; ') from jsonb_array_elements(failing) f)),
        detail = failing::text,
        hint = 'Fix what readiness() lists, then try again.';
    end if;
  end if;
  return new;
end $$;
-- Named to run after publications_guard (triggers of one kind run in name order), so a move the
-- workflow refuses anyway is refused for that reason first.
create trigger publications_ready before update on public.publications
  for each row execute function app.publications_ready();
grant execute on function app.publications_ready() to authenticated, masthead_scheduler;

-- publish_due publishes what is due and ready, a batch at a time; an item that is not ready stays
-- scheduled (app.due_not_ready lists those for the scheduler's log and the dashboard).
create or replace function app.publish_due(batch integer default 100) returns table (id uuid)
language sql
as $$
  with due as (
    select p.id from public.publications p
    where p.status = 'scheduled' and p.scheduled_for <= now()
      and app.is_ready(p.id)
    order by p.scheduled_for
    limit batch
    for update of p skip locked
  )
  update public.publications p set status = 'published'
  from due where p.id = due.id
  returning p.id
$$;

-- due_not_ready lists due items the scheduler leaves alone because they are not ready.
create function app.due_not_ready(max_rows integer default 100)
returns table (id uuid, project_id uuid, scheduled_for timestamptz, failing text)
language sql stable security definer set search_path = ''
as $$
  select p.id, p.project_id, p.scheduled_for,
         (select string_agg(r.detail, '; ') from app.readiness_of(p) r where not r.ok)
    from public.publications p
   where p.status = 'scheduled' and p.scheduled_for <= now() and not app.is_ready(p.id)
   order by p.scheduled_for
   limit max_rows
$$;
revoke execute on function app.due_not_ready(integer) from public, anon, authenticated;
grant execute on function app.due_not_ready(integer) to masthead_scheduler;

-------------------------------------------------------------------------------------------------
-- The inbox: what waits on the caller, with the reason it is there.

-- my_inbox lists what waits on the caller across their projects, by role:
--   reviewer, lead, owner: in review, written by someone else, not yet reviewed by them in
--     this round ('review');
--   the author: sent back with changes requested ('changes_requested', with the note), and
--     their drafts untouched for a week ('stale_draft');
--   lead, owner: approved without a date ('needs_date'), due within a day but not ready
--     ('due_not_ready'), and past their time but not yet published ('overdue').
-- It runs as the caller, so row-level security decides what it can list.
-- It answers at most max_per_reason entries per reason, the longest waiting first, each with
-- how many wait for that reason in all (reason_total), so a reviewer with thousands in review
-- gets a page, not thousands of rows.
create function public.my_inbox(max_per_reason integer default 50)
returns table (publication_id uuid, project_id uuid, project_slug text, title text, status text,
               reason text, detail text, since timestamptz, reason_total integer)
language sql stable
as $$
  with me as (select (select auth.uid()) as uid),
  reviewing as (
    select p.id, p.project_id, p.title, p.status, 'review'::text as reason,
           ''::text as detail, p.updated_at as since
      from public.publications p, me
     where p.status = 'reviewing' and p.author_id <> me.uid
       and p.project_id = any ((select app.project_ids('{reviewer,lead,owner}'))::uuid[])
       and not exists (select 1 from public.reviews r
                        where r.publication_id = p.id and r.reviewer_id = me.uid
                          and r.round = app.current_round(p.id))
  ),
  sent_back as (
    select p.id, p.project_id, p.title, p.status, 'changes_requested',
           coalesce((select r.notes from public.reviews r where r.publication_id = p.id and r.verdict = 'changes_requested'
                     order by r.created_at desc limit 1), ''),
           p.updated_at
      from public.publications p, me
     where p.status = 'changes_requested' and p.author_id = me.uid
  ),
  stale as (
    select p.id, p.project_id, p.title, p.status, 'stale_draft', '', p.updated_at
      from public.publications p, me
     where p.status = 'draft' and p.author_id = me.uid and p.updated_at < now() - interval '7 days'
  ),
  lead_work as (
    select p.id, p.project_id, p.title, p.status,
           case when p.status = 'approved' then 'needs_date'
                when p.scheduled_for <= now() then 'overdue'
                else 'due_not_ready' end,
           case when p.status = 'approved' then ''
                else coalesce((select string_agg(r.detail, '; ') from app.readiness_of(p) r where not r.ok), '') end,
           coalesce(p.scheduled_for, p.updated_at)
      from public.publications p
     where p.project_id = any ((select app.project_ids('{lead,owner}'))::uuid[])
       and (p.status = 'approved'
            or (p.status = 'scheduled' and p.scheduled_for <= now())
            or (p.status = 'scheduled' and p.scheduled_for <= now() + interval '1 day' and not app.is_ready(p.id)))
  ),
  all_of as (
    select x.*, row_number() over (partition by x.reason order by x.since, x.id) as n,
           count(*) over (partition by x.reason) as total
      from (select * from reviewing union all select * from sent_back
            union all select * from stale union all select * from lead_work) x
  )
  select a.id, a.project_id, j.slug, a.title, a.status, a.reason, a.detail, a.since, a.total::integer
    from all_of a join public.projects j on j.id = a.project_id
   where a.n <= greatest(coalesce(max_per_reason, 50), 1)
   order by a.since
$$;
revoke execute on function public.my_inbox(integer) from public, anon;
grant execute on function public.my_inbox(integer) to authenticated;

-------------------------------------------------------------------------------------------------
-- "New since your last visit": when each person last looked at each list, kept server-side.

create table public.list_visits (
  user_id      uuid not null default auth.uid() references auth.users (id) on delete cascade,
  list         text not null check (length(list) between 1 and 200),
  seen_at      timestamptz not null default now(),
  -- the visit before the current sitting: what "new" is measured against
  prev_seen_at timestamptz,
  primary key (user_id, list)
);
alter table public.list_visits enable row level security;
grant select on public.list_visits to anon, authenticated;
create policy list_visits_own on public.list_visits for select to authenticated
  using (user_id = (select auth.uid()));

-- visit records that the caller is looking at a list now and returns when they last looked at
-- it before this sitting (null the first time). Looks less than 30 minutes apart are one
-- sitting, so paging and filtering do not clear the "new" marks the person is working through.
create function public.visit(list text) returns timestamptz
language plpgsql volatile security definer set search_path = ''
as $$
declare
  v_uid  uuid := auth.uid();
  v_row  public.list_visits;
begin
  if v_uid is null then
    raise exception using errcode = '42501', message = 'sign in to keep track of visits';
  end if;
  if list is null or length(list) not between 1 and 200 then
    raise exception using errcode = 'PT400', message = 'list must be 1 to 200 characters';
  end if;
  select * into v_row from public.list_visits v where v.user_id = v_uid and v.list = visit.list for update;
  if not found then
    insert into public.list_visits (user_id, list) values (v_uid, visit.list)
    on conflict on constraint list_visits_pkey do nothing;
    return null;
  end if;
  if v_row.seen_at < now() - interval '30 minutes' then
    v_row.prev_seen_at := v_row.seen_at;
  end if;
  update public.list_visits v set seen_at = now(), prev_seen_at = v_row.prev_seen_at
   where v.user_id = v_uid and v.list = visit.list;
  return v_row.prev_seen_at;
end $$;
revoke execute on function public.visit(text) from public, anon;
grant execute on function public.visit(text) to authenticated;
