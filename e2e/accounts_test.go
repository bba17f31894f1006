package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

// guest is someone with no account yet, in a browser context of their own (own cookies).
func (w *world) guest(t *testing.T) *person {
	t.Helper()
	ctx, cancel := chromedp.NewContext(w.browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return &person{t: t, ctx: ctx, base: w.url, js: true, name: "guest"}
}

// TestInviteInTheBrowser: the owner invites by email on the settings page and copies the
// link; a new browser opens it, chooses a password and lands in the project with the role.
// Settings and the account page are checked with axe-core on the way.
func TestInviteInTheBrowser(t *testing.T) {
	env := servertest.New(t, nil)
	if _, err := seed.Run(t.Context(), env.DB.OwnerURL, seed.Options{MediaDir: env.Config.StorageDir}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	// The demo data has no owner; the operator makes one, as the README says, with what
	// `masthead users role` runs.
	if err := seed.SetRole(t.Context(), env.DB.OwnerURL, "lead@northwind.test", "northwind", "owner"); err != nil {
		t.Fatal(err)
	}
	w := &world{env: env, url: env.URL, browser: newBrowser(t)}

	owner := w.person(t, "lead@northwind.test", true)
	owner.navigate("open settings", chromedp.Click(chromedp.CSS(`nav.sections a[href="/p/northwind/settings"]`)))
	owner.until("the settings page", `document.querySelector('h1#settings-title') !== null && document.querySelectorAll('[data-testid="member"]').length === 5`)
	owner.axe("settings")
	owner.do("fill the invitation",
		chromedp.SendKeys(chromedp.CSS(`#invite-email`), "nia@northwind.test"),
		chromedp.SetValue(chromedp.CSS(`#invite-role`), "reviewer"),
	)
	owner.navigate("create the invitation", chromedp.Click(chromedp.CSS(`[data-testid="invite-form"] button[type="submit"]`)))
	owner.until("the link is shown", `document.querySelector('[data-testid="invite-link"]') !== null`)
	owner.axe("settings with an invitation link")
	owner.shot("settings-invite")
	// Settings' lists keep each row's button on the row, drawn as a button: the collections'
	// Remove and the invitations' Revoke once sat on a line of their own as bare words. The
	// members' headings start where their columns do.
	layout, err := chromedp.Run(owner.ctx, chromedp.Evaluate[[]string](`(() => {
		const wrong = [];
		for (const li of document.querySelectorAll('[data-testid="collection"], [data-testid="invitation"]')) {
			const words = document.createRange();
			words.selectNodeContents(li.firstChild);
			const b = li.querySelector('button'), r = b.getBoundingClientRect(), w = words.getBoundingClientRect();
			if (r.top >= w.bottom) wrong.push(b.textContent + ' of ' + li.textContent.trim().split('\n')[0] + ' is below its row');
			if (getComputedStyle(b).borderTopColor === 'rgba(0, 0, 0, 0)') wrong.push(b.textContent + ' has no border');
		}
		for (const th of document.querySelectorAll('[data-testid="members"] th')) {
			if (!['start', 'left'].includes(getComputedStyle(th).textAlign)) wrong.push('heading ' + th.textContent + ' is ' + getComputedStyle(th).textAlign);
		}
		return wrong;
	})()`))
	if err != nil || len(layout) > 0 {
		t.Errorf("settings' layout: %q (%v)", layout, err)
	}
	link, err := chromedp.Run(owner.ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="invite-link"]').value`))
	if err != nil || !strings.HasPrefix(link, w.url+"/invite/") {
		t.Fatalf("invitation link %q (%v)", link, err)
	}

	nia := w.guest(t)
	nia.navigate("open the link", chromedp.Navigate(link))
	nia.until("the invitation page", `document.querySelector('[data-testid="invite-summary"]')?.textContent.includes('Reviewer')`)
	nia.axe("invitation")
	nia.do("choose a password",
		chromedp.SendKeys(chromedp.CSS(`#name`), "Nia Newcomer"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "nia's own secret"),
	)
	nia.navigate("accept", chromedp.Click(chromedp.CSS(`[data-testid="accept-form"] button[type="submit"]`)))
	nia.until("in the project as a reviewer",
		`location.pathname === '/p/northwind/queue' && document.querySelector('[data-testid="user"]')?.textContent === 'Nia Newcomer' && `+
			`[...document.querySelectorAll('[data-testid="flash"]')].some(f => f.textContent.includes('You joined as Reviewer'))`)
	nia.shot("invite-accepted")
	var role string
	if err := env.DB.Owner(t).QueryRow(t.Context(), `select m.role from project_members m join profiles p on p.id = m.user_id
		join projects j on j.id = m.project_id where p.email = 'nia@northwind.test' and j.slug = 'northwind'`).Scan(&role); err != nil || role != "reviewer" {
		t.Fatalf("nia's role %q (%v)", role, err)
	}

	nia.navigate("open the account page", chromedp.Click(chromedp.CSS(`a.account-link`)))
	nia.until("the account page", `document.querySelector('h1#account-title') !== null && document.querySelectorAll('[data-testid="session"]').length === 1`)
	nia.axe("account")
	nia.shot("account")
	// The account's two pages open with their tabs; what follows them keeps its distance (the
	// apps page's text once sat against them).
	for _, page := range []string{"/account", "/account/apps"} {
		nia.navigate("open "+page, chromedp.Navigate(w.url+page))
		nia.until(page, `document.querySelector('nav[aria-label="Account"] a[href="`+page+`"][aria-current="page"]') !== null`)
		gap, err := chromedp.Run(nia.ctx, chromedp.Evaluate[float64](`(() => {
			const nav = document.querySelector('nav[aria-label="Account"]');
			return nav.nextElementSibling.getBoundingClientRect().top - nav.getBoundingClientRect().bottom;
		})()`))
		if err != nil || gap < 8 {
			t.Errorf("%s: what follows the tabs sits %.1f px below them, want at least 8 (%v)", page, gap, err)
		}
	}
}
