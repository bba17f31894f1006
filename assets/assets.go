// Package assets embeds the dashboard's static files (vendored htmx, our script and styles) and
// serves them under content-hashed names, so they can be cached forever and a new build can
// never be served stale. It imports no masthead package.
package assets

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed htmx.min.js app.js app.css
var files embed.FS

// Prefix is where the handler is mounted.
const Prefix = "/assets/"

type asset struct {
	body  []byte
	ctype string
	etag  string
}

var (
	byHashed = map[string]asset{}  // "app.1a2b3c4d5e.css" → file
	hashed   = map[string]string{} // "app.css" → "/assets/app.1a2b3c4d5e.css"
	built    = time.Now()
)

func init() {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		body, err := files.ReadFile(e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])[:10]
		ext := path.Ext(e.Name())
		name := strings.TrimSuffix(e.Name(), ext) + "." + h + ext
		byHashed[name] = asset{body: body, ctype: mime.TypeByExtension(ext), etag: `"` + h + `"`}
		hashed[e.Name()] = Prefix + name
	}
}

// Path is the URL of an embedded file by its plain name ("app.css"). An unknown name panics:
// it is a typo in a template, found by the first test that renders the page.
func Path(name string) string {
	p, ok := hashed[name]
	if !ok {
		panic("assets: no file " + name)
	}
	return p
}

// Handler serves the hashed files; any other name under Prefix is a 404.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := byHashed[strings.TrimPrefix(r.URL.Path, Prefix)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("ETag", a.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, "", built, bytes.NewReader(a.body))
	})
}
