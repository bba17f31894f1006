-- The caller setup without parsing the claims JSON twice.
--
-- Every request publishes its verified claims (about 450 bytes of JSON) and checks its session in
-- one statement (pg's setupSQL). The session check parsed the claims to jsonb to find session_id
-- and sub, and every policy parsed them again through auth.uid() (app.project_ids() in the
-- policy of nearly every table). Each parse cost PostgreSQL about as much as the session lookup
-- itself: measured in a loop on the test machine, check_session(claims) took 22 µs a call, of
-- which the jsonb parse was 11 µs.
--
-- For a caller whose claims the identity service verified, pg now passes sub and session_id
-- beside the claims (the same verified token, so they cannot disagree), publishes sub as
-- request.jwt.claim.sub (as PostgREST does, and as Supabase's auth.uid() reads it first), and
-- checks the session with the three-argument check_session below, which parses nothing. With
-- the setup that skips an empty unnest (pg.go), PostgreSQL's CPU per authenticated download in
-- BenchmarkFloorDownload went from 108–117 to 85–107 µs.
-- auth.uid() reads request.jwt.claim.sub when it is set and falls back to the claims otherwise
-- (callers without a session, and tests that publish claims by hand). The settings are
-- transaction-local like request.jwt.claims, so nothing leaks to the next user of a connection.

-- check_session(claims, sub, session_id) returns claims when session_id is empty (no session to
-- check) or names a session of sub that still exists, and raises PT401 otherwise, exactly as
-- check_session(claims) does for the session_id and sub inside claims.
create function app.check_session(claims text, sub text, session_id text) returns text
language plpgsql stable security definer set search_path = ''
as $$
begin
  if coalesce(session_id, '') <> '' and not exists (
       select 1 from auth.sessions s
       where s.id = session_id::uuid and s.user_id = nullif(sub, '')::uuid) then
    raise exception using errcode = 'PT401', message = 'JWT session has ended',
      hint = 'Sign in again.';
  end if;
  return claims;
end $$;

grant execute on function app.check_session(text, text, text)
  to authenticator, anon, authenticated, masthead_auth, masthead_scheduler;

-- Same answer as before whenever request.jwt.claim.sub is unset or agrees with the claims (pg
-- publishes both from one verified token); still plain SQL, so it is inlined where it is called.
create or replace function auth.uid() returns uuid
language sql stable
as $$
  select coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                  nullif(auth.jwt() ->> 'sub', ''))::uuid
$$;
