package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// readJSON decodes the request's JSON body into v: one JSON value of at most MaxJSONBytes,
// unknown fields ignored (as Supabase Storage ignores them). A refusal says what is wrong.
func (h *Handler) readJSON(c echo.Context, v any) *apiError {
	body := http.MaxBytesReader(c.Response(), c.Request().Body, h.opts.MaxJSONBytes)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		return h.jsonRefusal(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return h.jsonRefusal(err)
		}
		return errBadJSON
	}
	return nil
}

// jsonRefusal names what was wrong with a JSON body.
func (h *Handler) jsonRefusal(err error) *apiError {
	var tooBig *http.MaxBytesError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		return &apiError{http.StatusRequestEntityTooLarge, "Payload too large",
			fmt.Sprintf("the request body is over the limit of %d bytes (MASTHEAD_STORAGE_MAX_JSON_BYTES)", h.opts.MaxJSONBytes)}
	case errors.As(err, &typ) && typ.Field != "":
		return invalid(fmt.Sprintf("%s has the wrong type (%s)", typ.Field, typ.Value))
	case errors.As(err, &typ):
		return invalid("the request body must be a JSON object")
	case errors.Is(err, io.EOF):
		return invalid("the request body is empty: a JSON object was expected")
	}
	return errBadJSON
}
