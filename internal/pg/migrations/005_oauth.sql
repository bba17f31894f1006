-- OAuth state, both directions. As an authorization server: registered clients, authorization
-- requests with their codes, and the consents people gave, plus the link from a session to the
-- client it was issued to, so revoking a client's access ends exactly the sessions it holds. As
-- a client of upstream OpenID Connect providers: identities and sign-in flows in progress.
--
-- Like the rest of schema auth, only the identity service (role masthead_auth) touches these
-- tables. Client secrets and authorization codes are stored as SHA-256 hashes: they are random
-- 256-bit values, so a copy of the database yields nothing usable.

-- A client is an application that asks people for access: registered dynamically (RFC 7591)
-- by AI connectors and MCP clients. Public clients (token_endpoint_auth_method 'none') have no
-- secret and rely on PKCE alone.
create table auth.oauth_clients (
  id                         uuid primary key default gen_random_uuid(),
  client_secret_hash         bytea check (length(client_secret_hash) = 32),
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')),
  client_name                text check (length(client_name) <= 200),
  client_uri                 text check (length(client_uri) <= 2000),
  logo_uri                   text check (length(logo_uri) <= 2000),
  redirect_uris              text[] not null check (cardinality(redirect_uris) between 1 and 10),
  grant_types                text[] not null,
  registration_type          text not null default 'dynamic' check (registration_type in ('dynamic', 'manual')),
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now(),
  check ((token_endpoint_auth_method = 'none') = (client_secret_hash is null))
);

-- An authorization is one GET /oauth/authorize: pending until the person decides on the consent
-- page, then approved (with a code, used at most once) or denied. user_id is set when the
-- signed-in person first opens it, and nobody else may act on it afterwards.
create table auth.oauth_authorizations (
  id                    uuid primary key default gen_random_uuid(),
  client_id             uuid not null references auth.oauth_clients (id) on delete cascade,
  user_id               uuid references auth.users (id) on delete cascade,
  redirect_uri          text not null,
  -- redirect_uri_given: the request named redirect_uri, so the token request must repeat it
  redirect_uri_given    boolean not null,
  scope                 text not null,
  state                 text check (length(state) <= 2000),
  resource              text check (length(resource) <= 2000),
  -- nonce of an OpenID Connect request, echoed in the ID token
  nonce                 text check (length(nonce) <= 500),
  code_challenge        text not null check (length(code_challenge) = 43),
  status                text not null default 'pending' check (status in ('pending', 'approved', 'denied')),
  code_hash             bytea unique check (length(code_hash) = 32),
  code_used_at          timestamptz,
  -- the session the code was exchanged for; a second use of the code ends it
  session_id            uuid references auth.sessions (id) on delete set null,
  created_at            timestamptz not null default now(),
  expires_at            timestamptz not null,
  decided_at            timestamptz
);
create index oauth_authorizations_client_idx on auth.oauth_authorizations (client_id);
create index oauth_authorizations_user_idx on auth.oauth_authorizations (user_id);
create index oauth_authorizations_expires_idx on auth.oauth_authorizations (expires_at);

-- A consent is what a person granted a client; it is what /account/apps lists and revokes.
create table auth.oauth_consents (
  user_id    uuid not null references auth.users (id) on delete cascade,
  client_id  uuid not null references auth.oauth_clients (id) on delete cascade,
  scopes     text[] not null,
  granted_at timestamptz not null default now(),
  primary key (user_id, client_id)
);
create index oauth_consents_client_idx on auth.oauth_consents (client_id);

-- Sessions started by the authorization_code grant remember their client and scope, so refreshed
-- tokens carry the same client_id and scope, and revoking the client ends them.
alter table auth.sessions
  add column oauth_client_id uuid references auth.oauth_clients (id) on delete cascade,
  add column scope text;
create index sessions_oauth_client_idx on auth.sessions (user_id, oauth_client_id) where oauth_client_id is not null;

grant select, insert, update, delete on auth.oauth_clients, auth.oauth_authorizations, auth.oauth_consents
  to masthead_auth;

-- An identity is a person's account at an upstream OpenID Connect provider (Google, GitLab, …),
-- linked to one user: signing in there signs in as that user.
create table auth.identities (
  provider        text not null,
  provider_id     text not null check (length(provider_id) <= 255),
  user_id         uuid not null references auth.users (id) on delete cascade,
  email           text,
  identity_data   jsonb not null default '{}',
  created_at      timestamptz not null default now(),
  last_sign_in_at timestamptz,
  primary key (provider, provider_id)
);
create index identities_user_idx on auth.identities (user_id);

-- A flow is one upstream sign-in in progress (GoTrue's flow_state): the browser goes to the
-- provider with state, comes back to /auth/v1/callback, and leaves with a one-time auth code
-- that only the holder of the PKCE verifier (the dashboard) can exchange for a session.
create table auth.flow_state (
  id                uuid primary key default gen_random_uuid(),
  state_hash        bytea not null unique check (length(state_hash) = 32),
  provider          text not null,
  nonce             text not null,
  -- PKCE towards the provider; kept only for the few minutes the flow lives
  upstream_verifier text not null,
  code_challenge    text not null check (length(code_challenge) = 43),
  redirect_to       text not null,
  user_id           uuid references auth.users (id) on delete cascade,
  auth_code_hash    bytea unique check (length(auth_code_hash) = 32),
  created_at        timestamptz not null default now(),
  expires_at        timestamptz not null
);
create index flow_state_expires_idx on auth.flow_state (expires_at);

grant select, insert, update, delete on auth.identities, auth.flow_state to masthead_auth;
