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
-- product of the two sizes. Each row keeps its position in the statement (the order of
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
  v_new_ids  uuid[];
  v_new_pos  bigint[];
  v_new_prj  uuid[];
  v_new_st   text[];
  v_new_sf   timestamptz[];
  v_old_ids  uuid[];
  v_old_st   text[];
  v_old_sf   timestamptz[];
  v_projects uuid[];
  v_ids      uuid[];
  v_from     text[];
  v_to       text[];
  v_intents  text[];
  v_verdicts boolean;
  v_submits  uuid[];
begin
  select array_agg(n.id order by n.id), array_agg(n.pos order by n.id), array_agg(n.project_id order by n.id),
         array_agg(n.status order by n.id), array_agg(n.scheduled_for order by n.id)
    into v_new_ids, v_new_pos, v_new_prj, v_new_st, v_new_sf
    from (select r.id, r.project_id, r.status, r.scheduled_for, row_number() over () as pos from new_rows r) n;
  select array_agg(o.id order by o.id), array_agg(o.status order by o.id), array_agg(o.scheduled_for order by o.id)
    into v_old_ids, v_old_st, v_old_sf
    from old_rows o;
  if v_new_ids is distinct from v_old_ids then
    raise exception using errcode = 'XX000',
      message = 'publications_audit: the statement''s old and new rows do not pair up by id';
  end if;

  select array_agg(m.project_id order by m.pos), array_agg(m.id order by m.pos), array_agg(m.from_status order by m.pos),
         array_agg(m.to_status order by m.pos), array_agg(t.intent order by m.pos),
         bool_or(t.intent in ('approve', 'request_changes')),
         array_agg(m.id order by m.pos) filter (where m.to_status = 'reviewing' and m.from_status is distinct from 'reviewing')
    into v_projects, v_ids, v_from, v_to, v_intents, v_verdicts, v_submits
    from unnest(v_new_ids, v_new_pos, v_new_prj, v_new_st, v_new_sf, v_old_st, v_old_sf)
           as m(id, pos, project_id, to_status, scheduled_for, from_status, old_scheduled_for)
    left join app.transitions t on t.from_status = m.from_status and t.to_status = m.to_status
   where m.to_status is distinct from m.from_status
      or (m.to_status = 'scheduled' and m.scheduled_for is distinct from m.old_scheduled_for);
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
