package storage

import (
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
)

// signRequest is the body of POST /object/sign/media/<path>.
type signRequest struct {
	ExpiresIn *int64 `json:"expiresIn"`
}

// signManyRequest is the body of POST /object/sign/media (createSignedUrls).
type signManyRequest struct {
	ExpiresIn *int64    `json:"expiresIn"`
	Paths     *[]string `json:"paths"`
}

// signedURLResult is one entry of createSignedUrls' answer, in Supabase Storage's shape: either
// signedURL or error is null.
type signedURLResult struct {
	Error     *string `json:"error"`
	Path      string  `json:"path"`
	SignedURL *string `json:"signedURL"`
}

// validTTL checks expiresIn: whole seconds, at least one, at most MaxSignedURLTTL. It is
// compared in seconds: multiplying first would wrap for huge values and let them through.
func (h *Handler) validTTL(expiresIn *int64) (time.Duration, *apiError) {
	most := int64(h.opts.MaxSignedURLTTL / time.Second)
	if expiresIn == nil || *expiresIn < 1 || *expiresIn > most {
		return 0, invalid(fmt.Sprintf("expiresIn must be a whole number of seconds from 1 to %d (MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL)", most))
	}
	return time.Duration(*expiresIn) * time.Second, nil
}

// signedPath is the signed URL of key, relative to /storage/v1. The key is written raw, as
// Supabase Storage answers: supabase-js encodeURI()s the whole URL itself, and validKey
// admits no character that would end or escape a URL path.
func (h *Handler) signedPath(key, contentType string, ttl time.Duration) string {
	token := h.signer.sign(Bucket+"/"+key, contentType, ttl)
	return fmt.Sprintf("/object/sign/%s/%s?token=%s", Bucket, key, token)
}

// sign answers POST /object/sign/media/<path> (createSignedUrl) with a URL that opens that
// object, and only it, without credentials until expiresIn seconds have passed. Only a caller
// who may read the row can have one, and the row's content type travels in the token, since
// the URL's user will have no identity the database could check.
func (h *Handler) sign(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	var body signRequest
	if aerr := h.readJSON(c, &body); aerr != nil {
		return writeError(c, aerr)
	}
	ttl, aerr := h.validTTL(body.ExpiresIn)
	if aerr != nil {
		return writeError(c, aerr)
	}
	ct, aerr := h.callerSees(c, key)
	if aerr != nil {
		return writeError(c, aerr)
	}
	return c.JSON(http.StatusOK, map[string]string{"signedURL": h.signedPath(key, ct, ttl)})
}

// signMany answers POST /object/sign/media (createSignedUrls): one signed URL per path the
// caller may read, in the order asked, and for every other path (missing, someone else's, or
// not a valid key) Supabase Storage's error, which does not say which. The rows are read in one
// query as the caller.
func (h *Handler) signMany(c echo.Context) error {
	if c.Param("bucket") != Bucket {
		return writeError(c, errNoBucket)
	}
	var body signManyRequest
	if aerr := h.readJSON(c, &body); aerr != nil {
		return writeError(c, aerr)
	}
	ttl, aerr := h.validTTL(body.ExpiresIn)
	if aerr != nil {
		return writeError(c, aerr)
	}
	if aerr := h.checkBatch("paths", body.Paths); aerr != nil {
		return writeError(c, aerr)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	var keys []string
	for _, p := range *body.Paths {
		if validKey(p) {
			keys = append(keys, p)
		}
	}
	ctx := c.Request().Context()
	types := make(map[string]string, len(keys))
	err := h.readAsCaller(ctx, caller, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `select storage_path, mime_type from public.media where storage_path = any($1)`, keys)
		if err != nil {
			return err
		}
		var key, ct string
		_, err = pgx.ForEachRow(rows, []any{&key, &ct}, func() error {
			types[key] = ct
			return nil
		})
		return err
	})
	if err != nil {
		return writeError(c, h.internal(ctx, "storage: read media rows to sign", err))
	}
	out := make([]signedURLResult, len(*body.Paths))
	for i, p := range *body.Paths {
		out[i].Path = p
		if ct, ok := types[p]; ok {
			u := h.signedPath(p, ct, ttl)
			out[i].SignedURL = &u
		} else {
			msg := errNoSuchObjects
			out[i].Error = &msg
		}
	}
	return c.JSON(http.StatusOK, out)
}

// checkBatch refuses a missing or empty list of paths, or one longer than MaxBatch; field is
// its name in the request.
func (h *Handler) checkBatch(field string, paths *[]string) *apiError {
	switch {
	case paths == nil:
		return invalid(field + " is required: an array of object paths")
	case len(*paths) == 0:
		return invalid(field + " must name at least one object")
	case len(*paths) > h.opts.MaxBatch:
		return invalid(fmt.Sprintf("%s names %d objects: at most %d may be named in one request (MASTHEAD_STORAGE_MAX_BATCH)", field, len(*paths), h.opts.MaxBatch))
	}
	return nil
}

// signedDownload serves GET /object/sign/media/<path>?token=… to whoever holds the token.
func (h *Handler) signedDownload(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	ct, aerr := h.signer.verify(c.QueryParam("token"), Bucket+"/"+key)
	if aerr != nil {
		return writeError(c, aerr)
	}
	return h.serve(c, key, ct)
}
