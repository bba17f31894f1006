package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// Media in the editor: upload an image (sent on to /storage/v1 as the person, then attached
// with its alt text in one write), move it up or down, detach it. Every form works without
// JavaScript; with it, app.js checks type and size before sending and shows the progress.

// maxUploadBytes is the largest image the editor sends on: the storage's default limit, so a
// file the storage would refuse is refused before it crosses the network twice.
const maxUploadBytes = 50 << 20

// uploadTypes are the image types the storage accepts, with the extension their keys get.
var uploadTypes = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

// uploadPathRE is the dashboard's upload route, which limits its own body (see IsUpload).
var uploadPathRE = regexp.MustCompile(`^/p/[a-z0-9][a-z0-9-]*/publications/[0-9a-fA-F-]{36}/media$`)

// IsUpload reports the dashboard's image upload, whose body may be larger than a form's: the
// service's general body limit and request ceiling must let it through, as they do
// /storage/v1's; it caps its own body at the storage's limit.
func IsUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && uploadPathRE.MatchString(r.URL.Path)
}

// limitUpload caps the upload's body before anything reads it (the CSRF check parses the form).
func limitUpload(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, maxUploadBytes+64<<10)
		return next(c)
	}
}

// mediaSection is the editor's media: the images in order with their controls, and the upload.
func (a *App) mediaSection(c echo.Context, pc *projectContext, p *client.Publication) *pages.MediaEditor {
	base := publicationURL(pc.project.Slug, p.ID) + "/media"
	csrf := str(stateOf(c).sess, keyCSRF)
	m := &pages.MediaEditor{UploadURL: base, OrderURL: base + "/order", CSRF: csrf, MaxBytes: maxUploadBytes, MaxWords: sizeWords(maxUploadBytes)}
	for t := range uploadTypes {
		m.Types = append(m.Types, t)
	}
	slices.Sort(m.Types)
	for i, pm := range p.Media {
		it := mediaItem(pc.project.Slug, i+1, pm)
		m.Items = append(m.Items, pages.MediaEditItem{MediaItem: it,
			MoveURL: base + "/" + pm.Media.ID + "/move", DetachURL: base + "/" + pm.Media.ID + "/detach",
			First: i == 0, Last: i == len(p.Media)-1})
	}
	return m
}

// uploadMedia is POST /p/:slug/publications/:id/media: the image goes to the storage as the
// person, then is attached with its alt text. Refusals (type, size, the storage's own words)
// come back on the editor with nothing attached.
func (a *App) uploadMedia(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	if !editable(pc.role, p.Status) {
		return a.notEditable(c, pc, p)
	}
	alt := strings.TrimSpace(c.FormValue("alt_text"))
	fh, ferr := c.FormFile("file")
	var why string
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(ferr, &tooLarge):
		why = "The image is larger than " + sizeWords(maxUploadBytes) + "."
	case ferr != nil:
		why = "Choose an image to upload."
	case alt == "":
		why = "Describe the image in the alt text, for people who cannot see it."
	case uploadTypes[fh.Header.Get("Content-Type")] == "":
		why = "Only PNG, JPEG, GIF and WebP images can be uploaded."
	case fh.Size > maxUploadBytes:
		why = "The image is larger than " + sizeWords(maxUploadBytes) + "."
	}
	if why != "" {
		return a.mediaRefused(c, pc, p, alt, why)
	}
	f, err := fh.Open()
	if err != nil {
		return a.fail(c, err)
	}
	defer f.Close()
	ctype := fh.Header.Get("Content-Type")
	key := pc.project.Slug + "/" + p.ID + "/" + randomName() + uploadTypes[ctype]
	err = a.call(c, func(token string) error {
		id, err := a.api.UploadMedia(ctx(c), token, key, ctype, f, fh.Size)
		if err != nil {
			return err
		}
		return a.api.AttachMedia(ctx(c), token, p.ID, id, alt)
	})
	if e, ok := client.ErrorOf(err); ok && e.Status < 500 && e.Status != http.StatusTooManyRequests {
		return a.mediaRefused(c, pc, p, alt, sentence(e.Message))
	}
	if err != nil {
		return a.fail(c, err)
	}
	a.flash(c, layout.Flash{Kind: "success", Text: "Image uploaded and attached."})
	return a.redirect(c, publicationURL(pc.project.Slug, p.ID)+"/edit#media")
}

func randomName() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// mediaRefused shows the editor with the upload's refusal beside the upload form.
func (a *App) mediaRefused(c echo.Context, pc *projectContext, p *client.Publication, alt, why string) error {
	all, err := a.channels(c)
	if err != nil {
		return a.fail(c, err)
	}
	m := a.savedEditor(c, pc, p, all, "")
	m.Media.Alt = alt
	m.Media.Notice = &pages.Notice{Kind: "error", Title: "Not uploaded.", Text: why}
	return a.render(c, http.StatusUnprocessableEntity, pages.Editor(m))
}

// moveMedia is POST …/media/:mid/move (dir=up|down): the image swaps places with its neighbour.
func (a *App) moveMedia(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	ids := make([]string, len(p.Media))
	for i, pm := range p.Media {
		ids[i] = pm.Media.ID
	}
	i := slices.Index(ids, c.Param("mid"))
	j := i - 1
	if c.FormValue("dir") == "down" {
		j = i + 1
	}
	if i < 0 || j < 0 || j >= len(ids) {
		return a.redirect(c, publicationURL(pc.project.Slug, p.ID)+"/edit#media")
	}
	ids[i], ids[j] = ids[j], ids[i]
	err = a.call(c, func(token string) error { return a.api.ReorderMedia(ctx(c), token, p.ID, ids) })
	return a.mediaAnswer(c, pc, p, err, "Order saved.")
}

// orderMedia is POST …/media/order (order=id,id,…): the images in the order given, as app.js
// sends it when an image is dragged to a new place.
func (a *App) orderMedia(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	ids := strings.Split(c.FormValue("order"), ",")
	for _, id := range ids {
		if !uuidRE.MatchString(id) {
			return a.fail(c, &client.Error{Status: http.StatusBadRequest, Message: "order must list the images' ids, separated by commas"})
		}
	}
	err = a.call(c, func(token string) error { return a.api.ReorderMedia(ctx(c), token, p.ID, ids) })
	return a.mediaAnswer(c, pc, p, err, "Order saved.")
}

// detachMedia is POST …/media/:mid/detach: the image leaves the publication (it stays in the
// project's media).
func (a *App) detachMedia(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	mid := c.Param("mid")
	if !uuidRE.MatchString(mid) {
		return a.fail(c, errNotFound)
	}
	err = a.call(c, func(token string) error { return a.api.DetachMedia(ctx(c), token, p.ID, mid) })
	return a.mediaAnswer(c, pc, p, err, "Image detached.")
}

// mediaAnswer goes back to the editor's media with what happened.
func (a *App) mediaAnswer(c echo.Context, pc *projectContext, p *client.Publication, err error, done string) error {
	if e, ok := client.ErrorOf(err); ok && e.Status < 500 && e.Status != http.StatusNotFound && e.Status != http.StatusTooManyRequests {
		a.flash(c, layout.Flash{Kind: "error", Text: "Nothing changed. " + sentence(e.Message)})
	} else if err != nil {
		return a.fail(c, err)
	} else {
		a.flash(c, layout.Flash{Kind: "success", Text: done})
	}
	return a.redirect(c, publicationURL(pc.project.Slug, p.ID)+"/edit#media")
}
