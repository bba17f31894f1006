package storage

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// A signed URL's token is an HS256 JWT with claims {url, iat, exp}, as Supabase Storage issues
// them, where url is "<bucket>/<key>": the token opens that one object and no other, and only
// until exp. It also carries ct, the content type of the media row when it was signed, because
// whoever opens the URL has no identity under which the row could be read again.

// signedHeader is the fixed, pre-encoded JWT header; verification compares it byte for byte,
// so no "alg" trickery is possible.
var signedHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

type signedClaims struct {
	URL string `json:"url"`
	CT  string `json:"ct"`
	IAT int64  `json:"iat"`
	EXP int64  `json:"exp"`
}

// DeriveSigningKey turns a secret shared by every instance (the JWT key set, say) into the key
// signed URLs are made with, so a URL signed by one instance opens on all of them and no new
// secret has to be distributed. The label keeps it distinct from any other use of the secret.
func DeriveSigningKey(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("masthead storage signed URL key v1"))
	return m.Sum(nil)
}

// signer makes and checks signed-URL tokens.
type signer struct {
	key []byte
	now func() time.Time
}

func (s signer) sign(url, contentType string, ttl time.Duration) string {
	now := s.now()
	payload, _ := json.Marshal(signedClaims{URL: url, CT: contentType, IAT: now.Unix(), EXP: now.Add(ttl).Unix()})
	unsigned := signedHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	return unsigned + "." + s.mac(unsigned)
}

func (s signer) mac(unsigned string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(unsigned))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// verify checks that token was signed by us, names exactly url, and has not expired; it
// returns the content type signed into it.
func (s signer) verify(token, url string) (string, *apiError) {
	header, rest, ok := strings.Cut(token, ".")
	if !ok || header != signedHeader {
		return "", errInvalidJWT
	}
	payload, sig, ok := strings.Cut(rest, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.mac(header+"."+payload))) {
		return "", errInvalidJWT
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", errInvalidJWT
	}
	var c signedClaims
	if err := json.Unmarshal(raw, &c); err != nil || c.URL != url {
		return "", errInvalidJWT
	}
	if s.now().Unix() >= c.EXP {
		return "", errExpiredJWT
	}
	return c.CT, nil
}
