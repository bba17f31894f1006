package e2e

import (
	"context"
	"net"
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

// TestEditorialLoop is the whole loop in chromium, where people work: an editor writes a draft,
// writes a promo per channel watching the counter go over the limit and back under, uploads two
// images with their alt text and reorders them, and submits; a reviewer requests changes in the
// one composer; the editor revises with the reviewer's note beside the editor and resubmits;
// another reviewer approves; the lead schedules it and the scheduler publishes it. Screenshots
// of every step are saved, and the pages met on the way pass axe-core.
func TestEditorialLoop(t *testing.T) {
	env := servertest.New(t, func(c *config.Config) { c.SchedulerInterval = 500 * time.Millisecond })
	if _, err := seed.Run(t.Context(), env.DB.OwnerURL, seed.Options{MediaDir: env.Config.StorageDir}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	// Serve, as `masthead serve` does, so the scheduler loop runs beside the surfaces.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- env.Server.Serve(ctx, ln) }()
	t.Cleanup(func() { stop(); <-served })
	w := &world{env: env, url: "http://" + ln.Addr().String(), browser: newBrowser(t)}
	const title = "Night market returns to the quay"
	status := func(p *person, label string) {
		p.t.Helper()
		p.until("status "+label, `document.querySelector('#workflow [data-testid="status"]')?.textContent.trim() === `+quote(label))
	}

	ed := w.person(t, "editor@northwind.test", true)
	ed.navigate("new publication", chromedp.Navigate(w.url+"/p/northwind/publications/new"))
	ed.do("write",
		chromedp.WaitVisible(chromedp.CSS(`#title`)),
		chromedp.SendKeys(chromedp.CSS(`#title`), title),
		chromedp.SendKeys(chromedp.CSS(`#summary`), "Forty stalls, Friday nights from June."),
		chromedp.SendKeys(chromedp.CSS(`#body`), "# Night market\n\nForty stalls line the quay every Friday."),
	)
	ed.until("the live preview", `document.querySelector('#body-preview h1')?.textContent === 'Night market'`)
	ed.navigate("save", chromedp.Click(chromedp.CSS(`[data-testid="editor-save"]`)))
	ed.until("the draft", `document.querySelector('[data-testid="pub-title"]')?.textContent === `+quote(title))
	detail := ""
	if loc, err := chromedp.Run(ed.ctx, chromedp.Location()); err == nil {
		detail = loc
	}
	ed.shot("loop-01-draft")

	// Promos: the counter follows the typing, server-side.
	ed.navigate("edit", chromedp.Click(chromedp.CSS(`[data-testid="edit-link"]`)))
	ed.do("an over-long X promo", chromedp.SendKeys(chromedp.CSS(`[data-testid="promo-body-x"]`), strings.Repeat("Stalls! ", 40)))
	ed.until("the counter says it is over", `document.querySelector('[data-testid="count-x"]')?.textContent.includes('over the limit')`)
	ed.shot("loop-02-promo-over")
	ed.until("clear it", `(document.querySelector('[data-testid="promo-body-x"]').value = '') === ''`)
	ed.do("a short X promo", chromedp.SendKeys(chromedp.CSS(`[data-testid="promo-body-x"]`), "The night market is back on the quay."))
	// 37 characters, a space and the canonical link the card starts with, which X counts as 23.
	ed.until("the counter is back under", `/^\s*61 \/ 280/.test(document.querySelector('[data-testid="count-x"]')?.textContent) && !document.querySelector('[data-testid="count-x"]').textContent.includes('over')`)
	ed.navigate("save the X promo", chromedp.Click(chromedp.CSS(`[data-testid="promo-save-x"]`)))
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
		ed.do("choose "+alt,
			chromedp.SendKeys(chromedp.CSS(`#alt_text`), alt),
			chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{img}),
			chromedp.Click(chromedp.CSS(`[data-testid="upload-button"]`)),
		)
		ed.until("uploaded "+alt, `[...document.querySelectorAll('[data-testid="media-row"] img')].some(i => i.alt === `+quote(alt)+`)`)
	}
	ed.navigate("move the second up", chromedp.Click(chromedp.CSS(`[data-testid="media-row"]:nth-child(2) [data-testid="media-up"]`)))
	ed.until("the crowd first", `document.querySelector('[data-testid="media-row"] img')?.alt === 'A crowd on the quay'`)
	// With script an image can also be dragged: the first dropped on the second swaps them back.
	// The page reloads with the saved order: mark this document to wait for a fresh one.
	ed.do("drag the first onto the second", chromedp.Evaluate[chromedp.Void](`(() => {
		window.__old = true;
		const rows = document.querySelectorAll('[data-testid="media-row"]'), dt = new DataTransfer();
		rows[0].dispatchEvent(new DragEvent('dragstart', {dataTransfer: dt, bubbles: true}));
		rows[1].dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`))
	ed.until("the stalls first again, as saved", `window.__old === undefined && document.readyState === 'complete' && document.querySelector('[data-testid="flash"]')?.textContent.includes('Order saved') && document.querySelector('[data-testid="media-row"] img')?.alt === 'Stalls lit at dusk'`)
	ed.shot("loop-03-images")
	ed.axe("the editor with promos and images")

	ed.navigate("back to the draft", chromedp.Navigate(detail))
	ed.do("submit", chromedp.Click(chromedp.CSS(`[data-testid="action-submit_for_review"] button:not([formaction])`)))
	status(ed, "In review")
	ed.shot("loop-04-submitted")

	rev := w.person(t, "reviewer@northwind.test", true)
	rev.navigate("the publication", chromedp.Navigate(detail))
	rev.axe("the detail page with the composer")
	rev.do("request changes in the composer",
		chromedp.SendKeys(chromedp.CSS(`#note-review`), "Tighten the lede: say **when** it starts."),
		chromedp.Click(chromedp.CSS(`[data-testid="verdict-request_changes"]`)),
	)
	status(rev, "Changes requested")
	rev.shot("loop-05-changes-requested")

	ed.navigate("revise", chromedp.Navigate(detail+"/edit"))
	ed.until("the reviewer's note beside the editor", `document.querySelector('[data-testid="editor-notes"]')?.textContent.includes('Tighten the lede')`)
	ed.until("clear the body", `(document.querySelector('#body').value = '') === ''`)
	ed.do("the revision", chromedp.SendKeys(chromedp.CSS(`#body`), "# Night market\n\nFrom Friday 5 June, forty stalls line the quay."))
	ed.shot("loop-06-revising")
	ed.navigate("save the revision", chromedp.Click(chromedp.CSS(`[data-testid="editor-save"]`)))
	ed.until("the revised body", `document.querySelector('[data-testid="pub-body"]')?.textContent.includes('5 June')`)
	ed.do("resubmit", chromedp.Click(chromedp.CSS(`[data-testid="action-submit_for_review"] button:not([formaction])`)))
	status(ed, "In review")

	other := w.person(t, "multi@masthead.test", true)
	other.navigate("the publication", chromedp.Navigate(detail))
	other.until("changes since round 1", `document.querySelector('#changes-title') !== null`)
	other.do("approve", chromedp.Click(chromedp.CSS(`[data-testid="verdict-approve"]`)))
	status(other, "Approved")
	other.shot("loop-07-approved")

	lead := w.person(t, "lead@northwind.test", true)
	lead.navigate("the publication", chromedp.Navigate(detail))
	// Publish now asks first: a dialog with script; the page it asks on without script is
	// reached here by sending the form past htmx (form.submit skips its listeners).
	lead.navigate("the confirmation page", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="action-publish_now"]').submit()`))
	lead.until("asked before publishing", `document.querySelector('[data-testid="confirm-heading"]')?.textContent.startsWith('Publish “')`)
	lead.axe("the confirmation page")
	lead.shot("loop-075-confirm")
	lead.navigate("cancel", chromedp.Click(chromedp.CSS(`.confirm a.btn`)))
	status(lead, "Approved")
	// Seconds ahead, so the scheduler's publishing is seen without waiting for a minute:
	// the field takes seconds once its step allows them.
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	// Far enough ahead that a slow machine still schedules it in the future.
	when := time.Now().Add(12 * time.Second).In(london).Format("2006-01-02T15:04:05")
	lead.until("a time with seconds", `(() => { const f = document.querySelector('#when-schedule'); f.step = '1'; f.value = `+quote(when)+`; return f.value === `+quote(when)+`; })()`)
	lead.do("schedule", chromedp.Click(chromedp.CSS(`[data-testid="action-schedule"] button:not([formaction])`)))
	status(lead, "Scheduled")
	lead.shot("loop-08-scheduled")

	// The scheduler publishes it; the page says so once reloaded.
	own := env.DB.Owner(t)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var st string
		if err := own.QueryRow(context.Background(), `select status from publications where title = $1`, title).Scan(&st); err != nil {
			t.Fatal(err)
		}
		if st == "published" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scheduler did not publish it: %s", st)
		}
		time.Sleep(100 * time.Millisecond) // polling the database for a condition
	}
	lead.navigate("reload", chromedp.Reload())
	status(lead, "Published")
	lead.shot("loop-09-published")
}
