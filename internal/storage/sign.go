package storage

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"hash"
	"strings"
	"sync"
	"time"

	"masthead/internal/tokencache"
)

// A signed URL's token is an HS256 JWT with claims {url, iat, exp}, as Supabase Storage issues
// them, where url is "<bucket>/<key>": the token opens that one object and no other, and only
// until exp. A download token also carries ct, the content type of the media row when it was
// signed, because whoever opens the URL has no identity under which the row could be read
// again. An upload token (op "upload") carries instead the identity of whoever signed it (as:
// the claims row-level security reads) and whether it may replace an existing object (upsert):
// the upload it allows is written as that person, so the database decides it when it happens.
// Neither kind of token is accepted in place of the other.

// signedHeader is the fixed, pre-encoded JWT header; verification compares it byte for byte,
// so no "alg" trickery is possible.
var signedHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

type signedClaims struct {
	URL    string          `json:"url"`
	CT     string          `json:"ct,omitempty"`
	Op     string          `json:"op,omitempty"`
	Upsert bool            `json:"upsert,omitempty"`
	As     json.RawMessage `json:"as,omitempty"`
	IAT    int64           `json:"iat"`
	EXP    int64           `json:"exp"`
}

// opUpload marks an upload token.
const opUpload = "upload"

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
	// macs keeps keyed HMACs (*macState) for reuse: a fresh hmac.New costs two allocations
	// and two SHA-256 blocks for the key before the token is hashed, on every signed download.
	macs *sync.Pool
	// tokens remembers the claims of tokens whose signature checked out, so that a URL opened
	// again (an image on a page many people view) is not checked and decoded again; the url and
	// expiry are compared on every use.
	tokens *tokencache.Cache[signedClaims]
}

// newSigner is a signer of key whose keyed HMACs are reused and which remembers up to
// cacheSize verified tokens (none for 0). Every signer is made here, so neither macs nor tokens
// is ever nil.
func newSigner(key []byte, now func() time.Time, cacheSize int) signer {
	return signer{key: key, now: now, macs: &sync.Pool{New: func() any {
		return &macState{mac: hmac.New(sha256.New, key)}
	}}, tokens: &tokencache.Cache[signedClaims]{Max: cacheSize}}
}

// macState is one keyed HMAC and the buffers a token's check writes into, so that checking a
// token allocates nothing but its decoded claims.
type macState struct {
	mac hash.Hash
	in  []byte    // header.payload, as the MAC reads it
	sum []byte    // the MAC
	enc [43]byte  // the MAC in base64url (43 characters for 32 bytes)
	raw [512]byte // the decoded payload of a token of usual size
}

// macOf writes the base64url HMAC of header "." payload into st.enc.
func (s signer) macOf(st *macState, header, payload string) []byte {
	st.mac.Reset()
	st.in = append(append(append(st.in[:0], header...), '.'), payload...)
	st.mac.Write(st.in)
	st.sum = st.mac.Sum(st.sum[:0])
	base64.RawURLEncoding.Encode(st.enc[:], st.sum)
	return st.enc[:]
}

// state takes a macState from the pool.
func (s signer) state() *macState { return s.macs.Get().(*macState) }

// release returns st to the pool, unless a large token grew its buffer.
func (s signer) release(st *macState) {
	if cap(st.in) <= 4096 {
		s.macs.Put(st)
	}
}

// sign makes a download token for url.
func (s signer) sign(url, contentType string, ttl time.Duration) string {
	return s.signClaims(signedClaims{URL: url, CT: contentType}, ttl)
}

// signClaims signs c, valid from now for ttl.
func (s signer) signClaims(c signedClaims, ttl time.Duration) string {
	now := s.now()
	c.IAT, c.EXP = now.Unix(), now.Add(ttl).Unix()
	payload, _ := json.Marshal(c)
	unsigned := signedHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	return unsigned + "." + s.mac(unsigned)
}

func (s signer) mac(unsigned string) string {
	header, payload, _ := strings.Cut(unsigned, ".")
	st := s.state()
	defer s.release(st)
	return string(s.macOf(st, header, payload))
}

// verify checks that token is a download token signed by us that names exactly url and has not
// expired; it returns the content type signed into it.
func (s signer) verify(token, url string) (string, *apiError) {
	c, aerr := s.parse(token, url)
	if aerr != nil {
		return "", aerr
	}
	if c.Op != "" {
		return "", errInvalidJWT
	}
	return c.CT, nil
}

// verifyUpload checks that token is an upload token signed by us that names exactly url and
// has not expired, and returns its claims.
func (s signer) verifyUpload(token, url string) (signedClaims, *apiError) {
	c, aerr := s.parse(token, url)
	if aerr != nil {
		return signedClaims{}, aerr
	}
	if c.Op != opUpload || len(c.As) == 0 {
		return signedClaims{}, errInvalidJWT
	}
	return c, nil
}

// parse checks token's signature, url and expiry, and returns its claims, which may be shared
// with other calls: do not modify them.
func (s signer) parse(token, url string) (signedClaims, *apiError) {
	sum := tokencache.KeyOf(token)
	if c, ok := s.tokens.Get(sum); ok {
		return s.current(c, url)
	}
	c, aerr := s.check(token)
	if aerr != nil {
		return signedClaims{}, aerr
	}
	expired := func(c signedClaims) bool { return s.now().Unix() >= c.EXP }
	if !expired(c) {
		s.tokens.Put(sum, c, expired)
	}
	return s.current(c, url)
}

// current checks verified claims c against the url they are used for and the clock.
func (s signer) current(c signedClaims, url string) (signedClaims, *apiError) {
	if c.URL != url {
		return signedClaims{}, errInvalidJWT
	}
	if s.now().Unix() >= c.EXP {
		return signedClaims{}, errExpiredJWT
	}
	return c, nil
}

// check verifies token's signature and decodes its claims.
func (s signer) check(token string) (signedClaims, *apiError) {
	header, rest, ok := strings.Cut(token, ".")
	if !ok || header != signedHeader {
		return signedClaims{}, errInvalidJWT
	}
	payload, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return signedClaims{}, errInvalidJWT
	}
	st := s.state()
	defer s.release(st)
	// The conversion of sig neither escapes nor is written to, so the compiler reads the
	// string's own bytes: no copy, no allocation (BenchmarkSignedCheck).
	if subtle.ConstantTimeCompare(s.macOf(st, header, payload), []byte(sig)) != 1 {
		return signedClaims{}, errInvalidJWT
	}
	// st.in holds header.payload: the payload is decoded from its end of it, in place of bytes.
	in := st.in[len(header)+1:]
	raw := st.raw[:0]
	if base64.RawURLEncoding.DecodedLen(len(in)) > len(st.raw) {
		raw = make([]byte, 0, base64.RawURLEncoding.DecodedLen(len(in)))
	}
	raw, err := base64.RawURLEncoding.AppendDecode(raw, in)
	if err != nil {
		return signedClaims{}, errInvalidJWT
	}
	var c signedClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		return signedClaims{}, errInvalidJWT
	}
	return c, nil
}
