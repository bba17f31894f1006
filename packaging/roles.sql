-- Masthead's database roles. Roles belong to the PostgreSQL server, not to one database, so
-- pg_dump does not carry them: run this on a new server before pg_restore, connected to the
-- new database as the role that will own the schema (it needs CREATEROLE), e.g.
--
--   psql -X -v ON_ERROR_STOP=1 -d "$DATABASE_OWNER_URL" -f packaging/roles.sql
--
-- It creates what migration 001 creates on a first install and is safe to run again. Set the
-- login role's password afterwards (psql: \password authenticator); the service's DATABASE_URL
-- carries it. cmd/masthead/backup_test.go restores a dump with this file.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'masthead_auth') then
    create role masthead_auth nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'masthead_scheduler') then
    create role masthead_scheduler nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticator') then
    create role authenticator login noinherit;
  end if;
end $$;

-- The login role holds no privileges of its own; it only switches into these per transaction.
grant anon, authenticated, masthead_auth, masthead_scheduler to authenticator;
