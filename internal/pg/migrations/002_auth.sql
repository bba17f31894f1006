-- Identity service state: sign-in sessions and their rotating refresh tokens.
--
-- Only the identity service (role masthead_auth) reads or writes these tables; REST never exposes
-- schema auth. Refresh tokens are stored as SHA-256 hashes, so a copy of the database does not
-- hand out live sessions.

-- A session is one sign-in on one device. Access tokens carry its id (claim session_id); deleting
-- the row signs that device out, and every token bound to it is refused from then on.
create table auth.sessions (
  id           uuid primary key default gen_random_uuid(),
  user_id      uuid not null references auth.users (id) on delete cascade,
  aal          text not null default 'aal1' check (aal in ('aal1', 'aal2', 'aal3')),
  created_at   timestamptz not null default now(),
  refreshed_at timestamptz,
  user_agent   text check (length(user_agent) <= 512),
  ip           inet
);
create index sessions_user_idx on auth.sessions (user_id);

-- Each refresh rotates the session's token: the used row gets revoked_at, a child row is added.
-- A child's token is HMAC-SHA256(parent token, nonce), so within the reuse interval the service
-- can hand the current token back to a client that presents its parent, without storing any
-- token in the clear: the nonce alone is useless without the parent token.
create table auth.refresh_tokens (
  id         bigint generated always as identity primary key,
  session_id uuid not null references auth.sessions (id) on delete cascade,
  parent_id  bigint references auth.refresh_tokens (id) on delete cascade,
  token_hash bytea not null unique check (length(token_hash) = 32),
  nonce      bytea check (length(nonce) = 32),
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  -- a token has at most one child: rotation happens once, under the session's row lock
  unique (parent_id),
  check ((parent_id is null) = (nonce is null))
);
create index refresh_tokens_session_idx on auth.refresh_tokens (session_id);

grant select, insert, update, delete on auth.sessions, auth.refresh_tokens to masthead_auth;
