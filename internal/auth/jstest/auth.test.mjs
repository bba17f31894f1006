// Drives the identity service with the real supabase-js client. Started by TestSupabaseJS in
// internal/auth, which runs the service and passes its address, key and a user in the env.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createClient } from '@supabase/supabase-js'
import ws from 'ws' // supabase-js builds a realtime client, which needs ws on Node.js < 22
import { webcrypto } from 'node:crypto'

// Node.js 18 (Debian bookworm's) has WebCrypto but not as globalThis.crypto, where getClaims
// looks for it.
globalThis.crypto ??= webcrypto

const url = process.env.MASTHEAD_URL
const key = process.env.MASTHEAD_PUBLISHABLE_KEY
const email = process.env.MASTHEAD_TEST_EMAIL
const password = process.env.MASTHEAD_TEST_PASSWORD
assert.ok(url && key && email && password, 'run me through go test ./internal/auth -run TestSupabaseJS')

// client returns a supabase-js client and the paths of the requests it made.
function client() {
  const calls = []
  const fetchSpy = (input, init) => {
    calls.push(new URL(typeof input === 'string' ? input : input.url).pathname)
    return fetch(input, init)
  }
  const sb = createClient(url, key, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: { fetch: fetchSpy },
    realtime: { transport: ws },
  })
  return { sb, calls }
}

test('signInWithPassword, getUser, getClaims, refreshSession, signOut', async () => {
  const { sb, calls } = client()

  const { data: signIn, error: signInError } = await sb.auth.signInWithPassword({ email, password })
  assert.equal(signInError, null)
  assert.equal(signIn.user.email, email)
  assert.equal(signIn.session.token_type, 'bearer')
  assert.ok(signIn.session.expires_at > Date.now() / 1000)

  const { data: got, error: getError } = await sb.auth.getUser()
  assert.equal(getError, null)
  assert.equal(got.user.id, signIn.user.id)

  // getClaims verifies the ES256 signature itself with the published JWK set.
  calls.length = 0
  const { data: claims, error: claimsError } = await sb.auth.getClaims()
  assert.equal(claimsError, null)
  assert.equal(claims.claims.sub, signIn.user.id)
  assert.equal(claims.header.alg, 'ES256')
  assert.deepEqual(calls, ['/auth/v1/.well-known/jwks.json'], 'getClaims must verify locally, not fall back to /user')

  const { data: refreshed, error: refreshError } = await sb.auth.refreshSession()
  assert.equal(refreshError, null)
  assert.notEqual(refreshed.session.refresh_token, signIn.session.refresh_token)
  assert.equal(refreshed.user.id, signIn.user.id)
  const { data: again, error: againError } = await sb.auth.getUser()
  assert.equal(againError, null)
  assert.equal(again.user.id, signIn.user.id)

  const { error: signOutError } = await sb.auth.signOut()
  assert.equal(signOutError, null)

  // The signed-out session's access token is refused from now on: supabase-js turns the
  // server's session_not_found into AuthSessionMissingError.
  const { error: afterError } = await client().sb.auth.getUser(refreshed.session.access_token)
  assert.equal(afterError?.name, 'AuthSessionMissingError')
})

test('a wrong password is an AuthApiError with code invalid_credentials', async () => {
  const { sb } = client()
  const { data, error } = await sb.auth.signInWithPassword({ email, password: 'not the password' })
  assert.equal(data.session, null)
  assert.equal(error.name, 'AuthApiError')
  assert.equal(error.status, 400)
  assert.equal(error.code, 'invalid_credentials')
  assert.equal(error.message, 'Invalid login credentials')
})

test('an unknown refresh token is refresh_token_not_found', async () => {
  const { sb } = client()
  const { error } = await sb.auth.refreshSession({ refresh_token: 'no-such-token' })
  assert.equal(error.status, 400)
  assert.equal(error.code, 'refresh_token_not_found')
})

test('signOut with scope others keeps the current session', async () => {
  const a = client().sb
  const b = client().sb
  await a.auth.signInWithPassword({ email, password })
  const { data: bSession } = await b.auth.signInWithPassword({ email, password })
  const { error } = await a.auth.signOut({ scope: 'others' })
  assert.equal(error, null)
  assert.equal((await a.auth.getUser()).error, null)
  const { error: bError } = await client().sb.auth.getUser(bSession.session.access_token)
  assert.equal(bError?.name, 'AuthSessionMissingError')
})

test('updateUser: display name through user_metadata, password change with its refusals', async () => {
  const { sb } = client()
  const { error: signInError } = await sb.auth.signInWithPassword({ email, password })
  assert.equal(signInError, null)

  const { data: named, error: nameError } = await sb.auth.updateUser({ data: { name: 'Ada from supabase-js' } })
  assert.equal(nameError, null)
  assert.equal(named.user.user_metadata.name, 'Ada from supabase-js')
  assert.equal(named.user.email, email)

  // The profile co-members see follows the name (users_sync_profile), read over REST.
  const { data: profile, error: profileError } = await sb.from('profiles').select('display_name').eq('id', named.user.id).single()
  assert.equal(profileError, null)
  assert.equal(profile.display_name, 'Ada from supabase-js')

  const { error: weak } = await sb.auth.updateUser({ password: 'short' })
  assert.equal(weak.name, 'AuthWeakPasswordError')
  assert.equal(weak.status, 422)
  assert.equal(weak.code, 'weak_password')
  assert.deepEqual(weak.reasons, ['length'])

  const { error: same } = await sb.auth.updateUser({ password })
  assert.equal(same.name, 'AuthApiError')
  assert.equal(same.code, 'same_password')
  assert.equal(same.message, 'New password should be different from the old password.')

  // Signed in just now: the new password is taken; then back, proving the current password.
  const { error: changeError } = await sb.auth.updateUser({ password: 'a brand new secret' })
  assert.equal(changeError, null)
  const { error: oldPw } = await client().sb.auth.signInWithPassword({ email, password })
  assert.equal(oldPw.code, 'invalid_credentials')
  const { error: backError } = await sb.auth.updateUser({ password, current_password: 'a brand new secret' })
  assert.equal(backError, null)
  const { error: again } = await client().sb.auth.signInWithPassword({ email, password })
  assert.equal(again, null)
  await sb.auth.signOut()
})
