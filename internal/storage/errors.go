package storage

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// apiError is a refusal in Supabase Storage's JSON shape. statusCode is a string there, and
// supabase-js reads it as one, so it is a string here too.
type apiError struct {
	status int
	code   string // Supabase Storage's "error" field
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

// The refusals this surface gives, with Supabase Storage's error names and messages.
var (
	errNotFound      = &apiError{http.StatusNotFound, "not_found", "Object not found"}
	errNoBucket      = &apiError{http.StatusNotFound, "Bucket not found", "Bucket not found"}
	errInvalidKey    = &apiError{http.StatusBadRequest, "InvalidKey", "Invalid key"}
	errInvalidJWT    = &apiError{http.StatusBadRequest, "InvalidJWT", "invalid signature"}
	errExpiredJWT    = &apiError{http.StatusBadRequest, "InvalidJWT", "jwt expired"}
	errUnauthorized  = &apiError{http.StatusUnauthorized, "Unauthorized", "Invalid or expired access token"}
	errRLS           = &apiError{http.StatusForbidden, "Unauthorized", "new row violates row-level security policy"}
	errDuplicate     = &apiError{http.StatusConflict, "Duplicate", "The resource already exists"}
	errMimeType      = &apiError{http.StatusUnsupportedMediaType, "invalid_mime_type", "mime type not supported: uploads must be PNG, JPEG, GIF, WebP, MP4 or WebM"}
	errMimeMismatch  = &apiError{http.StatusUnsupportedMediaType, "invalid_mime_type", "the content does not match the declared content type"}
	errBadImage      = &apiError{http.StatusBadRequest, "InvalidRequest", "the image could not be read"}
	errEmptyBody     = &apiError{http.StatusBadRequest, "InvalidRequest", "the upload is empty"}
	errBadBody       = &apiError{http.StatusBadRequest, "InvalidRequest", "the request body could not be read"}
	errInternal      = &apiError{http.StatusInternalServerError, "internal", "Internal Server Error"}
	errUnavailable   = &apiError{http.StatusServiceUnavailable, "unavailable", "Service Unavailable"}
	errKeyUnderFile  = &apiError{http.StatusConflict, "Duplicate", "The key lies under an existing object: an object cannot also be a folder"}
	errDiskFull      = &apiError{http.StatusInsufficientStorage, "InsufficientStorage", "There is no space left to store the object"}
	errReadOnly      = &apiError{http.StatusServiceUnavailable, "unavailable", "Storage is read-only right now; try again later"}
	errBodyMultipart = &apiError{http.StatusBadRequest, "InvalidRequest", "multipart upload must carry exactly one file part"}
	errBadJSON       = &apiError{http.StatusBadRequest, "InvalidRequest", "the request body is not valid JSON"}
	errDownloadName  = &apiError{http.StatusBadRequest, "InvalidRequest", "download must be a file name of at most 255 bytes, without control characters"}
	errSameKey       = &apiError{http.StatusBadRequest, "InvalidRequest", "sourceKey and destinationKey name the same object"}
	errCrossProject  = &apiError{http.StatusBadRequest, "InvalidRequest", "an object cannot move to another project's folder: copy it there, then remove the original"}
)

// errNoSuchObjects is the per-path error of a batch (createSignedUrls), Supabase Storage's
// words: whether the object is missing or someone else's is not said.
const errNoSuchObjects = "Either the object does not exist or you do not have access to it"

// tooLarge refuses an upload over MaxUploadBytes in Supabase Storage's words, naming the limit.
func (h *Handler) tooLarge() *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "Payload too large",
		fmt.Sprintf("The object exceeded the maximum allowed size of %d bytes (MASTHEAD_STORAGE_MAX_UPLOAD_BYTES)", h.opts.MaxUploadBytes)}
}

// overShare refuses a request whose caller already holds their whole share of the pool (see
// pg.Shares), naming the limits as REST's PGRST003 does, with the code Supabase Storage gives a
// client asking too much at once (SlowDown, 503); writeError adds Retry-After.
func overShare(over *pg.OverShareError) *apiError {
	return &apiError{http.StatusServiceUnavailable, "SlowDown",
		over.Explain() + " Wait for your other requests to finish, or send fewer at once."}
}

// keyTooLong refuses a key over maxKeyLen, saying how long it is and what the limit is (what
// names the key in the request).
func keyTooLong(what, key string) *apiError {
	return &apiError{http.StatusBadRequest, "InvalidKey",
		fmt.Sprintf("%s is %d bytes long: an object's key may be at most %d bytes (S3's limit)", what, len(key), maxKeyLen)}
}

// keyRefusal is nil for a key validKey accepts, else the 400 for the key the request names as
// what: its length and the limit when it is too long, else that it is no valid object path.
func keyRefusal(what, key string) *apiError {
	switch {
	case validKey(key):
		return nil
	case len(key) > maxKeyLen:
		return keyTooLong(what, key)
	}
	return &apiError{http.StatusBadRequest, "InvalidKey", what + " is not a valid object path"}
}

// invalid is a 400 for a request that cannot be carried out as written, saying why.
func invalid(msg string) *apiError {
	return &apiError{http.StatusBadRequest, "InvalidRequest", msg}
}

// dbRefusal maps what the database refused in a write made as the caller to this surface's
// answers; anything else is returned as it is, for the caller to treat as internal. Not being
// allowed, the project not being visible (a null project_id) and a path outside the project's
// folder are all the same 403, so a write says nothing about other tenants. A rule of our own
// (PTnnn, such as a media item frozen by its publication) keeps its status and its words.
func dbRefusal(err error) error {
	f, ok := pg.ErrorFields(err)
	if !ok {
		return err
	}
	switch f.Code {
	case "42501", "23502", "23514":
		return errRLS
	case "23505":
		return errDuplicate
	}
	if status := pg.HTTPStatus(f.Code, false); strings.HasPrefix(f.Code, "PT") && status >= 400 && status < 500 && status != http.StatusUnauthorized {
		name := "InvalidRequest"
		if status == http.StatusConflict {
			name = "Conflict"
		}
		msg := f.Message
		if f.Hint != "" {
			msg += ". " + f.Hint
		}
		return &apiError{status, name, msg}
	}
	return err
}

// writeError sends e; the cause of a 5xx is logged by the caller, never shown. A 503 is an
// outage the client may retry, and says when.
func writeError(c echo.Context, e *apiError) error {
	if e.status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", pg.RetryAfter)
	}
	return c.JSON(e.status, map[string]string{
		"statusCode": strconv.Itoa(e.status),
		"error":      e.code,
		"message":    e.msg,
	})
}
