// Package layout is the page frame every dashboard page shares: head with hashed assets and the
// htmx configuration, landmarks (banner, navigation, main, live region), the project switcher
// and flash messages. Its models hold display-ready strings only. It imports assets and nothing
// else of masthead; nothing but handlers and views import it.
package layout

// Page is what the frame needs to know about the request.
type Page struct {
	Title string
	// CSRF is the token every form of the page carries.
	CSRF string
	// User is the signed-in person's name; empty on pages for signed-out visitors.
	User     string
	Projects []ProjectLink
	// Project is the current project, when the page belongs to one.
	Project *ProjectLink
	// Section marks the active navigation entry: "queue", "schedule", "settings", "account"
	// or "apps".
	Section string
	Flashes []Flash
}

// ProjectLink is one entry of the project switcher.
type ProjectLink struct {
	Slug, Name, Role string
	QueueURL         string
	ScheduleURL      string
	// SettingsURL is the project's settings page, set only for its owners (who manage it).
	SettingsURL string
	Current     bool
}

// Flash is a one-time message carried across a redirect.
type Flash struct {
	// Kind is "info", "success" or "error"; errors are announced assertively.
	Kind string
	Text string
}

// htmxConfig keeps htmx inside the Content-Security-Policy (no inline styles, no eval, no
// script from swapped content), swaps error answers too (the dashboard answers every refusal
// with a page part that says why: a panel with a notice, or an error page retargeted to main),
// and keeps pages out of localStorage: Back reloads from the server, which always answers the
// full page.
const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,` +
	`"selfRequestsOnly":true,"historyCacheSize":0,"refreshOnHistoryMiss":true,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},` +
	`{"code":"[45]..","swap":true,"error":false}]}`
