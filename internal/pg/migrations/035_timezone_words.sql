-- A project's time zone that PostgreSQL does not know is refused in words a person can act on.
--
-- projects.timezone has been held by a check since 001 (app.valid_timezone), and it still is;
-- but a check's refusal names only the constraint ('new row for relation "projects" violates
-- check constraint "projects_timezone_check"'), which every surface passed on as it was: the
-- dashboard's settings and new-project pages showed it as their error, REST and MCP returned it.
-- This trigger runs before the check, on every insert and on every update that sets the time
-- zone, and refuses an unknown one as invalid_parameter_value (22023, REST's 400) naming the
-- value and what would do. The check stays as the guarantee (and as the bound on the column's
-- length that TestTextColumnsBounded names: a name past 255 characters resolves to no zone).
-- TestTimezoneRefusedInWords (internal/pg), TestSettingsProjectAndCollections and TestStartProject
-- (handlers) hold it.

create function app.name_unknown_timezone() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if not app.valid_timezone(new.timezone) then
    -- the name as sent, cut at 64 characters: a value too long for any zone is not echoed whole
    raise exception using errcode = '22023',
      message = format('Unknown time zone "%s": use an IANA name such as Europe/Berlin or UTC',
                       case when length(new.timezone) > 64 then left(new.timezone, 63) || '…' else new.timezone end);
  end if;
  return new;
end $$;

grant execute on function app.name_unknown_timezone() to authenticated;

create trigger projects_timezone_words before insert or update of timezone on public.projects
  for each row execute function app.name_unknown_timezone();
