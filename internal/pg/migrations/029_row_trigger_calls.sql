-- Fewer function calls and queries in the row triggers a bulk write runs for every row.
--
-- After 027 much of the per-row cost of the 100k seed was calls rather than work: each call of a
-- SECURITY DEFINER function with its own search_path switches user and search_path, and each
-- query a PL/pgSQL function runs starts an executor of its own. Three of them ran once per row:
-- app.project_ids (778k calls: publications_read's InitPlan, run by every execution of
-- fill_project_from_publication's lookup, once per promo, media link and review written),
-- app.promo_measure's two counting queries (416k calls: readiness, per channel of every row
-- scheduled or published) and app.member_role (492k calls: the guard, per row moved). What each
-- rule decides is unchanged; only how it asks.
--
-- Measured one statement at a time in a loop of 20,000 as an editor (PL/pgSQL DO block, the
-- test machine, medians of two rounds): fill_project_from_publication's lookup 9.5 -> 6.7 µs,
-- promo_measure on a short promo with a link and a hashtag 15-25 -> 8-9 µs, the guard's role
-- lookup 5.4 -> 4.9 µs. Two rewrites were tried and left out because they measured no better:
-- the content freeze's question as a query of its own through app.caller_projects (12 µs, against
-- 7.5 µs for app.editable_status, whose query as the owner meets no row-level security) and
-- readiness_of as one query (53-65 µs against 55-62 µs: its cost is promo_measure, per channel).

-------------------------------------------------------------------------------------------------
-- publications_read through app.caller_projects, as media_read since 022: the same answer (the
-- projects where the caller is a member, any role; '{}' for none), still an InitPlan run once
-- per statement whose array the project_id index is probed with, but planned into the
-- statement instead of a SECURITY DEFINER call. Every read of a publication as a caller pays
-- for it, and fill_project_from_publication reads one (under this very policy, which decides
-- what it may see) for every promo, media link and review inserted. The view reads
-- project_members live, so a membership removed or added counts from the next statement on,
-- as with app.project_ids(). TestPublicationsReadFollowsMembership holds it.

alter policy publications_read on public.publications
  using (project_id = any (array(select c.project_id from app.caller_projects c)));

-------------------------------------------------------------------------------------------------
-- promo_measure, as in 006, counting matches with regexp_count (PostgreSQL 15) instead of a
-- query over regexp_matches: the same count (both count non-overlapping matches left to right,
-- the same regular expression engine), but an expression PL/pgSQL evaluates itself rather than
-- a query with an executor of its own, twice per promo measured.
-- TestPromoMeasureCountsAsRegexpMatches compares the two counts over the channel corpus.

create or replace function app.promo_measure(p_body text, p_link text, p_limits jsonb,
  out used integer, out max_chars integer, out unit text, out hashtags integer, out max_hashtags integer)
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
    n := url_chars * regexp_count(t, url_re);
    t := regexp_replace(t, url_re, '', 'g');
  end if;
  used := n + case unit
    when 'graphemes' then app.grapheme_upper(t)
    when 'bytes' then octet_length(t)
    else char_length(t) end;
  hashtags := regexp_count(coalesce(p_body, ''), '(^|[^A-Za-z0-9_&/])#[0-9_]*([A-Za-z]|[^\u0001-\u007f])');
end $$;

-------------------------------------------------------------------------------------------------
-- The guard, as in 027, reading the caller's role in the publication's project from
-- app.caller_projects, in a query of its own, instead of calling app.member_role (a SECURITY
-- DEFINER call per row moved or edited: 492k in the 100k seed). The same answer: the caller's
-- membership row in that project, none for a non-member. Only callers that edit or move
-- read it (authenticated, which may read the view, and the owner); the scheduler never does.
-- TestRolesRefused holds every role's refusals, by RPC and by direct UPDATE.

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
    select c.role into v_role from app.caller_projects c where c.project_id = old.project_id;
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
