package auth

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// Error is a refusal with GoTrue's status, error code and message. Cause, when set, is logged
// and never shown.
type Error struct {
	Status     int
	Code       string
	Msg        string
	RetryAfter time.Duration // for 429
	// Reasons, for weak_password, say what the password lacks (GoTrue's weak_password.reasons).
	Reasons []string
	Cause   error
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }
func (e *Error) Unwrap() error { return e.Cause }

// GoTrue's error codes used here (supabase/auth internal/api/apierrors/errorcode.go).
const (
	CodeInvalidCredentials      = "invalid_credentials"
	CodeValidationFailed        = "validation_failed"
	CodeBadJSON                 = "bad_json"
	CodeRefreshTokenNotFound    = "refresh_token_not_found"
	CodeRefreshTokenAlreadyUsed = "refresh_token_already_used"
	CodeSessionNotFound         = "session_not_found"
	CodeNoAuthorization         = "no_authorization"
	CodeBadJWT                  = "bad_jwt"
	CodeUserBanned              = "user_banned"
	CodeOverRequestRateLimit    = "over_request_rate_limit"
	CodeUnexpectedFailure       = "unexpected_failure"
	CodeWeakPassword            = "weak_password"
	CodeSamePassword            = "same_password"
	CodeReauthenticationNeeded  = "reauthentication_needed"
	CodeReauthenticationInvalid = "reauthentication_not_valid"
	CodeEmailChangeUnsupported  = "email_change_not_supported" // ours: no mail is sent, so no change can be confirmed
	CodeSignupDisabled          = "signup_disabled"
	CodeInviteNotFound          = "invite_not_found"
	CodeInviteExpired           = "otp_expired"
	CodeConflict                = "conflict"
	CodeAppSessionRefused       = "oauth_client_session_not_allowed" // ours: a connected app's token may not change the password
)

func isAPIError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func apiError(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Msg: msg}
}

var (
	errInvalidCredentials = apiError(http.StatusBadRequest, CodeInvalidCredentials, "Invalid login credentials")
	errNoAuthorization    = apiError(http.StatusUnauthorized, CodeNoAuthorization, "This endpoint requires a valid Bearer token")
	errSessionNotFound    = apiError(http.StatusForbidden, CodeSessionNotFound, "Session from session_id claim in JWT does not exist")
	errRefreshNotFound    = apiError(http.StatusBadRequest, CodeRefreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
	errRefreshUsed        = apiError(http.StatusBadRequest, CodeRefreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used")
	errRefreshNoSession   = apiError(http.StatusBadRequest, CodeSessionNotFound, "Invalid Refresh Token: No Valid Session Found")
	errUserBanned         = apiError(http.StatusBadRequest, CodeUserBanned, "User is banned")
	errUnavailable        = apiError(http.StatusServiceUnavailable, CodeUnexpectedFailure, "The database is unavailable right now; try again shortly")
)

func validationError(msg string) *Error {
	return apiError(http.StatusBadRequest, CodeValidationFailed, msg)
}

// badJWT is GoTrue's 403 for a bearer token that does not verify; reason comes from Verify.
func badJWT(err error) *Error {
	return &Error{Status: http.StatusForbidden, Code: CodeBadJWT,
		Msg: "invalid JWT: unable to parse or verify signature, " + reasonOf(err), Cause: err}
}

func reasonOf(err error) string {
	msg := err.Error()
	if p := ErrInvalidToken.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}

// apiVersionHeader selects the error body: absent (or older) is GoTrue's initial
// {code:<status>, error_code, msg}; 2024-01-01 or later is {code:<error code>, message}.
const (
	apiVersionHeader = "X-Supabase-Api-Version"
	apiVersion2024   = "2024-01-01"
)

// wantsAPI2024 reports whether the request asks for the 2024-01-01 response format.
func wantsAPI2024(r *http.Request) bool {
	v := r.Header.Get(apiVersionHeader)
	if v == "" {
		return false
	}
	t, err := time.Parse(time.DateOnly, v)
	return err == nil && !t.Before(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
}

// valueRefused is GoTrue's 400 for a value of the request that PostgreSQL refused to take
// (SQLSTATE class 22, data exception: bytes that are not UTF-8, a NUL or a lone surrogate in
// JSON text, a number out of range), or nil for any other error. The values this surface stores
// or looks up come from the request, so such a refusal is the caller's fault, not ours, and
// PostgreSQL's message names what is wrong with the value and nothing else.
func valueRefused(err error) *Error {
	f, ok := pg.ErrorFields(err)
	if !ok || !strings.HasPrefix(f.Code, "22") {
		return nil
	}
	return validationError("The request holds a value the database cannot take: " + f.Message)
}

// writeError answers err in GoTrue's shape. A value PostgreSQL refused is the caller's 400
// (valueRefused). Anything else that is not an *Error is a bug or an outage: it is logged with
// the request id and answered as unexpected_failure, with 503 and Retry-After when the database
// is unreachable or restarting (pg.Unavailable), else 500.
func writeError(c echo.Context, log *slog.Logger, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		e = valueRefused(err)
	}
	if e == nil {
		log.ErrorContext(c.Request().Context(), "auth: request failed",
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
		e = apiError(http.StatusInternalServerError, CodeUnexpectedFailure,
			"Unexpected failure, please check server logs for more information")
		if pg.Unavailable(err) {
			e = errUnavailable
		}
	}
	h := c.Response().Header()
	h.Set("x-sb-error-code", e.Code)
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	} else if e.Status == http.StatusServiceUnavailable {
		h.Set("Retry-After", pg.RetryAfter)
	}
	var weak *weakPassword
	if len(e.Reasons) > 0 {
		weak = &weakPassword{Reasons: e.Reasons}
	}
	if wantsAPI2024(c.Request()) {
		h.Set(apiVersionHeader, apiVersion2024)
		return c.JSON(e.Status, struct {
			Code         string        `json:"code"`
			Message      string        `json:"message"`
			WeakPassword *weakPassword `json:"weak_password,omitempty"`
		}{e.Code, e.Msg, weak})
	}
	return c.JSON(e.Status, struct {
		Code         int           `json:"code"`
		ErrorCode    string        `json:"error_code"`
		Msg          string        `json:"msg"`
		WeakPassword *weakPassword `json:"weak_password,omitempty"`
	}{e.Status, e.Code, e.Msg, weak})
}

// weakPassword is the weak_password member of GoTrue's 422, which supabase-js turns into
// AuthWeakPasswordError.reasons.
type weakPassword struct {
	Reasons []string `json:"reasons"`
}
