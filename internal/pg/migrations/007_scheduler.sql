-- The scheduler's heartbeat: when the loop inside the service last ran, so people can see that
-- scheduled items will go live (the schedule page says "the scheduler last ran 3 s ago").

create table app.scheduler_state (
  id             boolean primary key default true check (id), -- one row
  last_run_at    timestamptz,
  last_published integer not null default 0,
  interval_ms    integer not null default 5000
);
insert into app.scheduler_state (id) values (true);

-- scheduler_ran records one run of the loop. Instances share the row: the newest run wins.
create function app.scheduler_ran(published integer, interval_ms integer) returns void
language sql security definer set search_path = ''
as $$
  update app.scheduler_state
     set last_run_at = now(), last_published = scheduler_ran.published, interval_ms = scheduler_ran.interval_ms
   where id
$$;
revoke execute on function app.scheduler_ran(integer, integer) from public, anon, authenticated;
grant execute on function app.scheduler_ran(integer, integer) to masthead_scheduler;

-- scheduler_status tells a signed-in person when the scheduler last ran and how often it runs.
create function public.scheduler_status()
returns table (last_run_at timestamptz, interval_ms integer)
language sql stable security definer set search_path = ''
as $$
  select s.last_run_at, s.interval_ms from app.scheduler_state s where s.id and auth.uid() is not null
$$;
revoke execute on function public.scheduler_status() from public, anon;
grant execute on function public.scheduler_status() to authenticated;
