package handlers_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// pngOf is a w×h PNG.
func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 13), uint8((x ^ y) * 31), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload posts the editor's upload form: alt text and one file of the given type.
func (b *browser) upload(path, alt, name, ctype string, data []byte) page {
	b.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", b.csrf)
	_ = w.WriteField("alt_text", alt)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", ctype)
	part, _ := w.CreatePart(h)
	_, _ = part.Write(data)
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

// TestMediaInTheEditor: an editor uploads images as themselves with their alt text, which
// attaches them in order; moves one up; detaches one. A missing alt text, a type the storage
// does not take, or content that is not the declared image is refused in words and nothing is
// attached; a viewer's forged upload stores nothing.
func TestMediaInTheEditor(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("editor@northwind.test")
	p := b.post("/p/northwind/publications/new", url.Values{"title": {"Pictures"}, "summary": {"s"}, "body": {"b"}})
	base := p.location()
	id := strings.TrimPrefix(base, "/p/northwind/publications/")
	attached := func() []string {
		rows, err := s.env.DB.Owner(t).Query(context.Background(), `select m.alt_text from publication_media pm join media m on m.id = pm.media_id
			where pm.publication_id = $1 order by pm.position`, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var alt string
			if err := rows.Scan(&alt); err != nil {
				t.Fatal(err)
			}
			out = append(out, alt)
		}
		return out
	}
	// The file field says what it takes, and (with JS) that a file may be dropped instead.
	if got := strings.Join(strings.Fields(b.get(base+"/edit").text(`label[for="file"]`)), " "); got != "Image (PNG, JPEG, GIF or WebP, up to 50 MB) — or drop it here" {
		t.Errorf("the file field reads %q", got)
	}
	for _, alt := range []string{"A red boat", "A blue boat"} {
		if p := b.upload(base+"/media", alt, "boat.png", "image/png", pngOf(t, 40, 30)); p.status != http.StatusSeeOther {
			t.Fatalf("upload %q: %d %s", alt, p.status, p.text(`[data-testid="media-notice"]`))
		}
	}
	if got := strings.Join(attached(), ","); got != "A red boat,A blue boat" {
		t.Fatalf("attached: %s", got)
	}
	e := b.get(base + "/edit")
	if e.count(`[data-testid="media-row"]`) != 2 || e.doc.Find(`[data-testid="media-row"] img`).First().AttrOr("alt", "") != "A red boat" {
		t.Fatalf("the editor shows %d images", e.count(`[data-testid="media-row"]`))
	}
	second := e.doc.Find(`[data-testid="media-row"]`).Eq(1)
	move, _ := second.Find(`form`).First().Attr("action")
	if p := b.post(move, url.Values{"dir": {"up"}}); p.status != http.StatusSeeOther {
		t.Fatalf("move up: %d", p.status)
	}
	if got := strings.Join(attached(), ","); got != "A blue boat,A red boat" {
		t.Errorf("after moving up: %s", got)
	}
	// The order a drag sends (app.js): every image's id in the new order.
	e = b.get(base + "/edit")
	var ids []string
	e.doc.Find(`[data-testid="media-row"]`).Each(func(_ int, sel *goquery.Selection) { ids = append(ids, sel.AttrOr("data-media-id", "")) })
	if p := b.post(base+"/media/order", url.Values{"order": {ids[1] + "," + ids[0]}}); p.status != http.StatusSeeOther {
		t.Fatalf("order: %d", p.status)
	}
	if got := strings.Join(attached(), ","); got != "A red boat,A blue boat" {
		t.Errorf("after the dragged order: %s", got)
	}
	if p := b.post(base+"/media/order", url.Values{"order": {"x,y"}}); p.status != http.StatusBadRequest {
		t.Errorf("an order that is not ids: %d", p.status)
	}
	if p := b.post(base+"/media/order", url.Values{"order": {ids[0]}}); p.status != http.StatusSeeOther || !strings.Contains(b.get(base+"/edit").text(`[data-testid="flash"]`), "changed meanwhile") {
		t.Errorf("an order that leaves an image out is refused in words")
	}
	if got := strings.Join(attached(), ","); got != "A red boat,A blue boat" {
		t.Errorf("a refused order changed it: %s", got)
	}
	detach, _ := b.get(base + "/edit").doc.Find(`[data-testid="media-row"]`).Last().Find(`form`).Last().Attr("action")
	if p := b.post(detach, nil); p.status != http.StatusSeeOther {
		t.Fatalf("detach: %d", p.status)
	}
	if got := strings.Join(attached(), ","); got != "A red boat" {
		t.Errorf("after detaching: %s", got)
	}

	for _, tc := range []struct {
		name, alt, ctype string
		data             []byte
		words            string
	}{
		{"no alt text", " ", "image/png", pngOf(t, 10, 10), "Describe the image"},
		{"a type the storage does not take", "A document", "application/pdf", []byte("%PDF-1.4"), "Only PNG, JPEG, GIF and WebP"},
		{"content that is not the declared image", "Not a picture", "image/png", []byte("hello, not a png"), "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.upload(base+"/media", tc.alt, "x", tc.ctype, tc.data)
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.text(`[data-testid="media-notice"]`), tc.words) {
				t.Errorf("%d %q", p.status, p.text(`[data-testid="media-notice"]`))
			}
			if p.doc.Find(`#alt_text`).AttrOr("value", "") != strings.TrimSpace(tc.alt) {
				t.Error("the alt text typed was not kept")
			}
			if got := strings.Join(attached(), ","); got != "A red boat" {
				t.Errorf("a refused upload changed the images: %s", got)
			}
		})
	}

	viewer := s.browser(t)
	viewer.login("viewer@northwind.test")
	viewer.get(base)
	var before int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from media`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if p := viewer.upload(base+"/media", "Forged", "f.png", "image/png", pngOf(t, 10, 10)); p.status == http.StatusOK {
		t.Errorf("a viewer's upload: %d", p.status)
	}
	var after int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from media`).Scan(&after); err != nil || after != before {
		t.Errorf("a viewer's forged upload stored %d media rows", after-before)
	}
}
