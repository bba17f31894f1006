package client

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The schema's constraints refuse what no form or tool should store, in PostgreSQL's words:
// `new row for relation "collections" violates check constraint "collections_slug_check"`.
// That is what a PostgREST client expects from /rest/v1, so the service answers with them; a
// person filling in the settings, or an assistant choosing a tool's arguments, needs to know
// what to change instead. decodeError puts these words in their place, for the dashboard and
// the MCP server alike.

// constraintWords are the refusals of named constraints, each saying what is allowed. A check
// changed in a migration changes its words here: TestConstraintWords (internal/pg) holds each
// name to the definition its words describe.
var constraintWords = map[string]string{
	"projects_slug_check":                      "a project's slug is 2 to 63 lower-case letters, digits and hyphens, starting with a letter or digit",
	"projects_slug_key":                        "a project with that slug already exists: choose another slug",
	"projects_name_check":                      "a project's name is 1 to 200 characters",
	"site_url_is_an_http_url":                  "a site URL starts with http:// or https:// and is at most 500 characters",
	"link_is_an_http_url":                      "a promo's link is a web address: http:// or https:// and no spaces",
	"collections_slug_check":                   "a collection's slug is 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit",
	"collections_project_id_slug_key":          "the project already has a collection with that slug: choose another slug",
	"collections_name_check":                   "a collection's name is 1 to 200 characters",
	"invitations_email_check":                  "that is not an email address: write it as name@example.com (at most 320 characters)",
	"publications_title_check":                 "a title is 1 to 300 characters",
	"title_without_control_or_bidi_characters": "a title cannot hold control characters or characters that change the text's direction",
}

// WordedConstraints names the constraints constraintWords words, for the test that holds each
// to its definition in the schema (internal/pg).
func WordedConstraints() []string { return slices.Sorted(maps.Keys(constraintWords)) }

// BoundedColumns names the relation.column pairs boundNouns words, for the test that holds each
// to a length bound of the schema (internal/pg).
func BoundedColumns() []string { return slices.Sorted(maps.Keys(boundNouns)) }

// violated finds the constraint a check (23514) or unique (23505) violation names in its
// message, and the relation a check's message names ("" for a unique one's).
var violated = regexp.MustCompile(`^(?:new row for relation "([^"]+)" violates check|duplicate key value violates unique) constraint "([^"]+)"`)

// atMost is the shape of the schema's length bounds (migration 030 and before): the column,
// the bound and its unit.
var atMost = regexp.MustCompile(`^([a-z_]+)_at_most_([0-9]+)_(chars|bytes|items)$`)

// boundNouns name, by relation and column, what a length bound holds, where the column's own
// name would not read well ("notes is at most …"); any other column is named by itself.
var boundNouns = map[string]string{
	"publications.body":       "an article's body",
	"publications.summary":    "a summary",
	"promos.body":             "a promo",
	"promos.link":             "a promo's link",
	"reviews.notes":           "a review note",
	"status_events.note":      "a note",
	"media.alt_text":          "alt text",
	"profiles.display_name":   "a display name",
	"collections.description": "a collection's description",
}

// atMostUnits are the words of atMost's units.
var atMostUnits = map[string]string{"chars": "characters", "bytes": "bytes", "items": "items"}

// constraintRefusal returns what a person should read for a constraint violation with code
// and message: the constraint's words, or, for a length bound, what it holds and its bound ("a
// promo is at most 5,000 characters"); "" when message names no constraint known here.
func constraintRefusal(code, message string) string {
	if code != "23514" && code != "23505" {
		return ""
	}
	m := violated.FindStringSubmatch(message)
	if m == nil {
		return ""
	}
	if w, ok := constraintWords[m[2]]; ok {
		return w
	}
	if b := atMost.FindStringSubmatch(m[2]); b != nil && code == "23514" {
		n, err := strconv.Atoi(b[2])
		if err != nil {
			return ""
		}
		noun, ok := boundNouns[m[1]+"."+b[1]]
		if !ok {
			noun = strings.ReplaceAll(b[1], "_", " ")
		}
		return noun + " is at most " + Thousands(n) + " " + atMostUnits[b[3]]
	}
	return ""
}

// Thousands writes n with a comma between thousands (12,345), as every number a person reads
// from the dashboard or a refusal here is written.
func Thousands(n int) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
