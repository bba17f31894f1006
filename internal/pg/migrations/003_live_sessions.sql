-- A token stops working the moment its session ends (sign-out, or revocation after a reused
-- refresh token). The check runs inside the caller's own transaction setup, where the claims
-- are published, so it costs no round trip of its own.

-- check_session returns claims unchanged when they name no session (they never do for anon) or
-- a session that still exists, and raises PT401 otherwise. pg's caller setup wraps the
-- publication of request.jwt.claims in it; pg turns PT401 from it into pg.ErrSessionEnded.
create function app.check_session(claims text) returns text
language plpgsql stable security definer set search_path = ''
as $$
declare
  c jsonb := coalesce(nullif(claims, ''), '{}')::jsonb;
begin
  if c ? 'session_id' and not exists (
       select 1 from auth.sessions s
       where s.id = (c ->> 'session_id')::uuid and s.user_id = (c ->> 'sub')::uuid) then
    raise exception using errcode = 'PT401', message = 'JWT session has ended',
      hint = 'Sign in again.';
  end if;
  return claims;
end $$;

-- The setup statement runs before the role switch takes effect, as the login role.
grant usage on schema app to authenticator;
grant execute on function app.check_session(text)
  to authenticator, anon, authenticated, masthead_auth, masthead_scheduler;
