package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"masthead/internal/pg/pgtest"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
	"masthead/internal/testwait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// chromiumPath is Debian's chromium; `make test` installs it when missing.
const chromiumPath = "/usr/bin/chromium"

// artifacts is where screenshots are saved (gitignored).
const artifacts = "artifacts"

// newBrowser starts one headless chromium for the test with a throwaway profile.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("chromium is missing at %s: run `make deps-browser` (apt-get install -y chromium)", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// person is one user in their own browser context (own cookies), optionally with script off.
type person struct {
	t    *testing.T
	ctx  context.Context
	base string
	js   bool
	name string
}

func (w *world) person(t *testing.T, email string, js bool) *person {
	t.Helper()
	ctx, cancel := chromedp.NewContext(w.browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	if !js {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
	}
	p := &person{t: t, ctx: ctx, base: w.url, js: js, name: strings.Split(email, "@")[0]}
	p.do("sign in "+email,
		chromedp.Navigate(w.url+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.SendKeys(chromedp.CSS(`#password`), seed.DefaultPassword),
		chromedp.Click(chromedp.CSS(`[data-testid="login-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="user"]`)),
	)
	return p
}

// navigate runs steps that load a new page (a link, a form without htmx, a key that follows a
// link) and waits for that page's response, so the next step can never act on the old page.
// The caller then asserts something only the new page shows.
func (p *person) navigate(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	res, err := chromedp.RunResponse(p.ctx, steps...)
	if err != nil {
		p.t.Fatalf("%s (%s): %v", what, p.name, err)
	}
	if res == nil {
		p.t.Fatalf("%s (%s): no page was loaded", what, p.name)
	}
	if res.Status >= 400 {
		p.t.Fatalf("%s (%s): %s answered %d", what, p.name, res.URL, res.Status)
	}
}

// until evaluates expr until it is true, through page loads (an evaluation that meets a
// navigation is simply asked again), for at most 30 s.
func (p *person) until(what, expr string) {
	p.t.Helper()
	testwait.Until(p.t, 30*time.Second, fmt.Sprintf("%s (%s): %s", what, p.name, expr), func() (bool, string) {
		ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			return false, err.Error()
		}
		return ok, ""
	})
}

func (p *person) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s (%s): %v", what, p.name, err)
	}
}

// shot saves a full-page screenshot as artifacts/<name>.png.
func (p *person) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		p.t.Fatal(err)
	}
	mode := "js"
	if !p.js {
		mode = "nojs"
	}
	if err := os.WriteFile(filepath.Join(artifacts, mode+"-"+name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// spaced fails the test when two neighbouring children of the element sel names touch: each
// keeps at least 8 px below the one before it (the readiness card once sat against the article).
func (p *person) spaced(sel string) {
	p.t.Helper()
	touching, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`(() => {
		const kids = [...document.querySelector(`+strconv.Quote(sel)+`).children].filter(k => k.getBoundingClientRect().height > 0);
		const out = [];
		for (let i = 1; i < kids.length; i++) {
			const gap = kids[i].getBoundingClientRect().top - kids[i-1].getBoundingClientRect().bottom;
			if (gap < 8) out.push(kids[i-1].id + ' ' + kids[i-1].className + ' → ' + kids[i].id + ' ' + kids[i].className + ': ' + gap + ' px');
		}
		return out;
	})()`))
	if err != nil || len(touching) > 0 {
		p.t.Errorf("%s: children too close: %q (%v)", sel, touching, err)
	}
}

// count is how many elements match sel now.
func (p *person) count(sel string) int {
	p.t.Helper()
	nodes, err := chromedp.Run(p.ctx, chromedp.Nodes(chromedp.CSSAll(sel), chromedp.AtLeast(0)))
	if err != nil {
		p.t.Fatalf("count %s: %v", sel, err)
	}
	return len(nodes)
}

// axe runs axe-core on the page and fails on serious or critical violations.
func (p *person) axe(page string) {
	p.t.Helper()
	src, err := os.ReadFile(filepath.Join("node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		p.t.Fatalf("axe-core is missing: run `npm ci --prefix e2e` (%v)", err)
	}
	// DevTools evaluation is not subject to the page's CSP, so axe can be injected as is.
	raw, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]byte](string(src)+`;axe.run(document, {resultTypes: ["violations"]})`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("axe on %s: %v", page, err)
	}
	var res struct {
		Violations []struct {
			ID, Impact, Help string
			Nodes            []struct{ HTML string }
		}
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		p.t.Fatal(err)
	}
	for _, v := range res.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			html := ""
			if len(v.Nodes) > 0 {
				html = v.Nodes[0].HTML
			}
			p.t.Errorf("axe on %s: %s (%s) %s — e.g. %s", page, v.ID, v.Impact, v.Help, html)
		} else {
			p.t.Logf("axe on %s: %s (%s) %s", page, v.ID, v.Impact, v.Help)
		}
	}
}

// world is the running stack and the browser.
type world struct {
	env     *servertest.Env
	url     string
	browser context.Context
}

// targets are publications in review in northwind, written by the editor. The journey ends
// with the lead scheduling them, so their flaws (promos over the limit, images without alt
// text, which the demo data has on purpose) are mended first, as the database owner.
func (w *world) targets(t *testing.T) [][2]string {
	t.Helper()
	rows, err := w.env.DB.Owner(t).Query(t.Context(), `
		select p.id::text, p.title from publications p join projects j on j.id = p.project_id
		join profiles a on a.id = p.author_id
		where j.slug = 'northwind' and p.status = 'reviewing' and a.email = 'editor@northwind.test'
		order by p.created_at desc`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var id, title string
		if err := rows.Scan(&id, &title); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{id, title})
	}
	if len(out) < 2 {
		t.Fatalf("need two publications in review by the editor, have %d", len(out))
	}
	out = out[:2]
	own := w.env.DB.Owner(t)
	for _, q := range []string{
		`update promos set body = left(body, 100) where publication_id = any ($1::uuid[])`,
		`update media set alt_text = 'A photograph' where alt_text = '' and id in
			(select media_id from publication_media where publication_id = any ($1::uuid[]))`,
	} {
		if _, err := own.Exec(t.Context(), q, []string{out[0][0], out[1][0]}); err != nil {
			t.Fatal(err)
		}
	}
	var ready int
	if err := own.QueryRow(t.Context(), `select count(*) from unnest($1::uuid[]) id where app.is_ready(id)`,
		[]string{out[0][0], out[1][0]}).Scan(&ready); err != nil || ready != 2 {
		t.Fatalf("%d of 2 targets ready (%v)", ready, err)
	}
	return out
}

// TestJourney is the editorial journey in a browser, with JavaScript and without.
func TestJourney(t *testing.T) {
	env := servertest.New(t, nil)
	if _, err := seed.Run(t.Context(), env.DB.OwnerURL, seed.Options{MediaDir: env.Config.StorageDir}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	w := &world{env: env, url: env.URL, browser: newBrowser(t)}
	targets := w.targets(t)
	t.Run("javascript", func(t *testing.T) { w.journey(t, true, targets[0]) })
	t.Run("no javascript", func(t *testing.T) { w.journey(t, false, targets[1]) })
}

// journey: the reviewer signs in, finds the publication in the queue, requests changes with a
// note; the editor resubmits; the lead approves and schedules it; the history grows each time.
func (w *world) journey(t *testing.T, js bool, target [2]string) {
	id, title := target[0], target[1]
	detail := w.url + "/p/northwind/publications/" + id
	status := func(key string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(chromedp.CSS(`#workflow .status-line .badge-` + key))
	}

	rev := w.person(t, "reviewer@northwind.test", js)
	rev.do("queue", chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue"]`)))
	rev.shot("01-queue")
	if js {
		rev.do("? lists the shortcuts",
			chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`),
			chromedp.KeyEvent("?"),
			chromedp.WaitVisible(chromedp.CSS(`dialog#shortcuts[open]`)),
			chromedp.KeyEvent("\u001b"), // Escape closes the dialog, as browsers do
			chromedp.WaitNotVisible(chromedp.CSS(`dialog#shortcuts`)),
		)
		rev.axe("queue")
		// A filter swaps the results and pushes the URL; Back returns to the unfiltered queue.
		rev.do("filter, then Back",
			chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#status"); s.value = "all";`+
				` s.dispatchEvent(new Event("change", {bubbles: true})); })()`),
			chromedp.Poll[chromedp.Void](`location.search.includes("status=all") && document.querySelector("#results-title").textContent === "All publications"`),
		)
		// htmx keeps no history cache, so Back reloads the page: mark this document, go Back,
		// and wait for a fresh document (no mark) that shows the unfiltered queue.
		rev.do("Back", chromedp.Evaluate[chromedp.Void](`window.__old = true`), chromedp.NavigateBack())
		// The reviewer's start page is the queue of what others wrote.
		rev.until("the start page's queue after Back", `window.__old === undefined && document.readyState === "complete"`+
			` && location.search === "?author=others" && document.querySelector("#results-title")?.textContent === "In review"`)
	}
	// Find it with the search field, then open it: j and Enter with script, a click without.
	if js {
		// Count the swaps htmx settles, so each wait below is for a swap that has happened.
		rev.do("count swaps", chromedp.Evaluate[chromedp.Void](`window.__swaps = 0;`+
			` document.body.addEventListener("htmx:afterSettle", () => { window.__swaps++; });`))
		rev.do("search",
			chromedp.SendKeys(chromedp.CSS(`#q`), title),
			// The debounced search has narrowed the list to the one match and nothing is in flight.
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`window.__swaps > 0 && document.querySelector(".htmx-request") === null`+
				` && document.querySelectorAll('[data-testid="queue-row"]').length === 1`+
				` && document.querySelector('#queue-results a[href="/p/northwind/publications/%s"]') !== null`, id)),
		)
		rev.do("leave the field",
			// Leaving the field fires "change", which refreshes the results once more: wait for
			// that swap to settle, so the keys below act on the list that stays.
			chromedp.Evaluate[chromedp.Void](`window.__before = window.__swaps; document.activeElement.blur()`),
			chromedp.Poll[chromedp.Void](`window.__swaps > window.__before && document.querySelector(".htmx-request") === null`),
		)
		rev.navigate("open with the keyboard", chromedp.KeyEvent("j"), chromedp.KeyEvent("\r"))
		rev.do("the publication", chromedp.WaitVisible(chromedp.CSS(`[data-testid="pub-title"]`)))
	} else {
		rev.do("type the search", chromedp.SendKeys(chromedp.CSS(`#q`), title))
		rev.navigate("search", chromedp.Click(chromedp.CSS(`[data-testid="queue-filters"] button[type="submit"]`)))
		// Only the results page carries the search in its URL and lists exactly the match.
		rev.do("search results",
			chromedp.Poll[chromedp.Void](`new URLSearchParams(location.search).get("q") !== null`),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#queue-results a[href="/p/northwind/publications/%s"]`, id))),
		)
		if n := rev.count(`[data-testid="queue-row"]`); n != 1 {
			t.Fatalf("the search for %q lists %d publications, want 1", title, n)
		}
		rev.navigate("open", chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href="/p/northwind/publications/%s"]`, id))))
		rev.do("the publication", chromedp.WaitVisible(chromedp.CSS(`[data-testid="pub-title"]`)))
	}
	if loc, _ := chromedp.Run(rev.ctx, chromedp.Location()); loc != detail {
		t.Fatalf("opened %s, want %s", loc, detail)
	}
	events := rev.count(`[data-testid="event"]`)
	rev.shot("02-detail")
	rev.spaced(".detail-main")
	// The article's blocks too: its "By the numbers" table once sat against the next heading.
	rev.spaced(`[data-testid="pub-body"] .prose`)
	if js {
		rev.axe("detail")
	}
	note := "Please add **sources** for the figures."
	rev.do("preview the note",
		chromedp.SendKeys(chromedp.CSS(`#note-review`), note),
		chromedp.Click(chromedp.CSS(`[data-testid="composer-preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preview-review"] strong`)),
	)
	rev.shot("03-preview")
	rev.do("request changes",
		chromedp.Click(chromedp.CSS(`[data-testid="verdict-request_changes"]`)),
		status("changes_requested"),
	)
	if js {
		// The swap moved focus to the panel's heading and said what happened.
		rev.do("focus and announcement after the swap",
			chromedp.Poll[chromedp.Void](`document.activeElement && document.activeElement.id === "status-title"`),
			chromedp.Poll[chromedp.Void](`document.getElementById("live").textContent.includes("Changes requested")`),
		)
	}
	if n := rev.count(`[data-testid="event"]`); n != events+1 {
		t.Errorf("history after request changes: %d entries, want %d", n, events+1)
	}
	rev.shot("04-changes-requested")

	ed := w.person(t, "editor@northwind.test", js)
	ed.do("resubmit",
		chromedp.Navigate(detail),
		chromedp.Click(chromedp.CSS(`[data-testid="action-submit_for_review"] button:not([formaction])`)),
		status("reviewing"),
	)

	lead := w.person(t, "lead@northwind.test", js)
	lead.do("approve",
		chromedp.Navigate(detail),
		chromedp.Click(chromedp.CSS(`[data-testid="verdict-approve"]`)),
		status("approved"),
	)
	if js {
		// The swap is done only once it has settled and moved focus to the panel's heading,
		// which may scroll the page: a click aimed before then can land beside its button (one
		// run in a few, on a loaded machine, never reached the server).
		lead.do("focus after the swap", chromedp.Poll[chromedp.Void](`document.activeElement && document.activeElement.id === "status-title"`))
	}
	lead.do("schedule",
		chromedp.WaitVisible(chromedp.CSS(`#when-schedule`)),
		chromedp.Click(chromedp.CSS(`[data-testid="action-schedule"] button:not([formaction])`)),
		status("scheduled"),
	)
	if n := lead.count(`[data-testid="event"]`); n != events+4 {
		t.Errorf("history after the journey: %d entries, want %d", n, events+4)
	}
	if n := lead.count(`[data-testid="review"] strong`); n == 0 {
		t.Error("the markdown note of the verdict is not rendered")
	}
	lead.shot("05-scheduled")
	if js {
		lead.axe("detail after scheduling")
	}
	lead.do("schedule page",
		chromedp.Navigate(w.url+"/p/northwind/schedule"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`[data-testid="schedule-item"] a[href="/p/northwind/publications/%s"]`, id))),
	)
	lead.shot("06-schedule")
	if js {
		lead.axe("schedule")
		lead.do("month", chromedp.Navigate(w.url+"/p/northwind/schedule?view=month"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="month"]`)))
		lead.axe("schedule month")
		lead.shot("07-month")
		// The same pages on a phone.
		lead.do("phone queue",
			chromedp.EmulateViewport(390, 844),
			chromedp.Navigate(w.url+"/p/northwind/queue?status=all"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue"]`)),
		)
		lead.shot("09-phone-queue")
		lead.axe("queue on a phone")
		if wide, err := chromedp.Run(lead.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); err != nil || wide {
			t.Errorf("the queue scrolls sideways on a phone (%v)", err)
		}
		lead.do("phone detail", chromedp.Navigate(detail), chromedp.WaitVisible(chromedp.CSS(`[data-testid="pub-title"]`)))
		lead.shot("10-phone-detail")
		if wide, err := chromedp.Run(lead.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); err != nil || wide {
			t.Errorf("the detail page scrolls sideways on a phone (%v)", err)
		}
	}
	out := w.person(t, "viewer@northwind.test", js)
	out.do("sign out",
		chromedp.Click(chromedp.CSS(`.signout button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-form"]`)),
	)
	out.shot("08-signed-out")
	if js {
		out.axe("login")
	}
}
