// Package cluster proves that Masthead scales out as DESIGN says: several real `masthead serve`
// processes (built once per test run) on one database behind Debian's HAProxy, round robin with
// a health check on /readyz, as packaging/haproxy.cfg sets up production. Its tests sign in on
// one instance and are served by the others, sign out everywhere at once, let every scheduler
// race for the same due items, reload every schema cache with one NOTIFY, share rate limits out
// (MASTHEAD_INSTANCES) and restart each instance in turn under load without losing a request.
//
// Only tests live here (with their HAProxy template); nothing imports this package. It starts
// processes, so it imports what a client would (auth for keys, pg for fixtures) and never
// internal/server: the instances are the binary.
package cluster
