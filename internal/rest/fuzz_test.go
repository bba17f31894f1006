package rest

import (
	"errors"
	"testing"
)

// The fuzz targets check the parser's contract: no input panics, and every
// refusal is a typed 400 the HTTP layer can answer: PGRST100, or the SQLSTATE
// PostgreSQL gives a negative limit (2201W) or offset (2201X). Their seed
// corpora run as part of the normal test suite.

func checkParseErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 || (e.Code != "PGRST100" && e.Code != "2201W" && e.Code != "2201X") {
		t.Fatalf("error %v is not a PGRST100 (or 2201W, 2201X) 400", err)
	}
}

func FuzzSelect(f *testing.F) {
	for _, s := range []string{
		"*", "id,title", "a:b::text", "data->a->>0", `"q\"x"`, "*,promos(*),publication_media(position,media(*))",
		"p:promos!fk!inner(id,c:channels(*))", "rel!left(x)", "x->>-1::int", "a(b(c(d)))", "id,", "(", "!", "a:", "::",
		"...clients(name)", "...a!h!inner(x,...b(y))", "...", "...a:b()",
		"count()", "n:count()::text", "a->>b::int.sum()::text", "a.median()", "status,count(),v.max()",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseSelect(s)
		checkParseErr(t, err)
	})
}

func FuzzFilter(f *testing.F) {
	for _, kv := range [][2]string{
		{"id", "eq.1"}, {"status", "in.(a,\"b,c\",d)"}, {"x", "not.is.null"}, {"b", "fts(english).cat"},
		{"t", "like(any).{a*,b*}"}, {"promos.channel", "eq.x"}, {"d->>k", "neq.1"}, {"x", "in.(\"\\"}, {"", ""},
		{"x", "is.NOT_NULL"}, {"x", "isdistinct.1"}, {"x", "eq(all)."},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		_, err := ParseFilter(k, v)
		checkParseErr(t, err)
	})
}

func FuzzOrder(f *testing.F) {
	for _, s := range []string{"id", "a.desc.nullslast,b.asc", "rel(c).desc", "d->>k.asc.nullsfirst", "id.", ",", "a(", "a->"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseOrder(s)
		checkParseErr(t, err)
	})
}

func FuzzLogic(f *testing.F) {
	for _, kv := range [][2]string{
		{"or", "(a.eq.1,b.eq.2)"}, {"not.and", "(a.eq.1,or(b.in.(1,2),c.cs.{x,y}))"}, {"promos.or", `(c.eq."a,b")`},
		{"or", "(a.not.is.null)"}, {"and", "(or(and(or(a.eq.1))))"}, {"or", "("}, {"or", "(a.in.(\"x)"}, {"x.y", "()"},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		_, err := ParseLogic(k, v)
		checkParseErr(t, err)
	})
}

func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		"select=*,promos(*)&id=eq.1", "or=(a.eq.1)&order=id.desc&limit=1&offset=2", "promos.limit=1&x.y.order=z",
		"%", "a=%zz", "columns=a,b&on_conflict=c", "select=", "limit=-1&offset=-2", "id=in.()",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, rpc bool) {
		_, err := ParseQuery(s, rpc)
		checkParseErr(t, err)
	})
}
