package storage

import "github.com/labstack/echo/v4"

// update serves PUT /object/media/<path> (update): the body becomes the new version of the
// object at <path>, checked as an upload is, and its row (kind, type, dimensions, size,
// updated_at) describes the new file, in one transaction as the caller. The media row keeps
// its id, so publications that show it show the new version. Row-level security decides who
// may (editor+ of the project); a row the caller cannot see is 404, one they may only read 403,
// and an item attached to a publication past changes_requested is frozen like its text (409).
func (h *Handler) update(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	return h.putObject(c, caller, key, modeReplace)
}
