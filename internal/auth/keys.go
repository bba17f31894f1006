package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// KeySet holds the ES256 keys: the first private key in the configured set signs new tokens,
// and every key (private or public-only) verifies, so a key can be rotated in ahead of use and a
// retired one kept until the tokens it signed have expired. To rotate: append the new key,
// deploy, wait out the JWKS cache (10 min) so verifiers know it, move it first, deploy, and
// drop the old key (or its private part) once the last token it signed has expired.
type KeySet struct {
	signer  jwk.Key
	signKID string
	verify  map[string]*ecdsa.PublicKey // by kid
	jwks    []byte                      // the public set as served at /.well-known/jwks.json
}

// ParseKeySet reads a JWK set (MASTHEAD_JWT_KEYS). Every key must be EC P-256 with a unique
// kid; anything else is refused rather than ignored, so a typo cannot silently drop a key.
func ParseKeySet(data []byte) (*KeySet, error) {
	set, err := jwk.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("auth: parse JWK set: %w", err)
	}
	ks := &KeySet{verify: map[string]*ecdsa.PublicKey{}}
	public := jwk.NewSet()
	for i := range set.Len() {
		k, _ := set.Key(i)
		kid, ok := k.KeyID()
		if !ok || kid == "" {
			return nil, fmt.Errorf("auth: JWK %d has no kid", i)
		}
		if _, dup := ks.verify[kid]; dup {
			return nil, fmt.Errorf("auth: JWK kid %q appears twice", kid)
		}
		if alg, ok := k.Algorithm(); ok && alg.String() != jwa.ES256().String() {
			return nil, fmt.Errorf("auth: JWK %q has alg %s; only ES256 is supported", kid, alg)
		}
		pub, err := k.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("auth: JWK %q: %w", kid, err)
		}
		var raw ecdsa.PublicKey
		if err := jwk.Export(pub, &raw); err != nil || raw.Curve != elliptic.P256() {
			return nil, fmt.Errorf("auth: JWK %q is not an EC P-256 key", kid)
		}
		ks.verify[kid] = &raw
		if ks.signer == nil && isPrivate(k) {
			ks.signer, ks.signKID = k, kid
		}
		pubJWK, err := publicJWK(&raw, kid)
		if err != nil {
			return nil, err
		}
		if err := public.AddKey(pubJWK); err != nil {
			return nil, fmt.Errorf("auth: JWK %q: %w", kid, err)
		}
	}
	if ks.signer == nil {
		return nil, errors.New("auth: the JWK set holds no private key to sign with")
	}
	if ks.jwks, err = json.Marshal(public); err != nil {
		return nil, fmt.Errorf("auth: encode public JWK set: %w", err)
	}
	return ks, nil
}

func isPrivate(k jwk.Key) bool {
	_, ok := k.(jwk.ECDSAPrivateKey)
	return ok
}

// publicJWK builds the published form of a key: only what a verifier needs.
func publicJWK(pub *ecdsa.PublicKey, kid string) (jwk.Key, error) {
	k, err := jwk.Import(pub)
	if err != nil {
		return nil, fmt.Errorf("auth: JWK %q: %w", kid, err)
	}
	for name, v := range map[string]any{
		jwk.KeyIDKey: kid, jwk.AlgorithmKey: jwa.ES256(), jwk.KeyUsageKey: "sig", jwk.KeyOpsKey: []string{"verify"},
	} {
		if err := k.Set(name, v); err != nil {
			return nil, fmt.Errorf("auth: JWK %q: set %s: %w", kid, name, err)
		}
	}
	return k, nil
}

// JWKS is the public key set as JSON.
func (ks *KeySet) JWKS() []byte { return ks.jwks }

// SigningKID is the kid new tokens carry.
func (ks *KeySet) SigningKID() string { return ks.signKID }

// sign makes a compact ES256 JWS of payload with the signing key's kid.
func (ks *KeySet) sign(payload []byte) (string, error) {
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, ks.signKID); err != nil {
		return "", err
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		return "", err
	}
	out, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), ks.signer, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return "", fmt.Errorf("auth: sign token: %w", err)
	}
	return string(out), nil
}

// GenerateKeySet returns a JWK set with one fresh P-256 private key, for `masthead dev` and
// tests. Production keys are generated the same way and kept in a secret store.
func GenerateKeySet() ([]byte, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("auth: generate key: %w", err)
	}
	k, err := jwk.Import(priv)
	if err != nil {
		return nil, fmt.Errorf("auth: import key: %w", err)
	}
	if err := jwk.AssignKeyID(k); err != nil {
		return nil, fmt.Errorf("auth: key id: %w", err)
	}
	for name, v := range map[string]any{jwk.AlgorithmKey: jwa.ES256(), jwk.KeyUsageKey: "sig"} {
		if err := k.Set(name, v); err != nil {
			return nil, fmt.Errorf("auth: set %s: %w", name, err)
		}
	}
	set := jwk.NewSet()
	if err := set.AddKey(k); err != nil {
		return nil, err
	}
	return json.Marshal(set)
}

// GeneratePublishableKey returns a new random sb_publishable_… key.
func GeneratePublishableKey() string {
	return "sb_publishable_" + randomToken(24)
}

// randomToken is n random bytes, base64url without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}
