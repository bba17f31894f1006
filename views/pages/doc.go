// Package pages holds one templ component per dashboard page (login, queue, publication detail,
// schedule, error) and the parts htmx swaps (queue results, workflow panel, note preview), each
// beside its view model. Models carry display-ready strings; the components decide nothing.
// It imports views/layout and views/partials; only handlers imports it.
package pages
