-- What one request may cost. db-max-rows caps only the top level of a read; an embed inside an
-- embed multiplies rows (a thousand publications, each with its project, each with all of its
-- publications …), so the REST engine counts every row an embedded to-many resource adds and
-- stops the statement the moment the count passes masthead.max_embedded_rows, which the
-- service sets per request (MASTHEAD_MAX_EMBEDDED_ROWS). The count lives in a transaction-local
-- setting, so it starts at zero for every request and needs no table or write.

-- embedded_rows_exceeded raises the refusal; SQLSTATE MH001 is answered as 400.
create function app.embedded_rows_exceeded() returns boolean
language plpgsql
set search_path = ''
as $$
declare
  cap text := current_setting('masthead.max_embedded_rows', true);
begin
  raise exception 'The response would embed more than % rows', cap
    using errcode = 'MH001',
          detail = format('One request may embed at most %s rows in all (MASTHEAD_MAX_EMBEDDED_ROWS).', cap),
          hint = 'Narrow the request: filter or limit the embedded resources (e.g. publications.limit=20), '
              || 'embed fewer levels, or page the top level with limit and offset.';
end
$$;

-- embedded_row counts one embedded row and is true, or raises once the count passes the cap.
-- It is plain SQL without a SET clause so the planner inlines it (about half a microsecond a
-- row); it is not security definer and names only pg_catalog and app, so no search_path matters.
create function app.embedded_row() returns boolean
language sql volatile
as $$
  select case
    when set_config('masthead.embedded_rows',
           (coalesce(nullif(current_setting('masthead.embedded_rows', true), ''), '0')::bigint + 1)::text, true)::bigint
         > coalesce(nullif(current_setting('masthead.max_embedded_rows', true), '')::bigint, 9223372036854775807)
    then app.embedded_rows_exceeded()
    else true
  end
$$;

revoke execute on function app.embedded_rows_exceeded() from public;
revoke execute on function app.embedded_row() from public;
grant execute on function app.embedded_rows_exceeded() to anon, authenticated;
grant execute on function app.embedded_row() to anon, authenticated;
