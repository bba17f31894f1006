package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"masthead/internal/client"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

// TestRoundsInTheBrowser: after a second round, the reviewer finds the publication in their
// inbox, sees exactly the edit made since round 1 beside their own note, compares the rounds on
// their own page, and every one of these pages passes axe-core.
func TestRoundsInTheBrowser(t *testing.T) {
	env := servertest.New(t, nil)
	if _, err := seed.Run(t.Context(), env.DB.OwnerURL, seed.Options{MediaDir: env.Config.StorageDir}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	w := &world{env: env, url: env.URL, browser: newBrowser(t)}
	var id string
	if err := env.DB.Owner(t).QueryRow(t.Context(), `select p.id::text from publications p join projects j on j.id = p.project_id
		join profiles a on a.id = p.author_id where j.slug = 'northwind' and p.status = 'draft' and a.email = 'editor@northwind.test'
		order by p.created_at limit 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	api, err := client.New(env.URL, env.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	token := func(email string) string {
		s, err := api.SignInWithPassword(context.Background(), email, seed.DefaultPassword)
		if err != nil {
			t.Fatal(err)
		}
		return s.AccessToken
	}
	editor, reviewer := token("editor@northwind.test"), token("reviewer@northwind.test")
	edit := func(body string) {
		req, _ := http.NewRequest(http.MethodPatch, env.URL+"/rest/v1/publications?id=eq."+id, strings.NewReader(body))
		req.Header.Set("apikey", env.Key)
		req.Header.Set("Authorization", "Bearer "+editor)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusNoContent {
			t.Fatalf("edit: %v %v", res, err)
		}
		res.Body.Close()
	}
	move := func(tok, rpc, note string) {
		if _, err := api.Transition(context.Background(), tok, rpc, client.TransitionArgs{PublicationID: id, Note: note}); err != nil {
			t.Fatalf("%s: %v", rpc, err)
		}
	}
	edit(`{"body":"The harbour reopened on Monday.\n\nFerries run hourly.\n"}`)
	move(editor, client.RPCSubmit, "first round")
	move(reviewer, client.RPCRequestChanges, "Which Monday? Say the date.")
	edit(`{"body":"The harbour reopened on Monday 3 March.\n\nFerries run hourly.\n"}`)
	move(editor, client.RPCSubmit, "added the date")

	rev := w.person(t, "reviewer@northwind.test", true)
	rev.navigate("inbox", chromedp.Navigate(w.url+"/inbox"))
	rev.do("the inbox", chromedp.WaitVisible(chromedp.CSS(`[data-testid="inbox-review"] a[href="/p/northwind/publications/`+id+`#changes"]`)))
	rev.until("the banner's count", `Number(document.querySelector('[data-testid="inbox-count"]')?.textContent.match(/\d+/)?.[0]) > 0`)
	// The link lays its words and the count out as flex items, which drops the space between
	// them: the count once touched the words ("Waiting on me7").
	gap, err := chromedp.Run(rev.ctx, chromedp.Evaluate[float64](`(() => {
		const words = document.createRange();
		words.selectNodeContents(document.querySelector('[data-testid="inbox-link"]').firstChild);
		return document.getElementById('inbox-count').getBoundingClientRect().left - words.getBoundingClientRect().right;
	})()`))
	if err != nil || gap < 4 {
		t.Errorf("the banner's count sits %.1f px from its words, want at least 4 (%v)", gap, err)
	}
	rev.shot("rounds-01-inbox")
	rev.axe("inbox")

	rev.navigate("open from the inbox", chromedp.Click(chromedp.CSS(`[data-testid="inbox-review"] a[href="/p/northwind/publications/`+id+`#changes"]`)))
	rev.do("changes since round 1", chromedp.WaitVisible(chromedp.CSS(`#changes-title`)))
	got, err := chromedp.Run(rev.ctx, chromedp.Text(chromedp.CSS(`[data-testid="diff-body"] ins`)))
	if got = strings.Join(strings.Fields(got), " "); err != nil || got != "[inserted: 3 March ]" {
		t.Errorf("the edit since round 1: %q (%v)", got, err)
	}
	note, err := chromedp.Run(rev.ctx, chromedp.Text(chromedp.CSS(`[data-testid="round-notes"] .prose`)))
	if err != nil || strings.TrimSpace(note) != "Which Monday? Say the date." {
		t.Errorf("round 1's note beside the changes: %q (%v)", note, err)
	}
	rev.shot("rounds-02-changes")
	rev.axe("detail with changes since the last round")

	rev.navigate("compare", chromedp.Navigate(w.url+"/p/northwind/publications/"+id+"/rounds/2..1"))
	rev.do("the comparison", chromedp.WaitVisible(chromedp.CSS(`[data-testid="diff-body"] del`)))
	rev.shot("rounds-03-compare")
	rev.axe("round comparison")
}
