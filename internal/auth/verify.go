package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jws/jwsbb"

	"masthead/internal/tokencache"
)

// ErrInvalidToken is wrapped by every refusal of a bearer token: malformed, badly signed,
// expired, for another audience or issuer, or bound to a session that no longer exists.
// Surfaces answer it as 401 (REST, storage, MCP) or 403 bad_jwt (/auth/v1, as GoTrue).
var ErrInvalidToken = errors.New("invalid token")

// Claims are the verified claims of an access token. Raw is the payload exactly as signed, so
// the database sees the same JSON in request.jwt.claims that the client holds.
type Claims struct {
	Issuer      string   `json:"iss"`
	Subject     string   `json:"sub"`
	Audience    audience `json:"aud"`
	ExpiresAt   int64    `json:"exp"`
	IssuedAt    int64    `json:"iat"`
	NotBefore   int64    `json:"nbf"`
	Email       string   `json:"email"`
	Role        string   `json:"role"`
	SessionID   string   `json:"session_id"`
	AAL         string   `json:"aal"`
	IsAnonymous bool     `json:"is_anonymous"`

	Raw json.RawMessage `json:"-"`
}

// audience is the aud claim, which RFC 7519 allows as a string or an array of strings.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	*a = many
	return nil
}

func (a audience) contains(s string) bool {
	for _, v := range a {
		if v == s {
			return true
		}
	}
	return false
}

// Verifier checks access tokens offline: the ES256 signature against the key named by kid,
// then exp and nbf with a small leeway for clock skew, aud, iss and the claims every caller
// relies on. It never consults the database; Service.Caller adds the session check.
type Verifier struct {
	keys   *KeySet
	issuer string
	leeway time.Duration
	now    func() time.Time
	cache  tokencache.Cache[*Claims]
}

// DefaultTokenCacheSize is how many verified tokens a Verifier remembers unless told otherwise:
// at about 1 kB an entry, 10 MB at most.
const DefaultTokenCacheSize = 10000

// NewVerifier returns a verifier for tokens issued by issuer and signed by keys, remembering
// up to DefaultTokenCacheSize verified tokens.
func NewVerifier(keys *KeySet, issuer string) *Verifier {
	return &Verifier{keys: keys, issuer: issuer, leeway: 30 * time.Second, now: time.Now,
		cache: tokencache.Cache[*Claims]{Max: DefaultTokenCacheSize}}
}

// WithCache sets how many verified tokens v remembers: 0 means DefaultTokenCacheSize, a
// negative size none (every token is verified on every use). Call it before v is used.
func (v *Verifier) WithCache(size int) *Verifier {
	switch {
	case size == 0:
		size = DefaultTokenCacheSize
	case size < 0:
		size = 0
	}
	v.cache.Max = size
	return v
}

// Audience is the aud of every access token, and the role it carries, as Supabase.
const Audience = "authenticated"

// Verify returns the claims of token, or an error wrapping ErrInvalidToken that says why in
// words safe to show the client (never the token itself).
//
// A token that verified once is remembered by its hash, so the signature check and the claims'
// decoding (about 120 µs of the cost of an authenticated request) run once per token, not once
// per request (2 µs then); the time claims are checked again on every use, and a remembered
// token is dropped once expired. Whether its session still exists is not remembered: the
// database checks that on every request (pg's caller setup). The returned Claims are shared: do
// not modify them.
func (v *Verifier) Verify(token string) (*Claims, error) {
	sum := tokencache.KeyOf(token)
	if c, ok := v.cache.Get(sum); ok {
		return v.current(c)
	}
	c, err := v.verify(token)
	if err != nil {
		return nil, err
	}
	if _, err := v.current(c); err != nil {
		return nil, err
	}
	v.cache.Put(sum, c, v.expired)
	return c, nil
}

// expired says whether verified claims c can no longer pass current, whatever the clock does
// next short of going back.
func (v *Verifier) expired(c *Claims) bool {
	return v.now().After(time.Unix(c.ExpiresAt, 0).Add(v.leeway))
}

// verify checks the signature and every claim that does not depend on the time.
func (v *Verifier) verify(token string) (*Claims, error) {
	hdr, _, _, err := jwsbb.SplitCompactString(token)
	if err != nil {
		return nil, invalid("malformed token")
	}
	h := jwsbb.HeaderParseCompact(hdr)
	// The algorithm is ours to choose, never the token's: anything but ES256 (none, HS256
	// keyed with the public key, …) is refused before any key is touched.
	if alg, err := jwsbb.HeaderGetString(h, "alg"); err != nil || alg != "ES256" {
		return nil, invalid("signing method is not ES256")
	}
	kid, err := jwsbb.HeaderGetString(h, "kid")
	if err != nil {
		return nil, invalid("missing kid")
	}
	key, ok := v.keys.verify[kid]
	if !ok {
		return nil, invalid("unknown kid")
	}
	payload, err := jws.VerifyCompactFast(key, []byte(token), jwa.ES256())
	if err != nil {
		return nil, invalid("signature is invalid")
	}
	c := &Claims{Raw: payload}
	if err := json.Unmarshal(payload, c); err != nil {
		return nil, invalid("claims are not a JSON object")
	}
	switch {
	case c.ExpiresAt == 0:
		return nil, invalid("missing exp claim")
	case !c.Audience.contains(Audience):
		return nil, invalid("token has an invalid audience")
	case c.Issuer != v.issuer:
		return nil, invalid("token has an invalid issuer")
	case c.Subject == "":
		return nil, invalid("missing sub claim")
	case c.Role != Audience:
		return nil, invalid("token has an invalid role")
	case c.SessionID == "":
		return nil, invalid("missing session_id claim")
	}
	return c, nil
}

// current checks the time claims of verified claims c against the clock, with leeway for skew.
func (v *Verifier) current(c *Claims) (*Claims, error) {
	now := v.now()
	switch {
	case now.After(time.Unix(c.ExpiresAt, 0).Add(v.leeway)):
		return nil, invalid("token is expired")
	case c.NotBefore != 0 && now.Add(v.leeway).Before(time.Unix(c.NotBefore, 0)):
		return nil, invalid("token is not valid yet")
	}
	return c, nil
}

// invalid wraps ErrInvalidToken with a reason shown to clients as GoTrue shows it.
func invalid(reason string) error { return fmt.Errorf("%w: %s", ErrInvalidToken, reason) }
