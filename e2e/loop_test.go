package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"masthead/internal/config"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

// TestEditorialLoop is the whole loop in chromium, where people work, with and without
// JavaScript: an editor writes a draft, writes a promo per channel and sees the counter go over
// the limit and back under (as they type with script, on saving without), uploads two images
// with their alt text and reorders them, and submits; a reviewer requests changes in the one
// composer; the editor revises with the reviewer's note beside the editor and resubmits;
// another reviewer approves; the lead, asked first before publishing now, schedules it instead
// and the scheduler publishes it. Screenshots of every step are saved, and the pages met on
// the way pass axe-core.
func TestEditorialLoop(t *testing.T) {
	env := servertest.New(t, func(c *config.Config) { c.SchedulerInterval = 500 * time.Millisecond })
	if _, err := seed.Run(t.Context(), env.DB.OwnerURL, seed.Options{MediaDir: env.Config.StorageDir}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	// Serve, as `masthead serve` does, so the scheduler loop runs beside the surfaces.
	w := &world{env: env, url: env.Loopback(t), browser: newBrowser(t)}
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "with JavaScript", false: "without JavaScript"}[js]
		t.Run(name, func(t *testing.T) { w.loop(t, js) })
	}
}

func (w *world) loop(t *testing.T, js bool) {
	title := map[bool]string{true: "Night market returns to the quay", false: "Night market returns, without script"}[js]
	shot := func(p *person, name string) { p.shot("loop-" + name) }
	status := func(p *person, label string) {
		p.t.Helper()
		p.until("status "+label, `document.querySelector('#workflow [data-testid="status"]')?.textContent.trim() === `+quote(label))
	}
	// press presses a button: with script some answers swap part of the page, without every
	// press loads a page.
	press := func(p *person, what, sel string) {
		p.t.Helper()
		if js {
			p.do(what, chromedp.Click(chromedp.CSS(sel)))
		} else {
			p.navigate(what, chromedp.Click(chromedp.CSS(sel)))
		}
	}

	ed := w.person(t, "editor@northwind.test", js)
	ed.navigate("new publication", chromedp.Navigate(w.url+"/p/northwind/publications/new"))
	ed.do("write",
		chromedp.WaitVisible(chromedp.CSS(`#title`)),
		chromedp.SendKeys(chromedp.CSS(`#title`), title),
		chromedp.SendKeys(chromedp.CSS(`#summary`), "Forty stalls, Friday nights from June."),
		chromedp.SendKeys(chromedp.CSS(`#body`), "# Night market\n\nForty stalls line the quay every Friday."),
	)
	if js {
		ed.until("the live preview", `document.querySelector('#body-preview h1')?.textContent === 'Night market'`)
	}
	ed.navigate("save", chromedp.Click(chromedp.CSS(`[data-testid="editor-save"]`)))
	ed.until("the draft", `document.querySelector('[data-testid="pub-title"]')?.textContent === `+quote(title))
	detail := ""
	if loc, err := chromedp.Run(ed.ctx, chromedp.Location()); err == nil {
		detail = loc
	}
	shot(ed, "01-draft")

	// Promos: the counter follows the typing (server-side) with script, the save without.
	ed.navigate("edit", chromedp.Click(chromedp.CSS(`[data-testid="edit-link"]`)))
	ed.do("an over-long X promo", chromedp.SendKeys(chromedp.CSS(`[data-testid="promo-body-x"]`), strings.Repeat("Stalls! ", 40)))
	if !js {
		ed.navigate("save it as it is", chromedp.Click(chromedp.CSS(`[data-testid="promo-save-x"]`)))
	}
	ed.until("the counter says it is over", `document.querySelector('[data-testid="count-x"]')?.textContent.includes('over the limit')`)
	shot(ed, "02-promo-over")
	ed.spaced(".editor-side")
	ed.until("clear it", `(document.querySelector('[data-testid="promo-body-x"]').value = '') === ''`)
	ed.do("a short X promo", chromedp.SendKeys(chromedp.CSS(`[data-testid="promo-body-x"]`), "The night market is back on the quay."))
	if !js {
		ed.navigate("save the X promo", chromedp.Click(chromedp.CSS(`[data-testid="promo-save-x"]`)))
	}
	// 37 characters, a space and the canonical link the card starts with, which X counts as 23.
	ed.until("the counter is back under", `/^\s*61 \/ 280/.test(document.querySelector('[data-testid="count-x"]')?.textContent) && !document.querySelector('[data-testid="count-x"]').textContent.includes('over')`)
	if js {
		ed.navigate("save the X promo", chromedp.Click(chromedp.CSS(`[data-testid="promo-save-x"]`)))
	}
	for _, ch := range []string{"bluesky", "mastodon", "linkedin", "threads"} {
		ed.do("the "+ch+" promo", chromedp.SendKeys(chromedp.CSS(`[data-testid="promo-body-`+ch+`"]`), "Night market: Fridays on the quay."))
		ed.navigate("save the "+ch+" promo", chromedp.Click(chromedp.CSS(`[data-testid="promo-save-`+ch+`"]`)))
	}
	ed.until("five promos saved", `document.querySelectorAll('[data-testid^="promo-remove-"]').length === 5`)

	// Two images, then the second moved up.
	dir := t.TempDir()
	for i, alt := range []string{"Stalls lit at dusk", "A crowd on the quay"} {
		img := filepath.Join(dir, alt+".png")
		if err := os.WriteFile(img, noisyPNG(t, 60+i, 40), 0o644); err != nil {
			t.Fatal(err)
		}
		ed.do("choose "+alt, chromedp.SendKeys(chromedp.CSS(`#alt_text`), alt), chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{img}))
		press(ed, "upload "+alt, `[data-testid="upload-button"]`)
		ed.until("uploaded "+alt, `[...document.querySelectorAll('[data-testid="media-row"] img')].some(i => i.alt === `+quote(alt)+`)`)
	}
	ed.navigate("move the second up", chromedp.Click(chromedp.CSS(`[data-testid="media-row"]:nth-child(2) [data-testid="media-up"]`)))
	ed.until("the crowd first", `document.querySelector('[data-testid="media-row"] img')?.alt === 'A crowd on the quay'`)
	if js {
		// With script an image can also be dragged: the first dropped on the second swaps them
		// back. The page reloads with the saved order: mark this document to wait for a fresh one.
		ed.do("drag the first onto the second", chromedp.Evaluate[chromedp.Void](`(() => {
			window.__old = true;
			const rows = document.querySelectorAll('[data-testid="media-row"]'), dt = new DataTransfer();
			rows[0].dispatchEvent(new DragEvent('dragstart', {dataTransfer: dt, bubbles: true}));
			rows[1].dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
		})()`))
		ed.until("the stalls first again, as saved", `window.__old === undefined && document.readyState === 'complete' && document.querySelector('[data-testid="flash"]')?.textContent.includes('Order saved') && document.querySelector('[data-testid="media-row"] img')?.alt === 'Stalls lit at dusk'`)
		ed.axe("the editor with promos and images")
	}
	shot(ed, "03-images")

	ed.navigate("back to the draft", chromedp.Navigate(detail))
	press(ed, "submit", `[data-testid="action-submit_for_review"] button:not([formaction])`)
	status(ed, "In review")
	shot(ed, "04-submitted")

	rev := w.person(t, "reviewer@northwind.test", js)
	rev.navigate("the publication", chromedp.Navigate(detail))
	if js {
		rev.axe("the detail page with the composer")
	}
	rev.do("a note in the composer", chromedp.SendKeys(chromedp.CSS(`#note-review`), "Tighten the lede: say **when** it starts."))
	press(rev, "request changes", `[data-testid="verdict-request_changes"]`)
	status(rev, "Changes requested")
	shot(rev, "05-changes-requested")

	ed.navigate("revise", chromedp.Navigate(detail+"/edit"))
	ed.until("the reviewer's note beside the editor", `document.querySelector('[data-testid="editor-notes"]')?.textContent.includes('Tighten the lede')`)
	ed.until("clear the body", `(document.querySelector('#body').value = '') === ''`)
	ed.do("the revision", chromedp.SendKeys(chromedp.CSS(`#body`), "# Night market\n\nFrom Friday 5 June, forty stalls line the quay."))
	shot(ed, "06-revising")
	ed.navigate("save the revision", chromedp.Click(chromedp.CSS(`[data-testid="editor-save"]`)))
	ed.until("the revised body", `document.querySelector('[data-testid="pub-body"]')?.textContent.includes('5 June')`)
	press(ed, "resubmit", `[data-testid="action-submit_for_review"] button:not([formaction])`)
	status(ed, "In review")

	other := w.person(t, "multi@masthead.test", js)
	other.navigate("the publication", chromedp.Navigate(detail))
	other.until("changes since round 1", `document.querySelector('#changes-title') !== null`)
	press(other, "approve", `[data-testid="verdict-approve"]`)
	status(other, "Approved")
	shot(other, "07-approved")

	lead := w.person(t, "lead@northwind.test", js)
	lead.navigate("the publication", chromedp.Navigate(detail))
	// Publish now asks first: a dialog with script, a page of its own without. The page is
	// reached with script too by sending the form past htmx (form.submit skips its listeners).
	if js {
		lead.navigate("the confirmation page", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="action-publish_now"]').submit()`))
	} else {
		lead.navigate("publish now", chromedp.Click(chromedp.CSS(`[data-testid="action-publish_now"] button:not([formaction])`)))
	}
	lead.until("asked before publishing", `document.querySelector('[data-testid="confirm-heading"]')?.textContent.startsWith('Publish “')`)
	if js {
		lead.axe("the confirmation page")
	}
	shot(lead, "075-confirm")
	lead.navigate("cancel", chromedp.Click(chromedp.CSS(`.confirm a.btn`)))
	status(lead, "Approved")
	// Seconds ahead, so the scheduler's publishing is seen without waiting for a minute: the
	// field takes seconds once its step allows them (set by DevTools, with script or without).
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	// Far enough ahead that a slow machine still schedules it in the future.
	when := time.Now().Add(12 * time.Second).In(london).Format("2006-01-02T15:04:05")
	// A time at :00 seconds reads back without them ("…T17:36"), as the browser writes whole
	// minutes: either form is the time set (the test failed whenever now+12 s fell on :00).
	lead.until("a time with seconds", `(() => { const f = document.querySelector('#when-schedule'); f.step = '1'; f.value = `+quote(when)+`; return f.value === `+quote(when)+` || f.value + ':00' === `+quote(when)+`; })()`)
	press(lead, "schedule", `[data-testid="action-schedule"] button:not([formaction])`)
	status(lead, "Scheduled")
	shot(lead, "08-scheduled")

	// The scheduler publishes it; the page says so once reloaded. Each run of the loop is
	// awaited in the service's log, then the publication is looked at.
	own := w.env.DB.Owner(t)
	runs := len(w.env.Logs.Lines(`"msg":"scheduler: ran"`))
	first := runs
	for {
		var st string
		if err := own.QueryRow(context.Background(), `select status from publications where title = $1`, title).Scan(&st); err != nil {
			t.Fatal(err)
		}
		if st == "published" {
			break
		}
		if runs-first > 120 { // a minute of runs at 500 ms: far past the 12 s it was scheduled ahead
			t.Fatalf("the scheduler did not publish it: %s", st)
		}
		runs++
		w.env.Logs.WaitLines(t, time.Minute, runs, `"msg":"scheduler: ran"`)
	}
	lead.navigate("reload", chromedp.Reload())
	status(lead, "Published")
	shot(lead, "09-published")
}
