package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
)

// The dashboard's media: the image route that <img src="/p/{slug}/media/{id}"> points at, and
// the alt-text edit. The browser never holds the access token: the image route fetches the
// object from the service's /storage/v1 with the session's token and streams it back, passing
// the browser's validators and ranges through, so revalidation (304) and seeking work end to
// end while every request is still decided by the service under the person's own rights.

// maxAltText bounds alt text: screen readers read it whole, and a paragraph belongs in the body.
const maxAltText = 1000

// imageCacheControl keeps images out of every cache, the browser's own included: an image is
// shown only to a signed-in member, and a cached copy would outlive signing out on a shared
// computer.
const imageCacheControl = "private, no-store"

// forwardedRequest are the request headers passed to the service; forwardedResponse come back.
var (
	forwardedRequest  = []string{"If-None-Match", "If-Modified-Since", "Range", "If-Range"}
	forwardedResponse = []string{"Content-Type", "Content-Length", "Content-Range", "Accept-Ranges",
		"ETag", "Last-Modified", "Content-Disposition"}
)

// mediaRoutes calls the service for the media routes: /rest/v1 for the row and the alt-text
// update, /storage/v1 for the bytes.
type mediaRoutes struct {
	app  *App
	base *url.URL
	key  string
	hc   *http.Client
}

// RegisterMedia mounts GET /p/:slug/media/:id (the image) and POST /p/:slug/media/:id/alt (the
// alt-text edit) on e, talking to the service at apiURL with publishableKey as the dashboard's
// other calls do. hc may be nil: images may be large, so the default client bounds the wait for
// the service's answer, not the transfer.
func (a *App) RegisterMedia(e *echo.Echo, apiURL, publishableKey string, hc *http.Client) error {
	base, err := url.Parse(strings.TrimRight(apiURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("handlers: service URL %q must be an absolute http(s) URL", apiURL)
	}
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = 15 * time.Second
		hc = &http.Client{Transport: t}
	}
	m := &mediaRoutes{app: a, base: base, key: publishableKey, hc: hc}
	in := []echo.MiddlewareFunc{securityHeaders, a.loadSession, a.checkCSRF, a.requireUser}
	e.GET("/p/:slug/media/:id", m.image, in...)
	e.POST("/p/:slug/media/:id/alt", m.saveAlt, in...)
	return nil
}

// image is GET /p/:slug/media/:id: the media row is read as the person (so a row they may not
// see is a 404), then its object is streamed from storage with their token.
func (m *mediaRoutes) image(c echo.Context) error {
	a := m.app
	slug, id := c.Param("slug"), c.Param("id")
	if !slugRE.MatchString(slug) || !uuidRE.MatchString(id) {
		return c.NoContent(http.StatusNotFound)
	}
	var row struct {
		StoragePath string `json:"storage_path"`
	}
	err := a.call(c, func(token string) error {
		_, err := a.api.Get(ctx(c), token, client.From("media").Select("storage_path").
			Eq("id", id).Filter("storage_path", "like", slug+"/*").Single(), &row)
		return err
	})
	if err == nil {
		err = a.call(c, func(token string) error { return m.stream(c, token, row.StoragePath) })
	}
	if err == nil || errors.Is(err, errSessionEnded) || errors.Is(err, ctx(c).Err()) {
		return nil
	}
	if s := client.StatusOf(err); s == http.StatusNotFound || s == http.StatusForbidden {
		return c.NoContent(http.StatusNotFound)
	}
	a.log.ErrorContext(ctx(c), "handlers: media image", "route", c.Path(), "err", err)
	return c.NoContent(http.StatusBadGateway)
}

// stream fetches the object at path with token and copies the answer to the browser. A
// refusal comes back as a *client.Error, so App.call can renew an expired token and retry.
func (m *mediaRoutes) stream(c echo.Context, token, path string) error {
	u := m.base.JoinPath(append([]string{"storage", "v1", "object", "authenticated", "media"}, strings.Split(path, "/")...)...)
	req, err := http.NewRequestWithContext(ctx(c), http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("apikey", m.key)
	req.Header.Set("Authorization", "Bearer "+token)
	for _, k := range forwardedRequest {
		if v := c.Request().Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := m.hc.Do(req)
	if err != nil {
		return fmt.Errorf("handlers: fetch media: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent, http.StatusNotModified, http.StatusRequestedRangeNotSatisfiable:
	default:
		return storageError(resp)
	}
	// The session may have been renewed on the way; its cookie must leave with the headers.
	if err := m.app.saveSession(c); err != nil {
		return err
	}
	h := c.Response().Header()
	for _, k := range forwardedResponse {
		if v := resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	h.Set("Cache-Control", imageCacheControl)
	c.Response().WriteHeader(resp.StatusCode)
	// After the status line has gone, a broken transfer can only end the response early.
	_, _ = io.Copy(c.Response(), resp.Body)
	return nil
}

// storageError turns a refusal of /storage/v1 ({"statusCode","error","message"}) into the
// client's error type, so the dashboard treats it like any other refusal.
func storageError(resp *http.Response) error {
	var body struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
	return &client.Error{Status: resp.StatusCode, Code: body.Error, Message: body.Message}
}

// saveAlt is POST /p/:slug/media/:id/alt with fields alt_text and publication_id (the page to
// go back to). The update runs as the person, so row-level security decides: editors, leads
// and owners of the project may change it, and for anybody else no row changes.
func (m *mediaRoutes) saveAlt(c echo.Context) error {
	a := m.app
	slug, id, pub := c.Param("slug"), c.Param("id"), c.FormValue("publication_id")
	if !slugRE.MatchString(slug) || !uuidRE.MatchString(id) || !uuidRE.MatchString(pub) {
		return a.fail(c, errNotFound)
	}
	back := publicationURL(slug, pub) + "#media"
	alt := strings.TrimSpace(c.FormValue("alt_text"))
	if utf8.RuneCountInString(alt) > maxAltText {
		a.flash(c, layout.Flash{Kind: "error", Text: fmt.Sprintf("Alt text can be at most %d characters; it was not saved.", maxAltText)})
		return a.redirect(c, back)
	}
	var changed int
	err := a.call(c, func(token string) error {
		var err error
		changed, err = m.updateAlt(ctx(c), token, slug, id, alt)
		return err
	})
	if err != nil {
		return a.fail(c, err)
	}
	if changed == 0 {
		return a.fail(c, &client.Error{Status: http.StatusForbidden,
			Message: "only editors, leads and owners of the project can change alt text"})
	}
	a.flash(c, layout.Flash{Kind: "success", Text: "Alt text saved."})
	return a.redirect(c, back)
}

// updateAlt PATCHes the media row's alt_text through /rest/v1 and returns how many rows
// changed: zero when row-level security hid the row or refused the update.
func (m *mediaRoutes) updateAlt(ctx context.Context, token, slug, id, alt string) (int, error) {
	u := m.base.JoinPath("rest", "v1", "media")
	u.RawQuery = url.Values{"id": {"eq." + id}, "storage_path": {"like." + slug + "/*"}, "select": {"id"}}.Encode()
	body, _ := json.Marshal(map[string]string{"alt_text": alt})
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("apikey", m.key)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "return=representation")
	resp, err := m.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("handlers: update alt text: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e struct{ Code, Message string }
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
		return 0, &client.Error{Status: resp.StatusCode, Code: e.Code, Message: e.Message}
	}
	var rows []struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
		return 0, fmt.Errorf("handlers: decode alt text update: %w", err)
	}
	return len(rows), nil
}
