package seed

import (
	"fmt"
	"sort"
	"strings"
)

// DemoLogin is one demo account and what it is for, as the sign-in page of `masthead dev`
// lists them.
type DemoLogin struct {
	Email string
	Roles string // e.g. "lead of Northwind Daily"
}

// DemoLogins lists the accounts the demo set creates, in the order the projects are made.
func DemoLogins() []DemoLogin {
	var out []DemoLogin
	names := map[string]string{}
	for _, p := range projects {
		names[p.Slug] = p.Name
		for _, m := range []struct {
			who  person
			role string
		}{{p.Lead, "lead"}, {p.Editor, "editor"}, {p.Reviewer, "reviewer"}, {p.Viewer, "viewer"}} {
			out = append(out, DemoLogin{Email: m.who.Local + "@" + p.Domain, Roles: m.role + " of " + p.Name})
		}
	}
	var roles []string
	for slug, role := range multiUser.Roles {
		roles = append(roles, fmt.Sprintf("%s of %s", role, names[slug]))
	}
	sort.Strings(roles)
	return append(out, DemoLogin{Email: multiUser.Email, Roles: strings.Join(roles, ", ")})
}
