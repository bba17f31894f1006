package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// demoMedia is one media item of a project's demo data with a publication showing it.
type demoMedia struct {
	id, path, publication, alt string
}

func (s *stack) media(t *testing.T, project string) demoMedia {
	t.Helper()
	var m demoMedia
	err := s.env.DB.Owner(t).QueryRow(context.Background(), `
		select m.id::text, m.storage_path, pm.publication_id::text, m.alt_text
		from media m join projects p on p.id = m.project_id join publication_media pm on pm.media_id = m.id
		where p.slug = $1 and m.kind = 'image' order by m.storage_path limit 1`, project).
		Scan(&m.id, &m.path, &m.publication, &m.alt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (s *stack) altText(t *testing.T, id string) string {
	t.Helper()
	var alt string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select alt_text from media where id = $1`, id).Scan(&alt); err != nil {
		t.Fatal(err)
	}
	return alt
}

func TestMediaImage(t *testing.T) {
	s := newStack(t)
	nw, acme := s.media(t, "northwind"), s.media(t, "acme-travel")
	file, err := os.ReadFile(filepath.Join(s.env.Config.StorageDir, filepath.FromSlash(nw.path)))
	if err != nil {
		t.Fatal(err)
	}
	viewer := s.browser(t)
	viewer.login("viewer@northwind.test")
	src := "/p/northwind/media/" + nw.id

	first := viewer.get(src)
	if first.status != http.StatusOK || !bytes.Equal([]byte(first.body), file) {
		t.Fatalf("image: status %d, %d bytes (file has %d)", first.status, len(first.body), len(file))
	}
	for k, want := range map[string]string{
		"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff", "Accept-Ranges": "bytes",
	} {
		if got := first.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if ct := first.header.Get("Content-Type"); !strings.HasPrefix(ct, "image/") {
		t.Errorf("Content-Type %q", ct)
	}
	etag := first.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag passed through")
	}

	t.Run("revalidation is a 304", func(t *testing.T) {
		if p := viewer.get(src, "If-None-Match", etag); p.status != http.StatusNotModified || p.body != "" {
			t.Fatalf("status %d", p.status)
		}
	})
	t.Run("ranges pass through", func(t *testing.T) {
		p := viewer.get(src, "Range", "bytes=0-9")
		if p.status != http.StatusPartialContent || p.body != string(file[:10]) || !strings.HasPrefix(p.header.Get("Content-Range"), "bytes 0-9/") {
			t.Fatalf("status %d, %q", p.status, p.header.Get("Content-Range"))
		}
	})
	t.Run("another tenant's image is not found", func(t *testing.T) {
		if p := viewer.get("/p/acme-travel/media/" + acme.id); p.status != http.StatusNotFound {
			t.Fatalf("status %d", p.status)
		}
		// Nor through the person's own project slug.
		if p := viewer.get("/p/northwind/media/" + acme.id); p.status != http.StatusNotFound {
			t.Fatalf("status %d", p.status)
		}
	})
	t.Run("an image under the wrong project is not found", func(t *testing.T) {
		multi := s.browser(t)
		multi.login("multi@masthead.test")
		if p := multi.get("/p/acme-travel/media/" + nw.id); p.status != http.StatusNotFound {
			t.Fatalf("status %d", p.status)
		}
		if p := multi.get(src); p.status != http.StatusOK {
			t.Fatalf("own project: status %d", p.status)
		}
	})
	t.Run("malformed ids are not found", func(t *testing.T) {
		for _, path := range []string{"/p/northwind/media/not-a-uuid", "/p/North_wind/media/" + nw.id} {
			if p := viewer.get(path); p.status != http.StatusNotFound {
				t.Errorf("%s: status %d", path, p.status)
			}
		}
	})
	t.Run("signed out goes to the sign-in page", func(t *testing.T) {
		p := s.browser(t).get(src)
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "/login") {
			t.Fatalf("status %d to %q", p.status, p.location())
		}
	})
	t.Run("an expired access token is renewed on the way", func(t *testing.T) {
		s.clock.Advance(2 * time.Hour)
		if p := viewer.get(src); p.status != http.StatusOK || len(p.body) != len(file) {
			t.Fatalf("status %d", p.status)
		}
	})
}

func TestMediaAltText(t *testing.T) {
	s := newStack(t)
	m := s.media(t, "northwind")
	action := "/p/northwind/media/" + m.id + "/alt"
	form := func(alt string) url.Values {
		return url.Values{"alt_text": {alt}, "publication_id": {m.publication}}
	}

	editor := s.browser(t)
	editor.login("editor@northwind.test")
	// The detail page offers the form to editors only; everyone gets the no-JS lightbox.
	detail := "/p/northwind/publications/" + m.publication
	d := editor.get(detail)
	form0 := d.doc.Find(`form[data-testid="alt-form"][action="` + action + `"]`)
	if form0.Length() != 1 || form0.Find(`input[name="_csrf"]`).Length() != 1 || form0.Find(`label[for]`).Length() != 1 {
		t.Fatalf("editor: alt-text form for %s missing or incomplete", m.id)
	}
	// Its button looks like the page's others: every button on the page is a .btn, the class
	// the stylesheet the page links gives its look.
	if form0.Find(`button[type="submit"].btn`).Length() != 1 {
		t.Error("the alt-text form's button is not a .btn")
	}
	if plain := d.doc.Find(`button:not(.btn)`); plain.Length() != 0 {
		t.Errorf("%d buttons on the page are not .btn, the first %q", plain.Length(), strings.TrimSpace(plain.First().Text()))
	}
	if href, _ := d.doc.Find(`link[rel="stylesheet"]`).Attr("href"); !strings.Contains(editor.get(href).body, "\n.btn {") {
		t.Errorf("the stylesheet %q has no rule for .btn", href)
	}
	if href, _ := d.doc.Find(`a[data-testid="media-open"]`).First().Attr("href"); !strings.HasPrefix(href, "#view-") ||
		d.doc.Find(`[data-testid="lightbox"][id="`+strings.TrimPrefix(href, "#")+`"] img`).Length() != 1 {
		t.Fatalf("thumbnail link %q does not open a lightbox", href)
	}
	viewer := s.browser(t)
	viewer.login("viewer@northwind.test")
	if n := viewer.get(detail).doc.Find(`form[data-testid="alt-form"]`).Length(); n != 0 {
		t.Fatalf("viewer is offered %d alt-text forms", n)
	}

	p := editor.post(action, form("  A harbour at dawn, boats at anchor  "))
	if p.status != http.StatusSeeOther || p.location() != "/p/northwind/publications/"+m.publication+"#media" {
		t.Fatalf("editor: status %d to %q", p.status, p.location())
	}
	if got := s.altText(t, m.id); got != "A harbour at dawn, boats at anchor" {
		t.Fatalf("alt text %q", got)
	}

	for _, tc := range []struct {
		name, email string
		status      int
	}{
		{"viewer may not", "viewer@northwind.test", http.StatusForbidden},
		{"reviewer may not", "reviewer@northwind.test", http.StatusForbidden},
		{"another tenant's editor may not", "editor@acme.test", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := s.browser(t)
			b.login(tc.email)
			if p := b.post(action, form("vandalised")); p.status != tc.status {
				t.Fatalf("status %d, want %d", p.status, tc.status)
			}
			if s.altText(t, m.id) == "vandalised" {
				t.Fatal("alt text changed")
			}
		})
	}
	t.Run("too long is refused", func(t *testing.T) {
		p := editor.post(action, form(strings.Repeat("x", 1001)))
		if p.status != http.StatusSeeOther || s.altText(t, m.id) != "A harbour at dawn, boats at anchor" {
			t.Fatalf("status %d, alt %q", p.status, s.altText(t, m.id))
		}
	})
	t.Run("without the CSRF token nothing changes", func(t *testing.T) {
		f := form("forged")
		f.Set("_csrf", "wrong")
		if p := editor.post(action, f); p.status != http.StatusForbidden || s.altText(t, m.id) == "forged" {
			t.Fatalf("status %d", p.status)
		}
	})
}
