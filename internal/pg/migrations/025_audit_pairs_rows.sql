-- The audit trigger pairs a statement's old and new rows without joining its transition
-- tables.
--
-- publications_audit (021) found each row's move by joining old_rows to new_rows on id.
-- PL/pgSQL plans that query once per connection, with the row counts of the transition tables
-- of the statement that first ran it (and again after an invalidation, such as an ANALYZE), and
-- keeps the plan for every later statement. A connection whose first publications update was
-- one row (any RPC: every move through the API is one) planned a nested loop, one scan of
-- old_rows per new row, and kept it: an update of n rows on it then cost n² row comparisons. On
-- one connection, 5,000 rows took 1.7 s after a one-row update against 0.4 s without, and the
-- bulk seed, whose connections make both kinds of statement, spent minutes there, more or
-- less from run to run as invalidations fell.
--
-- Now each transition table is read once, in one pass that collects its rows' ids, statuses
-- and dates in id order (ids are unique and an update cannot change them: the guard refuses),
-- and the two lists are zipped by position: no join, so no plan whose cost grows with the
-- product of the two sizes. It is one query without parameters, planned once: a first
-- version in three queries passed the arrays as parameters to the last, which PostgreSQL then
-- planned again on every call, a single-row update costing more than with the join. Each row keeps its position in the statement (the order of
-- new_rows, the order in which the rows were updated), so the audit rows, verdicts and
-- revisions are written in the same order as before. What is written is unchanged; the function
-- refuses to guess if the two lists ever disagree on ids.

create or replace function app.publications_audit() returns trigger
language plpgsql set search_path = ''
as $$
declare
  v_intent   text := nullif(current_setting('masthead.intent', true), '');
  v_via      text := case
                       when current_user = 'masthead_scheduler' then 'scheduler'
                       when v_intent is not null then 'rpc'
                       else 'direct' end;
  v_paired   boolean;
  v_projects uuid[];
  v_ids      uuid[];
  v_from     text[];
  v_to       text[];
  v_intents  text[];
  v_verdicts boolean;
  v_submits  uuid[];
begin
  -- One query, without parameters, so that one plan serves statements of any size (a query
  -- with parameters would be planned again for each call). Each transition table is read once
  -- into one row of arrays in id order; unnest zips the two rows' arrays.
  with n as (
    select array_agg(r.id order by r.id) as ids, array_agg(r.pos order by r.id) as pos,
           array_agg(r.project_id order by r.id) as projects, array_agg(r.status order by r.id) as st,
           array_agg(r.scheduled_for order by r.id) as sf
      from (select x.id, x.project_id, x.status, x.scheduled_for, row_number() over () as pos from new_rows x) r),
  o as (
    select array_agg(r.id order by r.id) as ids, array_agg(r.status order by r.id) as st,
           array_agg(r.scheduled_for order by r.id) as sf
      from old_rows r),
  m as (
    select u.*, (u.to_status is distinct from u.from_status
                 or (u.to_status = 'scheduled' and u.scheduled_for is distinct from u.old_scheduled_for)) as moved
      from n, o, unnest(n.ids, n.pos, n.projects, n.st, n.sf, o.ids, o.st, o.sf)
                   as u(id, pos, project_id, to_status, scheduled_for, old_id, from_status, old_scheduled_for))
  select coalesce(bool_and(m.id is not distinct from m.old_id), true),
         array_agg(m.project_id order by m.pos) filter (where m.moved),
         array_agg(m.id order by m.pos) filter (where m.moved),
         array_agg(m.from_status order by m.pos) filter (where m.moved),
         array_agg(m.to_status order by m.pos) filter (where m.moved),
         array_agg(t.intent order by m.pos) filter (where m.moved),
         bool_or(t.intent in ('approve', 'request_changes')) filter (where m.moved),
         array_agg(m.id order by m.pos) filter (where m.moved and m.to_status = 'reviewing'
                                                 and m.from_status is distinct from 'reviewing')
    into v_paired, v_projects, v_ids, v_from, v_to, v_intents, v_verdicts, v_submits
    from m
    left join app.transitions t on t.from_status = m.from_status and t.to_status = m.to_status;
  if not v_paired then
    raise exception using errcode = 'XX000',
      message = 'publications_audit: the statement''s old and new rows do not pair up by id';
  end if;
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
