package e2e

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

// TestWriteInTheBrowser: an editor writes a new publication in chromium, with and without
// JavaScript: from the queue to the editor, a preview that renders the markdown (live as they
// type with JS, with the Preview button without), unsaved text that survives an accidental
// reload (JS), the saved draft, then a revision through Edit. Every step is screenshotted, the
// editor passes axe-core, and on a phone it does not scroll sideways.
func TestWriteInTheBrowser(t *testing.T) {
	env := servertest.New(t, nil)
	if _, err := seed.Run(t.Context(), env.DB.OwnerURL, seed.Options{MediaDir: env.Config.StorageDir}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	w := &world{env: env, url: env.URL, browser: newBrowser(t)}
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "with JavaScript", false: "without JavaScript"}[js]
		t.Run(name, func(t *testing.T) { w.write(t, js) })
	}
}

func (w *world) write(t *testing.T, js bool) {
	ed := w.person(t, "editor@northwind.test", js)
	title := map[bool]string{true: "Lantern walk", false: "Lantern walk without script"}[js]
	ed.navigate("the queue", chromedp.Navigate(w.url+"/p/northwind/queue"))
	ed.navigate("new publication", chromedp.Click(chromedp.CSS(`[data-testid="new-publication"]`)))
	ed.do("the editor", chromedp.WaitVisible(chromedp.CSS(`[data-testid="editor-heading"]`)))
	ed.do("write",
		chromedp.SendKeys(chromedp.CSS(`#title`), title),
		chromedp.SendKeys(chromedp.CSS(`#summary`), "Lanterns along the quay on Friday."),
		chromedp.SendKeys(chromedp.CSS(`#body`), "# The walk\n\nBring a *lantern*."),
	)
	if js {
		ed.until("the live preview", `document.querySelector('#body-preview em')?.textContent === 'lantern'`)
		ed.shot("write-01-live-preview")
		ed.navigate("an accidental reload", chromedp.Reload())
		ed.do("the restored text", chromedp.WaitVisible(chromedp.CSS(`[data-testid="draft-restored"]`)))
		ed.until("the body restored, and its preview", `document.querySelector('#body').value === '# The walk\n\nBring a *lantern*.' && document.querySelector('#body-preview em')?.textContent === 'lantern'`)
		ed.shot("write-02-restored")
	} else {
		ed.navigate("preview", chromedp.Click(chromedp.CSS(`button[name="preview"]`)))
		ed.until("the preview", `document.querySelector('#body-preview em')?.textContent === 'lantern' && document.querySelector('#title').value === `+quote(title))
		ed.shot("write-01-preview")
	}
	if js { // axe runs in the page's script, which is off in the other run; the page is the same
		ed.axe("the editor")
	}
	ed.navigate("save", chromedp.Click(chromedp.CSS(`[data-testid="editor-save"]`)))
	ed.until("the new draft's page", `document.querySelector('[data-testid="pub-title"]')?.textContent === `+quote(title))
	ed.shot("write-03-created")

	ed.navigate("edit", chromedp.Click(chromedp.CSS(`[data-testid="edit-link"]`)))
	ed.until("the editor with the saved text", `document.querySelector('[data-testid="editor-heading"]')?.textContent === `+quote("Edit: "+title))
	// Clearing a field is done by DevTools (it works with the page's script off too), then
	// the new text is typed as a person types it.
	ed.until("clear the body", `(document.querySelector('#body').value = '') === ''`)
	// An image, with its alt text. The file is larger than a form may be (1 MB), so the
	// service's body limit must let the dashboard's upload through as it does /storage/v1's.
	img := filepath.Join(t.TempDir(), "harbour.png")
	if err := os.WriteFile(img, noisyPNG(t, 700, 500), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(img); st.Size() < 1<<20 {
		t.Fatalf("the test image is only %d bytes", st.Size())
	}
	ed.do("choose an image",
		chromedp.SendKeys(chromedp.CSS(`#alt_text`), "Lanterns reflected in the harbour"),
		chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{img}),
	)
	if js { // sent by script, with its progress; the page then follows the answer's redirect
		ed.do("upload", chromedp.Click(chromedp.CSS(`[data-testid="upload-button"]`)))
	} else {
		ed.navigate("upload", chromedp.Click(chromedp.CSS(`[data-testid="upload-button"]`)))
	}
	ed.until("the image in the editor", `document.querySelector('[data-testid="media-row"] img')?.alt === 'Lanterns reflected in the harbour'`)
	ed.shot("write-035-image")
	if js {
		// "— or drop it here" is shown only with script, in a span laid out as a flex box,
		// which drops a space it starts with: the label once read "50 MB)— or drop it here".
		gap, err := chromedp.Run(ed.ctx, chromedp.Evaluate[float64](`(() => {
			const label = document.querySelector('label[for="file"]'), drop = label.querySelector('.js-only');
			const text = label.firstChild, close = text.textContent.lastIndexOf(')');
			const paren = document.createRange();
			paren.setStart(text, close);
			paren.setEnd(text, close + 1);
			return drop.getBoundingClientRect().left - paren.getBoundingClientRect().right;
		})()`))
		if err != nil || gap < 2 {
			t.Errorf("the file field's \"or drop it here\" sits %.1f px from the words before it, want a space (%v)", gap, err)
		}
	}
	ed.do("revise", chromedp.SendKeys(chromedp.CSS(`#body`), "# The walk\n\nBring a lantern and warm socks."))
	ed.navigate("save the revision", chromedp.Click(chromedp.CSS(`[data-testid="editor-save"]`)))
	ed.until("the revised body", `document.querySelector('[data-testid="pub-body"]')?.textContent.includes('warm socks')`)
	ed.shot("write-04-revised")

	// On a phone the editor fits the width.
	ed.navigate("edit on a phone", chromedp.Click(chromedp.CSS(`[data-testid="edit-link"]`)))
	ed.until("the editor", `document.querySelector('[data-testid="editor-heading"]') !== null`)
	ed.do("phone viewport", chromedp.EmulateViewport(390, 844))
	ed.until("no sideways scroll", `document.documentElement.scrollWidth <= window.innerWidth`)
	ed.shot("write-05-phone")
	// On a phone the status and actions come before the article, and the queue's filters fold
	// behind one button (with script; without, they stay open and the page still works).
	ed.navigate("the draft on a phone", chromedp.Click(chromedp.CSS(`.crumbs a`)))
	ed.until("status and actions above the article", `document.querySelector('#workflow').getBoundingClientRect().top < document.querySelector('[data-testid="pub-body"]').getBoundingClientRect().top && document.documentElement.scrollWidth <= window.innerWidth`)
	ed.shot("write-06-phone-detail")
	ed.navigate("the queue on a phone", chromedp.Navigate(w.url+"/p/northwind/queue"))
	if js {
		ed.until("filters folded", `document.querySelector('[data-testid="filters-box"]').open === false && document.querySelector('[data-testid="filters-box"] summary').offsetHeight > 0`)
	} else {
		ed.until("filters open without script", `document.querySelector('[data-testid="filters-box"]').open === true`)
	}
	ed.until("the queue without sideways scroll", `document.documentElement.scrollWidth <= window.innerWidth`)
	ed.shot("write-07-phone-queue")
	ed.do("desktop viewport", chromedp.EmulateReset())
}

// noisyPNG is a w×h PNG of noise, which compresses badly: a large file from a small image.
func noisyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// quote is s as a JavaScript string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
