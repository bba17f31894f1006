// Package e2e drives the whole stack in a real browser: the service and the dashboard as
// internal/server wires them, a fresh database with the demo data, and Debian's chromium under
// chromedp. It walks the editorial journey with JavaScript on and off, saves a screenshot of
// each page under e2e/artifacts/ and checks every page with axe-core (from npm, see
// package.json). Only tests live here; nothing imports this package.
package e2e
