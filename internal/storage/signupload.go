package storage

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// identityClaims are the claims an upload token keeps of its signer: who they are, in which
// session, and how they signed in; what row-level security and the session check read.
// The rest (email, metadata) stays out of a URL that may be handed on.
var identityClaims = []string{"sub", "role", "aud", "session_id", "aal", "is_anonymous"}

// signUpload answers POST /object/upload/sign/media/<path> (createSignedUploadUrl) with a URL
// that uploads to that path, and only there, without credentials for SignedUploadTTL. The
// write is tried first as the caller and rolled back, so only someone who may upload there
// (with x-upsert: true, or replace the object there) gets a URL; the upload itself is then
// written as them, so the database decides it again when it happens, and it fails once their
// session has ended.
func (h *Handler) signUpload(c echo.Context) error {
	ctx := c.Request().Context()
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	mode := modeCreate
	if strings.EqualFold(c.Request().Header.Get("x-upsert"), "true") {
		mode = modeUpsert
	}
	// The type is not known yet; the upload checks it. Any allowed kind will do for the trial.
	probe := newMedia{key: key, kind: "image", mime: "application/octet-stream"}
	if _, err := h.probe(ctx, caller, probe, mode); err != nil {
		return writeError(c, h.refusal(ctx, "storage: try an upload to sign", err))
	}
	as, err := keepClaims(caller.Claims)
	if err != nil {
		return writeError(c, h.internal(ctx, "storage: read the caller's claims", err))
	}
	token := h.signer.signClaims(signedClaims{URL: Bucket + "/" + key, Op: opUpload, Upsert: mode == modeUpsert, As: as},
		h.opts.SignedUploadTTL)
	return c.JSON(http.StatusOK, map[string]string{
		"url":   fmt.Sprintf("/object/upload/sign/%s/%s?token=%s", Bucket, key, token),
		"token": token,
	})
}

// signedUpload serves PUT /object/upload/sign/media/<path>?token=… (uploadToSignedUrl) to
// whoever holds the token: an upload (see putObject) written as the person who signed it, a new
// object or, if they signed with upsert, a new version of the one there. It answers {Id, Key}.
func (h *Handler) signedUpload(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	claims, aerr := h.signer.verifyUpload(c.QueryParam("token"), Bucket+"/"+key)
	if aerr != nil {
		return writeError(c, aerr)
	}
	mode := modeCreate
	if claims.Upsert {
		mode = modeUpsert
	}
	return h.putObject(c, identityOf(c, pg.UserCaller(claims.As)), key, mode)
}

// keepClaims returns the identityClaims of a verified claims object.
func keepClaims(raw json.RawMessage) (json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	kept := make(map[string]json.RawMessage, len(identityClaims))
	for _, k := range identityClaims {
		if v, ok := all[k]; ok {
			kept[k] = v
		}
	}
	if _, ok := kept["sub"]; !ok {
		return nil, fmt.Errorf("storage: claims without sub")
	}
	return json.Marshal(kept)
}
