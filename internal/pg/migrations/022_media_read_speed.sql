-- Reading a media row without a function call in its policy.
--
-- Every authenticated download reads its media row under media_read, whose check was
-- `project_id = any ((select app.project_ids())::uuid[])`: a SECURITY DEFINER PL/pgSQL call
-- per statement, which switches user and search_path, runs its query through SPI (an executor
-- of its own, started and ended on every call) and aggregates the answer. On the download's
-- whole round trip that call was about a fifth of PostgreSQL's CPU (perf on the server under
-- BenchmarkFloorDownload).
--
-- app.caller_projects is the caller's memberships as a view. A view reads its tables with its
-- owner's rights, as a SECURITY DEFINER function does, so it sees project_members past that
-- table's own policy (which calls app.project_ids() and would otherwise recurse), but its query
-- is planned into the statement that uses it: an index probe inside the statement's own
-- executor, no call, no second executor. security_barrier keeps any condition a caller could
-- add from running before the view's own `user_id = auth.uid()`. auth.uid() runs as the caller
-- (only table access takes the owner's rights), so it reads the caller's own request settings.
--
-- media_read now asks `project_id = any (array(select … from app.caller_projects))`: the same
-- answer as before (the projects where the caller is a member, any role), still an InitPlan run
-- once per statement whose array the project_id index is probed with. The view reads
-- project_members live, so a membership removed or added counts from the next statement on, as
-- with app.project_ids(). The writes' policies (editor+ and owner) keep app.project_ids(roles).
--
-- Measured on the test machine (2 cores, shared), one connection per variant, interleaved call
-- by call so load hits every variant alike: the download's setup and media lookup pipeline cost
-- PostgreSQL 0.89–0.91 of its CPU before (six runs of 3,000 calls, medians per run).

create view app.caller_projects with (security_barrier) as
  select m.project_id, m.role
    from public.project_members m
   where m.user_id = auth.uid();

comment on view app.caller_projects is
  'The calling user''s memberships (project, role), read with the view owner''s rights; for policies.';

revoke all on app.caller_projects from public;
grant select on app.caller_projects to authenticated;

alter policy media_read on public.media
  using (project_id = any (array(select c.project_id from app.caller_projects c)));
