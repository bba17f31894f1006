package rest

import (
	"context"
	"fmt"
	"testing"
)

// TestRangeOperators covers sl, sr, nxr, nxl, adj and ov on a range
// column; the product schema has none, so the test adds a table.
func TestRangeOperators(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `create table public.slots (id int primary key, during int4range not null)`)
	mustExec(t, own, `insert into public.slots values (1, '[1,5)'), (2, '[5,10)'), (3, '[20,30)')`)
	mustExec(t, own, `grant select on public.slots to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, filter, want string }{
		{"strictly left", "during=sl.[10,20)", `[{"id":1}, 
 {"id":2}]`},
		{"strictly right", "during=sr.[10,20)", `[{"id":3}]`},
		{"does not extend right", "during=nxr.[1,6)", `[{"id":1}]`},
		{"does not extend left", "during=nxl.[5,6)", `[{"id":2}, 
 {"id":3}]`},
		{"adjacent", "during=adj.[10,20)", `[{"id":2}, 
 {"id":3}]`},
		{"overlaps", "during=ov.[4,6)", `[{"id":1}, 
 {"id":2}]`},
		{"contains element range", "during=cs.[2,3)", `[{"id":1}]`},
		{"quoted ranges in a logic tree", "or=(during.sl.%22[5,6)%22,during.sr.%22[25,26)%22)", `[{"id":1}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.do(t, call{user: "editorA", path: "/slots?select=id&order=id&" + tt.filter})
			if r.status != 200 || r.body != tt.want {
				t.Errorf("%d %s, want %s", r.status, r.body, tt.want)
			}
		})
	}
}

// TestFirstPages: the shared Content-Range values of uncounted first pages read as the ones
// formatted for every other page.
func TestFirstPages(t *testing.T) {
	if got := firstPages[0]; len(got) != 1 || got[0] != "*/*" {
		t.Errorf("no rows: %q", got)
	}
	for n := 1; n < len(firstPages); n++ {
		if got, want := firstPages[n], fmt.Sprintf("0-%d/*", n-1); len(got) != 1 || got[0] != want {
			t.Errorf("%d rows: %q, want %q", n, got, want)
		}
	}
}
